package keycodes

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

// stuckInput is a fake Input whose backend blocks inside the call that
// records stuckOn until the returned function is called, the way Xlib
// blocks on a stopped X server.
func stuckInput(t *testing.T, stuckOn string) (*Input, *fakeBackend, func()) {
	t.Helper()
	in, f := newFakeInput(t)
	in.watch.timeout = 50 * time.Millisecond
	gate := make(chan struct{})
	f.mu.Lock()
	f.onEvent = func(ev string) {
		if ev == stuckOn {
			<-gate
		}
	}
	f.mu.Unlock()
	return in, f, func() { close(gate) }
}

func waitEvent(t *testing.T, f *fakeBackend, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var seen []string
	for {
		seen = append(seen, f.take()...)
		if slices.Contains(seen, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("events %q never include %q", seen, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestStalledDisplay(t *testing.T) {
	in, f, answer := stuckInput(t, "move 5,5")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := front(in).Down(ctx, ButtonLeft); err != nil {
		t.Fatalf("Down: %v", err)
	}
	f.take()

	err := front(in).Move(ctx, 5, 5)
	if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), `X display ":fake" has not answered`) {
		t.Fatalf("Move on a stuck display = %v, want ErrStalled naming the display", err)
	}
	checkEvents(t, f, "move 5,5") // sent; the display never answered
	// Later calls fail at once instead of queueing behind the stuck one,
	// and so does the server's ReleaseAll after the failure.
	if err := front(in).Click(ctx, ButtonLeft, 1, nil); !errors.Is(err, ErrStalled) {
		t.Errorf("Click while stalled = %v, want ErrStalled", err)
	}
	if err := in.ReleaseAll(ctx); !errors.Is(err, ErrStalled) {
		t.Errorf("ReleaseAll while stalled = %v, want ErrStalled", err)
	}
	if got := f.take(); len(got) != 0 {
		t.Errorf("events while stalled: %q, want none", got)
	}

	// Once the display answers, the button the model held is let go and
	// the Input works again.
	answer()
	waitEvent(t, f, "button 1 up")
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := front(in).Move(ctx, 6, 6)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrStalled) || time.Now().After(deadline) {
			t.Fatalf("Move after the display answered: %v", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	checkEvents(t, f, "move 6,6")
}

// TestStalledOperationPressesNothingMore: an operation abandoned on a
// stuck display sends no further presses once the display answers; what
// it pressed is released.
func TestStalledOperationPressesNothingMore(t *testing.T) {
	in, f, answer := stuckInput(t, "button 1 down")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := front(in).Click(ctx, ButtonLeft, 3, nil); !errors.Is(err, ErrStalled) {
		t.Fatalf("Click on a stuck display = %v, want ErrStalled", err)
	}
	answer()
	waitEvent(t, f, "button 1 up")
	time.Sleep(100 * time.Millisecond) // a second click would come 20 ms later
	if got := f.take(); slices.Contains(got, "button 1 down") {
		t.Errorf("events after the display answered: %q, want no new press", got)
	}
}

func TestCloseOnStalledDisplay(t *testing.T) {
	in, _, answer := stuckInput(t, "move 1,1")
	defer answer()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := front(in).Move(ctx, 1, 1); !errors.Is(err, ErrStalled) {
		t.Fatalf("Move on a stuck display = %v, want ErrStalled", err)
	}
	done := make(chan error, 1)
	go func() { done <- in.Close() }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrStalled) {
			t.Errorf("Close on a stuck display = %v, want ErrStalled", err)
		}
	case <-ctx.Done():
		t.Fatal("Close did not return while the display was stuck")
	}
}
