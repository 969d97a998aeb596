package mcpserver

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/supervisor/geometry"
)

// TestAnthropicToolsetArguments: the arguments Anthropic's
// computer_toolset_20260801 sends beyond the older computer tool (key's
// repeat, modifiers on scroll and left_click_drag, waits and holds up to
// 300 s) are accepted and reach the executor.
func TestAnthropicToolsetArguments(t *testing.T) {
	fake := newFake(display("s", 0, 0, 1000, 800, true))
	h := start(t, fake, Options{})
	h.ok("screenshot", nil)
	h.ok("key", map[string]any{"text": "Down", "repeat": 3})
	h.ok("key", map[string]any{"text": "Return", "repeat": 1})
	h.ok("scroll", map[string]any{"coordinate": []int{10, 20}, "scroll_direction": "down", "scroll_amount": 2, "text": "ctrl"})
	h.ok("left_click_drag", map[string]any{"start_coordinate": []int{1, 2}, "coordinate": []int{30, 40}, "text": "shift"})
	h.ok("hold_key", map[string]any{"text": "shift", "duration": 300})
	// One combination, however spaced: the gates see what the keyboard does.
	h.ok("scroll", map[string]any{"scroll_direction": "up", "text": " ctrl + shift "})
	want := []string{
		"Key Down", "Key Down", "Key Down",
		"Key Return",
		`Scroll 10,20 down 2 "ctrl"`,
		`Drag 1,2->30,40 "shift"`,
		"HoldKey shift 5m0s",
		`Scroll 30,40 up 3 "ctrl+shift"`,
	}
	if diff := cmp.Diff(want, fake.actions()); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	h.bad("key", map[string]any{"text": "a", "repeat": 101}, "repeat 101 is out of range", "1 to 100")
	h.bad("key", map[string]any{"text": "a", "repeat": 1.5}, "repeat 1.5")
	h.bad("wait", map[string]any{"duration": 300.5}, "from 0 to 300")
	h.bad("scroll", map[string]any{"scroll_direction": "down", "text": "ctrl+nosuchkey"}, `modifier keys in "text"`)
	// Unknown arguments are still refused, by name.
	h.bad("key", map[string]any{"text": "a", "times": 2}, `key does not take "times"`, `"repeat"`)
	h.bad("scroll", map[string]any{"scroll_direction": "down", "modifiers": "ctrl"}, `"modifiers"`)
}

// TestKeyRepeatGatesEachPress: every press of a repeated key goes through
// the gates, so a refusal half-way stops the rest.
func TestKeyRepeatGatesEachPress(t *testing.T) {
	fake := newFake()
	var checks atomic.Int32
	gate := GateFunc{GateName: "focus", Func: func(ctx context.Context, a *Action) error {
		if a.Tool == "key" && checks.Add(1) > 2 {
			return errors.New("the focused window changed")
		}
		return nil
	}}
	h := start(t, fake, Options{Gates: []Gate{gate}})
	h.bad("key", map[string]any{"text": "Tab", "repeat": 5}, "stopped after 2 of 5 presses", "focus: the focused window changed")
	if diff := cmp.Diff([]string{"Key Tab", "Key Tab"}, fake.actions()); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
}

// TestLongWaitInBatchIsCapped: a 300 s wait alone fits the batch limit's
// per-call rule, but with its allowance it goes over and is refused
// before anything runs.
func TestLongWaitInBatchIsCapped(t *testing.T) {
	fake := newFake()
	h := start(t, fake, Options{})
	h.bad("computer_batch", map[string]any{"actions": []any{
		map[string]any{"action": "key", "text": "a"},
		map[string]any{"action": "wait", "duration": 300},
	}}, "Nothing was run", "over the limit of 300 s")
	if len(fake.actions()) != 0 {
		t.Errorf("the refused batch ran: %v", fake.actions())
	}
}

// TestImagePresetReceipt: --image-preset sizes screenshots to the family's
// limits, and every screenshot's JSON block names the preset and the
// factor from its pixels to the screen's.
func TestImagePresetReceipt(t *testing.T) {
	for _, tc := range []struct {
		preset string
		w, h   int
	}{{"", 1456, 819}, {"anthropic", 1456, 819}, {"openai", 1650, 928}, {"gemini", 1536, 864}} {
		fake := newFake(fullHD("DP-1", 0, true))
		h := start(t, fake, Options{ImagePreset: tc.preset})
		res := h.ok("screenshot", nil)
		_, img := imageOf(t, res)
		if b := img.Bounds(); b.Dx() != tc.w || b.Dy() != tc.h {
			t.Errorf("preset %q: image is %dx%d, want %dx%d", tc.preset, b.Dx(), b.Dy(), tc.w, tc.h)
		}
		scale := structured(t, res)["scale"].(map[string]any)
		wantName := tc.preset
		if wantName == "" {
			wantName = "anthropic" // the defaults are Anthropic's limits
		}
		if scale["preset"] != wantName {
			t.Errorf("preset %q: receipt names %v", tc.preset, scale["preset"])
		}
		f := scale["image_to_logical"].(map[string]any)
		if x, y := f["x"].(float64), f["y"].(float64); x != 1920/float64(tc.w) || y != 1080/float64(tc.h) {
			t.Errorf("preset %q: image_to_logical = %v, want %v, %v", tc.preset, f, 1920/float64(tc.w), 1080/float64(tc.h))
		}
	}
	fake := newFake()
	if _, err := New(Options{Executor: fake, ImagePreset: "llama"}); err == nil || !strings.Contains(err.Error(), "anthropic, openai, gemini") {
		t.Errorf("New with an unknown preset = %v, want an error listing the presets", err)
	}
	h := start(t, newFake(fullHD("DP-1", 0, true)), Options{Limits: geometry.Limits{MaxLongEdge: 800}})
	if got := structured(t, h.ok("screenshot", nil))["scale"].(map[string]any)["preset"]; got != "custom" {
		t.Errorf("custom limits: receipt names preset %v, want custom", got)
	}
}

// TestLenientArguments: the forms models send besides the schema's, a
// coordinate written as a string and numbers quoted, reach the executor
// as the schema's forms would; what no form reads is refused by name.
func TestLenientArguments(t *testing.T) {
	fake := newFake(display("s", 0, 0, 1000, 800, true))
	h := start(t, fake, Options{})
	h.ok("screenshot", nil)
	for _, c := range []any{"[10, 20]", "10,20", "(10, 20)", " 10 20 ", []any{"10", 20.0}} {
		h.ok("left_click", map[string]any{"coordinate": c})
	}
	h.ok("scroll", map[string]any{"coordinate": "[10, 20]", "scroll_direction": " Down ", "scroll_amount": "2"})
	h.ok("key", map[string]any{"text": "a", "repeat": "2"})
	h.ok("zoom", map[string]any{"region": "0, 0, 100, 80"})
	want := []string{
		`Click 10,20 left x1 ""`, `Click 10,20 left x1 ""`, `Click 10,20 left x1 ""`, `Click 10,20 left x1 ""`, `Click 10,20 left x1 ""`,
		"Scroll 10,20 down 2", "Key a", "Key a",
	}
	if diff := cmp.Diff(want, fake.actions()); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	h.bad("key", map[string]any{"text": "a", "repeat": "Infinity"}, `key: repeat +Inf is not a finite number`)
	h.bad("left_click", map[string]any{"coordinate": "10"}, `left_click: "coordinate" must be [x, y], 2 numbers, got "10"`)
	h.bad("left_click", map[string]any{"show_change": "yes"}, `"show_change" must be true or false, got "yes"`)
}
