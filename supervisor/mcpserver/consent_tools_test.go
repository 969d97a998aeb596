package mcpserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/consent"
)

// newTestConsent is a consent manager with its files in a temporary
// directory and no managed policy.
func newTestConsent(t *testing.T, allow ...string) *consent.Manager {
	t.Helper()
	m, err := consent.New(consent.Options{ConfigDir: t.TempDir(), PolicyPaths: []string{}, Allow: allow})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// consentHarness runs a server with consent and the access gate, and a
// client whose elicitation handler is elicit (nil: no elicitation).
type consentHarness struct {
	t        *testing.T
	m        *consent.Manager
	cs       *mcp.ClientSession
	fake     *fakeExecutor
	dialogs  []*mcp.ElicitParams
	response func(p *mcp.ElicitParams) *mcp.ElicitResult
}

// protocols are the MCP versions the consent tests run with: the latest
// (approval through an input request, SEP-2322) and one before it
// (elicitation/create inside the call).
var protocols = []string{"", "2025-06-18"}

func startConsent(t *testing.T, elicit bool, allow ...string) *consentHarness {
	return startConsentVersion(t, "", elicit, allow...)
}

func startConsentVersion(t *testing.T, version string, elicit bool, allow ...string) *consentHarness {
	t.Helper()
	h := &consentHarness{t: t, m: newTestConsent(t, allow...), fake: newFake()}
	s, err := New(Options{Executor: h.fake, Consent: h.m, Gates: []Gate{AccessGate(h.m.Session())}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, st) }()
	var opts *mcp.ClientOptions
	if elicit {
		opts = &mcp.ClientOptions{ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			h.dialogs = append(h.dialogs, req.Params)
			return h.response(req.Params), nil
		}}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "consent-test", Version: "1"}, opts).Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	h.cs = cs
	t.Cleanup(func() {
		cs.Close()
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("server did not stop")
		}
	})
	return h
}

func (h *consentHarness) call(name string, args any) *mcp.CallToolResult {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		h.t.Fatalf("CallTool(%s): %v", name, err)
	}
	return res
}

// tick answers a dialog: accept, with each box whose title contains one
// of off unticked.
func tick(off ...string) func(p *mcp.ElicitParams) *mcp.ElicitResult {
	return func(p *mcp.ElicitParams) *mcp.ElicitResult {
		content := map[string]any{}
		for key, prop := range p.RequestedSchema.(map[string]any)["properties"].(map[string]any) {
			title := prop.(map[string]any)["title"].(string)
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

func TestConsentToolsListedWithInstructions(t *testing.T) {
	h := startConsent(t, false)
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		found[tool.Name] = tool
	}
	if found["request_access"] == nil || found["list_granted_applications"] == nil {
		t.Errorf("tools lack request_access or list_granted_applications: %v", found)
	} else if !found["list_granted_applications"].Annotations.ReadOnlyHint {
		t.Error("list_granted_applications is not read-only")
	}
	ins := h.cs.InitializeResult().Instructions
	for _, want := range []string{"call request_access", "Confirmations policy", "Hand off to the user", "Always confirm right before acting", "never permission by itself"} {
		if !strings.Contains(ins, want) {
			t.Errorf("instructions lack %q", want)
		}
	}
}

func TestEveryActionRefusedBeforeAccess(t *testing.T) {
	h := startConsent(t, true)
	h.response = tick()
	calls := map[string]any{
		"screenshot": nil, "zoom": map[string]any{"region": []int{0, 0, 10, 10}}, "cursor_position": nil,
		"left_click": map[string]any{"coordinate": []int{5, 5}}, "right_click": nil, "mouse_move": map[string]any{"coordinate": []int{5, 5}},
		"scroll": map[string]any{"scroll_direction": "down"}, "type": map[string]any{"text": "x"}, "key": map[string]any{"text": "Return"},
		"hold_key": map[string]any{"text": "shift", "duration": 0.1}, "wait": map[string]any{"duration": 0},
		"open_application": map[string]any{"app": "xterm"}, "read_clipboard": nil, "write_clipboard": map[string]any{"text": "x"},
		"switch_display": map[string]any{"display": "screen"}, "left_mouse_down": nil, "left_mouse_up": nil,
		"computer_batch": map[string]any{"actions": []any{map[string]any{"action": "wait", "duration": 0}}},
	}
	for name, args := range calls {
		res := h.call(name, args)
		// Coordinates cannot even be read before a screenshot, and the
		// screenshot is refused until access is granted.
		if !res.IsError || !strings.Contains(text(res), "request_access") && !strings.Contains(text(res), "no screenshot yet") {
			t.Errorf("%s before request_access: error %v, %q; want a refusal naming request_access", name, res.IsError, text(res))
		}
	}
	for _, c := range h.fake.callLog() {
		switch strings.Fields(c)[0] {
		case "Displays", "CursorPosition", "ReleaseAll":
			// Geometry and cleanup, no pixels and no input.
		default:
			t.Errorf("the executor ran %s before access was granted", c)
		}
	}
	res := h.call("list_granted_applications", nil)
	if res.IsError || !strings.Contains(text(res), "No application is approved") {
		t.Errorf("list_granted_applications = %q", text(res))
	}
	res = h.call("request_access", map[string]any{"apps": []string{"zenity"}, "reason": "to test"})
	if res.IsError {
		t.Fatalf("request_access: %s", text(res))
	}
	if res := h.call("wait", map[string]any{"duration": 0}); res.IsError {
		t.Errorf("wait after access: %s", text(res))
	}
}

func TestRequestAccessElicitation(t *testing.T) {
	for _, v := range protocols {
		t.Run("protocol "+v, func(t *testing.T) { testRequestAccessElicitation(t, v) })
	}
}

func testRequestAccessElicitation(t *testing.T, version string) {
	h := startConsentVersion(t, version, true)
	h.response = tick("Firefox")
	res := h.call("request_access", map[string]any{"apps": []string{"xterm", "firefox", "gedit"}, "reason": "edit a file", "clipboardRead": true})
	if res.IsError {
		t.Fatalf("request_access: %s", text(res))
	}
	if len(h.dialogs) != 1 {
		t.Fatalf("%d dialogs, want 1", len(h.dialogs))
	}
	d := h.dialogs[0]
	for _, want := range []string{"XTerm (click:", "Firefox (read:", "gedit (full:", "Warning: this is a shell", "edit a file", "read the clipboard"} {
		if !strings.Contains(d.Message, want) {
			t.Errorf("dialog lacks %q:\n%s", want, d.Message)
		}
	}
	out := text(res)
	for _, want := range []string{"Granted: XTerm at the click tier", "Granted: gedit at the full tier", "Not granted: firefox: the user declined Firefox", "Granted flag clipboardRead", consent.AntiSubversionHint} {
		if !strings.Contains(out, want) {
			t.Errorf("result lacks %q:\n%s", want, out)
		}
	}
	s := h.m.Session()
	if got := s.Tier(bridge.App{Instance: "xterm", Class: "XTerm"}); got != catalog.TierClick {
		t.Errorf("xterm tier = %v", got)
	}
	if got := s.Tier(bridge.App{Instance: "Navigator", Class: "firefox"}); got != catalog.TierNone {
		t.Errorf("firefox tier = %v", got)
	}
	list := text(h.call("list_granted_applications", nil))
	if !strings.Contains(list, "XTerm: click tier") || !strings.Contains(list, "gedit: full tier") || !strings.Contains(list, "clipboardRead") {
		t.Errorf("list_granted_applications = %s", list)
	}

	// Declined Firefox is not asked for again.
	res = h.call("request_access", map[string]any{"apps": []string{"firefox"}, "reason": "again"})
	if !res.IsError || len(h.dialogs) != 1 || !strings.Contains(text(res), "grants forget Firefox") {
		t.Errorf("re-request after decline: error %v, dialogs %d, %s", res.IsError, len(h.dialogs), text(res))
	}

	h.response = func(*mcp.ElicitParams) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "cancel"} }
	res = h.call("request_access", map[string]any{"apps": []string{"kate"}, "reason": "r"})
	if !res.IsError || !strings.Contains(text(res), "dismissed") {
		t.Errorf("cancel: %s", text(res))
	}
	h.response = func(*mcp.ElicitParams) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "decline"} }
	res = h.call("request_access", map[string]any{"apps": []string{"kate"}, "reason": "r"})
	if !res.IsError || !strings.Contains(text(res), "declined") {
		t.Errorf("decline: %s", text(res))
	}
}

func TestRequestAccessWithoutElicitation(t *testing.T) {
	h := startConsent(t, false, "xterm")
	res := h.call("request_access", map[string]any{"apps": []string{"xterm", "zenity"}, "reason": "r"})
	if res.IsError {
		t.Fatalf("request_access: %s", text(res))
	}
	out := text(res)
	for _, want := range []string{"Granted: XTerm", "--allow zenity", "deskhand grants allow zenity", "restart"} {
		if !strings.Contains(out, want) {
			t.Errorf("result lacks %q:\n%s", want, out)
		}
	}
	res = h.call("request_access", map[string]any{"apps": []string{"zenity"}, "reason": "r"})
	if !res.IsError {
		t.Errorf("nothing granted but not an error: %s", text(res))
	}
}

func TestRequestAccessBadArguments(t *testing.T) {
	h := startConsent(t, false)
	for _, tc := range []struct {
		args any
		want string
	}{
		{map[string]any{"reason": "r"}, `needs "apps"`},
		{map[string]any{"apps": []string{"xterm"}}, `needs "reason"`},
		{map[string]any{"apps": 7, "reason": "r"}, "list of strings"},
		{map[string]any{"apps": []string{}, "reason": "r"}, "is empty"},
		{map[string]any{"apps": []string{"x"}, "reason": "r", "clipboardRead": "yes"}, "true or false"},
		{map[string]any{"apps": []string{"x"}, "reason": "r", "sudo": true}, "does not take"},
	} {
		res := h.call("request_access", tc.args)
		if !res.IsError || !strings.Contains(text(res), tc.want) {
			t.Errorf("request_access(%v) = %q, want an error containing %q", tc.args, text(res), tc.want)
		}
	}
}
