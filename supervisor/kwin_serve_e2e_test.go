//go:build unix

package supervisor_test

// End-to-end tests of `deskhand serve` and `deskhand doctor` in a KDE
// Plasma session: a headless KWin, the real helper on its kde-kwin
// backend authorized by a desktop entry, and a real MCP client. deskhand
// runs as the session's user, as KWin identifies its clients by their
// executables. Evidence comes from outside deskhand: KWin's own window
// list (a KWin script) and the probe's unique colour.

import (
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// kwinServeAsUser starts `deskhand serve` in k's session and connects an MCP
// client.
func kwinServeAsUser(t *testing.T, k *desktoptest.KWin, bin, helper string, args ...string) *e2e {
	t.Helper()
	home := userHome(t, k)
	cmd := userCommand(k, append(k.UserEnv(), "DISPLAY="), bin, helper, home,
		append([]string{"serve", "--state-dir", filepath.Join(home, "state"), "--log-level", "debug"}, args...)...)
	logs := &testLog{t: t}
	t.Cleanup(logs.stop)
	cmd.Stderr = logs
	cs := connectAsUser(t, cmd, "deskhand-kwin-e2e")
	return &e2e{t: t, cs: cs, cmd: cmd, configHome: filepath.Join(home, "config")}
}

// kwinStartProbe starts the GTK probe under the script name name (its
// app_id) and returns its window as KWin reports it.
func kwinStartProbe(t *testing.T, k *desktoptest.KWin, name string) desktoptest.KWinWindow {
	t.Helper()
	pid, _, _, _ := startProbe(t, k, name)
	return k.WaitWindow(t, pid)
}

// kwinPlace moves w's frame to x,y and returns it once KWin lists it there.
func kwinPlace(t *testing.T, k *desktoptest.KWin, w desktoptest.KWinWindow, x, y int) desktoptest.KWinWindow {
	t.Helper()
	k.MoveWindow(t, w.PID, x, y)
	wlWaitFor(t, fmt.Sprintf("KWin to move the window of pid %d to %d,%d", w.PID, x, y), func() bool {
		for _, now := range k.Windows(t) {
			if now.PID == w.PID && now.Normal {
				w = now
			}
		}
		return w.X == x && w.Y == y
	})
	return w
}

// colorIn counts the pixels of colour c (exact) inside r of img.
func colorIn(img *image.RGBA, r image.Rectangle, c [3]uint8) int {
	sub, ok := img.SubImage(r.Intersect(img.Bounds())).(*image.RGBA)
	if !ok {
		return 0
	}
	_, n := colorBox(sub, c)
	return n
}

// TestKWinServeMasksUnapprovedWindow: serve runs on KWin with every gate
// live; its screenshot shows the approved probe's colour and not one
// pixel of the same colour inside the unapproved copy's window, which is
// on top of the stack — with hiding off (the mask alone) and on (KWin's
// own list then says the window is minimised).
func TestKWinServeMasksUnapprovedWindow(t *testing.T) {
	for _, hide := range []bool{false, true} {
		t.Run(fmt.Sprintf("hide=%v", hide), func(t *testing.T) {
			bin, helper := userBins(t)
			k := desktoptest.StartKWin(t, desktoptest.KWinOptions{Width: 1280, Height: 720, Authorize: []string{helper}})
			approved := kwinStartProbe(t, k, "probe.py")
			secret := kwinStartProbe(t, k, "secret.py")
			// KWin cascades the second window over nearly all of the
			// first, and the strip left showing lies in the top window's
			// drop shadow: overlap them by half the approved probe instead.
			approved = kwinPlace(t, k, approved, 60, 80)
			secret = kwinPlace(t, k, secret, 60+approved.Width/2, 140)
			e := kwinServeAsUser(t, k, bin, helper, "--allow", "probe.py=full", "--format", "png", fmt.Sprintf("--hide-unapproved=%v", hide))
			e.access([]string{"probe.py"})
			img, _ := e.screenshot("screenshot", nil)
			if e.shot.Display.Size.Width != 1280 || e.shot.Display.Size.Height != 720 {
				t.Errorf("screenshot reports the display as %+v, want KWin's 1280x720 output", e.shot.Display)
			}
			rect := func(w desktoptest.KWinWindow) image.Rectangle {
				p0, p1 := e.at(w.X, w.Y), e.at(w.X+w.Width, w.Y+w.Height)
				return image.Rect(p0[0], p0[1], p1[0], p1[1])
			}
			if n := colorIn(img, rect(secret), probeArea); n != 0 {
				t.Errorf("%d pixels of the probe colour show inside the unapproved window %+v (screenshot kept as %s)", n, secret, keepPNG(t, img))
			}
			// The approved probe's own pixels are there: the screenshot is
			// of the session, not blank. (Outside the secret's frame.)
			_, total := colorBox(img, probeArea)
			if total == 0 || colorIn(img, rect(approved), probeArea) == 0 {
				t.Errorf("the approved probe's colour is missing from the screenshot (kept as %s)", keepPNG(t, img))
			}
			if hide {
				minimized := false
				for _, w := range k.Windows(t) {
					if w.PID == secret.PID && w.Minimized {
						minimized = true
					}
				}
				if !minimized {
					t.Errorf("with --hide-unapproved KWin does not list the unapproved window as minimised: %+v", k.Windows(t))
				}
			}
		})
	}
}

// TestKWinServeGatesAnswerFromStacking: KWin tells the stacking order,
// so serve's gates give a point inside two windows to the one on top: a
// click on the approved probe's button where it lies over the unapproved
// window reaches the button (the probe records it), where on sway it is
// refused ("both cover it"); a click on the part of the unapproved window
// that shows is refused.
func TestKWinServeGatesAnswerFromStacking(t *testing.T) {
	bin, helper := userBins(t)
	k := desktoptest.StartKWin(t, desktoptest.KWinOptions{Width: 1280, Height: 720, Authorize: []string{helper}})
	secret := kwinStartProbe(t, k, "secret.py")
	// Mapped last, the approved probe is active and on top.
	approved := kwinStartProbe(t, k, "probe.py")
	clicks := filepath.Join(k.Dir(), "probe.py.out")
	k.MoveWindow(t, approved.PID, 400, 150)
	e := kwinServeAsUser(t, k, bin, helper, "--allow", "probe.py=full", "--format", "png", "--hide-unapproved=false")
	e.access([]string{"probe.py"})
	// The button, as the screenshot shows it.
	var button image.Rectangle
	wlWaitFor(t, "the probe's button to show at its new place", func() bool {
		img, _ := e.screenshot("screenshot", nil)
		box, n := colorBox(img, probeButton)
		button = box
		return n > 1000 && e.shot.Image.Width == 1280 && box.Min.X >= 400
	})
	bx, by := button.Min.X+button.Dx()/2, button.Min.Y+button.Dy()/2
	// The unapproved window under it: its frame holds the button's centre.
	under := kwinPlace(t, k, secret, bx-secret.Width+40, by-40)
	if !(image.Point{bx, by}).In(image.Rect(under.X, under.Y, under.X+under.Width, under.Y+under.Height)) {
		t.Fatalf("the unapproved window %+v does not lie under the button's centre %d,%d", under, bx, by)
	}
	e.screenshot("screenshot", nil)
	e.ok("left_click", map[string]any{"coordinate": e.at(bx, by)})
	wlWaitFile(t, clicks, func(s string) bool { return strings.Contains(s, "clicked") })
	// The unapproved window's top-left corner, which the probe (to its
	// right) does not cover; its bottom may lie below the screen.
	msg := e.bad("left_click", map[string]any{"coordinate": e.at(under.X+10, under.Y+10)})
	if !strings.Contains(msg, "not approved") {
		t.Errorf("the refused click on the unapproved window says %q, want it called unapproved", msg)
	}
}

// TestKWinDoctor: in a Plasma session doctor says what KWin lets the
// authorized helper do; for a helper KWin does not authorize it names the
// desktop entry to write, with the helper's path and the keys.
func TestKWinDoctor(t *testing.T) {
	bin, helper := userBins(t)
	k := desktoptest.StartKWin(t, desktoptest.KWinOptions{Width: 1280, Height: 720, Authorize: []string{helper}})
	doctor := func(helper string) string {
		cmd := userCommand(k, append(k.UserEnv(), "DISPLAY="), bin, helper, userHome(t, k), "doctor", "--state-dir", filepath.Join(k.Dir(), "doctor-state"))
		out, _ := cmd.CombinedOutput() // doctor exits 1 for its warnings
		return string(out)
	}
	if err := os.MkdirAll(filepath.Join(k.Dir(), "doctor-state"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(k.Dir(), "doctor-state"), k.UID(), k.GID()); err != nil {
		t.Fatal(err)
	}
	out := doctor(helper)
	for _, want := range []string{
		"ok    wayland     KDE Plasma session " + k.Display() + " (helper backend kde-kwin, authorized by its desktop entry): screenshots, window list with geometry and stacking, masking, hiding windows, the window under a point, clipboard, mouse, keyboard work",
		"warn  wayland     the Escape watcher does not work on Wayland",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	// Another copy of the helper: KWin does not know it.
	other := filepath.Join(filepath.Dir(helper), "other", "deskhand-helper")
	if err := os.MkdirAll(filepath.Dir(other), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(helper)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, b, 0o755); err != nil {
		t.Fatal(err)
	}
	out = doctor(other)
	for _, want := range []string{"~/.local/share/applications/deskhand-helper.desktop", "Exec=" + other,
		"X-KDE-Wayland-Interfaces=org_kde_kwin_fake_input,org_kde_kwin_keystate,org_kde_plasma_window_management,zkde_screencast_unstable_v1",
		"X-KDE-DBUS-Restricted-Interfaces=org.kde.KWin.ScreenShot2", "screenshots (org.kde.KWin.ScreenShot2)"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output for an unauthorized helper lacks %q:\n%s", want, out)
		}
	}
}
