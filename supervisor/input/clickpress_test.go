package input

import (
	"context"
	"testing"
	"time"
)

func TestSetClickPress(t *testing.T) {
	in := &Input{}
	if got := in.clickHold(); got != DefaultClickPress {
		t.Errorf("unset: %v, want %v", got, DefaultClickPress)
	}
	for _, d := range []time.Duration{0, 8 * time.Millisecond, MaxClickPress} {
		if err := in.SetClickPress(d); err != nil {
			t.Fatalf("SetClickPress(%v): %v", d, err)
		}
		if got := in.clickHold(); got != d {
			t.Errorf("after SetClickPress(%v): %v", d, got)
		}
	}
	for _, d := range []time.Duration{-time.Millisecond, MaxClickPress + 1} {
		if err := in.SetClickPress(d); err == nil {
			t.Errorf("SetClickPress(%v) accepted", d)
		}
	}
}

// fakeWaker is a fakeBackend that records the display server's wake-ups.
type fakeWaker struct{ *fakeBackend }

func (f fakeWaker) wake() { f.record("wake") }

// TestClickWakesBeforeRelease: a click wakes the display server during
// its hold, on the connection the release goes on, before the release.
func TestClickWakesBeforeRelease(t *testing.T) {
	f := fakeWaker{newFake()}
	in := openFake(t, f)
	if err := in.ClickAt(context.Background(), 3, 4, ButtonLeft, 2, nil); err != nil {
		t.Fatalf("ClickAt: %v", err)
	}
	checkEvents(t, f.fakeBackend, "move 3,4", "button 1 down", "wake", "button 1 up", "button 1 down", "wake", "button 1 up")
}
