//go:build unix

package x11

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/desktop/keycodes"
	"github.com/deskhand/deskhand/supervisor/input"
)

// TestWatcherOnXvfb drives a real X server: an Escape sent from outside
// deskhand (xdotool, as a remote-desktop server would) interrupts; other
// keys do not; deskhand's own Escapes, sent through the input package with
// its presses announced to the watcher, do not; and an outside Escape
// still counts while deskhand holds Escape itself or presses it itself.
//
// The watcher reads events in order, so once it has counted an outside
// Escape sent last, a count of exactly n says no earlier press was taken
// for the user's by mistake (and none of the user's was hidden).
func TestWatcherOnXvfb(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("X11 only")
	}
	desktoptest.Require(t, "Xvfb", "xdotool")
	d := desktoptest.Start(t, desktoptest.Options{WindowManager: "none"})
	var presses atomic.Int32
	w, err := Watch(WatcherOptions{Display: d.Display(), OnEscape: func() { presses.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	escapes := func(want int32) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for presses.Load() < want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := presses.Load(); got != want {
			t.Fatalf("Escape presses seen = %d, want %d", got, want)
		}
	}

	d.Run(t, "xdotool", "key", "a", "b", "Return")
	d.Run(t, "xdotool", "key", "Escape")
	escapes(1)

	// deskhand's own Escapes, through the real input package.
	be, err := keycodes.New(keycodes.Options{Display: d.Display(), KeyPress: w.Own})
	if err != nil {
		t.Fatal(err)
	}
	in := input.New(be)
	defer in.Close()
	if err := in.Key(context.Background(), "Escape ctrl+Escape Escape"); err != nil {
		t.Fatal(err)
	}
	if err := in.HoldKey(context.Background(), "Escape", 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// An outside Escape right after deskhand's own counts, also one
	// pressed with modifiers.
	d.Run(t, "xdotool", "key", "shift+Escape")
	escapes(2)

	// While deskhand holds Escape itself, an outside Escape counts.
	held := make(chan error, 1)
	go func() { held <- in.HoldKey(context.Background(), "Escape", 3*time.Second) }()
	time.Sleep(500 * time.Millisecond)
	d.Run(t, "xdotool", "key", "Escape")
	escapes(3)
	if err := <-held; err != nil {
		t.Fatal(err)
	}

	// While deskhand presses Escape in a loop, an outside Escape counts
	// once.
	loop := make(chan error, 1)
	go func() { loop <- in.Key(context.Background(), strings.Repeat("Escape ", 200)) }()
	time.Sleep(100 * time.Millisecond)
	d.Run(t, "xdotool", "key", "Escape")
	if err := <-loop; err != nil {
		t.Fatal(err)
	}
	escapes(4)
	d.Run(t, "xdotool", "key", "Escape")
	escapes(5)

	// A keymap change (as the input package makes when it types a
	// character the layout lacks) does not confuse the keycode lookup.
	if err := in.Type(context.Background(), "€ü"); err != nil {
		t.Fatal(err)
	}
	d.Run(t, "xdotool", "key", "Escape")
	escapes(6)

	w.Close()
	d.Run(t, "xdotool", "key", "Escape")
	time.Sleep(300 * time.Millisecond)
	escapes(6)
}

// TestWatcherCounts: announced presses are taken once each, by keycode;
// an announcement that no press takes expires.
func TestWatcherCounts(t *testing.T) {
	var escapes int
	w := &Watcher{onEscape: func() { escapes++ }, timeout: time.Hour, own: map[uint8][]time.Time{}, log: slog.New(slog.DiscardHandler)}
	const esc, a = 9, 38
	w.Own(esc)
	w.Own(esc)
	w.Own(a)
	steps := []struct {
		xtest  bool
		code   uint8
		escape bool
		want   int
	}{
		{true, a, false, 0},
		{true, esc, true, 0},  // deskhand's first
		{false, esc, true, 1}, // a real keyboard: always the user's
		{true, esc, true, 1},  // deskhand's second
		{true, esc, true, 2},  // left over: the user's, through XTEST
		{true, a, false, 2},
	}
	for i, s := range steps {
		w.press(s.xtest, 3, s.code, s.escape)
		if escapes != s.want {
			t.Fatalf("step %d: %d Escapes, want %d", i, escapes, s.want)
		}
	}
	w.timeout = time.Millisecond
	w.Own(esc)
	time.Sleep(5 * time.Millisecond)
	w.press(true, 3, esc, true)
	if escapes != 3 {
		t.Fatalf("after an expired announcement: %d Escapes, want 3", escapes)
	}
}
