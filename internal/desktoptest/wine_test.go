//go:build unix

package desktoptest

import (
	"strings"
	"testing"
)

// TestWine runs a Go Windows binary (which needs the shim under Wine 8) and
// a Wine built-in GUI app on one desktop.
func TestWine(t *testing.T) {
	d := Start(t, Options{Width: 1024, Height: 768})
	w := d.StartWine(t)
	exe := BuildWindows(t, "./internal/desktoptest/testdata/winehello")
	out, err := w.Command(exe).Output()
	if err != nil {
		t.Fatalf("running %s under Wine: %v", exe, err)
	}
	if !strings.HasPrefix(string(out), "hello from windows ") {
		t.Errorf("winehello printed %q, want it to start with %q", out, "hello from windows ")
	}
	win := w.StartApp(t, "notepad.exe", "notepad")
	if !strings.Contains(win.Title, "Notepad") {
		t.Errorf("notepad's window title = %q, want it to contain Notepad", win.Title)
	}
}
