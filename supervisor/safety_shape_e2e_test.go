//go:build unix

package supervisor_test

// End-to-end tests of issue 24, classes 6 and 7: windows have shapes, and
// masking never covers what the user approved. A click is judged by the
// window that will receive it (input shapes honoured), a window is masked
// where it shows pixels (its visible shape), a mostly masked screenshot
// says so and names the app, and the ghost of a window hidden at the
// start of a turn is never painted over the approved window above it. The
// shaped windows are override-redirect windows of a small X program
// (testdata/shapedwin.c), as other agents' cursor overlays and GTK's drag
// icons are. The evidence is the X server's own view (which window the
// pointer is in, xdotool), the approved app acting on the click (zenity
// exits), and pixel counts of colours only one window shows, checked
// against the real screen (xwd).
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run SafetyShape -v

import (
	"bufio"
	"fmt"
	"image"
	"image/color"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// shapedWindow builds testdata/shapedwin.c once per test and shows an
// override-redirect window of WM_CLASS class at (x, y) w×h in colour c,
// with the bounding (visible) and input shapes given as "full", "none" or
// "x,y,w,h". It returns the window id once it is mapped, and a func that
// closes it.
func shapedWindow(t *testing.T, d *desktoptest.Desktop, bin, class string, x, y, w, h int, c color.RGBA, visible, input string) (uint32, func()) {
	t.Helper()
	cmd := d.Command(bin, class, strconv.Itoa(x), strconv.Itoa(y), strconv.Itoa(w), strconv.Itoa(h),
		fmt.Sprintf("%02X%02X%02X", c.R, c.G, c.B), visible, input)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	stop := func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
	t.Cleanup(stop)
	line, err := bufio.NewReader(out).ReadString('\n')
	var id uint64
	if err == nil {
		_, err = fmt.Sscanf(line, "ready 0x%x", &id)
	}
	if err != nil {
		t.Fatalf("%s %s: %q: %v (stderr %q)", bin, class, line, err, stderr.String())
	}
	return uint32(id), stop
}

func buildShapedWin(t *testing.T) string {
	t.Helper()
	desktoptest.Require(t, "gcc")
	bin := filepath.Join(t.TempDir(), "shapedwin")
	if out, err := exec.Command("gcc", "-o", bin, "testdata/shapedwin.c", "-lX11", "-lXext").CombinedOutput(); err != nil {
		t.Fatalf("building shapedwin (needs libx11-dev and libxext-dev): %v: %s", err, out)
	}
	return bin
}

// pointerWindow is the child of the root the X server delivers pointer
// events at (x, y) to, moving the pointer there.
func pointerWindow(t *testing.T, d *desktoptest.Desktop, x, y int) uint32 {
	t.Helper()
	d.Run(t, "xdotool", "mousemove", strconv.Itoa(x), strconv.Itoa(y))
	out := d.Run(t, "xdotool", "getmouselocation", "--shell")
	m := regexp.MustCompile(`WINDOW=(\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("xdotool getmouselocation: %q", out)
	}
	id, _ := strconv.ParseUint(m[1], 10, 32)
	return uint32(id)
}

// dominantColor is the commonest colour in r of img.
func dominantColor(img *image.RGBA, r image.Rectangle) color.RGBA {
	counts := map[color.RGBA]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			counts[img.RGBAAt(x, y)]++
		}
	}
	var best color.RGBA
	for c, n := range counts {
		if n > counts[best] {
			best = c
		}
	}
	return best
}

// share is the fraction of img's pixels that are exactly c.
func share(img *image.RGBA, c color.RGBA) float64 {
	b := img.Bounds()
	return float64(countColor(img, c, 0)) / float64(b.Dx()*b.Dy())
}

// zenityShare checks that c, the colour only the approved zenity window
// shows, covers at least 90% of the share of deskhand's image that it
// covers of the real screen.
func zenityShare(t *testing.T, what string, got, real *image.RGBA, c color.RGBA) {
	t.Helper()
	want := share(real, c)
	if want < 0.01 {
		t.Fatalf("zenity's colour %v covers only %.4f of the real screen; the test would prove nothing", c, want)
	}
	if have := share(got, c); have < 0.9*want {
		t.Errorf("%s: zenity's colour %v covers %.4f of deskhand's image but %.4f of the real screen: the approved window is painted over", what, c, have, want)
	}
}

// TestSafetyShapeOverlays: an unapproved app's full-screen overlay that
// shows a small cursor and lets every click through hides nothing and
// blocks nothing (its cursor is masked, the approved app under it is
// shown and clicked); an input-transparent drag icon of a full-tier app
// over a click-tier terminal does not lend its tier to a button release
// that the terminal receives; and a screenshot that is mostly masked says
// so and names the app.
func TestSafetyShapeOverlays(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	bin := buildShapedWin(t)
	ok := d.StartGTK(t, "approved")
	d.Move(t, ok.ID, 100, 100, 0, 0)
	term := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"-geometry", "60x20+900+150"}, Class: "XTerm"})
	d.Focus(t, ok.ID)
	ok, term = d.WindowInfo(t, ok.ID), d.WindowInfo(t, term.ID)

	// The cursor overlay: the whole screen, showing a 24×24 cursor of the
	// secret colour, taking no input.
	overlay, _ := shapedWindow(t, d, bin, "CursorOverlay", 0, 0, 1920, 1080, secretColor, "1400,800,24,24", "none")
	// The drag icon: 64×64 over the terminal, input-transparent.
	tx, ty := center(term, 0, 0)
	iconColor := color.RGBA{0xC4, 0x3B, 0x91, 0xff}
	icon, _ := shapedWindow(t, d, bin, "DragIcon", tx-32, ty-32, 64, 64, iconColor, "full", "none")

	real := d.Screenshot(t)
	if n := countColor(real, secretColor, 0); n != 24*24 {
		t.Fatalf("the overlay's cursor shows in %d pixels of the real screen, want %d; the test would prove nothing", n, 24*24)
	}
	zx, zy := center(ok, 0, 0)
	if w := pointerWindow(t, d, zx, zy); w == overlay {
		t.Fatalf("the X server gives a click on zenity to the overlay; the test would prove nothing")
	}
	if w := pointerWindow(t, d, tx, ty); w == icon {
		t.Fatalf("the X server gives a click on the terminal to the drag icon; the test would prove nothing")
	}
	zenityColor := dominantColor(real, image.Rect(ok.Client.X, ok.Client.Y, ok.Client.X+ok.Client.Width, ok.Client.Y+ok.Client.Height))

	e := gatedServer(t, d, nil, "--allow", "zenity", "--allow", "xterm", "--allow", "DragIcon=full", "--hide-unapproved=false", "--format", "png")
	e.access([]string{"zenity", "xterm", "DragIcon"})
	// Each step reports its own failures through e.
	step := func(name string, f func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			parent := e.t
			e.t = t
			defer func() { e.t = parent }()
			f(t)
		})
	}

	step("overlay hides nothing", func(t *testing.T) {
		res := e.ok("screenshot", nil)
		img := imageOf(t, res)
		zenityShare(t, "screenshot under the overlay", img, real, zenityColor)
		if n := countColor(img, secretColor, 0); n > 0 {
			t.Errorf("the screenshot shows the unapproved overlay's cursor in %d pixels", n)
		}
		if text := resultText(res); strings.Contains(text, "masked") {
			t.Errorf("the screenshot text speaks of a mask over most of it: %q", text)
		}
	})

	step("drag icon lends no tier", func(t *testing.T) {
		e.screenshot("screenshot", nil)
		e.ok("mouse_move", map[string]any{"coordinate": e.at(tx, ty)})
		if w := pointerWindow(t, d, tx, ty); w == icon {
			t.Fatalf("the pointer is in the drag icon")
		}
		t.Log(e.bad("left_mouse_up", map[string]any{}, "XTerm"))
	})

	step("overlay blocks no click", func(t *testing.T) {
		// zenity --info's OK button is at the bottom right of its window;
		// pressing it ends zenity.
		bx, by := ok.Client.X+ok.Client.Width-45, ok.Client.Y+ok.Client.Height-25
		e.screenshot("screenshot", nil)
		e.ok("left_click", map[string]any{"coordinate": e.at(bx, by)})
		waitFor(t, "zenity to end on the click on its OK button", 10*time.Second, func() bool {
			return !slices.Contains(d.ClientList(t), ok.ID)
		})
	})

	step("mostly masked says so", func(t *testing.T) {
		_, stop := shapedWindow(t, d, bin, "CursorOverlay", 0, 0, 1920, 1080, secretColor, "full", "none")
		defer stop()
		res := e.ok("screenshot", nil)
		if n := countColor(imageOf(t, res), secretColor, 0); n > 0 {
			t.Errorf("the screenshot shows the unapproved overlay in %d pixels", n)
		}
		text := resultText(res)
		t.Log(text)
		if !strings.Contains(text, "of this image is masked") || !strings.Contains(strings.ToLower(text), "cursoroverlay") {
			t.Errorf("the screenshot text does not say that most of it is masked, for CursorOverlay: %q", text)
		}
	})
}

// TestSafetyShapeFirstShot: the first screenshot of a turn, taken right
// after the unapproved windows under the approved zenity are hidden, shows
// zenity as the real screen does: the places the hidden windows left are
// painted only where they were themselves visible.
func TestSafetyShapeFirstShot(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	var terms []*desktoptest.Window
	for i, at := range []string{"+60+60", "+300+140", "+150+260"} {
		terms = append(terms, d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"-title", fmt.Sprint("under ", i), "-geometry", "70x20" + at}, Class: "XTerm"}))
	}
	ok := d.StartGTK(t, "approved")
	d.Move(t, ok.ID, 200, 180, 0, 0)
	d.Focus(t, ok.ID)
	ok = d.WindowInfo(t, ok.ID)
	before := d.Screenshot(t)
	zenityColor := dominantColor(before, image.Rect(ok.Client.X, ok.Client.Y, ok.Client.X+ok.Client.Width, ok.Client.Y+ok.Client.Height))

	e := gatedServer(t, d, nil, "--allow", "zenity", "--format", "png")
	e.access([]string{"zenity"})
	img, _ := e.screenshot("screenshot", nil)
	for _, w := range terms {
		if !d.WindowInfo(t, w.ID).Minimized() {
			t.Fatalf("xterm %d is not hidden; the test would prove nothing", w.ID)
		}
	}
	zenityShare(t, "the turn's first screenshot", img, d.Screenshot(t), zenityColor)
}
