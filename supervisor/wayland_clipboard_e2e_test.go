//go:build unix

package supervisor_test

// End-to-end test of the clipboard guard's put-back on a native Wayland
// session: `deskhand serve` on a headless sway with a real MCP client,
// the user's clipboard from wl-copy, the evidence from wl-paste after
// deskhand is gone.

import (
	"os"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// wlPaste is what wl-paste reads now ("" when the clipboard is empty).
func wlPaste(w *desktoptest.Wayland, args ...string) string {
	out, _ := w.Command("wl-paste", append([]string{"--no-newline"}, args...)...).Output()
	return string(out)
}

// TestWaylandServeClipboardKeptAfterExit: with a click-tier terminal in
// front the guard stashes and clears the user's clipboard; when the client
// goes away and deskhand exits, the user's text is put back and outlives
// deskhand and its helper (a keeper process serves it), until the user
// copies something else.
func TestWaylandServeClipboardKeptAfterExit(t *testing.T) {
	requireWaylandTools(t, "foot", "wl-copy", "wl-paste")
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	wlTerminal(t, w, "term", "204a87")
	const secret = "the user's secret: Grüße, 世界"
	wlCopy(t, w, secret)
	wlWaitFor(t, "wl-copy to own the clipboard", func() bool { return wlPaste(w) == secret })

	e := wlServe(t, w, t.TempDir(), "--allow", "term=click")
	e.access([]string{"term"})
	e.screenshot("screenshot", nil)
	if got := wlPaste(w); got == secret {
		t.Fatalf("clipboard with the click-tier terminal in front = %q, want it stashed and cleared", got)
	}
	e.cs.Close()
	if st := e.cmd.ProcessState; st == nil || !st.Success() {
		t.Fatalf("the server did not exit cleanly: %v", st)
	}
	t.Cleanup(func() {
		for _, pid := range keepers(t, w) {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	})
	// deskhand and its helper are gone: what serves the clipboard now is
	// the keeper.
	if got := wlPaste(w); got != secret {
		t.Fatalf("clipboard after deskhand exited = %q, want the user's %q back", got, secret)
	}
	if got := wlPaste(w, "--type", "UTF8_STRING"); got != secret {
		t.Fatalf("clipboard as UTF8_STRING after deskhand exited = %q", got)
	}
	// The keeper serves what it kept until the user replaces each of it
	// (the guard stashed the primary selection too).
	wlCopy(t, w, "copied afterwards")
	wlCopy(t, w, "--primary", "selected afterwards")
	wlWaitFor(t, "the keeper to exit once the user copies and selects again", func() bool {
		return len(keepers(t, w)) == 0 && strings.HasPrefix(wlPaste(w), "copied afterwards")
	})
}
