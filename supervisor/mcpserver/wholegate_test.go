package mcpserver

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
)

// TestWholeGateReasonBeforeScreenshotFirst: in pixel mode an action with a
// coordinate and no screenshot yet is refused with the reason of a leading
// whole gate that refuses every action (as the display gate does in a
// GNOME session), not with "call screenshot first", alone and inside a
// batch; a gate after the first non-whole one is not asked, and once the
// whole gates pass the model is told to take a screenshot as before.
func TestWholeGateReasonBeforeScreenshotFirst(t *testing.T) {
	var refuse atomic.Bool
	refuse.Store(true)
	display := GateFunc{GateName: "display", Whole: true, Func: func(context.Context, *Action) error {
		if refuse.Load() {
			return errors.New("this desktop shows deskhand no windows, so every action is refused")
		}
		return nil
	}}
	var later atomic.Int32
	access := GateFunc{GateName: "access", Func: func(context.Context, *Action) error {
		return errors.New("call request_access first")
	}}
	after := GateFunc{GateName: "after", Whole: true, Func: func(context.Context, *Action) error {
		later.Add(1)
		return errors.New("a whole gate after a non-whole one was asked")
	}}
	fake := newFake()
	h := start(t, fake, Options{Gates: []Gate{display, access, after}})

	msg := h.bad("left_click", map[string]any{"coordinate": []int{10, 10}}, "display: this desktop shows deskhand no windows")
	if strings.Contains(msg, "screenshot first") {
		t.Errorf("left_click without a screenshot = %q, which asks for a screenshot before the reason nothing can run", msg)
	}
	msg = h.bad("computer_batch", map[string]any{"actions": []any{map[string]any{"action": "left_click", "coordinate": []int{10, 10}}}},
		"display: this desktop shows deskhand no windows")
	if strings.Contains(msg, "screenshot first") {
		t.Errorf("a batch click without a screenshot = %q, which asks for a screenshot before the reason nothing can run", msg)
	}

	refuse.Store(false)
	h.bad("left_click", map[string]any{"coordinate": []int{10, 10}}, "no screenshot yet", "call screenshot first")
	h.bad("computer_batch", map[string]any{"actions": []any{map[string]any{"action": "left_click", "coordinate": []int{10, 10}}}}, "call screenshot first")
	if n := later.Load(); n != 0 {
		t.Errorf("the whole gate after the access gate was asked %d times before a parse error", n)
	}
	if got := fake.actions(); len(got) != 0 {
		t.Errorf("actions = %q, want none", got)
	}
}
