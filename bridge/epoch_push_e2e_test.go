//go:build unix

package bridge_test

// End-to-end test of the pushed windows epoch (windows_changed) with the
// real helper on Xvfb and openbox: the client's WindowsEpoch follows a
// window moved by another X client without asking the helper, which its
// own debug log shows, and a helper that died gives no epoch of its own
// any more: the next one is of a new stream.

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// lineLog keeps the log lines written to it.
type lineLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lineLog) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

func TestWindowsEpochPushedFollowsAMoveAndARestart(t *testing.T) {
	desktoptest.Require(t, "Xvfb", "openbox", "xterm", "xdotool")
	d := desktoptest.Start(t, desktoptest.Options{})
	term := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"-geometry", "40x10+40+40"}, Class: "XTerm"})
	logs := &lineLog{}
	c := bridge.New(bridge.Options{
		Path:   desktoptest.HelperPath(t),
		Env:    append(d.Env(), "DESKHAND_HELPER_LOG=debug"),
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if info := c.HandshakeInfo(); !info.Has(bridge.CapabilityWindowsChanged) {
		t.Fatalf("the helper announces %v; want %q", info.Capabilities, bridge.CapabilityWindowsChanged)
	}
	// A listing follows the terminal's own window, as the gates' does.
	if _, err := c.Windows(ctx(t), false); err != nil {
		t.Fatal(err)
	}
	before, err := c.WindowsEpoch(ctx(t))
	if err != nil {
		t.Fatal(err)
	}

	d.Move(t, term.ID, 300, 200, 0, 0)
	deadline := time.Now().Add(10 * time.Second)
	after := before
	for after == before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
		if after, err = c.WindowsEpoch(ctx(t)); err != nil {
			t.Fatal(err)
		}
	}
	if after == before {
		t.Fatalf("the windows epoch stayed %v after the terminal moved", before)
	}
	if after.Stream != before.Stream {
		t.Errorf("the epoch moved to stream %q from %q; want the same helper's stream", after.Stream, before.Stream)
	}
	// The helper logs every request it answers: a windows listing was one
	// (its log is live), windows_epoch none.
	for end := time.Now().Add(10 * time.Second); logs.count("windows answered in") == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the helper's debug log never recorded the windows listing")
		}
	}
	if n := logs.count("windows_epoch answered in"); n != 0 {
		t.Errorf("the helper answered windows_epoch %d times; want 0, the client should use the pushed epochs", n)
	}

	// A helper killed outright: once the client knows it is gone, its
	// last epoch must not vouch for the table any more.
	if err := syscall.Kill(c.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); c.PID() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the killed helper was never reaped")
		}
	}
	restarted, err := c.WindowsEpoch(ctx(t))
	for i := 0; err != nil && i < 50; i++ {
		time.Sleep(100 * time.Millisecond) // the restart backoff
		restarted, err = c.WindowsEpoch(ctx(t))
	}
	if err != nil {
		t.Fatalf("the epoch after the helper was killed: %v", err)
	}
	if restarted.Stream == after.Stream {
		t.Errorf("after the helper was killed the epoch is %v, of the dead helper's stream; want a new stream", restarted)
	}
}
