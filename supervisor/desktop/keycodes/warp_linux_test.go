package keycodes

import (
	"context"
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// warpsSent is how many warps in sent from callers' goroutines.
func warpsSent(t *testing.T, in *Input) int {
	t.Helper()
	x, ok := in.warp.(*x11)
	if !ok || x.xw == nil {
		t.Fatal("the X11 backend has no warp connection")
	}
	in.turn.Lock()
	defer in.turn.Unlock()
	return x.xw.sent
}

// TestMoveWarpsOnCallersGoroutine: a Move with nothing else in flight is a
// warp on the package's XCB connection, and has been processed when Move
// returns: a position read right after, on another connection, sees it.
// With a key held it goes through the worker, and a position read sees
// that too.
func TestMoveWarpsOnCallersGoroutine(t *testing.T) {
	d, in := startInput(t)
	ctx := context.Background()
	for i, p := range []Point{{X: 10, Y: 20}, {X: 123, Y: 456}, {X: 700, Y: 300}} {
		before := warpsSent(t, in)
		if err := front(in).Move(ctx, p.X, p.Y); err != nil {
			t.Fatalf("Move(%v): %v", p, err)
		}
		if got := warpsSent(t, in); got != before+1 {
			t.Errorf("move %d: %d warps sent from the caller, want %d", i, got-before, 1)
		}
		if got, err := in.Position(ctx); err != nil || got != p {
			t.Errorf("Position() right after Move(%v) = %v, %v", p, got, err)
		}
	}

	hold, cancel := context.WithCancel(ctx)
	held := make(chan error, 1)
	go func() { held <- front(in).HoldKey(hold, "shift", time.Minute) }()
	waitFor(t, "shift held", func() bool {
		in.turn.Lock()
		defer in.turn.Unlock()
		return in.holdsKey()
	})
	before := warpsSent(t, in)
	p := Point{X: 321, Y: 234}
	if err := front(in).Move(ctx, p.X, p.Y); err != nil {
		t.Fatalf("Move(%v) with shift held: %v", p, err)
	}
	if got := warpsSent(t, in); got != before {
		t.Errorf("Move with a key held sent %d warps from the caller, want none", got-before)
	}
	if got := mouseLocation(t, d); got != p {
		t.Errorf("after Move(%v) with shift held xdotool says the pointer is at %v", p, got)
	}
	cancel()
	if err := <-held; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("HoldKey: %v", err)
	}
}

// TestMoveAfterPendingPointerRequest: a pointer request on robotgo's
// connection that nothing has waited for yet could be overtaken by a warp
// on another connection, so Move goes through the worker then.
func TestMoveAfterPendingPointerRequest(t *testing.T) {
	_, in := startInput(t)
	ctx := context.Background()
	x := in.warp.(*x11)
	in.turn.Lock()
	x.pointerDirty = true
	in.turn.Unlock()
	before := warpsSent(t, in)
	if err := front(in).Move(ctx, 40, 50); err != nil {
		t.Fatalf("Move: %v", err)
	}
	if got := warpsSent(t, in); got != before {
		t.Errorf("Move with a pointer request pending sent %d warps from the caller, want none", got-before)
	}
	if err := front(in).Move(ctx, 41, 51); err != nil {
		t.Fatalf("Move: %v", err)
	}
	if got := warpsSent(t, in); got != before+1 {
		t.Errorf("the next Move sent %d warps from the caller, want 1 (the worker's sync settled the connection)", got-before)
	}
}

// TestWarpError: an X error the warp causes is the Move's error, and the
// next Move works.
func TestWarpError(t *testing.T) {
	_, in := startInput(t)
	ctx := context.Background()
	x := in.warp.(*x11)
	in.turn.Lock()
	root := x.xw.root
	x.xw.root = 1 // no such window
	in.turn.Unlock()
	err := front(in).Move(ctx, 60, 70)
	in.turn.Lock()
	x.xw.root = root
	in.turn.Unlock()
	if err == nil || !strings.Contains(err.Error(), "BadWindow") {
		t.Errorf("Move into a window that does not exist = %v, want a BadWindow error", err)
	}
	if err := front(in).Move(ctx, 61, 71); err != nil {
		t.Errorf("Move after the failed one: %v", err)
	}
	if p, err := in.Position(ctx); err != nil || p != (Point{X: 61, Y: 71}) {
		t.Errorf("Position() = %v, %v, want (61, 71)", p, err)
	}
}

// stoppedDesktop starts a desktop of the test's own and a function that
// stops (SIGSTOP) or continues its X server.
func stoppedDesktop(t *testing.T) (*desktoptest.Desktop, func(syscall.Signal)) {
	t.Helper()
	desktop(t) // skip or fail like the other desktop tests
	d := desktoptest.Start(t, desktoptest.Options{WindowManager: "none"})
	xvfb, _, _ := d.Pids()
	signal := func(sig syscall.Signal) {
		if err := syscall.Kill(xvfb, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.Errorf("signalling Xvfb (pid %d) %v: %v", xvfb, sig, err)
		}
	}
	t.Cleanup(func() { signal(syscall.SIGCONT) })
	return d, signal
}

// TestWarpOnStoppedDisplay: a warp to a stopped X server fails with
// ErrStalled instead of waiting, later calls fail at once, and once the
// server runs again the button the Input held is released and moves warp
// again.
func TestWarpOnStoppedDisplay(t *testing.T) {
	d, signal := stoppedDesktop(t)
	in, err := New(Options{Display: d.Display(), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	in.watch.timeout = 500 * time.Millisecond
	ctx := context.Background()
	if err := front(in).Move(ctx, 5, 5); err != nil {
		t.Fatal(err)
	}
	if err := front(in).Down(ctx, ButtonLeft); err != nil {
		t.Fatal(err)
	}

	signal(syscall.SIGSTOP)
	before := warpsSent(t, in)
	if err := front(in).Move(ctx, 6, 6); !errors.Is(err, ErrStalled) {
		t.Fatalf("Move with the X server stopped = %v, want ErrStalled", err)
	}
	if got := warpsSent(t, in); got != before+1 {
		t.Errorf("Move with the X server stopped sent %d warps from the caller, want 1", got-before)
	}
	if err := front(in).Move(ctx, 7, 7); !errors.Is(err, ErrStalled) {
		t.Errorf("the next Move = %v, want ErrStalled", err)
	}

	signal(syscall.SIGCONT)
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := front(in).Move(ctx, 8, 8)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrStalled) || time.Now().After(deadline) {
			t.Fatalf("Move once the X server runs again: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p, err := in.Position(ctx); err != nil || p != (Point{X: 8, Y: 8}) {
		t.Errorf("Position() = %v, %v, want (8, 8)", p, err)
	}
	if got := downKeysAndButtons(t, d); len(got) != 0 {
		t.Errorf("once the X server runs again these are still down: %v", got)
	}
	before = warpsSent(t, in)
	if err := front(in).Move(ctx, 9, 9); err != nil {
		t.Fatal(err)
	}
	if got := warpsSent(t, in); got != before+1 {
		t.Errorf("a Move after the recovery sent %d warps from the caller, want 1", got-before)
	}
}

// TestCloseAfterStalledWarp: Close on a stopped X server after a warp it
// did not answer gives up on the worker waiting for that warp: it shuts
// the warp connection too, and the worker gets out while the server is
// still stopped.
func TestCloseAfterStalledWarp(t *testing.T) {
	d, signal := stoppedDesktop(t)
	in, err := New(Options{Display: d.Display(), Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	in.watch.timeout = 500 * time.Millisecond
	ctx := context.Background()
	signal(syscall.SIGSTOP)
	before := warpsSent(t, in)
	if err := front(in).Move(ctx, 6, 6); !errors.Is(err, ErrStalled) {
		t.Fatalf("Move with the X server stopped = %v, want ErrStalled", err)
	}
	if got := warpsSent(t, in); got != before+1 {
		t.Errorf("Move with the X server stopped sent %d warps from the caller, want 1", got-before)
	}
	// The worker takes its turn to wait for the warp's answer (settleWarp).
	waitFor(t, "the worker waiting for the warp", func() bool {
		if in.turn.TryLock() {
			in.turn.Unlock()
			return false
		}
		return true
	})
	if err := in.Close(); !errors.Is(err, ErrStalled) {
		t.Errorf("Close with the X server stopped = %v, want ErrStalled", err)
	}
	select {
	case <-in.done:
	case <-time.After(time.Minute):
		t.Fatal("the worker is still stuck a minute after Close, with the X server stopped")
	}
}
