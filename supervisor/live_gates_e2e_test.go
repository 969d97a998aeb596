//go:build unix

package supervisor_test

// End-to-end tests of the live window table: the gates reuse their last
// window listing while the helper's windows epoch is unchanged, and see a
// window raised or moved, or the focus moved, between two actions. Run on
// a private Xvfb desktop with openbox, the real helper and the go-sdk
// client; what reached the apps is checked with xdotool and a file a
// terminal writes.
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run LiveGates -v

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// recLog keeps the server's stderr lines in order, and passes them to the
// test log until the test ends.
type recLog struct{ *desktoptest.ServerLog }

// toolCalls counts the server's "tool call" records.
func (r recLog) toolCalls() int { return r.Count(`msg="tool call"`) }

// tables waits for the nth "tool call" record (counting from 1) and
// counts the window-table records the gates wrote for that call: reused
// listings and fresh ones.
func (r recLog) tables(t *testing.T, n int) (reused, listed int) {
	t.Helper()
	waitFor(t, "the server's record of the tool call", 10*time.Second, func() bool { return r.toolCalls() >= n })
	call := 0
	for _, l := range r.Lines() {
		if strings.Contains(l, `msg="tool call"`) {
			call++
			if call == n {
				return reused, listed
			}
			continue
		}
		if call == n-1 && strings.Contains(l, `msg="window table"`) {
			if strings.Contains(l, "reused=true") {
				reused++
			} else {
				listed++
			}
		}
	}
	return reused, listed
}

// reusesTable runs act (one tool call) up to 20 times and says whether
// one run of it reused the window table without listing the windows;
// first is the number of its first call among the session's tool calls.
func reusesTable(t *testing.T, logs *recLog, first int, act func(i int)) bool {
	t.Helper()
	for i := range 20 {
		act(i)
		if reused, listed := logs.tables(t, first+i); reused > 0 && listed == 0 {
			return true
		}
	}
	return false
}

// liveServer starts `deskhand serve` on d, logging at debug level into a
// recLog.
func liveServer(t *testing.T, d *desktoptest.Desktop, args ...string) (*e2e, *recLog) {
	t.Helper()
	bin := deskhandBinary(t)
	helper := desktoptest.HelperPath(t)
	logs := &recLog{desktoptest.NewServerLog(t, nil)}
	config := t.TempDir()
	full := append([]string{"serve", "--virtual-display", "off", "--state-dir", t.TempDir(), "--log-level", "debug"}, args...)
	cmd := exec.Command(bin, full...)
	cmd.Env = append(d.AppEnv(), "DESKHAND_HELPER="+helper, "DESKHAND_HELPER_LOG=debug", "XDG_CONFIG_HOME="+config,
		"DESKHAND_POLICY_FILE="+filepath.Join(config, "policy.json"))
	cmd.Stderr = logs
	client := mcp.NewClient(&mcp.Implementation{Name: "deskhand-live-gates-e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("starting %s %v: %v", bin, full, err)
	}
	t.Cleanup(func() { cs.Close() })
	return &e2e{t: t, d: d, cs: cs, cmd: cmd, configHome: config}, logs
}

// TestLiveGatesSeeARaisedAndMovedWindow: with nothing changing on screen
// the gates reuse their window table; an unapproved window raised and
// moved over an approved one between two clicks is seen by the second,
// which is refused and never sent (the pointer stays where it was), even
// though a screenshot in between made the pixels current.
func TestLiveGatesSeeARaisedAndMovedWindow(t *testing.T) {
	d, e, _, secret, x, y := liveScene(t, "live target")

	// Between two clicks: the unapproved window goes above everything and
	// over the point, without taking the focus.
	clickOverRaisedRefused(t, d, e, secret.ID, x, y)
}

// liveScene starts an approved GTK window titled title, focused, and an
// unapproved one (secretWindow) away from it, and a live server with
// hiding off; it clicks the approved window's label (above its buttons)
// at (x, y) and checks that the gates then reuse their window table.
func liveScene(t *testing.T, title string) (d *desktoptest.Desktop, e *e2e, logs *recLog, secret *desktoptest.Window, x, y int) {
	t.Helper()
	d = newDesktop(t, desktoptest.Options{})
	target := d.StartGTK(t, title)
	d.Move(t, target.ID, 80, 80, 0, 0)
	secret = secretWindow(t, d, 900, 400)
	target = d.WindowInfo(t, target.ID)
	d.Focus(t, target.ID)

	e, logs = liveServer(t, d, "--allow", "zenity", "--hide-unapproved=false")
	e.access([]string{"zenity"})
	e.screenshot("screenshot", nil)
	x, y = center(target, 0, -30)
	e.ok("left_click", map[string]any{"coordinate": e.at(x, y)})
	// Tool calls so far (request_access is not one): screenshot, left_click.
	// The click's own consequences (the focus, a repaint) reach the helper
	// a little later; once they are over, a mouse_move lists nothing.
	if !reusesTable(t, logs, 3, func(i int) { e.ok("mouse_move", map[string]any{"coordinate": e.at(x+10+i, y)}) }) {
		t.Errorf("no mouse_move reused the window table: every one listed the windows")
	}
	return d, e, logs, secret, x, y
}

// clickOverRaisedRefused raises the unapproved xwud window secret above
// everything and over (x, y), without giving it the focus, and checks that
// a click there after a new screenshot is refused, naming xwud, and never
// moved the pointer.
func clickOverRaisedRefused(t *testing.T, d *desktoptest.Desktop, e *e2e, secret uint32, x, y int) {
	t.Helper()
	d.Run(t, "wmctrl", "-i", "-r", hexWindow(secret), "-b", "add,above")
	d.Move(t, secret, x-180, y-120, 0, 0)
	waitFor(t, "the unapproved window over the point", 10*time.Second, func() bool {
		w := d.WindowInfo(t, secret)
		return w.Frame.X <= x && x < w.Frame.X+w.Frame.Width && w.Frame.Y <= y && y < w.Frame.Y+w.Frame.Height
	})
	e.screenshot("screenshot", nil)
	msg := e.bad("left_click", map[string]any{"coordinate": e.at(x, y)}, antiSubversion)
	if !strings.Contains(strings.ToLower(msg), "xwud") {
		t.Errorf("the click over the raised window was refused with %q; want the refusal to name the window's app (xwud)", msg)
	}
	if e.pointerNear(x, y, 3) {
		t.Errorf("the pointer went to (%d, %d): the refused click was sent", x, y)
	}
}

// TestLiveGatesSeeAFocusChange: a key action with a full-tier app in
// front runs; the focus moves to a click-tier terminal, and the next key
// action is refused up front by the frontmost-app gate, naming the
// terminal, and the terminal receives nothing.
func TestLiveGatesSeeAFocusChange(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	typed := filepath.Join(t.TempDir(), "typed")
	term := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"-geometry", "60x16+40+40", "-e", "sh", "-c", "exec cat > " + typed}, Class: "XTerm"})
	full := d.StartGTK(t, "live keys")
	d.Move(t, full.ID, 900, 80, 0, 0)
	d.Focus(t, full.ID)

	e, logs := liveServer(t, d, "--allow", "xterm", "--allow", "zenity", "--hide-unapproved=false")
	e.access([]string{"xterm", "zenity"})
	if !reusesTable(t, logs, 1, func(int) { e.ok("key", map[string]any{"text": "shift"}) }) {
		t.Errorf("no key action reused the window table: every one listed the windows")
	}

	d.Focus(t, term.ID)
	msg := e.bad("type", map[string]any{"text": "leaked\n"}, antiSubversion)
	if !strings.Contains(strings.ToLower(msg), "xterm") || strings.Contains(msg, "the desktop changed while") {
		t.Errorf("typing after the focus moved to the terminal was refused with %q; want the frontmost-app gate's refusal naming XTerm, before any key is sent", msg)
	}
	// Typing is refused before any key goes out, so there is nothing to
	// wait for; the file is read after one more full round trip.
	e.ok("cursor_position", nil)
	if b, err := os.ReadFile(typed); err == nil && len(b) > 0 {
		t.Errorf("the terminal received %q after the refusal", b)
	}
}

// hexWindow is how wmctrl names a window id.
func hexWindow(id uint32) string { return fmt.Sprintf("0x%08x", id) }
