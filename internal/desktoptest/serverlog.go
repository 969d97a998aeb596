//go:build unix

package desktoptest

import (
	"bytes"
	"strings"
	"sync"
	"testing"
)

// ServerLog is the stderr of a server under test (cmd.Stderr): it passes
// each line to the test log, as "server: LINE", until Stop, and keeps
// every line for the test to read. OnLine, when set, sees each line as it
// arrives, under the log's lock.
//
// Create it, and register Stop with t.Cleanup, before the server starts:
// cleanups run last-in first-out, so Stop then runs after the server is
// gone, and the server's last words still reach the test log, while
// nothing is logged once the test has ended (which testing forbids).
type ServerLog struct {
	T      testing.TB
	OnLine func(line string)

	mu    sync.Mutex
	done  bool
	part  []byte
	lines []string
}

// NewServerLog returns a ServerLog for t whose Stop is registered with
// t.Cleanup.
func NewServerLog(t testing.TB, onLine func(line string)) *ServerLog {
	l := &ServerLog{T: t, OnLine: onLine}
	t.Cleanup(l.Stop)
	return l
}

func (l *ServerLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		l.lineLocked(string(l.part[:i]))
		l.part = l.part[i+1:]
	}
	return len(p), nil
}

func (l *ServerLog) lineLocked(line string) {
	l.lines = append(l.lines, line)
	if !l.done {
		l.T.Logf("server: %s", line)
	}
	if l.OnLine != nil {
		l.OnLine(line)
	}
}

// Stop ends the passing to the test log, after a last line the server
// wrote without its newline.
func (l *ServerLog) Stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.part) > 0 {
		l.lineLocked(string(l.part))
		l.part = nil
	}
	l.done = true
}

// Lines returns the lines so far.
func (l *ServerLog) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// Count is the number of lines so far that contain substr.
func (l *ServerLog) Count(substr string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, line := range l.lines {
		if strings.Contains(line, substr) {
			n++
		}
	}
	return n
}
