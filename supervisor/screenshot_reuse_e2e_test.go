//go:build unix

package supervisor_test

// End-to-end tests of the helper serving its last image again when the
// screen's damage says nothing was drawn since: whatever is drawn between
// two screenshots is in the second, the stale-screenshot gate still checks
// clicks against a served-again capture, and a mask that changed without a
// repaint (an app granted) is never answered with the old image.
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run ScreenshotReuse -v

import (
	"fmt"
	"image/color"
	"testing"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// drawnColors are root backgrounds no other test window shows.
var drawnColors = []color.RGBA{{0xC8, 0x1E, 0xA0, 0xff}, {0x1E, 0xC8, 0xB4, 0xff}}

// paintRoot fills the bare desktop with c; xsetroot exits after the server
// has done it (closing the display syncs).
func paintRoot(t *testing.T, d *desktoptest.Desktop, c color.RGBA) {
	t.Helper()
	d.Run(t, "xsetroot", "-solid", fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B))
}

// TestScreenshotReuseShowsWhatWasDrawn: the desktop repainted between two
// screenshots shows in the second, each time, although the screenshots
// before it were of an unchanged screen (and so served again).
func TestScreenshotReuseShowsWhatWasDrawn(t *testing.T) {
	desktoptest.Require(t, "xsetroot")
	d := newDesktop(t, desktoptest.Options{})
	e := serve(t, d)
	img, _ := e.screenshot("screenshot", nil)
	whole := img.Bounds().Dx() * img.Bounds().Dy()
	for _, c := range drawnColors {
		if n := countColor(img, c, 16); n > 0 {
			t.Fatalf("the desktop already shows %v in %d pixels; the test would prove nothing", c, n)
		}
	}
	for round, c := range drawnColors {
		// Twice on the unchanged screen: the second is served again.
		e.screenshot("screenshot", nil)
		e.screenshot("screenshot", nil)
		paintRoot(t, d, c)
		img, _ := e.screenshot("screenshot", nil)
		if n := countColor(img, c, 16); n < whole/2 {
			t.Errorf("round %d: the screenshot after painting the desktop %v shows it in %d of %d pixels, want at least half", round, c, n, whole)
		}
		if n := countColor(d.Screenshot(t), c, 0); n == 0 {
			t.Fatalf("round %d: the real screen does not show %v; the test would prove nothing", round, c)
		}
	}
}

// TestScreenshotReuseStaleClick: a click after a served-again screenshot
// goes through while the screen is unchanged, and is refused as stale once
// the place under it was repainted: patch_check answers for the new
// capture id with the pixels the image was made from.
func TestScreenshotReuseStaleClick(t *testing.T) {
	desktoptest.Require(t, "xsetroot")
	d := newDesktop(t, desktoptest.Options{})
	e := serve(t, d)
	// The bare desktop near the bottom left corner.
	e.screenshot("screenshot", nil)
	x, y := 60+e.shot.Display.Origin.X, e.shot.Display.Origin.Y+e.shot.Display.Size.Height-60
	for _, c := range drawnColors {
		e.screenshot("screenshot", nil)
		e.screenshot("screenshot", nil)
		e.ok("left_click", map[string]any{"coordinate": e.at(x, y)})
		if !e.pointerNear(x, y, 3) {
			t.Fatalf("the click after an unchanged screenshot did not happen")
		}
		e.screenshot("screenshot", nil)
		e.screenshot("screenshot", nil)
		paintRoot(t, d, c)
		e.bad("left_click", map[string]any{"coordinate": e.at(x+40, y-20)}, "stale screenshot", "take a new screenshot")
	}
}

// TestScreenshotReuseFollowsAccessGrant: granting an app changes the mask
// but draws nothing, so the screenshot after it must be a new capture that
// shows the app's window, not the masked image served again; and the
// window stays out of every screenshot before the grant.
func TestScreenshotReuseFollowsAccessGrant(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	ok := d.StartGTK(t, "approved")
	d.Move(t, ok.ID, 100, 100, 0, 0)
	secretWindow(t, d, 150, 120)
	e := gatedServer(t, d, nil, "--allow", "zenity", "--allow", "xwud", "--hide-unapproved=false", "--format", "png")
	e.access([]string{"zenity"})
	for i := 1; i <= 3; i++ {
		if n := countColor(imageOf(t, e.ok("screenshot", nil)), secretColor, 0); n > 0 {
			t.Fatalf("screenshot %d before the grant shows the unapproved window in %d pixels", i, n)
		}
	}
	e.access([]string{"xwud"})
	img := imageOf(t, e.ok("screenshot", nil))
	screen := d.Screenshot(t)
	// The window's visible pixels on the real screen, in image pixels.
	want := countColor(screen, secretColor, 0) * img.Bounds().Dx() * img.Bounds().Dy() /
		(screen.Bounds().Dx() * screen.Bounds().Dy())
	if want < 10000 {
		t.Fatalf("the real screen shows the window in only %d image pixels; the test would prove nothing", want)
	}
	if n := countColor(img, secretColor, 0); n < want*8/10 {
		t.Errorf("the screenshot after granting xwud shows its window in %d pixels, want about %d", n, want)
	}
}
