//go:build unix

package supervisor_test

// End-to-end test of the staleness rule across deskhand's own input: a
// dialog drawn over the model's target after its screenshot stays stale
// whatever deskhand sends before the click (a mouse_move, a key press, a
// scroll elsewhere, an earlier step of the same batch), until a screenshot
// shows it. Real Xvfb, openbox, xterm, a zenity --question dialog whose
// exit status says whether Yes was pressed, the release helper, and the
// go-sdk MCP client over stdio.
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run StaleAfterInput -v

import (
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

func TestStaleAfterInput(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	// The model aims at a point of an xterm (approved, click tier); the
	// dialog (approved, full tier) is moved over it once the model has
	// looked, its Yes button on that point.
	xterm := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"+bc", "-geometry", "100x40+40+40"}, Class: "XTerm"})
	dialog, _, code := shellApp(t, d, `--question --title "Delete everything?" --text "Delete everything?" --ok-label Yes --cancel-label No --width 400`)
	const overX, overY, awayX, awayY = 200, 200, 1300, 600
	d.Move(t, dialog.ID, overX, overY, 0, 0)
	// GTK 3 puts Yes at the dialog's bottom right (TestServeClickGTKButton).
	c := d.WindowInfo(t, dialog.ID).Client
	yesX, yesY := c.X+c.Width-50, c.Y+c.Height-24
	xt := d.WindowInfo(t, xterm.ID).Client
	elseX, elseY := xt.X+30, xt.Y+xt.Height-30
	if !xt.Contains(yesX, yesY) || c.Contains(elseX, elseY) {
		t.Fatalf("layout: the xterm's client area %v must hold Yes (%d, %d), and the dialog's %v must not hold (%d, %d)", xt, yesX, yesY, c, elseX, elseY)
	}
	e := gatedServer(t, d, nil, "--allow", "zenity", "--allow", "xterm")
	e.access([]string{"zenity", "xterm"})
	pressed := func() bool {
		_, err := os.Stat(code)
		return err == nil
	}
	// refused checks that the click on Yes, after input, was refused;
	// zenity's exit status is the evidence of one that was not.
	refused := func(after string, res *mcp.CallToolResult) {
		t.Helper()
		if !res.IsError {
			t.Fatalf("after a %s, the click on the target the dialog came over was accepted (%q); zenity --question exited %d (0: Yes was pressed)", after, resultText(res), waitExit(t, code))
		}
		if msg := resultText(res); !strings.Contains(msg, "take a new screenshot") {
			t.Errorf("after a %s, the refusal %q lacks %q", after, msg, "take a new screenshot")
		}
	}
	yes := func() map[string]any { return map[string]any{"coordinate": e.at(yesX, yesY)} }

	for _, tc := range []struct {
		name string
		// act sends the input, then clicks Yes, and checks the refusal.
		act func()
	}{
		{"mouse_move elsewhere", func() {
			e.ok("mouse_move", map[string]any{"coordinate": e.at(elseX, elseY)})
			refused("mouse_move", e.call("left_click", yes()))
		}},
		{"key press", func() {
			e.ok("key", map[string]any{"text": "shift"})
			refused("key press", e.call("left_click", yes()))
			// X11 says where it drew: a click on what did not change is
			// still checked against the screenshot, and allowed. (Not in
			// the first round: the server's first screenshot comes before
			// the display's first mark, and without one the refusal holds
			// everywhere.)
			e.ok("left_click", map[string]any{"coordinate": e.at(elseX, elseY)})
		}},
		{"scroll elsewhere", func() {
			e.ok("scroll", map[string]any{"coordinate": e.at(elseX, elseY), "scroll_direction": "down", "scroll_amount": 1})
			refused("scroll", e.call("left_click", yes()))
		}},
		{"batch step", func() {
			res := e.call("computer_batch", map[string]any{"actions": []any{
				map[string]any{"action": "mouse_move", "coordinate": e.at(elseX, elseY)},
				map[string]any{"action": "left_click", "coordinate": e.at(yesX, yesY)},
			}})
			refused("batch step", res)
			batchShape(t, res, 1, 0, "take a new screenshot")
		}},
	} {
		// The model looks with the dialog clear of its target (and in
		// front, for the key press), then the dialog comes over it.
		d.Move(t, dialog.ID, awayX, awayY, 0, 0)
		d.Focus(t, dialog.ID)
		e.screenshot("screenshot", nil)
		d.Move(t, dialog.ID, overX, overY, 0, 0)
		tc.act()
		if pressed() {
			t.Fatalf("after a %s, a click on the target the dialog came over pressed its Yes button", tc.name)
		}
	}

	// A screenshot that shows the dialog makes the click the model's own.
	e.screenshot("screenshot", nil)
	e.ok("left_click", yes())
	if status := waitExit(t, code); status != 0 {
		t.Errorf("zenity --question exited %d after a click on Yes once the model saw it, want 0", status)
	}
}
