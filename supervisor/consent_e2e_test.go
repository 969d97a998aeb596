//go:build unix

package supervisor_test

// End-to-end tests of consent: the real binary on a private Xvfb desktop
// with real apps, driven by the go-sdk MCP client, whose elicitation
// handler plays the user answering the approval dialog.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// user answers approval dialogs: it records each one and replies with
// the answer set for the next dialog.
type user struct {
	mu      sync.Mutex
	dialogs []*mcp.ElicitParams
	answer  func(p *mcp.ElicitParams) *mcp.ElicitResult
}

func (u *user) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.dialogs = append(u.dialogs, req.Params)
		return u.answer(req.Params), nil
	}}
}

func (u *user) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.dialogs)
}

func (u *user) last() *mcp.ElicitParams {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.dialogs[len(u.dialogs)-1]
}

// acceptBut accepts the dialog with every box ticked except those whose
// title contains one of off.
func acceptBut(off ...string) func(p *mcp.ElicitParams) *mcp.ElicitResult {
	return func(p *mcp.ElicitParams) *mcp.ElicitResult {
		content := map[string]any{}
		props, _ := p.RequestedSchema.(map[string]any)["properties"].(map[string]any)
		for key, prop := range props {
			title, _ := prop.(map[string]any)["title"].(string)
			v := true
			for _, o := range off {
				if strings.Contains(title, o) {
					v = false
				}
			}
			content[key] = v
		}
		return &mcp.ElicitResult{Action: "accept", Content: content}
	}
}

func answerWith(action string) func(*mcp.ElicitParams) *mcp.ElicitResult {
	return func(*mcp.ElicitParams) *mcp.ElicitResult { return &mcp.ElicitResult{Action: action} }
}

// grantsCmd runs `deskhand grants args...` with the server's config home.
func grantsCmd(t *testing.T, configHome string, args ...string) string {
	t.Helper()
	cmd := exec.Command(deskhandBinary(t), append([]string{"grants"}, args...)...)
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+configHome, "DESKHAND_POLICY_FILE="+configHome+"/policy.json")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("deskhand grants %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// installedApp installs an app that is not running: a desktop entry in
// the test desktop's data directory, which request_access resolves names
// against. The names are the test's own, so what the machine has
// installed (a real calculator's entry, say) cannot change how they
// resolve. Each app needs its own program: consent identifies an app
// by the program it runs too, so a decision on one covers the others.
func installedApp(t *testing.T, d *desktoptest.Desktop, id, name, program string) {
	t.Helper()
	dir := filepath.Join(d.Dir(), "data", "applications")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	entry := "[Desktop Entry]\nType=Application\nName=" + name + "\nExec=" + program + "\n"
	if err := os.WriteFile(filepath.Join(dir, id+".desktop"), []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestConsentRefusedBeforeAccess: with real apps on screen, every tool is
// refused before request_access, and nothing reaches the desktop.
func TestConsentRefusedBeforeAccess(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	putScene(t, d, 40, 60)
	e := serveRaw(t, d, nil, preapproveTestApps()...)
	x0, y0 := e.mouseLocation()
	d.Run(t, "sh", "-c", "printf before | xclip -selection clipboard >/dev/null 2>&1")
	calls := []struct {
		tool string
		args any
	}{
		{"screenshot", nil}, {"zoom", map[string]any{"region": []int{0, 0, 100, 100}}}, {"cursor_position", nil},
		{"switch_display", map[string]any{"display": d.Monitors(t)[0].Name}},
		{"left_click", nil}, {"left_click", map[string]any{"coordinate": []int{300, 200}}}, {"double_click", nil}, {"triple_click", nil},
		{"right_click", nil}, {"middle_click", nil}, {"mouse_move", map[string]any{"coordinate": []int{300, 200}}},
		{"left_click_drag", map[string]any{"coordinate": []int{300, 200}}}, {"left_mouse_down", nil}, {"left_mouse_up", nil},
		{"scroll", map[string]any{"scroll_direction": "down"}}, {"type", map[string]any{"text": "echo pwned"}},
		{"key", map[string]any{"text": "Return"}}, {"hold_key", map[string]any{"text": "shift", "duration": 0.1}},
		{"wait", map[string]any{"duration": 0}}, {"open_application", map[string]any{"app": "xterm"}},
		{"read_clipboard", nil}, {"write_clipboard", map[string]any{"text": "after"}},
		{"computer_batch", map[string]any{"actions": []any{map[string]any{"action": "key", "text": "a"}, map[string]any{"action": "screenshot"}}}},
	}
	for _, c := range calls {
		res := e.call(c.tool, c.args)
		msg := resultText(res)
		if !res.IsError || !strings.Contains(msg, "request_access") && !strings.Contains(msg, "no screenshot yet") {
			t.Errorf("%s before request_access = error %v %q; want a refusal", c.tool, res.IsError, msg)
		}
		for _, content := range res.Content {
			if _, isImage := content.(*mcp.ImageContent); isImage {
				t.Errorf("%s before request_access returned an image", c.tool)
			}
		}
	}
	if x, y := e.mouseLocation(); x != x0 || y != y0 {
		t.Errorf("the pointer moved from (%d,%d) to (%d,%d) before access", x0, y0, x, y)
	}
	if got := d.Run(t, "xclip", "-o", "-selection", "clipboard"); got != "before" {
		t.Errorf("the clipboard changed to %q before access", got)
	}
	list := e.ok("list_granted_applications", nil)
	if !strings.Contains(resultText(list), "No application is approved") {
		t.Errorf("list_granted_applications = %q", resultText(list))
	}
	// Access unlocks the tools.
	e.requestTestApps()
	e.screenshot("screenshot", nil)
}

// TestConsentElicitation: the user's answers in the approval dialog decide
// the grants (accept, partial accept, decline, cancel); a declined app
// stays declined in a new server process until `deskhand grants forget`.
// It runs on the latest protocol (approval as an input request) and on
// 2025-06-18 (elicitation/create inside the call).
func TestConsentElicitation(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	putScene(t, d, 40, 60)
	installedApp(t, d, "deskhand-test-abacus", "Abacus", "xmessage")
	installedApp(t, d, "deskhand-test-lantern", "Lantern", "xwud")
	for _, version := range []string{"", "2025-06-18"} {
		t.Run("protocol "+version, func(t *testing.T) {
			configHome := t.TempDir()
			u := &user{}
			e := serveWith(t, d, u.options(), version, configHome)

			// Accept: zenity (full tier, no pre-approval, asked).
			u.answer = acceptBut()
			res := e.ok("request_access", map[string]any{"apps": []string{"zenity"}, "reason": "click the dialog", "clipboardRead": true})
			if u.count() != 1 {
				t.Fatalf("%d dialogs, want 1", u.count())
			}
			msg := u.last().Message
			for _, want := range []string{"Zenity (full:", `"click the dialog"`, "read the clipboard", "deskhand grants forget"} {
				if !strings.Contains(msg, want) {
					t.Errorf("dialog lacks %q:\n%s", want, msg)
				}
			}
			if txt := resultText(res); !strings.Contains(txt, "Granted: Zenity at the full tier") || !strings.Contains(txt, "Granted flag clipboardRead") {
				t.Errorf("accept: %s", txt)
			}
			e.screenshot("screenshot", nil)

			// Partial accept: xterm ticked, Firefox unticked.
			u.answer = acceptBut("Firefox")
			res = e.ok("request_access", map[string]any{"apps": []string{"xterm", "firefox"}, "reason": "compare"})
			msg = u.last().Message
			for _, want := range []string{"XTerm (click:", "Firefox (read:", "Warning: this is a shell"} {
				if !strings.Contains(msg, want) {
					t.Errorf("dialog lacks %q:\n%s", want, msg)
				}
			}
			txt := resultText(res)
			if !strings.Contains(txt, "Granted: XTerm at the click tier") || !strings.Contains(txt, "the user declined Firefox") {
				t.Errorf("partial accept: %s", txt)
			}

			// Cancel: nothing granted, nothing remembered.
			u.answer = answerWith("cancel")
			e.bad("request_access", map[string]any{"apps": []string{"Lantern"}, "reason": "light the way"}, "dismissed")
			// Decline: remembered.
			u.answer = answerWith("decline")
			e.bad("request_access", map[string]any{"apps": []string{"Abacus"}, "reason": "add numbers"}, "declined")

			list := resultText(e.ok("list_granted_applications", nil))
			for _, want := range []string{"Zenity: full tier", "XTerm: click tier", "clipboardRead"} {
				if !strings.Contains(list, want) {
					t.Errorf("list_granted_applications lacks %q:\n%s", want, list)
				}
			}
			for _, not := range []string{"Firefox", "Lantern", "Abacus"} {
				if strings.Contains(list, not) {
					t.Errorf("list_granted_applications shows %s:\n%s", not, list)
				}
			}
			e.cs.Close()

			// A new server process: Firefox and Abacus are refused without
			// a dialog, Abacus also by its desktop file's name; Lantern
			// (cancelled) is asked again.
			u2 := &user{answer: acceptBut()}
			e2 := serveWith(t, d, u2.options(), version, configHome)
			e2.bad("request_access", map[string]any{"apps": []string{"Firefox"}, "reason": "again"}, "the user declined Firefox", "deskhand grants forget Firefox")
			e2.bad("request_access", map[string]any{"apps": []string{"deskhand-test-abacus.desktop"}, "reason": "again"}, "the user declined Abacus")
			if u2.count() != 0 {
				t.Fatalf("declined apps reached the dialog in a new process: %s", u2.last().Message)
			}
			e2.ok("request_access", map[string]any{"apps": []string{"Lantern"}, "reason": "again"})
			if u2.count() != 1 {
				t.Errorf("the cancelled app was not asked again")
			}

			listed := grantsCmd(t, configHome, "list")
			if !strings.Contains(listed, "Firefox") || !strings.Contains(listed, "Abacus") {
				t.Errorf("grants list:\n%s", listed)
			}
			if out := grantsCmd(t, configHome, "forget", "firefox"); !strings.Contains(out, "forgot: Firefox") {
				t.Errorf("grants forget firefox: %s", out)
			}
			e2.ok("request_access", map[string]any{"apps": []string{"Firefox"}, "reason": "after forget"})
			if u2.count() != 2 || !strings.Contains(u2.last().Message, "Firefox (read:") {
				t.Errorf("after grants forget, Firefox was not asked again (%d dialogs)", u2.count())
			}
		})
	}
}

// TestConsentPolicy: the managed policy and the catalog deny apps before
// any dialog, with no user override; the pre-approval flags grant without
// one; a client that cannot elicit is told how to pre-approve.
func TestConsentPolicy(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	configHome := t.TempDir()
	if err := os.WriteFile(configHome+"/policy.json", []byte(`{"deny": ["zenity"], "deny_flags": ["systemKeyCombos"], "message": "Ask the IT desk."}`), 0o600); err != nil {
		t.Fatal(err)
	}
	u := &user{answer: acceptBut()}
	e := serveWith(t, d, u.options(), "", configHome, "--allow", "zenity")
	msg := e.bad("request_access", map[string]any{"apps": []string{"zenity", "Spotify", "com.amazon.Kindle"}, "reason": "r", "systemKeyCombos": true},
		"managed policy", "Ask the IT desk.", "Spotify is a media app", "Kindle is a reading app")
	if u.count() != 0 {
		t.Errorf("a policy-denied app reached the dialog: %s", u.last().Message)
	}
	if !strings.Contains(msg, "flag systemKeyCombos") {
		t.Errorf("policy-denied flag not reported: %s", msg)
	}
	if out := grantsCmd(t, configHome, "list"); !strings.Contains(out, "denies apps: zenity") || !strings.Contains(out, "denies flags: systemKeyCombos") {
		t.Errorf("grants list does not show the policy:\n%s", out)
	}
	e.cs.Close()

	// No elicitation: pre-approved apps only, and instructions.
	grantsCmd(t, configHome, "allow", "xwud", "--grant", "clipboardWrite")
	os.Remove(configHome + "/policy.json")
	e = serveWith(t, d, nil, "", configHome, "--allow", "xterm=full")
	res := e.ok("request_access", map[string]any{"apps": []string{"xterm", "xwud", "zenity"}, "reason": "r", "clipboardWrite": true, "clipboardRead": true})
	txt := resultText(res)
	for _, want := range []string{"Granted: XTerm at the full tier", "Granted: xwud at the full tier", "Granted flag clipboardWrite",
		"--allow zenity --grant clipboardRead", "deskhand grants allow zenity --grant clipboardRead", "restart the MCP server"} {
		if !strings.Contains(txt, want) {
			t.Errorf("request_access without elicitation lacks %q:\n%s", want, txt)
		}
	}
}
