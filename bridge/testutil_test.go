package bridge

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newFake returns a Client whose helper is this test binary acting out
// mode. The client is closed when the test ends, and its log is printed
// if the test failed.
func newFake(t *testing.T, mode string, opts Options) (*Client, *syncBuffer) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("os.Executable: %v", err)
	}
	logs := &syncBuffer{}
	opts.Path = exe
	// Race-enabled binaries sleep a second at exit unless told not to.
	opts.Env = append(opts.Env, fakeHelperEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	c := New(opts)
	t.Cleanup(func() {
		c.Close()
		if t.Failed() {
			t.Logf("client log:\n%s", logs)
		}
	})
	return c, logs
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// procInfo is the part of /proc/<pid>/stat the tests need.
type procInfo struct {
	pid   int
	state byte
	pgrp  int
}

// readProc reads /proc/<pid>/stat; ok is false when the process is gone.
func readProc(pid int) (procInfo, bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return procInfo{}, false
	}
	// The command name is in parentheses and may hold spaces; the fields
	// after the last ')' are state, ppid, pgrp, ...
	s := string(data)
	end := strings.LastIndexByte(s, ')')
	if end < 0 {
		return procInfo{}, false
	}
	fields := strings.Fields(s[end+1:])
	if len(fields) < 3 {
		return procInfo{}, false
	}
	pgrp, _ := strconv.Atoi(fields[2])
	return procInfo{pid: pid, state: fields[0][0], pgrp: pgrp}, true
}

// alive reports whether pid is a live process (zombies are dead; this
// container's init may never reap orphans).
func alive(pid int) bool {
	info, ok := readProc(pid)
	return ok && info.state != 'Z' && info.state != 'X'
}

// groupMembers lists the live processes in process group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if info, ok := readProc(pid); ok && info.pgrp == pgid && info.state != 'Z' && info.state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids
}

// requireGroupGone fails unless process group pgid has no live member.
// SIGKILL is delivered asynchronously, so it allows the kernel a moment.
func requireGroupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		left := groupMembers(pgid)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes %v of helper group %d still run; want none", left, pgid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// killedPID extracts the pid from an error's "killed pid N".
func killedPID(t *testing.T, err error) int {
	t.Helper()
	m := regexp.MustCompile(`pid (\d+)`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("error %q names no pid", err)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitInCall waits until the helper pid is blocked in a call: its state
// is sleeping and a call holds the slot. It is a best effort; the tests
// that use it tolerate the call not having reached the helper yet.
func waitInCall(t *testing.T, c *Client) {
	t.Helper()
	waitFor(t, "a call in flight", func() bool { return len(c.slot) == 1 })
	time.Sleep(150 * time.Millisecond)
}

func itoa(n int) string { return strconv.Itoa(n) }
