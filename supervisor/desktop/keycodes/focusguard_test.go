package keycodes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/supervisor/input"
)

// countingGuard allows window 7 and counts its checks; onCheck runs before
// each answer.
type countingGuard struct {
	mu      sync.Mutex
	checks  int
	onCheck func(n int)
}

func (g *countingGuard) guard() *Guard {
	return &Guard{Check: func(context.Context) ([]uint32, error) {
		g.mu.Lock()
		g.checks++
		n := g.checks
		g.mu.Unlock()
		if g.onCheck != nil {
			g.onCheck(n)
		}
		return []uint32{7}, nil
	}}
}

func (g *countingGuard) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.checks
}

func (f *fakeBackend) setFocus(chain ...uint32) {
	f.mu.Lock()
	f.focus = chain
	f.mu.Unlock()
}

// keysOnly keeps the key events, and the confirmations of reading, of
// events.
func keysOnly(events []string) []string {
	var out []string
	for _, ev := range events {
		if strings.HasPrefix(ev, "key ") || ev == "confirm" {
			out = append(out, ev)
		}
	}
	return out
}

func checkKeys(t *testing.T, f *fakeBackend, want ...string) {
	t.Helper()
	if diff := cmp.Diff(want, keysOnly(f.take())); diff != "" {
		t.Errorf("key events (-want +got):\n%s", diff)
	}
}

func TestGuardedTypeRuns(t *testing.T) {
	in, f := newFakeInput(t)
	f.setFocus(70, 7) // a child of the allowed window has the focus
	g := &countingGuard{}
	ctx := input.WithGuard(context.Background(), g.guard())
	if err := front(in).Type(ctx, "a\na"); err != nil {
		t.Fatal(err)
	}
	// A run ends at the line break (Return, borrowed here; its keycode
	// is given back after the app confirmed reading it); the next run
	// waits for the app to read it.
	checkKeys(t, f, "key 38 down", "key 38 up", "key 93 down", "key 93 up", "confirm", "confirm", "key 38 down", "key 38 up")
	if g.count() != 2 {
		t.Errorf("%d checks for two runs", g.count())
	}
	g = &countingGuard{}
	ctx = input.WithGuard(context.Background(), g.guard())
	if err := front(in).Type(ctx, strings.Repeat("a", input.TypeRun+1)); err != nil {
		t.Fatal(err)
	}
	f.take()
	if g.count() != 1 {
		t.Errorf("%d checks for two runs without a line break, want 1 (its answer is reused)", g.count())
	}

	// The focus is verified for every run even so.
	ups := 0
	f.mu.Lock()
	f.onEvent = func(ev string) {
		if ev == "key 38 up" {
			if ups++; ups == input.TypeRun {
				f.setFocus(9)
			}
		}
	}
	f.mu.Unlock()
	err := front(in).Type(input.WithGuard(context.Background(), (&countingGuard{}).guard()), strings.Repeat("a", input.TypeRun+1))
	var fe *input.FocusError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), fmt.Sprintf("typed %d of %d", input.TypeRun, input.TypeRun+1)) {
		t.Errorf("Type with the focus moved between runs = %v", err)
	}
}

func TestGuardedTypeStopsWhenFocusMoves(t *testing.T) {
	in, f := newFakeInput(t)
	f.setFocus(7)
	g := &countingGuard{onCheck: func(n int) {
		if n == 2 {
			f.setFocus(9) // the line break closed the dialog
		}
	}}
	err := front(in).Type(input.WithGuard(context.Background(), g.guard()), "aq\neqa")
	var fe *input.FocusError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "typed 3 of 6 characters") {
		t.Fatalf("Type with the focus moved after the line break = %v", err)
	}
	checkKeys(t, f, "key 38 down", "key 38 up", "key 24 down", "key 24 up", "key 93 down", "key 93 up", "confirm", "confirm")
	// No window focused: refused too.
	f.setFocus()
	err = front(in).Type(input.WithGuard(context.Background(), (&countingGuard{}).guard()), "a")
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "nothing was typed") {
		t.Fatalf("Type with no focus = %v", err)
	}
	checkKeys(t, f)
}

func TestGuardedKeyAndHold(t *testing.T) {
	in, f := newFakeInput(t)
	f.setFocus(7)
	g := &countingGuard{onCheck: func(n int) {
		if n == 2 {
			f.setFocus(9)
		}
	}}
	err := front(in).Key(input.WithGuard(context.Background(), g.guard()), "a q")
	if err == nil || !strings.Contains(err.Error(), "pressed 1 of 2 key combinations") {
		t.Fatalf("Key with the focus moved after the first combination = %v", err)
	}
	checkKeys(t, f, "key 38 down", "key 38 up", "confirm")

	// A hold lets go as soon as the focus leaves the allowed windows.
	f.setFocus(7)
	g = &countingGuard{}
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- front(in).HoldKey(input.WithGuard(context.Background(), g.guard()), "a", time.Hour) }()
	waitUntil(t, func() bool { return len(f.snapshot()) == 2 })
	f.setFocus(9)
	err = <-done
	var fe *input.FocusError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "let go early") {
		t.Fatalf("HoldKey with the focus moved = %v", err)
	}
	if time.Since(start) > time.Minute {
		t.Fatal("the hold did not stop")
	}
	checkEvents(t, f, "repeat 38 false", "key 38 down", "key 38 up", "repeat 38 true")
}
