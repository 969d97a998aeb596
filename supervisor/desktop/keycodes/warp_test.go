package keycodes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

// fakeWarper is a fakeBackend that can also move the pointer from the
// caller's goroutine (warper). A warp to stuckAt is not answered until
// answered is closed, the way a stopped X server does not answer.
type fakeWarper struct {
	*fakeBackend
	stuckAt  string
	answered chan struct{}
	stuck    bool // used with the Input's turn held
}

func newFakeWarper(t *testing.T, stuckAt string) (*Input, *fakeWarper) {
	t.Helper()
	f := &fakeWarper{fakeBackend: newFake(), stuckAt: stuckAt, answered: make(chan struct{})}
	in := openFake(t, f)
	t.Cleanup(f.answer)
	return in, f
}

func (f *fakeWarper) answer() {
	select {
	case <-f.answered:
	default:
		close(f.answered)
	}
}

func (f *fakeWarper) ready() bool { return !f.stuck }

func (f *fakeWarper) warp(x, y int, wait time.Duration) (bool, error) {
	ev := fmt.Sprintf("warp %d,%d", x, y)
	err := f.record("%s", ev)
	if ev != f.stuckAt {
		return true, err
	}
	select {
	case <-f.answered:
		return true, err
	case <-time.After(wait):
		f.stuck = true
		return false, nil
	}
}

func (f *fakeWarper) pending() bool { return f.stuck }

func (f *fakeWarper) settle() error {
	<-f.answered
	f.stuck = false
	return f.record("warp answered")
}

// TestMoveWarpsWhenIdle: with no operation in flight, Move warps from the
// caller's goroutine, also while a button is held (Down); every other
// operation still goes through the worker.
func TestMoveWarpsWhenIdle(t *testing.T) {
	in, f := newFakeWarper(t, "")
	ctx := context.Background()
	if err := front(in).Move(ctx, 5, 5); err != nil {
		t.Fatalf("Move: %v", err)
	}
	if err := front(in).Down(ctx, ButtonLeft); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if err := front(in).Move(ctx, 6, 6); err != nil {
		t.Fatalf("Move with a button down: %v", err)
	}
	if err := front(in).ClickAt(ctx, 7, 7, ButtonRight, 1, nil); err != nil {
		t.Fatalf("ClickAt: %v", err)
	}
	if err := front(in).Up(ctx, ButtonLeft); err != nil {
		t.Fatalf("Up: %v", err)
	}
	checkEvents(t, f.fakeBackend, "warp 5,5", "button 1 down", "warp 6,6", "move 7,7", "button 3 down", "button 3 up", "button 1 up")
}

// TestMoveThroughWorker: where the worker would check the keyboard guard
// around a move, or an operation is in flight, Move does not warp.
func TestMoveThroughWorker(t *testing.T) {
	ctx := context.Background()

	t.Run("key held", func(t *testing.T) {
		in, f := newFakeWarper(t, "")
		hold, cancel := context.WithCancel(ctx)
		held := make(chan error, 1)
		go func() { held <- front(in).HoldKey(hold, "shift", time.Minute) }()
		// With the turn held and the key in held, HoldKey's press is
		// over and its release not begun.
		waitUntil(t, func() bool {
			in.turn.Lock()
			defer in.turn.Unlock()
			return in.holdsKey()
		})
		if err := front(in).Move(ctx, 5, 5); err != nil {
			t.Fatalf("Move while a key is held: %v", err)
		}
		cancel()
		<-held
		if got := f.take(); !slices.Contains(got, "move 5,5") || slices.Contains(got, "warp 5,5") {
			t.Errorf("events of a Move while a key is held: %q, want a move through the worker", got)
		}
	})

	t.Run("guard unsettled", func(t *testing.T) {
		in, f := newFakeWarper(t, "")
		in.turn.Lock()
		in.guard.unsettled = true
		in.turn.Unlock()
		if err := front(in).Move(ctx, 5, 5); err != nil {
			t.Fatalf("Move: %v", err)
		}
		checkEvents(t, f.fakeBackend, "move 5,5")
	})

	t.Run("operation in flight", func(t *testing.T) {
		in, f := newFakeWarper(t, "")
		inside, leave := make(chan struct{}), make(chan struct{})
		f.mu.Lock()
		f.onEvent = func(ev string) {
			if ev == "position" {
				close(inside)
				<-leave
			}
		}
		f.mu.Unlock()
		done := make(chan error, 1)
		go func() {
			_, err := in.Position(ctx)
			done <- err
		}()
		<-inside
		ok, err := in.warpNow(ctx, 5, 5)
		close(leave)
		if ok || err != nil {
			t.Errorf("warpNow while Position runs = %v, %v; want false, nil", ok, err)
		}
		if err := <-done; err != nil {
			t.Fatalf("Position: %v", err)
		}
		checkEvents(t, f.fakeBackend, "position")
	})

	t.Run("closed", func(t *testing.T) {
		in, f := newFakeWarper(t, "")
		in.Close()
		if err := front(in).Move(ctx, 5, 5); !errors.Is(err, ErrClosed) {
			t.Errorf("Move after Close = %v, want ErrClosed", err)
		}
		checkEvents(t, f.fakeBackend, "close")
	})
}

// TestWarpStalled: a warp the display does not answer within the stall
// timeout fails with ErrStalled and stalls the Input like a worker stuck
// on the display: later calls fail at once, and once the display answers
// the worker waits for that warp before anything else, releases what the
// Input holds, and moves warp again.
func TestWarpStalled(t *testing.T) {
	in, f := newFakeWarper(t, "warp 5,5")
	in.watch.timeout = 50 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := front(in).Down(ctx, ButtonLeft); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if err := front(in).Move(ctx, 5, 5); !errors.Is(err, ErrStalled) {
		t.Fatalf("Move on a stuck display = %v, want ErrStalled", err)
	}
	if err := front(in).Move(ctx, 6, 6); !errors.Is(err, ErrStalled) {
		t.Errorf("Move while stalled = %v, want ErrStalled", err)
	}
	if err := front(in).Click(ctx, ButtonLeft, 1, nil); !errors.Is(err, ErrStalled) {
		t.Errorf("Click while stalled = %v, want ErrStalled", err)
	}
	checkEvents(t, f.fakeBackend, "button 1 down", "warp 5,5")

	f.answer()
	waitEvent(t, f.fakeBackend, "button 1 up")
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := front(in).Move(ctx, 7, 7)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrStalled) || time.Now().After(deadline) {
			t.Fatalf("Move after the display answered: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	checkEvents(t, f.fakeBackend, "warp 7,7")
}

// TestWarpAnsweredFirst: the worker waits for the stalled warp's answer
// before it releases anything: nothing may overtake the warp.
func TestWarpAnsweredFirst(t *testing.T) {
	in, f := newFakeWarper(t, "warp 5,5")
	in.watch.timeout = 50 * time.Millisecond
	ctx := context.Background()
	if err := front(in).Down(ctx, ButtonLeft); err != nil {
		t.Fatalf("Down: %v", err)
	}
	if err := front(in).Move(ctx, 5, 5); !errors.Is(err, ErrStalled) {
		t.Fatalf("Move on a stuck display = %v, want ErrStalled", err)
	}
	f.answer()
	waitUntil(t, func() bool { return slices.Contains(f.snapshot(), "button 1 up") })
	got := f.snapshot()
	if i, j := slices.Index(got, "warp answered"), slices.Index(got, "button 1 up"); i < 0 || i > j {
		t.Errorf("events after the display answered: %q, want the warp answered before the release", got)
	}
}
