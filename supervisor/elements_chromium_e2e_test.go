//go:build unix

package supervisor_test

// End-to-end test of the element tools on Chromium: launch_app starts it
// from a desktop entry with renderer accessibility on, and get_app_state,
// click, type_text and set_value work on a local page's controls, through
// the built binary, the real helper and a private AT-SPI stack. The
// evidence is the page's own reaction (its script rewrites a line and the
// title, read back through the tree and _NET_WM_NAME), xwininfo's
// geometry and a pixel count of the button's unique colour.

import (
	"fmt"
	"image"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// testPageEntry installs a desktop entry that opens testdata's page in
// Chromium, the way a user's browser shortcut would, and returns its id.
// Root needs --no-sandbox; the GPU flags keep it off GL on Xvfb.
func testPageEntry(t *testing.T, d *desktoptest.Desktop, browser string) string {
	t.Helper()
	page, err := filepath.Abs(filepath.Join("testdata", "a11yapps", "page.html"))
	if err != nil {
		t.Fatal(err)
	}
	profile := t.TempDir()
	entry := "[Desktop Entry]\nType=Application\nName=Deskhand Test Page\n" +
		"Exec=" + browser + " --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --no-default-browser-check" +
		" --password-store=basic --disable-background-networking --disable-component-update --disable-sync" +
		" --class=DeskhandTestPage --window-position=60,40 --window-size=900,700" +
		" --user-data-dir=" + profile + " file://" + page + "\n" +
		"StartupWMClass=DeskhandTestPage\n"
	dir := filepath.Join(d.Dir(), "data", "applications")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "deskhand-test-page.desktop"), []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	return "deskhand-test-page"
}

// waitStateLong is waitState with a deadline a browser on a loaded
// two-core machine needs: its renderer's tree comes seconds after the
// window.
func (e *e2e) waitStateLong(pid int, re string) string {
	e.t.Helper()
	return e.waitStateWithin(pid, re, 120*time.Second)
}

// boundsOf returns the @(x,y wxh) of element id in a state's text.
func boundsOf(t *testing.T, state, id string) image.Rectangle {
	t.Helper()
	m := regexp.MustCompile(`@\((-?\d+),(-?\d+) (\d+)x(\d+)\)`).FindStringSubmatch(lineOf(state, id))
	if m == nil {
		t.Fatalf("element %s has no bounds: %q", id, lineOf(state, id))
	}
	n := make([]int, 4)
	for i := range n {
		n[i], _ = strconv.Atoi(m[i+1])
	}
	return image.Rect(n[0], n[1], n[0]+n[2], n[1]+n[3])
}

// colourBox is the bounding box of the pixels of exactly colour c.
func colourBox(img *image.RGBA, r, g, b uint8) (image.Rectangle, int) {
	box, count := image.Rectangle{}, 0
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
		for x := img.Rect.Min.X; x < img.Rect.Max.X; x++ {
			p := img.RGBAAt(x, y)
			if p.R == r && p.G == g && p.B == b {
				box = box.Union(image.Rect(x, y, x+1, y+1))
				count++
			}
		}
	}
	return box, count
}

func near(a, b image.Rectangle, px int) bool {
	abs := func(v int) int { return max(v, -v) }
	return abs(a.Min.X-b.Min.X) <= px && abs(a.Min.Y-b.Min.Y) <= px && abs(a.Max.X-b.Max.X) <= px && abs(a.Max.Y-b.Max.Y) <= px
}

// TestElementsChromium: launch_app starts Chromium with
// --force-renderer-accessibility; the page's button, text field, check box
// and slider are in get_app_state, the button where its magenta pixels
// are on the screen; a click by element id runs the page's script, and
// set_value checks the check box and moves the slider, all read back
// through the tree. Text cannot go into Chromium's fields through the API
// (they have no EditableText): type_text and set_value refuse it.
func TestElementsChromium(t *testing.T) {
	desktoptest.Require(t, "chromium", "xwininfo", "xdotool")
	d := a11yDesktop(t)
	app := testPageEntry(t, d, "chromium")
	e := gatedServer(t, d, nil, "--allow", app+"=full")
	e.access([]string{app})

	res := e.ok("launch_app", map[string]any{"app": app})
	data, _ := res.StructuredContent.(map[string]any)
	pid := int(data["pid"].(float64))
	t.Cleanup(func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }) // launch_app started it in its own session
	if exec := fmt.Sprint(data["exec"]); !strings.Contains(exec, "--force-renderer-accessibility") {
		t.Errorf("launch_app ran %s, without --force-renderer-accessibility", exec)
	}

	state := e.waitStateLong(pid, `push button "Press me"`)
	button := elementID(t, state, "push button", "Press me")

	// The screenshot is the window's frame (xwininfo), and the button's
	// bounds are where its unique colour is on the screen.
	win, _ := data["window"].(map[string]any)
	xid := uint32(win["id"].(float64))
	frame := d.WindowInfo(t, xid).Frame
	if want := fmt.Sprintf(`"screen_rect":{"x":%d,"y":%d,"width":%d,"height":%d}`, frame.X, frame.Y, frame.Width, frame.Height); !strings.Contains(state, want) {
		t.Errorf("the state's screenshot is not the window's frame %s (xwininfo)", frame)
	}
	got := boundsOf(t, state, button).Add(image.Pt(frame.X, frame.Y))
	magenta, n := colourBox(d.Screenshot(t), 0xff, 0x00, 0xff)
	if n < 200*60/2 || !near(got, magenta, 3) {
		t.Errorf("the button is at %v on the screen by the tree, its magenta pixels (%d) at %v", got, n, magenta)
	}
	if magenta.Dx() < 195 || magenta.Dy() < 55 {
		t.Errorf("the magenta button is %v, not the page's 200x60", magenta)
	}

	field := elementID(t, state, "entry", "Your name")
	check := elementID(t, state, "check box", "I agree")
	slider := elementID(t, state, "slider", "Level")
	for _, id := range []string{field, check, slider} {
		if b := boundsOf(t, state, id); b.Dx() <= 0 || b.Dy() <= 0 {
			t.Errorf("element %s has empty bounds: %q", id, lineOf(state, id))
		}
	}

	// Chromium 156 gives its text fields no EditableText interface on
	// Linux, so text cannot go in through the accessibility API: both
	// tools say so and nothing is typed.
	e.bad("type_text", map[string]any{"pid": pid, "element_id": field, "text": "Ada"}, "no editable text")
	e.bad("set_value", map[string]any{"pid": pid, "element_id": field, "value": "Ada"}, "no editable text")
	e.ok("set_value", map[string]any{"pid": pid, "element_id": check, "value": true})
	e.ok("set_value", map[string]any{"pid": pid, "element_id": slider, "value": 42})
	state = e.waitStateLong(pid, `\[`+check+`\] check box "I agree"[^\n]*[{ ]checked`)
	if l := lineOf(state, slider); !strings.Contains(l, "range=42") {
		t.Errorf("after set_value(42) the slider is %q", l)
	}
	if l := lineOf(state, field); !strings.Contains(l, `value=""`) {
		t.Errorf("the refused text reached the field: %q", l)
	}

	d.Run(t, "xdotool", "mousemove", "1500", "950")
	px, py := e.mouseLocation()
	res = e.ok("click", map[string]any{"pid": pid, "element_id": button})
	if !strings.Contains(resultText(res), "in the background") {
		t.Errorf("click by id did not run through the accessibility API: %s", resultText(res))
	}
	state = e.waitStateLong(pid, `"pressed 1 times, name"`)
	if x, y := e.mouseLocation(); x != px || y != py {
		t.Errorf("the pointer moved from (%d, %d) to (%d, %d)", px, py, x, y)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(d.Run(t, "xdotool", "getwindowname", strconv.FormatUint(uint64(xid), 10)), "deskhand page pressed") {
		if time.Now().After(deadline) {
			t.Fatalf("the window title never became the one the page's script sets")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
