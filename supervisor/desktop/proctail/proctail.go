// Package proctail is the output of a process deskhand starts for its
// private desktops (Xvfb, the window manager, sway): each line goes to the
// debug log as it comes, and the last few kilobytes are kept for the error
// message when the process fails to start.
package proctail

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// Max is how many bytes of output a Tail keeps, and the longest line it
// logs whole: a longer line without a newline is dropped from the log
// (not from String) rather than held without bound.
const Max = 2048

// Tail is an io.Writer for a process's stdout and stderr.
type Tail struct {
	log  *slog.Logger
	mu   sync.Mutex
	buf  []byte
	line []byte
}

// New returns a Tail that logs each line at debug level to log.
func New(log *slog.Logger) *Tail { return &Tail{log: log} }

// Write logs the complete lines in p and keeps the last Max bytes.
func (w *Tail) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > Max {
		w.buf = w.buf[len(w.buf)-Max:]
	}
	w.line = append(w.line, p...)
	for {
		i := bytes.IndexByte(w.line, '\n')
		if i < 0 {
			break
		}
		if l := strings.TrimSpace(string(w.line[:i])); l != "" {
			w.log.Debug(l)
		}
		w.line = w.line[i+1:]
	}
	if len(w.line) > Max {
		w.line = w.line[:0]
	}
	return len(p), nil
}

// String is the last output kept, trimmed, or "(no output)".
func (w *Tail) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := strings.TrimSpace(string(w.buf)); s != "" {
		return s
	}
	return "(no output)"
}
