//go:build unix

package x11

import (
	"context"
	"syscall"
	"testing"
	"time"
)

// TestDisplayCheckPingsOverXCB: on Linux the gate's round trip goes over
// its own XCB connection; a stopped X server (SIGSTOP) is refused through
// it rather than waited for, and once the server runs again the gate
// passes on a new connection.
func TestDisplayCheckPingsOverXCB(t *testing.T) {
	d, c := checkedXvfb(t)
	if c.ping == nil || c.conn != nil {
		t.Fatalf("after the first check the gate pings over xgb (ping %v, conn %v), want its XCB connection", c.ping, c.conn)
	}

	xvfb, _, _ := d.Pids()
	if err := syscall.Kill(xvfb, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			syscall.Kill(xvfb, syscall.SIGCONT)
		}
	}()
	done := make(chan error, 1)
	go func() { done <- c.Check(context.Background()) }()
	// Not a timing assertion: without a deadline the check never returns,
	// and this bound only keeps the test from hanging.
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the display gate passed while the X server was stopped")
		}
		t.Logf("stopped X server: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("the display gate still waits on a stopped X server")
	}

	// A caller that gives up is let go too.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- c.Check(ctx) }()
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled display gate passed while the X server was stopped")
		}
	case <-time.After(time.Minute):
		t.Fatal("a cancelled display gate still waits on a stopped X server")
	}

	syscall.Kill(xvfb, syscall.SIGCONT)
	stopped = false
	if err := c.Check(context.Background()); err != nil {
		t.Fatalf("Check once the X server runs again: %v", err)
	}
	if c.ping == nil {
		t.Fatal("after the server came back the gate pings over xgb, want a new XCB connection")
	}
}
