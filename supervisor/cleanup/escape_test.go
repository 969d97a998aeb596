package cleanup

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/input"
)

// TestWatcherOnXvfb drives a real X server: an Escape sent from outside
// deskhand (xdotool, as a remote-desktop server would) interrupts; other
// keys do not; deskhand's own Escape, sent through the input package
// inside Synthetic, does not.
func TestWatcherOnXvfb(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("X11 only")
	}
	desktoptest.Require(t, "Xvfb", "xdotool")
	d := desktoptest.Start(t, desktoptest.Options{WindowManager: "none"})
	var presses atomic.Int32
	w, err := Watch(WatcherOptions{Display: d.Display(), OnEscape: func() { presses.Add(1) }, SyntheticGrace: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()

	waitPresses := func(want int32, within time.Duration) {
		t.Helper()
		deadline := time.Now().Add(within)
		for presses.Load() < want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := presses.Load(); got != want {
			t.Fatalf("Escape presses seen = %d, want %d", got, want)
		}
	}

	d.Run(t, "xdotool", "key", "a", "b", "Return")
	time.Sleep(300 * time.Millisecond)
	waitPresses(0, 0)

	d.Run(t, "xdotool", "key", "Escape")
	waitPresses(1, 3*time.Second)

	// deskhand's own Escape, through the real input package.
	in, err := input.New(input.Options{Display: d.Display()})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	done := w.Synthetic()
	if err := in.Key(context.Background(), "Escape ctrl+Escape"); err != nil {
		t.Fatal(err)
	}
	done()
	time.Sleep(500 * time.Millisecond)
	waitPresses(1, 0)

	// After the grace period, an outside Escape counts again, also one
	// pressed with modifiers.
	d.Run(t, "xdotool", "key", "shift+Escape")
	waitPresses(2, 3*time.Second)

	// A keymap change (as the input package makes when it types a
	// character the layout lacks) does not confuse the keycode lookup.
	if err := in.Type(context.Background(), "€ü"); err != nil {
		t.Fatal(err)
	}
	d.Run(t, "xdotool", "key", "Escape")
	waitPresses(3, 3*time.Second)

	w.Close()
	d.Run(t, "xdotool", "key", "Escape")
	time.Sleep(200 * time.Millisecond)
	waitPresses(3, 0)
}
