//go:build unix

package supervisor_test

// End-to-end test of the element tools on a Qt 5 app (PyQt5 on Qt 5.15,
// Qt's own AT-SPI bridge), through the built binary, the real helper and a
// private AT-SPI stack; the app's label, rewritten by the button's click
// handler, is the evidence that the click ran. Qt 5 crashes on
// Properties.GetAll, so this also shows that the helper reads Qt apps
// without it (helpers/linux/src/a11y/props.rs): before, the app died with
// a segmentation fault at list_apps.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestElementsQt: get_app_state lists a PyQt5 window's button, line edit,
// check box and slider inside the window; a click by element id runs the
// button's handler, set_value and type_text change the line edit, true
// checks the check box and a number moves the slider, all read back
// through the tree.
func TestElementsQt(t *testing.T) {
	desktoptest.Require(t, "/usr/bin/python3")
	d := a11yDesktop(t)
	script, err := filepath.Abs(filepath.Join("testdata", "a11yapps", "qtapp.py"))
	if err != nil {
		t.Fatal(err)
	}
	// The Debian python has PyQt5; a python3 first on PATH may not.
	if out, err := d.Command("/usr/bin/python3", "-c", "import PyQt5.QtWidgets").CombinedOutput(); err != nil {
		if desktoptest.InCI() {
			t.Fatalf("python3-pyqt5 is not installed (apt-get install python3-pyqt5): %v: %s", err, out)
		}
		t.Skipf("python3-pyqt5 is not installed (apt-get install python3-pyqt5): %v: %s", err, out)
	}
	w := d.StartApp(t, desktoptest.App{Name: "/usr/bin/python3", Args: []string{script}})
	e := gatedServer(t, d, nil, "--allow", "deskhand-qt=full")
	e.access([]string{"deskhand-qt"})
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := filepath.Glob(filepath.Join(d.Dir(), "logs", "python3-*.log"))
			for _, l := range logs {
				b, _ := os.ReadFile(l)
				t.Logf("%s:\n%s", l, b)
			}
		}
	})
	t.Logf("list_apps:\n%s", resultText(e.ok("list_apps", nil)))

	state := e.waitStateLong(w.PID, `push button "Press me"`)
	button := elementID(t, state, "push button", "Press me")
	field := elementID(t, state, "text", "Your name")
	check := elementID(t, state, "check box", "I agree")
	slider := elementID(t, state, "slider", "Level")
	frame := d.WindowInfo(t, w.ID).Frame
	for _, id := range []string{button, field, check, slider} {
		b := boundsOf(t, state, id)
		if b.Dx() <= 0 || b.Dy() <= 0 || b.Max.X > frame.Width || b.Max.Y > frame.Height {
			t.Errorf("element %s is at %v, outside the %dx%d window: %q", id, b, frame.Width, frame.Height, lineOf(state, id))
		}
	}

	e.ok("set_value", map[string]any{"pid": w.PID, "element_id": field, "value": "Ada"})
	e.ok("type_text", map[string]any{"pid": w.PID, "element_id": field, "text": " Lovelace"})
	e.ok("set_value", map[string]any{"pid": w.PID, "element_id": check, "value": true})
	e.ok("set_value", map[string]any{"pid": w.PID, "element_id": slider, "value": 42})
	state = e.waitStateLong(w.PID, `\[`+check+`\] check box "I agree"[^\n]*checked`)
	if l := lineOf(state, field); !strings.Contains(l, `value="Ada Lovelace"`) {
		t.Errorf("after set_value and type_text the line edit is %q", l)
	}
	if l := lineOf(state, slider); !strings.Contains(l, "range=42") {
		t.Errorf("after set_value(42) the slider is %q", l)
	}
	e.ok("click", map[string]any{"pid": w.PID, "element_id": button})
	e.waitStateLong(w.PID, `"pressed 1 times, name Ada Lovelace"`)
}
