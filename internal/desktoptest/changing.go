//go:build unix

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
	conn, _, win, gc := d.overrideWindow(t, x, y, w, h)
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

// ChangingScreen maps an override-redirect window over the whole w×h
// screen and returns a function that shows the i-th of two busy images in
// it (smooth colour under dense text-like marks, different in every
// row) and returns once the X server has drawn it. Benchmarks call it
// between captures to measure a screen that changed everywhere, beside
// ChangingWindow's small change. The images are drawn once into pixmaps,
// so each change is one CopyArea. It assumes a 24-bit TrueColor screen
// with 32-bit pixels, as the benchmarks' Xvfb has.
func (d *Desktop) ChangingScreen(t testing.TB, w, h int) func(i int) {
	t.Helper()
	conn, screen, win, gc := d.overrideWindow(t, 0, 0, w, h)
	var pixmaps [2]xproto.Pixmap
	// PutImage in bands that fit the largest plain request.
	maxBytes := int(xproto.Setup(conn).MaximumRequestLength)*4 - 64
	bandRows := maxBytes / (w * 4)
	for k := range pixmaps {
		p, err := xproto.NewPixmapId(conn)
		if err != nil {
			t.Fatal(err)
		}
		xproto.CreatePixmap(conn, screen.RootDepth, p, xproto.Drawable(screen.Root), uint16(w), uint16(h))
		pixmaps[k] = p
		for top := 0; top < h; top += bandRows {
			rows := min(bandRows, h-top)
			data := make([]byte, 0, rows*w*4)
			for y := top; y < top+rows; y++ {
				for x := 0; x < w; x++ {
					r, g, b := busyPixel(x, y, k)
					data = append(data, b, g, r, 0)
				}
			}
			xproto.PutImage(conn, xproto.ImageFormatZPixmap, xproto.Drawable(p), gc,
				uint16(w), uint16(rows), 0, int16(top), 0, screen.RootDepth, data)
		}
	}
	if err := xproto.MapWindowChecked(conn, win).Check(); err != nil {
		t.Fatalf("mapping the changing screen: %v", err)
	}
	return func(i int) {
		xproto.CopyArea(conn, xproto.Drawable(pixmaps[i%2]), xproto.Drawable(win), gc, 0, 0, 0, 0, uint16(w), uint16(h))
		// A round trip: the copy is drawn before the capture is asked.
		if _, err := xproto.GetInputFocus(conn).Reply(); err != nil {
			t.Errorf("drawing the changing screen: %v", err)
		}
	}
}

// busyPixel is pixel (x, y) of ChangingScreen's k-th image.
func busyPixel(x, y, k int) (r, g, b byte) {
	if (x/3+y/5+k*3)%7 == 0 {
		return 20, 20, 30
	}
	return byte(x/8 + k*90), byte(y/5 + k*40), byte((x + y) / 12)
}

// overrideWindow opens a connection of its own to the display and creates
// (but does not map) a grey override-redirect window of w×h at (x, y)
// with a graphics context on it.
func (d *Desktop) overrideWindow(t testing.TB, x, y, w, h int) (*xgb.Conn, *xproto.ScreenInfo, xproto.Window, xproto.Gcontext) {
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
	return conn, screen, win, gc
}
