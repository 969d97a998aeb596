package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/deskhand/deskhand/installer"
	"github.com/deskhand/deskhand/installer/fetch"
	"github.com/deskhand/deskhand/supervisor"
)

const installUsage = `install [--manifest-url URL]... [--stall-timeout D] [--rollback]

Downloads the capture helper for this platform from the signed release
manifest, verifies it, checks that it starts and speaks the protocol, and
makes it the active helper (under $XDG_DATA_HOME/deskhand/helpers). The
manifest URLs are tried in order: the first is the primary, the rest are
mirrors; a server that sends no response headers, or no first body byte,
within --stall-timeout is abandoned for the next one, as is a manifest not
complete within twice --stall-timeout, and the error names each URL and
what it did. An archive URL whose download, at its speed so far, would end
more than two minutes after it began is set aside (with its speed in the
log) while the other URLs are tried, and resumed only if they all fail; one
cut short is not resumed before the others are tried. Installing the active
version again does nothing, except that a damaged or deleted install record
(active.json) is rebuilt from the installed versions that verify, all of
which are kept, and rewritten. --rollback makes the previously active
version active again (repairing the record the same way). Versions that a
running deskhand uses (whatever is done to their files or names) are kept
until it stops; a later install removes them. The helper is refused while
its directory, the store or a directory above them is writable by another
user.

Flags:
`

type urlList []string

func (l *urlList) String() string     { return strings.Join(*l, " ") }
func (l *urlList) Set(v string) error { *l = append(*l, v); return nil }

func runInstallCommand(ctx context.Context, args []string, io Stdio) error {
	fs := newFlagSet("install", installUsage, io)
	var urls urlList
	fs.Var(&urls, "manifest-url", "release manifest `URL`; repeat for mirrors (default: $DESKHAND_MANIFEST_URL, then the project's release page)")
	rollback := fs.Bool("rollback", false, "make the previously installed version active again")
	timeout := fs.Duration("timeout", 15*time.Minute, "give up after this long")
	stall := fs.Duration("stall-timeout", fetch.DefaultHeaderTimeout, "abandon a server that sends no response headers, or no first body byte after them, within this long (or no whole manifest within twice this long), and try the next URL")
	logLevel := fs.String("log-level", envOr("DESKHAND_LOG", "warn"), "stderr log level: debug, info, warn or error")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fmt.Fprintf(io.Err, "deskhand install: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	logger, err := newLogger(io.Err, *logLevel)
	if err != nil {
		return err
	}
	if len(urls) == 0 {
		urls = supervisor.ManifestURLsFromEnv()
	}
	bar := newProgressBar(io.Err)
	opts := installer.Options{ManifestURLs: urls, Logger: logger, Progress: bar.event}
	opts.Fetch.HeaderTimeout, opts.Fetch.FirstByteTimeout = *stall, *stall
	opts.ManifestTimeout = 2 * *stall
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()

	var res *installer.Result
	if *rollback {
		res, err = installer.Rollback(ctx, opts)
	} else {
		res, err = installer.Install(ctx, opts)
	}
	bar.finish()
	if err != nil {
		return err
	}
	if res.Repaired != "" {
		fmt.Fprintf(io.Out, "repaired the install record, which was damaged: %s\n", res.Repaired)
	}
	switch {
	case *rollback:
		fmt.Fprintf(io.Out, "rolled back to helper %s (%s); %s is kept for the next rollback\n", res.Version, res.Path, res.Previous)
	case !res.Changed:
		fmt.Fprintf(io.Out, "helper %s is already installed (%s)\n", res.Version, res.Path)
	default:
		fmt.Fprintf(io.Out, "installed helper %s (%s)", res.Version, res.Path)
		if res.Previous != "" {
			fmt.Fprintf(io.Out, "; %s is kept for `deskhand install --rollback`", res.Previous)
		}
		fmt.Fprintln(io.Out)
	}
	return nil
}

// progressBar draws install progress on a terminal: a bar redrawn in
// place while downloading, one line per other step. On anything else it
// writes the step lines only.
type progressBar struct {
	w        io.Writer
	terminal bool
	drawing  bool
	last     time.Time
}

func newProgressBar(w io.Writer) *progressBar {
	return &progressBar{w: w, terminal: isTerminal(w)}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && os.Getenv("TERM") != "dumb"
}

func (b *progressBar) event(e installer.Event) {
	if e.Step == installer.StepDownload && e.Message == "" {
		if !b.terminal || (time.Since(b.last) < 100*time.Millisecond && e.Done < e.Total) {
			return
		}
		b.last = time.Now()
		b.drawing = true
		fmt.Fprintf(b.w, "\r%s", renderBar(e.Done, e.Total, 30))
		return
	}
	b.endLine()
	fmt.Fprintf(b.w, "%s\n", e.Message)
}

func (b *progressBar) endLine() {
	if b.drawing {
		fmt.Fprintln(b.w)
		b.drawing = false
	}
}

func (b *progressBar) finish() { b.endLine() }

// renderBar draws "[#####.....]  50%  1.2/2.4 MB" width characters wide.
func renderBar(done, total int64, width int) string {
	if total <= 0 {
		return fmt.Sprintf("%.1f MB", float64(done)/1e6)
	}
	done = min(max(done, 0), total)
	filled := int(int64(width) * done / total)
	return fmt.Sprintf("[%s%s] %3d%%  %.1f/%.1f MB", strings.Repeat("#", filled), strings.Repeat(".", width-filled),
		100*done/total, float64(done)/1e6, float64(total)/1e6)
}
