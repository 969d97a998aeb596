//go:build unix

package bridge_test

// The teaching overlay through the bridge client and the real helper on a
// real Xvfb desktop with openbox and xterm: ImageMagick's `import -window
// root` sees the tooltip by its anchor, the helper's captures never do,
// xdotool's clicks and Escape (XTEST, as deskhand's own input is) choose
// nothing, and the user's do.
//
// Xvfb has no input hardware, so the user is a second master device,
// "teach-user", driven through XTEST from a connection whose client
// pointer is that master: the server reports those events with the
// master's own XTEST slave as their XInput 2 source, and the helper is
// told to trust that slave by name (DESKHAND_TEACH_TRUSTED_DEVICES,
// test-only). This proves the helper decides by the source device and
// refuses the one deskhand and xdotool inject through; it cannot prove
// a physical mouse works.

import (
	"bytes"
	"image"
	"image/png"
	"strconv"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// tooltipFill is the tooltip's background (teach::overlay::BACKGROUND in
// the helper): no stock app draws it.
var tooltipFill = [3]uint8{0xFF, 0xF1, 0xB8}

type teachRect struct{ X, Y, Width, Height int }

type teachShown struct {
	Bounds teachRect `json:"bounds"`
	Next   teachRect `json:"next"`
	Exit   teachRect `json:"exit"`
}

type teachPoll struct {
	Visible bool    `json:"visible"`
	Choice  *string `json:"choice"`
}

func (r teachRect) centre() (int, int) { return r.X + r.Width/2, r.Y + r.Height/2 }

// countFill counts the pixels of exactly tooltipFill in r of img.
func countFill(img image.Image, r teachRect) int {
	n := 0
	for y := r.Y; y < r.Y+r.Height; y++ {
		for x := r.X; x < r.X+r.Width; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if uint8(cr>>8) == tooltipFill[0] && uint8(cg>>8) == tooltipFill[1] && uint8(cb>>8) == tooltipFill[2] {
				n++
			}
		}
	}
	return n
}

// importRoot is the screen as ImageMagick's `import -window root` reads it.
func importRoot(t *testing.T, d *desktoptest.Desktop) image.Image {
	t.Helper()
	out, err := d.Command("import", "-window", "root", "png:-").Output()
	if err != nil {
		t.Fatalf("import -window root: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("decoding import's PNG: %v", err)
	}
	return img
}

func capturePNG(t *testing.T, c *bridge.Client, req bridge.CaptureRequest) image.Image {
	t.Helper()
	req.Format = bridge.FormatPNG
	got, err := c.Capture(ctx(t), req)
	if err != nil {
		t.Fatalf("Capture(%+v): %v", req, err)
	}
	img, err := png.Decode(bytes.NewReader(got.Data))
	if err != nil {
		t.Fatalf("decoding the helper's PNG: %v", err)
	}
	return img
}

func teachShow(t *testing.T, c *bridge.Client, x, y int) teachShown {
	t.Helper()
	var shown teachShown
	params := map[string]any{
		"explanation":  "Click the Save button in the toolbar, then type a name for the file.",
		"next_preview": "types report.txt into the name field",
		"anchor":       map[string]int{"x": x, "y": y},
		"step":         1,
		"total":        3,
	}
	if err := c.Call(ctx(t), "teach_show", params, &shown); err != nil {
		t.Fatalf("teach_show: %v", err)
	}
	return shown
}

func teachPollNow(t *testing.T, c *bridge.Client) teachPoll {
	t.Helper()
	var p teachPoll
	if err := c.Call(ctx(t), "teach_poll", nil, &p); err != nil {
		t.Fatalf("teach_poll: %v", err)
	}
	return p
}

// waitChoice polls until the user's choice is made and returns it.
func waitChoice(t *testing.T, c *bridge.Client) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p := teachPollNow(t, c)
		if p.Choice != nil {
			return *p.Choice
		}
		if time.Now().After(deadline) {
			t.Fatalf("no choice after 30 s (poll %+v)", p)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTeachOverlayAcceptance(t *testing.T) {
	desktoptest.Require(t, "xinput", "xdotool", "import")
	trusted := "DESKHAND_TEACH_TRUSTED_DEVICES=" + desktoptest.HandPointer + "," + desktoptest.HandKeyboard
	d, c := acceptance(t, desktoptest.Options{}, trusted)
	if !c.HandshakeInfo().Has("teach") {
		t.Fatalf("the helper does not list the teach capability on Xvfb with openbox: %+v", c.HandshakeInfo())
	}
	xterm := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"-geometry", "100x30+200+150"}})
	before := capturePNG(t, c, bridge.CaptureRequest{})

	shown := teachShow(t, c, xterm.Frame.X+40, xterm.Frame.Y+40)
	b := shown.Bounds
	if b.X < xterm.Frame.X+40 || b.Y < xterm.Frame.Y+40 {
		t.Errorf("tooltip bounds %+v are not below and right of the anchor (%d, %d)", b, xterm.Frame.X+40, xterm.Frame.Y+40)
	}
	area := b.Width * b.Height
	if n := countFill(importRoot(t, d), b); n*2 < area {
		t.Fatalf("import -window root shows %d tooltip pixels in its %d-pixel bounds %+v, want most", n, area, b)
	}

	t.Run("captures leave it out", func(t *testing.T) {
		full := capturePNG(t, c, bridge.CaptureRequest{})
		if n := countFill(full, b); n != 0 {
			t.Errorf("the full capture holds %d tooltip pixels", n)
		}
		// xterm is idle: under the tooltip the capture is what it was.
		diff := 0
		for y := b.Y; y < b.Y+b.Height; y++ {
			for x := b.X; x < b.X+b.Width; x++ {
				if full.At(x, y) != before.At(x, y) {
					diff++
				}
			}
		}
		if diff != 0 {
			t.Errorf("the capture differs from the one before teach_show in %d of the %d pixels under the tooltip", diff, area)
		}
		zoom := capturePNG(t, c, bridge.CaptureRequest{Rect: &bridge.Rect{X: b.X - 10, Y: b.Y - 10, Width: b.Width + 20, Height: b.Height + 20}})
		if n := countFill(zoom, teachRect{0, 0, b.Width + 20, b.Height + 20}); n != 0 {
			t.Errorf("the zoomed capture holds %d tooltip pixels", n)
		}
		masked := capturePNG(t, c, bridge.CaptureRequest{Mask: []uint32{xterm.ID}})
		if n := countFill(masked, b); n != 0 {
			t.Errorf("the masked capture holds %d tooltip pixels", n)
		}
		if n := countFill(importRoot(t, d), b); n*2 < area {
			t.Errorf("after the captures import shows %d tooltip pixels, want most: the tooltip did not come back", n)
		}
	})

	t.Run("only the user chooses", func(t *testing.T) {
		user := desktoptest.NewHand(t, d)
		nx, ny := shown.Next.centre()
		// The model's kind of click on Next, then the user's on Exit: the
		// server hands the helper both in order, so "exit" means the
		// first click was ignored.
		d.Run(t, "xdotool", "mousemove", strconv.Itoa(nx), strconv.Itoa(ny), "click", "1")
		ex, ey := shown.Exit.centre()
		user.Click(ex, ey)
		if got := waitChoice(t, c); got != "exit" {
			t.Fatalf("after xdotool's click on Next and the user's on Exit the choice is %q, want exit: the XTEST click counted", got)
		}

		shown = teachShow(t, c, xterm.Frame.X+40, xterm.Frame.Y+40)
		if p := teachPollNow(t, c); p.Choice != nil || !p.Visible {
			t.Fatalf("teach_poll after teach_show = %+v, want visible with no choice", p)
		}
		d.Run(t, "xdotool", "key", "Escape")
		nx, ny = shown.Next.centre()
		user.Click(nx, ny)
		if got := waitChoice(t, c); got != "next" {
			t.Fatalf("after xdotool's Escape and the user's click on Next the choice is %q, want next: the XTEST Escape counted", got)
		}

		teachShow(t, c, xterm.Frame.X+40, xterm.Frame.Y+40)
		user.Escape()
		if got := waitChoice(t, c); got != "exit" {
			t.Fatalf("after the user's Escape the choice is %q, want exit", got)
		}
	})

	if err := c.Call(ctx(t), "teach_hide", nil, nil); err != nil {
		t.Fatalf("teach_hide: %v", err)
	}
	if p := teachPollNow(t, c); p.Visible || p.Choice != nil {
		t.Errorf("teach_poll after teach_hide = %+v, want hidden with no choice", p)
	}
	if n := countFill(importRoot(t, d), b); n != 0 {
		t.Errorf("import shows %d tooltip pixels after teach_hide", n)
	}
}

// TestTeachOverlayStaysOnItsMonitor: on two monitors of different
// heights, a tooltip anchored near an edge is drawn on the anchor's own
// monitor, flipped to the anchor's other side, and never across the edge
// or into the part of the root window no monitor shows.
func TestTeachOverlayStaysOnItsMonitor(t *testing.T) {
	desktoptest.Require(t, "import")
	left := desktoptest.Monitor{Name: "LEFT", X: 0, Y: 0, Width: 1600, Height: 1080, Primary: true}
	right := desktoptest.Monitor{Name: "RIGHT", X: 1600, Y: 0, Width: 1280, Height: 720}
	d, c := acceptance(t, desktoptest.Options{Width: 2880, Height: 1080, Monitors: []desktoptest.Monitor{left, right}})
	inside := func(r teachRect, m desktoptest.Monitor) bool {
		return r.X >= m.X && r.Y >= m.Y && r.X+r.Width <= m.X+m.Width && r.Y+r.Height <= m.Y+m.Height
	}
	cases := []struct {
		name   string
		x, y   int
		on     desktoptest.Monitor
		leftOf bool // the tooltip lies left of the anchor
		above  bool // the tooltip lies above the anchor
	}{
		{"left monitor, by its right edge", 1590, 100, left, true, false},
		{"right monitor, by its bottom edge", 1700, 710, right, false, true},
		{"right monitor, bottom-right corner", 2870, 715, right, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := teachShow(t, c, tc.x, tc.y).Bounds
			if !inside(b, tc.on) {
				t.Errorf("teach_show anchored at (%d, %d): bounds %+v are not inside monitor %s", tc.x, tc.y, b, tc.on.Name)
			}
			if got := b.X+b.Width <= tc.x; got != tc.leftOf {
				t.Errorf("bounds %+v: left of the anchor x=%d is %v, want %v", b, tc.x, got, tc.leftOf)
			}
			if got := b.Y+b.Height <= tc.y; got != tc.above {
				t.Errorf("bounds %+v: above the anchor y=%d is %v, want %v", b, tc.y, got, tc.above)
			}
			if n := countFill(importRoot(t, d), b); n*2 < b.Width*b.Height {
				t.Errorf("import shows %d tooltip pixels in bounds %+v, want most", n, b)
			}
		})
	}
	if err := c.Call(ctx(t), "teach_hide", nil, nil); err != nil {
		t.Fatalf("teach_hide: %v", err)
	}
}
