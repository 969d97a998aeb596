package supervisor_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"log"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/jezek/xgb/xtest"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// The user's hand. Xvfb has no input hardware, and every program's
// synthetic input, deskhand's and xdotool's alike, comes from the XTEST
// slave of the core pointer ("Virtual core XTEST pointer"), which the
// tooltip ignores. So the tests give the user a pointer of their own: a
// second master device ("teach-user"), whose XTEST slave the helper is
// told to trust through DESKHAND_TEACH_TRUSTED_DEVICES (a test-only
// variable: deskhand never sets it, and a model cannot set a helper's
// environment). A hand's clicks arrive through that slave: its X
// connection makes the new master its client pointer (XI2
// XISetClientPointer), so the X server routes its XTEST requests through
// the master's own XTEST slave.
//
// What this proves: the tooltip takes clicks from a device it trusts and
// ignores those of the XTEST device deskhand and xdotool inject through.
// It cannot prove that a physical mouse works, which no Xvfb test can.

// handMaster names the master device of the user's hand; its XTEST slave
// is handDevice.
const (
	handMaster = "teach-user"
	handDevice = handMaster + " XTEST pointer"
)

var quietXGB sync.Once

// hand is the user's pointer.
type hand struct {
	t    *testing.T
	conn *xgb.Conn
	root xproto.Window
}

// newHand adds the user's master pointer to d and connects through it.
func newHand(t *testing.T, d *desktoptest.Desktop) *hand {
	t.Helper()
	if d.Command("xinput", "list", "--id-only", handMaster+" pointer").Run() != nil {
		d.Run(t, "xinput", "create-master", handMaster)
	}
	master := deviceID(t, d, handMaster+" pointer")
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
		t.Fatalf("the user's hand needs XInput 2: %v", err)
	}
	// XIQueryVersion 2.2, then XISetClientPointer(None, master).
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
	binary.LittleEndian.PutUint32(set[4:], 0)
	binary.LittleEndian.PutUint16(set[8:], uint16(master))
	sc := conn.NewCookie(true, false)
	conn.NewRequest(set, sc)
	if err := sc.Check(); err != nil {
		t.Fatalf("XISetClientPointer(%d): %v", master, err)
	}
	return &hand{t: t, conn: conn, root: xproto.Setup(conn).DefaultScreen(conn).Root}
}

// click moves the hand's pointer to (x, y) and clicks the left button.
func (h *hand) click(x, y int) {
	h.t.Helper()
	for _, ev := range []struct{ typ, detail byte }{{xproto.MotionNotify, 0}, {xproto.ButtonPress, 1}, {xproto.ButtonRelease, 1}} {
		if err := xtest.FakeInputChecked(h.conn, ev.typ, ev.detail, 0, h.root, int16(x), int16(y), 0).Check(); err != nil {
			h.t.Fatalf("the user's hand at (%d, %d): %v", x, y, err)
		}
	}
}

// deviceID is the XInput id of the device named name.
func deviceID(t *testing.T, d *desktoptest.Desktop, name string) int {
	t.Helper()
	out := strings.TrimSpace(d.Run(t, "xinput", "list", "--id-only", name))
	id, err := strconv.Atoi(out)
	if err != nil {
		t.Fatalf("xinput list --id-only %q = %q: %v", name, out, err)
	}
	return id
}

// TestTeachHandClicksAsItsOwnDevice checks the hand itself: its click
// presses a real GTK button, and the X server reports it from the hand's
// XTEST slave, not from the core pointer's.
func TestTeachHandClicksAsItsOwnDevice(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	w, _, code := shellApp(t, d, `--question --title "hand test" --text "Press Yes"`)
	h := newHand(t, d)
	var events bytes.Buffer
	watch := d.Command("xinput", "test-xi2", "--root")
	watch.Stdout = &events
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		watch.Process.Kill()
		watch.Wait()
	}()
	c := d.WindowInfo(t, w.ID).Client
	// zenity --question's buttons sit at the bottom right: Yes is the
	// rightmost.
	h.click(c.X+c.Width-50, c.Y+c.Height-25)
	if status := waitExit(t, code); status != 0 {
		t.Fatalf("zenity --question exited %d after the hand's click on Yes, want 0", status)
	}
	watch.Process.Kill()
	watch.Wait()
	// test-xi2 prints each event's device as "device: DEVICE (SOURCE)".
	source := fmt.Sprintf("(%d)", deviceID(t, d, handDevice))
	pressed := false
	for _, ev := range strings.Split(events.String(), "EVENT type")[1:] {
		lines := strings.Split(ev, "\n")
		if strings.Contains(lines[0], "(RawButtonPress)") && len(lines) > 1 && strings.HasSuffix(strings.TrimSpace(lines[1]), source) {
			pressed = true
		}
	}
	if !pressed {
		t.Errorf("the X server reported no raw button press from source %s (%s):\n%s", source, handDevice, events.String())
	}
}
