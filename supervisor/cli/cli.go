// Package cli is deskhand's command line: it parses the arguments, prints
// the usage and runs the requested command. By default that is serve,
// which turns its flags into supervisor.ServeOptions for the composition
// root (package supervisor); install, doctor, grants and helper are the
// commands around it.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/deskhand/deskhand/supervisor"
)

// Stdio is the process's standard streams. Stdout belongs to the protocol
// a command speaks, so logs and errors go to Err; what the user asked to
// see (help, the version, doctor's report) goes to Out.
type Stdio struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
}

// errUsage marks a command-line mistake: the message has been printed with
// the usage and the exit status is 2.
var errUsage = errors.New("usage")

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, io Stdio) error
}

func commands() []command {
	return []command{
		{"serve", "serve the computer-use tools over MCP on stdio (the default command), or Streamable HTTP with --http", runServe},
		{"helper", "start the capture helper, call one protocol method and print its result", runHelperCommand},
		{"install", "download, verify and activate the capture helper for this platform (or --rollback)", runInstallCommand},
		{"grants", "list, forget, allow or disallow pre-approved and declined apps (the consent outside a session)", runGrantsCommand},
		{"log", "show the action record: every tool call, its arguments, the gates' decisions and the result (-f follows it)", runLogCommand},
		{"doctor", "check the display, extensions, helper, lock, turn journal and paths, and say how to fix each problem (--repair: give back what a killed deskhand left)", runDoctorCommand},
		{"version", "print the version (also --version, -v)", func(_ context.Context, args []string, io Stdio) error {
			fs := newFlagSet("version", "version\n\nPrints deskhand's version; deskhand --version and -v do the same.\n", io)
			if err := parseFlags(fs, args); err != nil {
				return err
			}
			fmt.Fprintf(io.Out, "deskhand %s\n", supervisor.Version)
			return nil
		}},
	}
}

// Main runs one deskhand command and returns the process exit status.
// Without a command (no arguments, or only flags) it serves MCP on stdio.
func Main(ctx context.Context, args []string, io Stdio) int {
	if len(args) > 0 {
		switch args[0] {
		case "help", "-h", "--help", "-help":
			if len(args) > 1 {
				return Main(ctx, []string{args[1], "--help"}, io)
			}
			printUsage(io.Out)
			return 0
		case "-v", "--version", "-version":
			args = []string{"version"}
		}
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		args = append([]string{"serve"}, args...)
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], io)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			return 2
		default:
			fmt.Fprintf(io.Err, "deskhand %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(io.Err, "deskhand: unknown command %q\nRun 'deskhand help' for the commands.\n", args[0])
	return 2
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "deskhand %s — a computer-use server for AI models\n\nUsage:\n\n  deskhand [serve flags]              serve MCP on stdio\n  deskhand <command> [flags] [arguments]\n\nCommands:\n\n", supervisor.Version)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun `deskhand help <command>` for a command's flags.\n")
}

// flagSet is a command's flags with its help text: the usage line, the
// text that explains the command, and "Flags:" (the flags follow).
type flagSet struct {
	*flag.FlagSet
	help string
	io   Stdio
}

// newFlagSet returns a command's flag set. Asked for help (-h, --help,
// deskhand help COMMAND) it prints the whole help on stdout, so that it
// pipes into a pager; a mistake gets a short usage on stderr instead
// (fs.Usage), which does not bury the error under the help.
func newFlagSet(name, help string, io Stdio) *flagSet {
	fs := &flagSet{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), help: help, io: io}
	fs.SetOutput(io.Err)
	fs.Usage = func() {
		line, _, _ := strings.Cut(help, "\n")
		fmt.Fprintf(io.Err, "usage: deskhand %s\nRun 'deskhand help %s' for the flags.\n", line, name)
	}
	return fs
}

// printHelp prints the command's whole help on stdout.
func (fs *flagSet) printHelp() {
	fmt.Fprintf(fs.io.Out, "Usage: deskhand %s\n\n", fs.help)
	fs.SetOutput(fs.io.Out)
	fs.PrintDefaults()
	fs.SetOutput(fs.io.Err)
}

// parseFlags parses args. Help is printed and returned as flag.ErrHelp; a
// bad flag is said on stderr, with the flag the user may have meant and
// the short usage, and returned as errUsage.
func parseFlags(fs *flagSet, args []string) error {
	usage := fs.Usage
	fs.Usage = func() {} // the flag package would print it before we can
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(fs.io.Err)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.printHelp()
		return err
	}
	if name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -"); ok {
		fmt.Fprintf(fs.io.Err, "deskhand %s: unknown flag --%s\n", fs.Name(), name)
		if near := nearestFlag(fs.FlagSet, name); near != "" {
			fmt.Fprintf(fs.io.Err, "did you mean --%s?\n", near)
		}
	} else {
		fmt.Fprintf(fs.io.Err, "deskhand %s: %v\n", fs.Name(), err)
	}
	fs.Usage()
	return errUsage
}

// nearestFlag is the flag of fs that the mistyped name most likely
// meant: the nearest within two edits (a typo), else the only flag that
// contains the name (--virtual for --virtual-display, --allow-origin for
// --http-allow-origin), else the only one the name starts with
// (--config-directory for --config-dir).
func nearestFlag(fs *flag.FlagSet, name string) string {
	best, bestDist := "", 3 // further than two edits is a guess, not a typo
	var containing, started []string
	fs.VisitAll(func(f *flag.Flag) { // in name order, so a tie goes one way
		if d := editDistance(name, f.Name); d < bestDist {
			best, bestDist = f.Name, d
		}
		if len(name) >= 3 && strings.Contains(f.Name, name) {
			containing = append(containing, f.Name)
		}
		if len(f.Name) >= 3 && strings.HasPrefix(name, f.Name) {
			started = append(started, f.Name)
		}
	})
	switch {
	case best != "":
		return best
	case len(containing) == 1:
		return containing[0]
	case len(started) == 1:
		return started[0]
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// newLogger logs to stderr at the level named by level.
func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, fmt.Errorf("parsing log level %q: want debug, info, warn or error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// envOr returns the environment variable's value, or def when it is unset.
func envOr(key, def string) string {
	if v, ok := os.LookupEnv(key); ok && v != "" {
		return v
	}
	return def
}
