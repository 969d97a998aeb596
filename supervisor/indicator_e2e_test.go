//go:build unix

package supervisor_test

// End-to-end test of the sign of control (issue 25): while a turn is
// active the helper's badge is on the real screen (ImageMagick's `import
// -window root`, counting the badge's own colour), never in deskhand's
// screenshots, and a click where it is lands on the app under it (an
// xterm in mouse-reporting mode whose shell writes what it gets to a
// file); the user's Escape or the client's disconnect takes it down, and
// --indicator off shows none.
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run Indicator -v

import (
	"image"
	"image/color"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// indicatorFill is the badge's fill (helpers/linux/src/teach/indicator.rs FILL).
var indicatorFill = [3]uint8{0xC8, 0x1D, 0x6B}

// fillBox counts the pixels of exactly the badge's fill in img and
// returns their bounding box.
func fillBox(img *image.RGBA) (int, image.Rectangle) {
	n, box := 0, image.Rectangle{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			i := img.PixOffset(x, y)
			if img.Pix[i] == indicatorFill[0] && img.Pix[i+1] == indicatorFill[1] && img.Pix[i+2] == indicatorFill[2] {
				n++
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return n, box
}

// nearFill counts the pixels of img within a JPEG's error of the
// badge's fill.
func nearFill(img *image.RGBA) int {
	n := 0
	for i := 0; i+3 < len(img.Pix); i += 4 {
		if abs(int(img.Pix[i])-int(indicatorFill[0])) < 40 && abs(int(img.Pix[i+1])-int(indicatorFill[1])) < 40 && abs(int(img.Pix[i+2])-int(indicatorFill[2])) < 40 {
			n++
		}
	}
	return n
}

// countOther counts the pixels of r in img that are not c.
func countOther(img *image.RGBA, r image.Rectangle, c color.RGBA) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if img.RGBAAt(x, y) != c {
				n++
			}
		}
	}
	return n
}

func TestIndicatorShownWhileInControl(t *testing.T) {
	desktoptest.Require(t, "import")
	// Small enough that screenshots are not scaled, so colours stay exact.
	d := newDesktop(t, desktoptest.Options{Width: 1280, Height: 800})
	// A fullscreen xterm under the whole screen, whose shell records the
	// mouse reports xterm sends it (DECSET 1000) in clicks.
	clicks := filepath.Join(t.TempDir(), "clicks")
	d.StartApp(t, desktoptest.App{Name: "xterm", Class: "XTerm", Args: []string{"-fullscreen", "-e", "sh", "-c",
		`stty raw -echo; printf '\033[?1000h'; exec cat > ` + clicks}})
	onScreen := func() (int, image.Rectangle) { return fillBox(importRoot(t, d)) }
	if n, _ := onScreen(); n != 0 {
		t.Fatalf("%d pixels of the indicator's colour on the screen before deskhand ran", n)
	}

	// PNG, so the colour count is exact.
	e := serve(t, d, "--format", "png")
	if n, _ := onScreen(); n != 0 {
		t.Fatalf("%d pixels of the indicator's colour on the screen before the first action", n)
	}
	shot, _ := e.screenshot("screenshot", nil)
	n, box := onScreen()
	// Text is drawn over the fill, so not every pixel of the box is it.
	if n == 0 || n < area(box)/2 {
		t.Fatalf("while deskhand is in control the screen has %d pixels of the indicator's colour in %v, want a badge", n, box)
	}
	if box.Dy() > 40 {
		t.Errorf("the badge is %v, %d pixels tall: not small", box, box.Dy())
	}
	if b := shot.Bounds(); b.Dx() != 1280 || b.Dy() != 800 {
		t.Fatalf("the screenshot is %v, want the unscaled 1280x800", b)
	}
	if got, _ := fillBox(shot); got != 0 {
		t.Errorf("deskhand's screenshot has %d pixels of the indicator's colour, want 0", got)
	}
	// Again, now that the last image could be served or updated.
	shot, _ = e.screenshot("screenshot", nil)
	if got, _ := fillBox(shot); got != 0 {
		t.Errorf("deskhand's second screenshot has %d pixels of the indicator's colour, want 0", got)
	}
	// Where the badge is, the screenshot shows the xterm's empty
	// background under it (not a mask, not the badge).
	bg := shot.RGBAAt(box.Min.X, box.Max.Y+40)
	if n := countOther(shot, box, bg); n != 0 {
		t.Errorf("deskhand's screenshot has %d pixels of %v that are not the xterm's background %v under it", n, box, bg)
	}
	if n, _ := onScreen(); n == 0 {
		t.Fatal("the indicator went away after a screenshot")
	}

	// The model clicks where the badge is: the xterm under it gets it.
	mid := image.Pt((box.Min.X+box.Max.X)/2, (box.Min.Y+box.Max.Y)/2)
	e.ok("left_click", map[string]any{"coordinate": e.at(mid.X, mid.Y)})
	waitFor(t, "the xterm under the badge to report the click", 10*time.Second, func() bool {
		data, _ := os.ReadFile(clicks)
		return len(data) > 0
	})

	// The user's Escape ends the turn and takes the badge down.
	d.Run(t, "xdotool", "key", "Escape")
	waitFor(t, "the indicator to go after the user's Escape", 20*time.Second, func() bool { n, _ := onScreen(); return n == 0 })

	// A disconnect ends the turn too. Scaled JPEG screenshots this time:
	// the second is updated from the rows drawn since the first, which
	// must include those under the badge, read with it moved aside.
	e2 := serve(t, d, "--max-long-edge", "1000")
	for i := range 2 {
		shot, _ := e2.screenshot("screenshot", nil)
		if n := nearFill(shot); n != 0 {
			t.Errorf("scaled JPEG screenshot %d has %d pixels near the indicator's colour, want 0", i+1, n)
		}
	}
	if nearFill(importRoot(t, d)) == 0 {
		t.Fatal("no indicator on the screen during the second server's turn")
	}
	e2.cs.Close()
	waitFor(t, "the indicator to go after the client disconnected", 20*time.Second, func() bool { n, _ := onScreen(); return n == 0 })

	// --indicator off: nothing, though deskhand is in control.
	off := serve(t, d, "--indicator", "off")
	off.screenshot("screenshot", nil)
	off.ok("mouse_move", map[string]any{"coordinate": off.at(mid.X, mid.Y+100)})
	if n, _ := onScreen(); n != 0 {
		t.Errorf("with --indicator off the screen has %d pixels of the indicator's colour", n)
	}
}
