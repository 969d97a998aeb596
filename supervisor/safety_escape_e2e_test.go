//go:build unix

package supervisor_test

// End-to-end tests of "Escape ends control": the user's Escape, sent from
// the test process with xdotool (XTEST, as VNC and xrdp send it), ends the
// turn and withdraws the session's approvals until the user approves
// again, and nothing deskhand sends itself (holding Escape, pressing it in
// a loop, typing without pause) hides it. The key evidence is the X
// server's own raw key log (xinput test-xi2), and the turn's end is seen
// as the desktop notification on a private session bus.
//
//	go test ./supervisor -run SafetyEscape -v

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/internal/notifytest"
)

// escapeServer starts `deskhand serve` on d with the notification bus in
// its environment and a client with opts (nil: no elicitation).
func escapeServer(t *testing.T, d *desktoptest.Desktop, bus *notifytest.Bus, opts *mcp.ClientOptions, args ...string) *e2e {
	t.Helper()
	bin := deskhandBinary(t)
	logs := &testLog{t: t}
	t.Cleanup(logs.stop)
	config := t.TempDir()
	full := append([]string{"serve", "--virtual-display", "off", "--state-dir", t.TempDir(), "--log-level", "debug"}, args...)
	cmd := exec.Command(bin, full...)
	cmd.Env = append(d.AppEnv(), "DESKHAND_HELPER="+desktoptest.HelperPath(t), "XDG_CONFIG_HOME="+config,
		"DESKHAND_POLICY_FILE="+filepath.Join(config, "policy.json"), "DBUS_SESSION_BUS_ADDRESS="+bus.Address())
	cmd.Stderr = logs
	client := mcp.NewClient(&mcp.Implementation{Name: "deskhand-escape-e2e", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("starting %s %v: %v", bin, full, err)
	}
	t.Cleanup(func() { cs.Close() })
	return &e2e{t: t, d: d, cs: cs, cmd: cmd, configHome: config}
}

// keyTarget is a full-tier app that ignores every key, Escape included
// (zenity would close on it), with the keyboard focus.
func keyTarget(t *testing.T, d *desktoptest.Desktop) *desktoptest.Window {
	t.Helper()
	w := d.StartApp(t, desktoptest.App{Name: "xmessage", Args: []string{"-geometry", "420x200+60+60", "keys go here"}, Class: "Xmessage"})
	d.Focus(t, w.ID)
	return w
}

// count returns how often the key (a keysym name) was pressed so far.
func (k *keyRecorder) count(t *testing.T, sym string) int {
	t.Helper()
	code, ok := k.codes[sym]
	if !ok {
		t.Fatalf("no keycode for %s in the keymap", sym)
	}
	n := 0
	for _, c := range k.pressed() {
		if c == code {
			n++
		}
	}
	return n
}

// userEscape presses Escape the way a remote-desktop user does (XTEST,
// from another client) and waits for the turn's end notification, the
// n-th of the test.
func userEscape(t *testing.T, d *desktoptest.Desktop, bus *notifytest.Bus, n int) {
	t.Helper()
	d.Run(t, "xdotool", "key", "Escape")
	got, err := bus.Wait(n, 20*time.Second)
	if err != nil {
		t.Fatalf("no notification after the user's Escape: %v", err)
	}
	if body := got[n-1].Body; !strings.Contains(body, "pressed Escape") {
		t.Fatalf("notification after the user's Escape: %q", body)
	}
}

// reapprove calls request_access for app and checks that the user saw the
// dialog again, told why, and approved.
func reapprove(t *testing.T, e *e2e, u *user, app string) {
	t.Helper()
	before := u.count()
	e.ok("request_access", map[string]any{"apps": []string{app}, "reason": "carry on with the test"})
	if u.count() != before+1 {
		t.Fatalf("request_access after Escape showed %d dialogs, want 1", u.count()-before)
	}
	if msg := u.last().Message; !strings.Contains(msg, "pressed Escape") {
		t.Errorf("the dialog after Escape does not say why it is back:\n%s", msg)
	}
}

// TestSafetyEscapeRevokes: after the user's Escape while deskhand is idle
// (its turn still current), the next actions are refused, with a message
// that sends the model to request_access, and no key reaches the X
// server; request_access shows the dialog again even for a pre-approved
// app, and the user's approval there restores control. A client that
// cannot show the dialog does not get the pre-approval back.
func TestSafetyEscapeRevokes(t *testing.T) {
	desktoptest.Require(t, "xdotool")
	bus := notifytest.Start(t)
	d := newDesktop(t, desktoptest.Options{})
	keyTarget(t, d)
	keys := recordKeys(t, d)

	u := &user{answer: acceptBut()}
	e := escapeServer(t, d, bus, u.options(), "--allow", "xmessage")
	e.ok("request_access", map[string]any{"apps": []string{"xmessage"}, "reason": "escape test"})
	if u.count() != 0 {
		t.Fatalf("the pre-approved app was asked about before any Escape")
	}
	e.ok("screenshot", nil)
	e.ok("key", map[string]any{"text": "a"})

	userEscape(t, d, bus, 1)
	for _, tool := range []struct {
		name string
		args any
	}{{"type", map[string]any{"text": "qqq"}}, {"key", map[string]any{"text": "q"}}, {"screenshot", nil}, {"cursor_position", nil}} {
		e.bad(tool.name, tool.args, "pressed Escape", "request_access")
	}
	list := resultText(e.ok("list_granted_applications", nil))
	if !strings.Contains(list, "pressed Escape") || strings.Contains(list, "Xmessage: full") {
		t.Errorf("list_granted_applications after Escape:\n%s", list)
	}
	// The user dismisses the dialog: still stopped.
	u.answer = answerWith("cancel")
	e.bad("request_access", map[string]any{"apps": []string{"xmessage"}, "reason": "carry on"})
	e.bad("key", map[string]any{"text": "q"}, "pressed Escape")
	if n := keys.count(t, "q"); n != 0 {
		t.Fatalf("%d q keys reached the X server while the session was stopped", n)
	}

	u.answer = acceptBut()
	reapprove(t, e, u, "xmessage")
	e.ok("screenshot", nil)
	e.ok("type", map[string]any{"text": "qqq"})
	waitFor(t, "the typed keys in the X server's key log", 10*time.Second, func() bool { return keys.count(t, "q") == 3 })
	e.cs.Close()

	// The first server's turn ends with its disconnect: notification 2.
	if _, err := bus.Wait(2, 20*time.Second); err != nil {
		t.Fatal(err)
	}

	// Pre-approval only: nothing the model can do brings it back.
	p := escapeServer(t, d, bus, nil, "--allow", "xmessage")
	p.ok("request_access", map[string]any{"apps": []string{"xmessage"}, "reason": "escape test"})
	p.ok("screenshot", nil)
	userEscape(t, d, bus, 3)
	p.bad("screenshot", nil, "pressed Escape", "request_access")
	p.bad("request_access", map[string]any{"apps": []string{"xmessage"}, "reason": "carry on"}, "pressed Escape", "restart")
	p.bad("key", map[string]any{"text": "q"}, "pressed Escape")
	if n := keys.count(t, "q"); n != 3 {
		t.Fatalf("%d q keys in the X server's key log, want the 3 typed while approved", n)
	}
}

// TestSafetyEscapeNotMasked: the model cannot hide the user's Escape. It
// ends the turn while deskhand holds Escape itself (hold_key, alone and
// with another key), while a batch presses Escape over and over, and in
// the middle of a long type; each time the next action is refused until
// the user approves again.
func TestSafetyEscapeNotMasked(t *testing.T) {
	desktoptest.Require(t, "xdotool")
	bus := notifytest.Start(t)
	d := newDesktop(t, desktoptest.Options{})
	keyTarget(t, d)
	keys := recordKeys(t, d)
	u := &user{answer: acceptBut()}
	e := escapeServer(t, d, bus, u.options())
	e.ok("request_access", map[string]any{"apps": []string{"xmessage"}, "reason": "escape test"})
	e.ok("screenshot", nil)
	notes := 0

	// interrupted runs call in the background; once deskhand's own keys
	// reach the X server (pressed says so), the user presses Escape; the
	// call must end as stopped by the user, and the next action is
	// refused.
	interrupted := func(what string, pressed func() bool, call func() *mcp.CallToolResult) *mcp.CallToolResult {
		t.Helper()
		done := make(chan *mcp.CallToolResult, 1)
		go func() { done <- call() }()
		waitFor(t, what+": deskhand's own keys in the X server's key log", 20*time.Second, pressed)
		notes++
		userEscape(t, d, bus, notes)
		var res *mcp.CallToolResult
		select {
		case res = <-done:
		case <-time.After(60 * time.Second):
			t.Fatalf("%s: still running a minute after the user's Escape", what)
		}
		if msg := resultText(res); !res.IsError || !strings.Contains(msg, "pressed Escape") {
			t.Fatalf("%s after the user's Escape: error=%v %q", what, res.IsError, msg)
		}
		e.bad("screenshot", nil, "pressed Escape", "request_access")
		reapprove(t, e, u, "xmessage")
		e.ok("screenshot", nil)
		return res
	}
	callTool := func(name string, args any) func() *mcp.CallToolResult {
		return func() *mcp.CallToolResult {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "protocol error: " + err.Error()}}}
			}
			return res
		}
	}
	escapes := func(more int) func() bool {
		base := keys.count(t, "Escape")
		return func() bool { return keys.count(t, "Escape") >= base+more }
	}

	interrupted("hold_key Escape", escapes(1), callTool("hold_key", map[string]any{"text": "Escape", "duration": 30}))
	interrupted("hold_key shift+Escape", escapes(1), callTool("hold_key", map[string]any{"text": "shift+Escape", "duration": 30}))

	var steps []any
	for range 50 {
		steps = append(steps, map[string]any{"action": "key", "text": "Escape"}, map[string]any{"action": "wait", "duration": 0.2})
	}
	res := interrupted("a batch of Escapes", escapes(5), callTool("computer_batch", map[string]any{"actions": steps}))
	data, _ := res.StructuredContent.(map[string]any)
	if left, _ := data["remaining"].([]any); len(left) == 0 {
		t.Errorf("the batch of Escapes ran to its end: %s", resultText(res))
	}

	// A long type: characters the layout lacks are typed in rounds of
	// borrowed keycodes, each waiting for the app to read its keys.
	var text strings.Builder
	for r := rune(0x4e00); text.Len() < 3*1500; r++ {
		text.WriteRune(r)
	}
	before := len(keys.pressed())
	typed := func() bool { return len(keys.pressed()) >= before+20 }
	interrupted("a long type", typed, callTool("type", map[string]any{"text": text.String()}))
	if n := len(keys.pressed()) - before; n >= 1500 {
		t.Errorf("the long type pressed %d keys: it was not stopped", n)
	}
}
