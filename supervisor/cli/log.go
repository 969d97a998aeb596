package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/record"
)

const logUsage = `log [--state-dir DIR] [--session ID] [-f] [--json]

Shows the action record: one line per tool call deskhand served, oldest
first, with the session, the tool, its arguments (typed text and clipboard
contents redacted unless serve ran with --record-text), each gate that
refused, the result and the duration. This is how to audit what an agent
did. The record is actions.jsonl in the state directory; it rotates at
8 MiB into actions.1.jsonl, which is shown first.`

func runLogCommand(ctx context.Context, args []string, stdio Stdio) error {
	fs := newFlagSet("log", logUsage, stdio)
	stateDir := fs.String("state-dir", "", "the `directory` deskhand serve keeps its state in, as given to serve's --state-dir (default $XDG_STATE_HOME/deskhand, else ~/.local/state/deskhand)")
	session := fs.String("session", "", "show only the calls of the MCP session with this `id` (a prefix is enough)")
	follow := fs.Bool("f", false, "keep showing calls as they are recorded, until interrupted")
	asJSON := fs.Bool("json", false, "print the record's JSON lines as they are")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	dir := *stateDir
	if dir == "" {
		var err error
		if dir, err = geometry.DefaultStateDir(); err != nil {
			return err
		}
	}
	if dir == "none" {
		return errors.New("--state-dir none keeps no action record")
	}
	path := filepath.Join(dir, record.FileName)
	show := func(line []byte) {
		var e record.Entry
		if json.Unmarshal(line, &e) != nil || !strings.HasPrefix(e.Session, *session) {
			return
		}
		if *asJSON {
			fmt.Fprintf(stdio.Out, "%s\n", line)
			return
		}
		fmt.Fprintln(stdio.Out, formatEntry(&e))
	}
	found := false
	for _, p := range []string{record.PreviousPath(path), path} {
		f, err := os.Open(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading the action record: %w", err)
		}
		found = true
		offset, err := showLines(f, show)
		f.Close()
		if err != nil {
			return err
		}
		if *follow && p == path {
			return followRecord(ctx, path, offset, show)
		}
	}
	if *follow {
		return followRecord(ctx, path, 0, show)
	}
	if !found {
		fmt.Fprintf(stdio.Err, "no action record in %s yet: deskhand serve writes one line there per tool call\n", dir)
	}
	return nil
}

// showLines passes each whole line of r to show and returns how many bytes
// those lines took.
func showLines(r io.Reader, show func([]byte)) (int64, error) {
	br := bufio.NewReader(r)
	var n int64
	for {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			return n, nil // a partial last line is read again when whole
		}
		if err != nil {
			return n, fmt.Errorf("reading the action record: %w", err)
		}
		n += int64(len(line))
		show(line[:len(line)-1])
	}
}

// followRecord shows the lines appended to path after offset until ctx
// ends, starting again from the top when the record rotates.
func followRecord(ctx context.Context, path string, offset int64, show func([]byte)) error {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		if f, err := os.Open(path); err == nil {
			if st, err := f.Stat(); err == nil && st.Size() < offset {
				offset = 0 // rotated: a new file
			}
			if _, err := f.Seek(offset, io.SeekStart); err == nil {
				n, err := showLines(f, show)
				offset += n
				if err != nil {
					f.Close()
					return err
				}
			}
			f.Close()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// formatEntry is one call as a line for people: time, session, tool,
// arguments, result, duration, and what refused it.
func formatEntry(e *record.Entry) string {
	session := e.Session
	if len(session) > 8 {
		session = session[:8]
	}
	if session == "" {
		session = "-"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %-8s  %s %s  %s  %.0f ms", e.Time.Local().Format("2006-01-02 15:04:05"), session, e.Tool, compactArgs(e.Args), e.Result, e.DurationMS)
	for _, d := range e.Gates {
		if !d.Allow {
			fmt.Fprintf(&b, "\n    refused by %s: %s", d.Gate, d.Reason)
		}
	}
	if e.Error != "" && !strings.Contains(b.String(), "refused by") {
		fmt.Fprintf(&b, "\n    %s", firstLine(e.Error))
	}
	return b.String()
}

func compactArgs(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "{}" || s == "null" {
		return ""
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
