//go:build unix

package supervisor_test

// End-to-end tests of issue 9, class 4: every window of an unapproved app
// is masked in every screenshot, and clicks on it are refused, also when
// the window is an override-redirect popup, claims to be hidden while it
// is mapped, or moves while the screenshot is taken. The evidence is the
// count of a colour only the unapproved window shows, in the images the
// MCP client gets back, checked against the real screen (xwd), and the
// real pointer position after a refused click.
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run SafetyMask -v

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// secretPopup starts an xterm that is an override-redirect window (as
// menus, tooltips and notifications are: not managed by the window
// manager, not in _NET_CLIENT_LIST) with the top-left corner at (x, y),
// painted in secretColor, text included. It returns once the real screen
// shows at least minPixels of that colour, with the popup's window id.
func secretPopup(t *testing.T, d *desktoptest.Desktop, x, y, minPixels int) string {
	t.Helper()
	hex := fmt.Sprintf("#%02X%02X%02X", secretColor.R, secretColor.G, secretColor.B)
	cmd := d.Command("xterm", "-xrm", "XTerm*overrideRedirect: true", "-bg", hex, "-fg", hex, "-cr", hex,
		"-bw", "0", "-geometry", fmt.Sprintf("24x5+%d+%d", x, y), "-e", "sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the override-redirect xterm: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	waitFor(t, "the override-redirect xterm to show on the real screen", 20*time.Second, func() bool {
		return countColor(d.Screenshot(t), secretColor, 0) >= minPixels
	})
	// The popup is the root's child at (x, y): an override-redirect
	// shell has no WM_CLASS or name to search by.
	at := fmt.Sprintf("+%d+%d", x, y)
	var ids []string
	for _, line := range strings.Split(d.Run(t, "xwininfo", "-root", "-children"), "\n") {
		if f := strings.Fields(line); len(f) > 2 && strings.HasPrefix(f[0], "0x") && f[len(f)-1] == at {
			ids = append(ids, f[0])
		}
	}
	if len(ids) != 1 {
		t.Fatalf("finding the override-redirect xterm at %s among the root's children: %q", at, ids)
	}
	return ids[0]
}

// refusedClick asserts that a left click at the screen point (x, y) is
// refused as aimed at app, and that the real pointer did not move.
func refusedClick(t *testing.T, e *e2e, x, y int, app string) {
	t.Helper()
	e.screenshot("screenshot", nil)
	px, py := e.mouseLocation()
	e.bad("left_click", map[string]any{"coordinate": e.at(x, y)}, app, "not approved")
	if !e.pointerNear(px, py, 0) {
		nx, ny := e.mouseLocation()
		t.Errorf("the refused click moved the pointer from (%d, %d) to (%d, %d)", px, py, nx, ny)
	}
}

// TestSafetyMaskOverrideRedirect: an unapproved app's override-redirect
// popup over an approved window is painted over in screenshots and zooms,
// and a click on it is refused although the approved window lies under
// it.
func TestSafetyMaskOverrideRedirect(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	ok := d.StartGTK(t, "approved")
	d.Move(t, ok.ID, 100, 100, 0, 0)
	d.Focus(t, ok.ID)
	ok = d.WindowInfo(t, ok.ID)
	x, y := ok.Client.X+60, ok.Client.Y+40
	secretPopup(t, d, x, y, 5000)

	e := gatedServer(t, d, nil, "--allow", "zenity", "--hide-unapproved=false", "--format", "png")
	e.access([]string{"zenity"})
	img, _ := e.screenshot("screenshot", nil)
	if n := countColor(img, secretColor, 0); n > 0 {
		t.Errorf("the screenshot shows the unapproved popup's colour in %d pixels", n)
	}
	p, q := e.at(x-10, y-10), e.at(x+100, y+50)
	if n := countColor(imageOf(t, e.ok("zoom", map[string]any{"region": []int{p[0], p[1], q[0], q[1]}})), secretColor, 0); n > 0 {
		t.Errorf("the zoom on the popup shows its colour in %d pixels", n)
	}
	// The approved window around the popup is still visible.
	if n := countColor(d.Screenshot(t), secretColor, 0); n < 5000 {
		t.Fatalf("the popup left the real screen (%d pixels); the test would prove nothing", n)
	}
	refusedClick(t, e, x+20, y+20, "XTerm")
	// Beside the popup, on the approved window, clicks still work.
	e.screenshot("screenshot", nil)
	cx, cy := ok.Client.X+ok.Client.Width-30, ok.Client.Y+ok.Client.Height-10
	e.ok("left_click", map[string]any{"coordinate": e.at(cx, cy)})
	if !e.pointerNear(cx, cy, 3) {
		t.Errorf("the click on the approved window did not happen")
	}
}

// TestSafetyMaskHiddenClaim: a mapped window that is off the taskbar
// (_NET_WM_STATE_SKIP_TASKBAR, set through the window manager) or claims
// to be hidden (_NET_WM_STATE_HIDDEN written by the client itself) is
// still on screen, so it is masked, clicks on it are refused, and the hide
// gate minimizes it for real.
func TestSafetyMaskHiddenClaim(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	ok := d.StartGTK(t, "approved")
	d.Move(t, ok.ID, 100, 100, 0, 0)
	secret := secretWindow(t, d, 700, 300)
	d.Focus(t, ok.ID)
	id := fmt.Sprint(secret.ID)
	claims := []struct {
		name  string
		state string
		set   []string
	}{
		{"skip-taskbar", "_NET_WM_STATE_SKIP_TASKBAR", []string{"wmctrl", "-i", "-r", id, "-b", "add,skip_taskbar"}},
		{"hidden", "_NET_WM_STATE_HIDDEN", []string{"xprop", "-id", id, "-f", "_NET_WM_STATE", "32a", "-set", "_NET_WM_STATE", "_NET_WM_STATE_HIDDEN"}},
	}
	for _, c := range claims {
		t.Run(c.name, func(t *testing.T) {
			d.Run(t, c.set[0], c.set[1:]...)
			waitFor(t, "the window to claim "+c.state, 5*time.Second, func() bool {
				return slices.Contains(d.WindowInfo(t, secret.ID).NetState, c.state)
			})
			if w := d.WindowInfo(t, secret.ID); !w.Viewable {
				t.Fatalf("the window claiming %s is not mapped; the test would prove nothing", c.state)
			}
			if n := countColor(d.Screenshot(t), secretColor, 0); n < 300*200 {
				t.Fatalf("the secret colour covers only %d pixels of the real screen; the test would prove nothing", n)
			}
			e := gatedServer(t, d, nil, "--allow", "zenity", "--hide-unapproved=false", "--format", "png")
			e.access([]string{"zenity"})
			img, _ := e.screenshot("screenshot", nil)
			if n := countColor(img, secretColor, 0); n > 0 {
				t.Errorf("the screenshot shows the window claiming %s in %d pixels", c.state, n)
			}
			cx, cy := center(secret, 0, 0)
			refusedClick(t, e, cx, cy, "Xwud")
			e.cs.Close()
		})
	}
	t.Run("hide gate", func(t *testing.T) {
		e := gatedServer(t, d, nil, "--allow", "zenity", "--format", "png")
		e.access([]string{"zenity"})
		img, _ := e.screenshot("screenshot", nil)
		if n := countColor(img, secretColor, 0); n > 0 {
			t.Errorf("the screenshot shows the window that claims to be hidden in %d pixels", n)
		}
		if w := d.WindowInfo(t, secret.ID); w.Viewable {
			t.Errorf("the hide gate left the window that only claims to be hidden on screen (state %q)", w.State)
		}
	})
}

// maskScene is an approved zenity window with an unapproved one of the
// secret colour over part of it, and a server with hiding off, so that
// only the mask keeps the secret out of screenshots (PNG: exact colours).
func maskScene(t *testing.T) (*desktoptest.Desktop, *desktoptest.Window, *e2e) {
	t.Helper()
	d := newDesktop(t, desktoptest.Options{})
	ok := d.StartGTK(t, "approved")
	d.Move(t, ok.ID, 100, 100, 0, 0)
	secret := secretWindow(t, d, 150, 120)
	e := gatedServer(t, d, nil, "--allow", "zenity", "--hide-unapproved=false", "--format", "png")
	e.access([]string{"zenity"})
	return d, secret, e
}

// TestSafetyMaskMovingWindow: an unapproved window that keeps jumping
// between two places while screenshots are taken never shows in one: the
// helper places the mask from the window positions at the moment it reads
// the pixels.
func TestSafetyMaskMovingWindow(t *testing.T) {
	// The secret is stacked above the approved window, so that where it
	// jumps away from, the approved app has to repaint.
	d, secret, e := maskScene(t)
	e.screenshot("screenshot", nil)

	// Each move is a separate xdotool, so the window jumps 600 pixels
	// several times during every screenshot.
	var stop atomic.Bool
	var moves atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		spots := [][2]int{{150, 120}, {900, 420}}
		for i := 0; !stop.Load(); i++ {
			s := spots[i%2]
			if err := d.Command("xdotool", "windowmove", fmt.Sprint(secret.ID), fmt.Sprint(s[0]), fmt.Sprint(s[1])).Run(); err != nil {
				var exit *exec.ExitError
				if !errors.As(err, &exit) {
					t.Errorf("xdotool windowmove: %v", err)
					return
				}
			}
			moves.Add(1)
		}
	}()
	const shots = 100
	leaked := 0
	for i := 0; i < shots; i++ {
		img := imageOf(t, e.ok("screenshot", nil))
		if n := countColor(img, secretColor, 0); n > 0 {
			leaked++
			t.Errorf("screenshot %d of %d (after %d moves) shows the moving window in %d pixels", i+1, shots, moves.Load(), n)
		}
	}
	stop.Store(true)
	wg.Wait()
	if moves.Load() < shots {
		t.Fatalf("the window moved only %d times during %d screenshots; the test would prove little", moves.Load(), shots)
	}
	if n := countColor(d.Screenshot(t), secretColor, 0); n < 300*200 {
		t.Fatalf("the secret colour covers only %d pixels of the real screen; the test would prove nothing", n)
	}
	t.Logf("%d screenshots while the window moved %d times; %d leaked", shots, moves.Load(), leaked)
}

// TestSafetyMaskFlickeringPopup: an unapproved popup that keeps appearing
// and disappearing is never in a screenshot, although it may be missing
// from the gates' window list before the capture and after it: the helper
// paints every window but the approved ones it finds when it reads the
// pixels.
func TestSafetyMaskFlickeringPopup(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	ok := d.StartGTK(t, "approved")
	d.Move(t, ok.ID, 100, 100, 0, 0)
	d.Focus(t, ok.ID)
	ok = d.WindowInfo(t, ok.ID)
	// Over the approved window: when the popup goes, its pixels stay on
	// screen until the app beneath repaints.
	popup := secretPopup(t, d, ok.Client.X+60, ok.Client.Y+40, 5000)
	e := gatedServer(t, d, nil, "--allow", "zenity", "--hide-unapproved=false", "--format", "png")
	e.access([]string{"zenity"})
	e.screenshot("screenshot", nil)

	var stop atomic.Bool
	var flips atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			verb := []string{"windowunmap", "windowmap"}[i%2]
			if err := d.Command("xdotool", verb, popup).Run(); err != nil {
				t.Errorf("xdotool %s: %v", verb, err)
				return
			}
			flips.Add(1)
		}
	}()
	const shots = 100
	leaked := 0
	for i := 0; i < shots; i++ {
		img := imageOf(t, e.ok("screenshot", nil))
		if n := countColor(img, secretColor, 0); n > 0 {
			leaked++
			t.Errorf("screenshot %d of %d (after %d flips) shows the popup in %d pixels", i+1, shots, flips.Load(), n)
		}
	}
	stop.Store(true)
	wg.Wait()
	if flips.Load() < shots {
		t.Fatalf("the popup flipped only %d times during %d screenshots; the test would prove little", flips.Load(), shots)
	}
	d.Run(t, "xdotool", "windowmap", popup)
	waitFor(t, "the popup to be back on the real screen", 10*time.Second, func() bool {
		return countColor(d.Screenshot(t), secretColor, 0) >= 5000
	})
	t.Logf("%d screenshots while the popup flipped %d times; %d leaked", shots, flips.Load(), leaked)
}
