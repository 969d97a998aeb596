package keycodes

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// readsFake counts the guard's reads of the XKB controls.
type readsFake struct {
	*ctlFake
	reads atomic.Int32
}

func (f *readsFake) controls() (xkbControls, error) {
	f.reads.Add(1)
	return f.ctlFake.controls()
}

func newReadsInput(t *testing.T, ctls xkbControls) (*Input, *readsFake) {
	t.Helper()
	f := &readsFake{ctlFake: &ctlFake{fakeBackend: newFake(), ctls: ctls}}
	return openFake(t, f), f
}

// TestGuardSkipsPointerOnly: an operation that sends pointer events only
// costs the guard no reads; one with keys, modifiers held through a
// click included, is checked.
func TestGuardSkipsPointerOnly(t *testing.T) {
	in, f := newReadsInput(t, xkbControls{enabled: ctlAccessXKeys})
	ctx := context.Background()
	f.reads.Store(0)
	pointer := map[string]func() error{
		"Move":    func() error { return front(in).Move(ctx, 1, 2) },
		"ClickAt": func() error { return front(in).ClickAt(ctx, 3, 4, ButtonLeft, 1, nil) },
		"Scroll":  func() error { return front(in).Scroll(ctx, 5, 6, "down", 2) },
		"Drag":    func() error { return front(in).Drag(ctx, Point{X: 1, Y: 1}, Point{X: 9, Y: 9}) },
		"DownUp": func() error {
			if err := front(in).Down(ctx, ButtonRight); err != nil {
				return err
			}
			return front(in).Up(ctx, ButtonRight)
		},
	}
	if err := front(in).SetClickPress(0); err != nil {
		t.Fatal(err)
	}
	for name, op := range pointer {
		if err := op(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := f.reads.Swap(0); n != 0 {
			t.Errorf("%s read the XKB controls %d times, want 0", name, n)
		}
	}
	keyed := map[string]func() error{
		"Key":               func() error { return front(in).Key(ctx, "a") },
		"ClickAt with ctrl": func() error { return front(in).ClickAt(ctx, 3, 4, ButtonLeft, 1, []string{"ctrl"}) },
		"Scroll with shift": func() error { return front(in).Scroll(ctx, 5, 6, "down", 1, "shift") },
	}
	for name, op := range keyed {
		if err := op(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n := f.reads.Swap(0); n == 0 {
			t.Errorf("%s did not read the XKB controls; the guard was skipped", name)
		}
	}
}

// TestGuardChecksPointerDuringHeldKey: while hold_key holds a key, a
// control that changes is deskhand's doing, so even a pointer operation
// puts it back, before the hold ends.
func TestGuardChecksPointerDuringHeldKey(t *testing.T) {
	in, f := newReadsInput(t, xkbControls{enabled: ctlAccessXKeys})
	ctx := context.Background()
	type moved struct {
		err      error
		controls uint32
	}
	done := make(chan moved, 1)
	f.onEvent = func(ev string) {
		if ev == "key 50 down" {
			go func() {
				f.set(f.enabled() | 1<<1) // SlowKeys, as a long Shift hold turns it on
				err := front(in).Move(ctx, 7, 8)
				done <- moved{err, f.enabled()}
			}()
		}
	}
	if err := front(in).HoldKey(ctx, "shift", 300*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	m := <-done
	if m.err != nil {
		t.Fatal(m.err)
	}
	if m.controls != ctlAccessXKeys {
		t.Errorf("controls after a move during the hold = %#x, want %#x (SlowKeys put back)", m.controls, ctlAccessXKeys)
	}
}
