package keycodes

import (
	"context"
	"testing"
)

// fakeWaker is a fakeBackend that records the display server's wake-ups.
type fakeWaker struct{ *fakeBackend }

func (f fakeWaker) wake() { f.record("wake") }

// TestClickWakesBeforeRelease: a click wakes the display server during
// its hold, on the connection the release goes on, before the release.
func TestClickWakesBeforeRelease(t *testing.T) {
	f := fakeWaker{newFake()}
	in := openFake(t, f)
	if err := front(in).ClickAt(context.Background(), 3, 4, ButtonLeft, 2, nil); err != nil {
		t.Fatalf("ClickAt: %v", err)
	}
	checkEvents(t, f.fakeBackend, "move 3,4", "button 1 down", "wake", "button 1 up", "button 1 down", "wake", "button 1 up")
}
