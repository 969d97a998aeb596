package desktoptest

import (
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// ChangingWindow maps an override-redirect window of w×h at (x, y) and
// returns a function that fills it with the i-th of two colours and
// returns once the X server has drawn it (it may be called from any
// goroutine). Benchmarks call it between
// captures so that every capture finds the screen changed and has to
// read, scale and encode it (the helper serves an unchanged screen's last
// image again).
func (d *Desktop) ChangingWindow(t testing.TB, x, y, w, h int) func(i int) {
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
		// A round trip: the fill is drawn before the capture is asked.
		// (Errorf, not Fatalf: a benchmark may call this from a goroutine.)
		if _, err := xproto.GetInputFocus(conn).Reply(); err != nil {
			t.Errorf("filling the changing window: %v", err)
		}
	}
}
