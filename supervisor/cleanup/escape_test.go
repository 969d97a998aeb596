package cleanup

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/input"
)

// TestMain lets the test binary be the clipboard keeper HandOff starts.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == KeeperCommand {
		os.Exit(RunKeeper(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// TestKeeperOnXvfb: the text handed off stays on the clipboard after the
// process that handed it off is done with it, in UTF-8 and Latin-1, until
// another client takes the clipboard.
func TestKeeperOnXvfb(t *testing.T) {
	desktoptest.Require(t, "Xvfb", "xclip")
	d := desktoptest.Start(t, desktoptest.Options{WindowManager: "none"})
	read := func(target string) string {
		out, _ := d.Command("xclip", "-o", "-selection", "clipboard", "-t", target).Output()
		return string(out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := HandOff(ctx, os.Args[0], d.Display(), "kept: déjà vu"); err != nil {
		t.Fatal(err)
	}
	if got := read("UTF8_STRING"); got != "kept: déjà vu" {
		t.Fatalf("UTF8_STRING = %q", got)
	}
	if got := read("STRING"); got != "kept: d\xe9j\xe0 vu" {
		t.Fatalf("STRING = %q", got)
	}
	if got := read("TARGETS"); !strings.Contains(got, "UTF8_STRING") || !strings.Contains(got, "TARGETS") {
		t.Fatalf("TARGETS = %q", got)
	}
	if err := HandOff(ctx, os.Args[0], d.Display(), "€ only in UTF-8"); err != nil {
		t.Fatal(err)
	}
	if got := read("UTF8_STRING"); got != "€ only in UTF-8" {
		t.Fatalf("second keeper: UTF8_STRING = %q", got)
	}
	if err := HandOff(ctx, os.Args[0], d.Display(), strings.Repeat("x", MaxKeptBytes+1)); !errors.Is(err, ErrTooLargeToKeep) {
		t.Fatalf("HandOff of too much text: %v", err)
	}
	// Another owner takes over; the keeper goes away.
	cmd := d.Command("xclip", "-i", "-selection", "clipboard")
	cmd.Stdin = strings.NewReader("someone else")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for got := read("UTF8_STRING"); got != "someone else"; got = read("UTF8_STRING") {
		if time.Now().After(deadline) {
			t.Fatalf("after xclip took it: %q", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

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
