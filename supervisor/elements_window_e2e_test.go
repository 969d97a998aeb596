//go:build unix

package supervisor_test

// End-to-end tests of set_value with a window state ("maximized",
// "fullscreen", "minimized", "normal" on the window element), through the
// built binary, the real helper and openbox, checked with xprop's
// _NET_WM_STATE and WM_STATE of the window and xdotool's pointer and
// active window.

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// netWMState is what xprop prints of the window's _NET_WM_STATE and
// WM_STATE: the atom names and "Iconic" or "Normal".
func netWMState(t *testing.T, d *desktoptest.Desktop, id uint32) string {
	t.Helper()
	return d.Run(t, "xprop", "-id", "0x"+strconv.FormatUint(uint64(id), 16), "_NET_WM_STATE", "WM_STATE")
}

// waitWMState waits until the window's xprop output satisfies ok.
func waitWMState(t *testing.T, d *desktoptest.Desktop, id uint32, what string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out := netWMState(t, d, id)
		if ok(out) {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 20s window %#x is not %s; xprop:\n%s", id, what, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func maximized(out string) bool {
	return strings.Contains(out, "_NET_WM_STATE_MAXIMIZED_VERT") && strings.Contains(out, "_NET_WM_STATE_MAXIMIZED_HORZ") && !strings.Contains(out, "_NET_WM_STATE_FULLSCREEN")
}

func fullscreen(out string) bool { return strings.Contains(out, "_NET_WM_STATE_FULLSCREEN") }

func iconic(out string) bool { return strings.Contains(out, "Iconic") }

func normalState(out string) bool {
	return !strings.Contains(out, "MAXIMIZED") && !fullscreen(out) && !iconic(out) && strings.Contains(out, "window state: Normal")
}

// TestElementsWindowState: set_value on the window element of a zenity
// dialog behind an xterm maximizes it and restores it while the pointer
// stays put and the xterm keeps the focus; it then makes it full screen,
// minimizes it and brings it back each time. xprop reads each state back from the
// window itself.
func TestElementsWindowState(t *testing.T) {
	desktoptest.Require(t, "xprop", "xdotool")
	d := a11yDesktop(t)
	dlg, _ := zenity(t, d, "--entry", "--title", "window state entry", "--width", "400")
	d.Move(t, dlg.ID, 100, 100, 0, 0)
	term := d.StartXterm(t, desktoptest.XtermOptions{Geometry: "60x10+700+120"})
	d.Focus(t, term.ID)
	e := elementsServer(t, d, "full")
	e.waitState(dlg.PID, `push button "OK"`)
	d.Run(t, "xdotool", "mousemove", "20", "900")
	px, py := e.mouseLocation()
	background := func(after string) {
		t.Helper()
		if x, y := e.mouseLocation(); x != px || y != py {
			t.Errorf("after %s the pointer moved from (%d, %d) to (%d, %d)", after, px, py, x, y)
		}
		if active := d.ActiveWindow(t); active != term.ID {
			t.Errorf("after %s the active window is %#x, want the xterm %#x still", after, active, term.ID)
		}
	}

	res := resultText(e.ok("set_value", map[string]any{"pid": dlg.PID, "element_id": "0", "value": "maximized"}))
	if !strings.Contains(res, "through the window manager") {
		t.Errorf("set_value maximized says %q, want it to name the window manager", res)
	}
	waitWMState(t, d, dlg.ID, "maximized", maximized)
	background("maximizing")
	// The window is as large as the screen's work area now.
	if f := d.WindowInfo(t, dlg.ID).Frame; f.Width < 1500 || f.Height < 900 {
		t.Errorf("the maximized window's frame is %s on a 1600x1000 screen", f)
	}
	res = resultText(e.ok("set_value", map[string]any{"pid": dlg.PID, "element_id": "0", "value": "maximized"}))
	if !strings.Contains(res, "already maximized") {
		t.Errorf("set_value maximized twice says %q, want already maximized", res)
	}

	e.ok("set_value", map[string]any{"pid": dlg.PID, "element_id": "0", "value": "Normal"})
	waitWMState(t, d, dlg.ID, "normal", normalState)
	background("restoring")

	// Full screen is a layer above the others: openbox raises and focuses
	// a window it makes full screen, so that one is not in the background.
	e.ok("set_value", map[string]any{"pid": dlg.PID, "element_id": "0", "value": "fullscreen"})
	waitWMState(t, d, dlg.ID, "full screen", fullscreen)
	if f := d.WindowInfo(t, dlg.ID).Frame; f.Width != 1600 || f.Height != 1000 {
		t.Errorf("the full-screen window's frame is %s on a 1600x1000 screen", f)
	}
	e.ok("set_value", map[string]any{"pid": dlg.PID, "element_id": "0", "value": "normal"})
	waitWMState(t, d, dlg.ID, "normal after full screen", normalState)

	e.ok("set_value", map[string]any{"pid": dlg.PID, "element_id": "0", "value": "minimized"})
	waitWMState(t, d, dlg.ID, "minimized", iconic)
	e.ok("set_value", map[string]any{"pid": dlg.PID, "element_id": "0", "value": "normal"})
	waitWMState(t, d, dlg.ID, "normal again", normalState)
}

// TestElementsWindowStateRefused: a window state string on an element
// that is no window is refused, and so is any window state for a
// click-tier app; xprop shows the window untouched either way.
func TestElementsWindowStateRefused(t *testing.T) {
	desktoptest.Require(t, "xprop")
	t.Run("not a window", func(t *testing.T) {
		d := a11yDesktop(t)
		dlg, _ := zenity(t, d, "--entry", "--title", "window state button")
		e := elementsServer(t, d, "full")
		state := e.waitState(dlg.PID, `push button "OK"`)
		e.bad("set_value", map[string]any{"pid": dlg.PID, "element_id": elementID(t, state, "push button", "OK"), "value": "maximized"}, "is not a window", `element_id "0"`)
		// The entry takes the word as its text, as seed 002 says a
		// string falls back to text.
		entry := elementID(t, state, "text", "")
		e.ok("set_value", map[string]any{"pid": dlg.PID, "element_id": entry, "value": "maximized"})
		if l := lineOf(e.state(dlg.PID, map[string]any{"disableDiff": true}), entry); !strings.Contains(l, `value="maximized"`) {
			t.Errorf("after set_value the entry is %q", l)
		}
		if out := netWMState(t, d, dlg.ID); !normalState(out) {
			t.Errorf("the window's state changed:\n%s", out)
		}
	})
	t.Run("click tier", func(t *testing.T) {
		d := a11yDesktop(t)
		dlg, _ := zenity(t, d, "--entry", "--title", "window state click tier")
		e := elementsServer(t, d, "click")
		e.waitState(dlg.PID, `push button "OK"`)
		e.bad("set_value", map[string]any{"pid": dlg.PID, "element_id": "0", "value": "minimized"}, "full", antiSubversion)
		e.bad("set_value", map[string]any{"pid": dlg.PID, "element_id": "0", "value": "maximized"}, "full", antiSubversion)
		// A second for a request that got through to take effect.
		time.Sleep(time.Second)
		if out := netWMState(t, d, dlg.ID); !normalState(out) {
			t.Errorf("the refused set_value changed the window's state:\n%s", out)
		}
	})
}
