package mcpserver

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/supervisor/geometry"
)

// TestOpenAIProfileOffersOneTool: the openai profile lists the computer
// tool (and the consent tools), nothing else.
func TestOpenAIProfileOffersOneTool(t *testing.T) {
	h := start(t, newFake(), Options{ToolProfile: ProfileOpenAI, Consent: newTestConsent(t)})
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if diff := cmp.Diff([]string{"computer", "list_granted_applications", "request_access"}, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if _, err := New(Options{Executor: newFake(), ToolProfile: "gemini"}); err == nil || !strings.Contains(err.Error(), "default or openai") {
		t.Errorf("New with tool profile gemini = %v, want an error naming the profiles", err)
	}
	if _, err := New(Options{Executor: newFake(), ToolProfile: ProfileOpenAI, Mode: geometry.ModeNormalized}); err == nil || !strings.Contains(err.Error(), "pixels") {
		t.Errorf("New with the openai profile in normalized mode = %v, want an error asking for pixels", err)
	}
}

// TestOpenAIActions: each OpenAI action reaches the executor as the
// matching deskhand action, in order, and the result ends with a
// screenshot.
func TestOpenAIActions(t *testing.T) {
	fake := newFake(display("s", 0, 0, 1000, 800, true))
	h := start(t, fake, Options{ToolProfile: ProfileOpenAI})
	res := h.ok("computer", map[string]any{"actions": []any{}})
	imageOf(t, res)
	res = h.ok("computer", map[string]any{"actions": []any{
		map[string]any{"type": "click", "x": 10, "y": 20},
		map[string]any{"type": "click", "x": 11, "y": 21, "button": "right", "keys": []string{"SHIFT"}},
		map[string]any{"type": "click", "x": 12, "y": 22, "button": "wheel"},
		map[string]any{"type": "double_click", "x": 13, "y": 23, "keys": nil},
		map[string]any{"type": "move", "x": 14, "y": 24},
		map[string]any{"type": "drag", "path": []any{map[string]any{"x": 1, "y": 2}, map[string]any{"x": 3, "y": 4}}, "keys": []string{"CTRL"}},
		map[string]any{"type": "drag", "path": []any{map[string]any{"x": 5, "y": 5}, map[string]any{"x": 6, "y": 6}, map[string]any{"x": 7, "y": 7}}},
		map[string]any{"type": "scroll", "x": 50, "y": 60, "scroll_x": 0, "scroll_y": 300},
		map[string]any{"type": "scroll", "x": 50, "y": 60, "scroll_x": -120, "scroll_y": -40, "keys": []string{"CTRL"}},
		map[string]any{"type": "keypress", "keys": []string{"CTRL", "A"}},
		map[string]any{"type": "keypress", "keys": []string{"ENTER"}},
		map[string]any{"type": "keypress", "keys": []string{"ArrowDown"}},
		map[string]any{"type": "type", "text": "hello"},
		map[string]any{"type": "screenshot"},
	}})
	imageOf(t, res)
	want := []string{
		`Click 10,20 left x1 ""`,
		`Click 11,21 right x1 "SHIFT"`,
		`Click 12,22 middle x1 ""`,
		`Click 13,23 left x2 ""`,
		"MoveMouse 14,24",
		`Drag 1,2->3,4 "CTRL"`,
		"MoveMouse 5,5", "MouseDown left", "MoveMouse 6,6", "MoveMouse 7,7", "MouseUp left",
		"Scroll 50,60 down 3",
		`Scroll 50,60 up 1 "CTRL"`, `Scroll 50,60 left 1 "CTRL"`,
		"Key CTRL+a",
		"Key ENTER",
		"Key Down",
		`Type "hello"`,
	}
	if diff := cmp.Diff(want, fake.actions()); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	data := structured(t, res)
	if done := data["completed"].([]any); len(done) != 14 {
		t.Errorf("completed = %v, want 14 entries", done)
	}
	if _, ok := data["screenshot"]; !ok {
		t.Errorf("result data has no screenshot: %v", data)
	}
}

// TestOpenAIBadActions: a bad action is refused before anything runs,
// with a message about OpenAI's vocabulary, and the result still carries
// a screenshot for the computer_call_output.
func TestOpenAIBadActions(t *testing.T) {
	fake := newFake(display("s", 0, 0, 1000, 800, true))
	h := start(t, fake, Options{ToolProfile: ProfileOpenAI})
	h.ok("computer", map[string]any{"actions": []any{}})
	for _, tc := range []struct {
		action map[string]any
		want   string
	}{
		{map[string]any{"type": "tap", "x": 1, "y": 1}, `type "tap" is not an OpenAI computer action`},
		{map[string]any{"type": "click", "x": 1}, `needs "y"`},
		{map[string]any{"type": "click", "x": 1, "y": 1, "button": "back"}, `button "back" is not supported`},
		{map[string]any{"type": "click", "x": 1, "y": 1, "coordinate": []int{1, 1}}, `click does not take "coordinate"`},
		{map[string]any{"type": "keypress", "keys": []string{"NOSUCHKEY"}}, "unknown key"},
		{map[string]any{"type": "drag", "path": []any{map[string]any{"x": 1, "y": 2}}}, "at least two"},
		{map[string]any{"type": "type"}, `needs "text"`},
		{map[string]any{"type": "click", "x": 5000, "y": 1}, "(x, y): "},
		{map[string]any{"type": "click", "x": 1, "y": 1, "keys": []string{"NOSUCHKEY"}}, `modifier keys in "keys"`},
	} {
		res := h.call("computer", map[string]any{"actions": []any{map[string]any{"type": "type", "text": "x"}, tc.action}})
		msg := text(res)
		if !res.IsError || !strings.Contains(msg, "Nothing was run") || !strings.Contains(msg, tc.want) {
			t.Errorf("computer(%v) = %q (error %v), want a refusal containing %q", tc.action, msg, res.IsError, tc.want)
		}
		imageOf(t, res)
	}
	if got := fake.actions(); len(got) != 0 {
		t.Errorf("refused batches ran actions: %v", got)
	}
}

// TestOpenAIGatesEveryAction: every action, and every part of a drag
// through several points, goes through the gates; a refusal stops the
// batch, reports what ran, and still returns a screenshot.
func TestOpenAIGatesEveryAction(t *testing.T) {
	fake := newFake(display("s", 0, 0, 1000, 800, true))
	var seen []string
	gate := GateFunc{GateName: "policy", Func: func(ctx context.Context, a *Action) error {
		seen = append(seen, a.Tool)
		if a.Tool == "mouse_move" {
			return errors.New("moving is not allowed here")
		}
		return nil
	}}
	h := start(t, fake, Options{ToolProfile: ProfileOpenAI, Gates: []Gate{gate}})
	h.ok("computer", map[string]any{"actions": []any{}})
	seen = nil
	res := h.call("computer", map[string]any{"actions": []any{
		map[string]any{"type": "type", "text": "a"},
		map[string]any{"type": "drag", "path": []any{map[string]any{"x": 5, "y": 5}, map[string]any{"x": 6, "y": 6}, map[string]any{"x": 7, "y": 7}}},
		map[string]any{"type": "keypress", "keys": []string{"ENTER"}},
	}})
	if !res.IsError {
		t.Fatalf("the batch succeeded: %s", text(res))
	}
	if diff := cmp.Diff([]string{"type", "left_mouse_down", "mouse_move", "screenshot"}, seen); diff != "" {
		t.Errorf("gated actions (-want +got):\n%s", diff)
	}
	data := structured(t, res)
	if f := data["failed"].(map[string]any); f["action"] != "drag" || !strings.Contains(f["error"].(string), "moving is not allowed") {
		t.Errorf("failed = %v, want the drag refused by the policy", f)
	}
	if r := data["remaining"].([]any); len(r) != 1 {
		t.Errorf("remaining = %v, want the keypress", r)
	}
	imageOf(t, res)
	if fake.isHeld(ButtonLeft) {
		t.Errorf("the left button is still held after the refused drag")
	}
}
