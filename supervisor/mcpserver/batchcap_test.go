package mcpserver

import (
	"strings"
	"testing"
)

func TestBatchDurationCap(t *testing.T) {
	fake := newFake()
	h := start(t, fake, Options{})
	h.ok("screenshot", nil)
	long := strings.Repeat("a", maxTypeRunes)
	tests := []struct {
		name    string
		actions []any
		refused bool
	}{
		{"waits over the cap", append([]any{map[string]any{"action": "mouse_move", "coordinate": []int{5, 5}}}, repeat(map[string]any{"action": "wait", "duration": 30}, 10)...), true},
		{"holds over the cap", repeat(map[string]any{"action": "hold_key", "text": "shift", "duration": 60}, 5), true},
		{"typing and waits over the cap", append(repeat(map[string]any{"action": "type", "text": long}, 5), repeat(map[string]any{"action": "wait", "duration": 60}, 4)...), true},
		{"many quick actions under the cap", append(repeat(map[string]any{"action": "mouse_move", "coordinate": []int{5, 5}}, maxBatchActions-1), map[string]any{"action": "wait", "duration": 0}), false},
	}
	for _, tt := range tests {
		if !tt.refused {
			h.ok("computer_batch", map[string]any{"actions": tt.actions})
			continue
		}
		res := h.call("computer_batch", map[string]any{"actions": tt.actions})
		if !res.IsError || !strings.Contains(text(res), "Nothing was run") || !strings.Contains(text(res), "limit of 300 s") {
			t.Errorf("%s: computer_batch = %v %q, want a refusal naming the 300 s limit", tt.name, res.IsError, text(res))
		}
		if got := fake.actions(); len(got) != 0 {
			t.Fatalf("%s: a refused batch ran %q", tt.name, got)
		}
	}
}

func repeat(action map[string]any, n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = action
	}
	return out
}
