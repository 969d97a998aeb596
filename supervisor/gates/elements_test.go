package gates

import (
	"context"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// TestElementTierMatrix: the element tools, aimed at an app by pid (with
// the full-tier app in front, so that only the pid's tier decides), are
// allowed or refused as the tier table says: a read-tier app's tree may be
// read and nothing in it acted on; a click-tier app takes left clicks,
// scrolls and press-like actions but no typing, keys or values.
func TestElementTierMatrix(t *testing.T) {
	type row struct {
		name              string
		action            mcpserver.Action
		read, click, full bool
	}
	bg := func(tool string) mcpserver.Action { return mcpserver.Action{Tool: tool, Background: true} }
	rows := []row{
		{"get_app_state", mcpserver.Action{Tool: "get_app_state"}, true, true, true},
		{"wait_for", mcpserver.Action{Tool: "wait_for"}, true, true, true},
		{"click", mcpserver.Action{Tool: "click", Button: mcpserver.ButtonLeft, Count: 1, Background: true, Op: "click"}, false, true, true},
		{"hover", mcpserver.Action{Tool: "click", Button: mcpserver.ButtonLeft, Count: 0}, true, true, true},
		{"right click", mcpserver.Action{Tool: "click", Button: mcpserver.ButtonRight, Count: 1}, false, false, true},
		{"middle click", mcpserver.Action{Tool: "click", Button: mcpserver.ButtonMiddle, Count: 1}, false, false, true},
		{"scroll", mcpserver.Action{Tool: "scroll"}, false, true, true},
		{"perform_action press", func() mcpserver.Action { a := bg("perform_action"); a.Op = "press"; return a }(), false, true, true},
		{"perform_action expand", func() mcpserver.Action { a := bg("perform_action"); a.Op = "expand or contract"; return a }(), false, true, true},
		{"perform_action paste", func() mcpserver.Action { a := bg("perform_action"); a.Op = "paste"; return a }(), false, false, true},
		{"type_text in background", bg("type_text"), false, false, true},
		{"set_value", bg("set_value"), false, false, true},
		{"drag", mcpserver.Action{Tool: "drag"}, false, false, true},
		{"press_key", mcpserver.Action{Tool: "press_key", Keys: "Return"}, false, false, true},
	}
	apps := []struct {
		tier string
		pid  int
	}{{"read", firefoxApp.PID}, {"click", xtermApp.PID}, {"full", zenityApp.PID}}
	for _, app := range apps {
		for _, r := range rows {
			t.Run(app.tier+"/"+r.name, func(t *testing.T) {
				f := newFixture(t, consent.Flags{})
				f.d.focus(3)
				a := r.action
				a.PID = app.pid
				want := map[string]bool{"read": r.read, "click": r.click, "full": r.full}[app.tier]
				err := f.check(a)
				if (err == nil) != want {
					t.Fatalf("%s on the %s-tier app (pid %d): err = %v, want allowed %v", r.name, app.tier, app.pid, err, want)
				}
				if err != nil && !strings.Contains(err.Error(), consent.AntiSubversionHint) {
					t.Errorf("tier refusal lacks the anti-subversion hint: %v", err)
				}
			})
		}
	}
}

// TestElementUnapprovedApp: an unapproved app's tree is not read, and an
// unknown pid (no window to identify it by) is refused, by the chain and
// by the guarded executor itself.
func TestElementUnapprovedApp(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	f.d.focus(3)
	for _, pid := range []int{secretApp.PID, 999} {
		err := f.check(mcpserver.Action{Tool: "get_app_state", PID: pid})
		if err == nil {
			t.Errorf("get_app_state of pid %d allowed", pid)
		}
		if _, err := f.exec.A11yElement(context.Background(), pid, "x"); err == nil {
			t.Errorf("the guarded executor read an element of pid %d", pid)
		}
	}
	list, err := f.exec.Windows(context.Background(), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range list.Windows {
		if w.App.PID == secretApp.PID && w.Title != "" {
			t.Errorf("the unapproved app's window title %q leaks through Windows", w.Title)
		}
	}
}

// TestPressKeyGuards: press_key passes the shortcut blocklist, and,
// without clipboardRead, the user's clipboard is stashed and cleared
// before the keys go, so a ctrl+v pastes nothing of theirs.
func TestPressKeyGuards(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	f.d.focus(3)
	err := f.check(mcpserver.Action{Tool: "press_key", PID: zenityApp.PID, Keys: "alt+Tab"})
	if err == nil || !strings.HasPrefix(err.Error(), "system shortcut:") {
		t.Errorf("press_key alt+Tab without systemKeyCombos: %v", err)
	}
	if err := f.check(mcpserver.Action{Tool: "press_key", PID: zenityApp.PID, Keys: "ctrl+v"}); err != nil {
		t.Fatalf("press_key ctrl+v on the full-tier app: %v", err)
	}
	if got := f.d.clip(); got != "" {
		t.Errorf("the clipboard holds %q when press_key ctrl+v may run; want it cleared", got)
	}
}
