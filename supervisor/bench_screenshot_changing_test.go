package supervisor_test

import (
	"os"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestBenchScreenshotChanging measures MCP screenshots of a screen that
// changed since the previous one: a small window over the scene is filled
// with another colour before each screenshot, outside the timed part, so
// the helper cannot serve its last image again and every screenshot reads,
// scales and encodes. TestBenchMCP's mcp_screenshot_1080p_ms is the same
// call on an unchanged screen. Only under `make bench` (DESKHAND_BENCH=1).
func TestBenchScreenshotChanging(t *testing.T) {
	if os.Getenv("DESKHAND_BENCH") == "" {
		t.Skip("benchmarks run under `make bench` (DESKHAND_BENCH=1)")
	}
	d := newDesktop(t, desktoptest.Options{Width: 1920, Height: 1080, Depth: 24})
	putScene(t, d, 40, 60)
	change := changingWindow(t, d, 1200, 200, 240, 120)
	e := serve(t, d, "--log-level", "warn")
	for i := range 5 {
		change(i)
		e.benchCall("screenshot", nil) // warm up the helper and its buffers
	}
	samples := make([]time.Duration, 50)
	for i := range samples {
		change(i)
		start := time.Now()
		e.benchCall("screenshot", nil)
		samples[i] = time.Since(start)
	}
	report("mcp_screenshot_changed_1080p_ms", ms(median(samples)), "ms")
}

// changingWindow maps an override-redirect window of w×h at (x, y) and
// returns a function that fills it with the i-th of two colours and
// returns once the server has drawn it.
func changingWindow(t *testing.T, d *desktoptest.Desktop, x, y, w, h int) func(i int) {
	t.Helper()
	conn, err := xgb.NewConnDisplay(d.Display())
	if err != nil {
		t.Fatalf("connecting to %s: %v", d.Display(), err)
	}
	t.Cleanup(conn.Close)
	screen := xproto.Setup(conn).DefaultScreen(conn)
	win, err := xproto.NewWindowId(conn)
	if err != nil {
		t.Fatal(err)
	}
	gc, err := xproto.NewGcontextId(conn)
	if err != nil {
		t.Fatal(err)
	}
	xproto.CreateWindow(conn, screen.RootDepth, win, screen.Root, int16(x), int16(y), uint16(w), uint16(h), 0,
		xproto.WindowClassInputOutput, screen.RootVisual,
		xproto.CwBackPixel|xproto.CwOverrideRedirect, []uint32{0x808080, 1})
	xproto.CreateGC(conn, gc, xproto.Drawable(win), 0, nil)
	if err := xproto.MapWindowChecked(conn, win).Check(); err != nil {
		t.Fatalf("mapping the changing window: %v", err)
	}
	colours := []uint32{0xD03030, 0x30A0D0} // TrueColor, depth 24
	return func(i int) {
		xproto.ChangeGC(conn, gc, xproto.GcForeground, []uint32{colours[i%2]})
		xproto.PolyFillRectangle(conn, xproto.Drawable(win), gc, []xproto.Rectangle{{Width: uint16(w), Height: uint16(h)}})
		// A round trip: the fill is drawn before the screenshot is asked.
		if _, err := xproto.GetInputFocus(conn).Reply(); err != nil {
			t.Fatalf("filling the changing window: %v", err)
		}
	}
}
