//go:build unix

package supervisor_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestTeachHandClicksAsItsOwnDevice checks the hand itself (desktoptest.Hand): its click
// presses a real GTK button, and the X server reports it from the hand's
// XTEST slave, not from the core pointer's.
func TestTeachHandClicksAsItsOwnDevice(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	w, _, code := shellApp(t, d, `--question --title "hand test" --text "Press Yes"`)
	h := desktoptest.NewHand(t, d)
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
	h.Click(c.X+c.Width-50, c.Y+c.Height-25)
	if status := waitExit(t, code); status != 0 {
		t.Fatalf("zenity --question exited %d after the hand's click on Yes, want 0", status)
	}
	watch.Process.Kill()
	watch.Wait()
	// test-xi2 prints each event's device as "device: DEVICE (SOURCE)".
	source := fmt.Sprintf("(%d)", d.DeviceID(t, desktoptest.HandPointer))
	pressed := false
	for _, ev := range strings.Split(events.String(), "EVENT type")[1:] {
		lines := strings.Split(ev, "\n")
		if strings.Contains(lines[0], "(RawButtonPress)") && len(lines) > 1 && strings.HasSuffix(strings.TrimSpace(lines[1]), source) {
			pressed = true
		}
	}
	if !pressed {
		t.Errorf("the X server reported no raw button press from source %s (%s):\n%s", source, desktoptest.HandPointer, events.String())
	}
}
