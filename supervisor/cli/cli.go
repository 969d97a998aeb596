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

// Stdio is the process's standard streams; stdout belongs to the protocol
// a command speaks, so everything human goes to Err.
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
		{"version", "print the version", func(_ context.Context, _ []string, io Stdio) error {
			fmt.Fprintf(io.Out, "deskhand %s\n", supervisor.Version)
			return nil
		}},
	}
}

// Main runs one deskhand command and returns the process exit status.
// Without a command (no arguments, or only flags) it serves MCP on stdio.
func Main(ctx context.Context, args []string, io Stdio) int {
	if len(args) > 0 && (args[0] == "help" || args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
		if len(args) > 1 {
			return Main(ctx, []string{args[1], "--help"}, io)
		}
		printUsage(io.Err)
		return 0
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
	fmt.Fprintf(io.Err, "deskhand: unknown command %q\n\n", args[0])
	printUsage(io.Err)
	return 2
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "deskhand %s — a computer-use server for AI models\n\nUsage:\n\n  deskhand [serve flags]              serve MCP on stdio\n  deskhand <command> [flags] [arguments]\n\nCommands:\n\n", supervisor.Version)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun `deskhand help <command>` for a command's flags.\n")
}

// newFlagSet returns a flag set whose errors and help go to stderr with a
// usage line for the command.
func newFlagSet(name, usage string, io Stdio) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Err)
	fs.Usage = func() {
		fmt.Fprintf(io.Err, "Usage: deskhand %s\n\n", usage)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args, mapping a bad flag to errUsage.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	return nil
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
