//go:build unix

package desktoptest

import (
	"encoding/binary"
	"io"
	"log"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"
)

// The user's hand. Xvfb has no input hardware, and every program's
// synthetic input, deskhand's and xdotool's alike, comes from the XTEST
// slaves of the core devices ("Virtual core XTEST pointer"), which the
// teaching tooltip ignores. So a test gives the user devices of their own:
// a second master ("teach-user"), whose XTEST slaves the helper is told to
// trust through DESKHAND_TEACH_TRUSTED_DEVICES (a test-only variable:
// deskhand never sets it, and a model cannot set a helper's environment).
// A Hand's input arrives through those slaves: its X connection makes the
// new master its client pointer (XI2 XISetClientPointer), so the X server
// routes its XTEST requests through the master's own XTEST slaves.
//
// What this proves: the tooltip takes input from a device it trusts and
// ignores that of the XTEST devices deskhand and xdotool inject through.
// It cannot prove that a physical mouse works, which no Xvfb test can.

// HandMaster names the master device of the user's hand; HandPointer and
// HandKeyboard are its XTEST slaves, the devices its input comes from.
const (
	HandMaster   = "teach-user"
	HandPointer  = HandMaster + " XTEST pointer"
	HandKeyboard = HandMaster + " XTEST keyboard"
)

var quietXGB sync.Once

// Hand is the user's pointer and keyboard on a desktop.
type Hand struct {
	t    testing.TB
	conn *xgb.Conn
	root xproto.Window
}

// NewHand adds the user's master device to d, unless it is there already
// (then it is shared, and left in place), and connects through it. A
// master it added is removed when the test ends.
func NewHand(t testing.TB, d *Desktop) *Hand {
	t.Helper()
	if d.Command("xinput", "list", "--id-only", HandMaster+" pointer").Run() != nil {
		d.Run(t, "xinput", "create-master", HandMaster)
		t.Cleanup(func() { _ = d.Command("xinput", "remove-master", HandMaster+" pointer").Run() })
	}
	master := d.DeviceID(t, HandMaster+" pointer")
	quietXGB.Do(func() { xgb.Logger = log.New(io.Discard, "", 0) })
	conn, err := xgb.NewConnDisplay(d.Display())
	if err != nil {
		t.Fatalf("connecting the user's hand to %s: %v", d.Display(), err)
	}
	t.Cleanup(conn.Close)
	if err := xtest.Init(conn); err != nil {
		t.Fatalf("the user's hand needs XTEST: %v", err)
	}
	ext, err := xproto.QueryExtension(conn, uint16(len("XInputExtension")), "XInputExtension").Reply()
	if err != nil || !ext.Present {
		t.Fatalf("the user's hand needs XInput 2: present %v, %v", ext != nil && ext.Present, err)
	}
	// xgb has no XInput 2 bindings: XIQueryVersion (47) 2.2, then
	// XISetClientPointer (44) of this client to the master, by hand.
	query := make([]byte, 8)
	query[0], query[1] = ext.MajorOpcode, 47
	binary.LittleEndian.PutUint16(query[2:], 2)
	binary.LittleEndian.PutUint16(query[4:], 2)
	binary.LittleEndian.PutUint16(query[6:], 2)
	qc := conn.NewCookie(true, true)
	conn.NewRequest(query, qc)
	if _, err := qc.Reply(); err != nil {
		t.Fatalf("XIQueryVersion: %v", err)
	}
	set := make([]byte, 12)
	set[0], set[1] = ext.MajorOpcode, 44
	binary.LittleEndian.PutUint16(set[2:], 3)
	binary.LittleEndian.PutUint32(set[4:], 0) // this client
	binary.LittleEndian.PutUint16(set[8:], uint16(master))
	sc := conn.NewCookie(true, false)
	conn.NewRequest(set, sc)
	if err := sc.Check(); err != nil {
		t.Fatalf("XISetClientPointer(%d): %v", master, err)
	}
	return &Hand{t: t, conn: conn, root: xproto.Setup(conn).DefaultScreen(conn).Root}
}

// Fake sends one XTEST event (xproto.MotionNotify, ButtonPress, KeyPress,
// ...) from the hand's devices.
func (h *Hand) Fake(typ, detail byte, x, y int) {
	h.t.Helper()
	if err := xtest.FakeInputChecked(h.conn, typ, detail, 0, h.root, int16(x), int16(y), 0).Check(); err != nil {
		h.t.Fatalf("the user's hand: XTEST FakeInput(%d, %d) at (%d, %d): %v", typ, detail, x, y, err)
	}
}

// Click moves the hand's pointer to (x, y) and clicks the left button.
func (h *Hand) Click(x, y int) {
	h.t.Helper()
	h.Fake(xproto.MotionNotify, 0, x, y)
	h.Fake(xproto.ButtonPress, 1, x, y)
	h.Fake(xproto.ButtonRelease, 1, x, y)
}

// Escape presses and releases the key the keyboard map gives Escape.
func (h *Hand) Escape() {
	h.t.Helper()
	setup := xproto.Setup(h.conn)
	km, err := xproto.GetKeyboardMapping(h.conn, setup.MinKeycode, byte(setup.MaxKeycode-setup.MinKeycode+1)).Reply()
	if err != nil {
		h.t.Fatalf("GetKeyboardMapping: %v", err)
	}
	per := int(km.KeysymsPerKeycode)
	for i := 0; i*per < len(km.Keysyms); i++ {
		for _, s := range km.Keysyms[i*per : (i+1)*per] {
			if s == 0xff1b { // XK_Escape
				code := byte(int(setup.MinKeycode) + i)
				h.Fake(xproto.KeyPress, code, 0, 0)
				h.Fake(xproto.KeyRelease, code, 0, 0)
				return
			}
		}
	}
	h.t.Fatal("the user's hand: no keycode for Escape")
}

// DeviceID is the XInput id of the device named name.
func (d *Desktop) DeviceID(t testing.TB, name string) int {
	t.Helper()
	out := strings.TrimSpace(d.Run(t, "xinput", "list", "--id-only", name))
	id, err := strconv.Atoi(out)
	if err != nil {
		t.Fatalf("xinput list --id-only %q = %q: %v", name, out, err)
	}
	return id
}
