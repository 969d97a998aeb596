//go:build unix

package supervisor_test

// End-to-end test of the staleness gate's shortcut: the display gate's
// connection follows DAMAGE, and a click whose target nothing was drawn
// over since the screenshot passes without asking the helper, while one
// drawn over is still refused.
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run StaleDrawn -v

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// helperPid is the pid of the server's capture helper.
func helperPid(t *testing.T, e *e2e) int {
	t.Helper()
	for _, child := range childPids(e.cmd.Process.Pid) {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(child) + "/comm"); err == nil && strings.TrimSpace(string(b)) == "deskhand-helper" {
			return child
		}
	}
	t.Fatal("the server has no capture helper")
	return 0
}

// rootPainter draws filled rectangles straight onto the bare desktop (the
// root window), over nothing any window shows: a repaint no window event
// announces, and no app's tier stands in the way of a click there.
func rootPainter(t *testing.T, d *desktoptest.Desktop) func(x, y, w, h int, rgb uint32) {
	t.Helper()
	conn, err := xgb.NewConnDisplay(d.Display())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(conn.Close)
	root := xproto.Setup(conn).DefaultScreen(conn).Root
	gc, err := xproto.NewGcontextId(conn)
	if err != nil {
		t.Fatal(err)
	}
	xproto.CreateGC(conn, gc, xproto.Drawable(root), 0, nil)
	return func(x, y, w, h int, rgb uint32) {
		xproto.ChangeGC(conn, gc, xproto.GcForeground, []uint32{rgb})
		xproto.PolyFillRectangle(conn, xproto.Drawable(root), gc, []xproto.Rectangle{{X: int16(x), Y: int16(y), Width: uint16(w), Height: uint16(h)}})
		if _, err := xproto.GetInputFocus(conn).Reply(); err != nil { // drawn before the click
			t.Fatal(err)
		}
	}
}

// TestStaleDrawnSkipsTheHelper: with the helper stopped (SIGSTOP, so any
// request to it goes unanswered), a click on a target nothing was drawn
// over since the screenshot still goes through: the display vouched for
// it. A target repainted without any window changing (drawn onto the bare
// desktop) is still refused as stale, and a click elsewhere is not.
func TestStaleDrawnSkipsTheHelper(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	paint := rootPainter(t, d)
	// The effect report and the sign of control are the helper's own
	// work on every action (the damage it saw; the badge that raises
	// itself over a window a click raised): off here, where the point is
	// that the staleness gate needs no helper.
	e := serve(t, d, "--indicator", "off", "--no-effect")
	e.screenshot("screenshot", nil)
	h := e.shot.Display.Size.Height
	target, bare := []int{200, h - 200}, []int{60, h - 60}
	toScreen := func(p []int) (int, int) { return p[0] + e.shot.Display.Origin.X, p[1] + e.shot.Display.Origin.Y }

	// The turn's first actions hide and list windows through the helper;
	// after them the gates' window table stands while no window changes.
	x, y := toScreen(bare)
	e.ok("left_click", map[string]any{"coordinate": e.at(x, y)})
	e.screenshot("screenshot", nil)

	helper := helperPid(t, e)
	if err := syscall.Kill(helper, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			syscall.Kill(helper, syscall.SIGCONT)
		}
	}()
	done := make(chan struct{})
	go func() {
		defer close(done)
		x, y := toScreen(target)
		e.ok("left_click", map[string]any{"coordinate": e.at(x, y)})
	}()
	// Not a timing assertion: a click that asks the stopped helper fails
	// on the helper's own deadline, and this bound only keeps the test
	// from hanging.
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("the click waited for the stopped helper")
	}
	if x, y := toScreen(target); !e.pointerNear(x, y, 3) {
		t.Fatal("the click on an undrawn target did not happen")
	}
	syscall.Kill(helper, syscall.SIGCONT)
	stopped = false
	// A request the stopped helper left unanswered would have had it
	// killed and replaced.
	if now := helperPid(t, e); now != helper {
		t.Fatalf("the click asked the stopped helper: it was replaced (pid %d, then %d)", helper, now)
	}

	for i, rgb := range []uint32{0xC81EA0, 0x1EC8B4, 0xC81EA0} {
		e.screenshot("screenshot", nil)
		tx, ty := toScreen(target)
		paint(tx-30, ty-30, 60, 60, rgb)
		e.bad("left_click", map[string]any{"coordinate": e.at(tx, ty)}, "stale screenshot", "take a new screenshot")
		x, y := toScreen(bare)
		if res := e.call("left_click", map[string]any{"coordinate": e.at(x, y)}); res.IsError {
			t.Fatalf("round %d: a click far from the repaint: %s", i, resultText(res))
		}
	}
}
