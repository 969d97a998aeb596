//go:build linux

package keycodes

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestCloseAbandonsStoppedDisplay: a Close that gives up on a stopped X
// server (SIGSTOP: it keeps its connections but answers nothing) shuts the
// connections, so the worker stuck in Xlib gets out while the server is
// still stopped; left stuck, a -race deskhand hung at exit in robotgo's
// atexit XCloseDisplay. The package connects again once the server runs.
func TestCloseAbandonsStoppedDisplay(t *testing.T) {
	desktop(t) // skip or fail like the other desktop tests
	d := desktoptest.Start(t, desktoptest.Options{WindowManager: "none"})
	in, err := New(Options{Display: d.Display(), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := front(in).Move(ctx, 5, 5); err != nil {
		t.Fatal(err)
	}
	xvfb, _, _ := d.Pids()
	resume := func() {
		if err := syscall.Kill(xvfb, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.Errorf("continuing Xvfb (pid %d): %v", xvfb, err)
		}
	}
	t.Cleanup(resume)
	if err := syscall.Kill(xvfb, syscall.SIGSTOP); err != nil {
		t.Fatalf("stopping Xvfb (pid %d): %v", xvfb, err)
	}

	// Position, not Move: a move would warp from this goroutine
	// (warp.go), and this test is about a worker stuck in Xlib.
	if _, err := in.Position(ctx); !errors.Is(err, ErrStalled) {
		t.Fatalf("Position with the X server stopped = %v, want ErrStalled", err)
	}
	if err := in.Close(); !errors.Is(err, ErrStalled) {
		t.Errorf("Close with the X server stopped = %v, want ErrStalled", err)
	}
	select {
	case <-in.done:
	case <-time.After(time.Minute):
		t.Fatal("the worker is still stuck in Xlib a minute after Close, with the X server stopped")
	}

	resume()
	again, err := New(Options{Display: d.Display(), Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("New once the X server runs again: %v", err)
	}
	defer again.Close()
	if err := front(again).Move(ctx, 7, 7); err != nil {
		t.Errorf("Move on the new Input: %v", err)
	}
}
