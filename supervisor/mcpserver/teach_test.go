package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// fakeOverlay is the fake executor's teaching overlay: each show is
// answered with answers[n] (n counts the shows from 0) once the test has
// put one there; until then the user "reads".
type fakeOverlay struct {
	shows   []bridge.TeachShowRequest
	visible bool
	choice  string
	answers map[int]string
	hides   int
}

// overlayBounds is where the fake shows every tooltip: Next on its left,
// Exit on its right.
var overlayBounds = bridge.TeachShown{
	Bounds: bridge.Rect{X: 100, Y: 100, Width: 300, Height: 120},
	Next:   bridge.Rect{X: 110, Y: 180, Width: 80, Height: 30},
	Exit:   bridge.Rect{X: 300, Y: 180, Width: 80, Height: 30},
}

func (f *fakeExecutor) TeachShow(ctx context.Context, req bridge.TeachShowRequest) (*bridge.TeachShown, error) {
	anchor := "none"
	if req.Anchor != nil {
		anchor = fmt.Sprintf("%d,%d", req.Anchor.X, req.Anchor.Y)
	}
	if err := f.enter("TeachShow", "%s at %s", req.Explanation, anchor); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.overlay.shows = append(f.overlay.shows, req)
	f.overlay.visible, f.overlay.choice = true, ""
	shown := overlayBounds
	return &shown, nil
}

func (f *fakeExecutor) TeachPoll(ctx context.Context) (*bridge.TeachState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := &f.overlay
	if a, ok := o.answers[len(o.shows)-1]; ok && o.visible && o.choice == "" {
		o.choice = a
	}
	return &bridge.TeachState{Visible: o.visible, Choice: o.choice}, nil
}

func (f *fakeExecutor) TeachHide(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.overlay.visible, f.overlay.choice = false, ""
	f.overlay.hides++
	return nil
}

// answer scripts the user's answers to the shows, in order from show n.
func (f *fakeExecutor) answer(from int, choices ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.overlay.answers == nil {
		f.overlay.answers = map[int]string{}
	}
	for i, c := range choices {
		f.overlay.answers[from+i] = c
	}
}

func (f *fakeExecutor) overlayState() (shows []bridge.TeachShowRequest, visible bool, hides int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.overlay.shows), f.overlay.visible, f.overlay.hides
}

// waitShown waits until the fake shows tooltip number n (1-based).
func waitShown(t *testing.T, f *fakeExecutor, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		shows, visible, _ := f.overlayState()
		if len(shows) >= n && visible {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("tooltip %d was never shown (shows %d, visible %v)", n, len(shows), visible)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// teachStart serves teaching over the fake, with a first screenshot at
// half the display's size.
func teachStart(t *testing.T) (*harness, *fakeExecutor) {
	fake := newFake(fullHD("DP-1", 0, true))
	h := start(t, fake, Options{Teach: true, Limits: geometry.Limits{MaxLongEdge: 960}})
	h.ok("screenshot", nil) // 960x540 of 1920x1080: factor 2
	return h, fake
}

func TestTeachToolsOnlyWhenTeaching(t *testing.T) {
	for _, teach := range []bool{false, true} {
		h := start(t, newFake(), Options{Teach: teach, Consent: newTestConsent(t)})
		res, err := h.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		for _, name := range []string{"request_teach_access", "teach_step", "teach_batch"} {
			if got := slices.Contains(names, name); got != teach {
				t.Errorf("Teach %v: tools/list has %s = %v, want %v", teach, name, got, teach)
			}
		}
	}
	// A server can start teaching later: the tools appear then.
	h := start(t, newFake(), Options{})
	h.server.EnableTeaching()
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "teach_step" }) {
		t.Error("after EnableTeaching, tools/list has no teach_step")
	}
}

func TestTeachStepNextRunsActions(t *testing.T) {
	h, fake := teachStart(t)
	fake.answer(0, bridge.TeachNext)
	res := h.ok("teach_step", map[string]any{
		"explanation": "This is the name field.", "next_preview": "I will type your name.",
		"anchor":  []int{300, 200},
		"actions": []any{map[string]any{"action": "left_click", "coordinate": []int{310, 210}}, map[string]any{"action": "type", "text": "Ada"}},
	})
	want := []string{"TeachShow This is the name field. at 601,401", `Click 621,421 left x1 ""`, `Type "Ada"`}
	if diff := cmp.Diff(want, fake.actions()); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if _, img := imageOf(t, res); img.Bounds().Dx() != 960 {
		t.Errorf("teach_step's screenshot is %v wide, want 960", img.Bounds())
	}
	if _, visible, _ := fake.overlayState(); visible {
		t.Error("the tooltip is still up after the step")
	}
}

func TestTeachStepExitRunsNothing(t *testing.T) {
	h, fake := teachStart(t)
	fake.answer(0, bridge.TeachExit)
	res := h.ok("teach_step", map[string]any{
		"explanation": "e", "next_preview": "n",
		"actions": []any{map[string]any{"action": "type", "text": "never"}},
	})
	if d := structured(t, res); d["exited"] != true {
		t.Errorf("teach_step after Exit = %v, want exited true", d)
	}
	if got := fake.actions(); len(got) != 1 || !strings.HasPrefix(got[0], "TeachShow") {
		t.Errorf("after Exit the actions were %v, want only the tooltip", got)
	}
}

func TestTeachStepBadEnvelopeShowsNothing(t *testing.T) {
	h, fake := teachStart(t)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"next_preview": "n"}, `"explanation"`},
		{map[string]any{"explanation": " ", "next_preview": "n"}, "empty"},
		{map[string]any{"explanation": "e", "next_preview": "n", "anchor": []int{5000, 10}}, "anchor"},
		{map[string]any{"explanation": "e", "next_preview": "n", "actions": []any{map[string]any{"action": "open_application", "app": "xterm"}}}, "cannot run in a batch"},
		{map[string]any{"explanation": "e", "next_preview": "n", "actions": "click"}, "list of objects"},
	} {
		h.bad("teach_step", tc.args, tc.want, "nothing was shown")
	}
	if got := fake.actions(); len(got) != 0 {
		t.Errorf("bad teach_step calls did %v, want nothing", got)
	}
}

func TestTeachBatchInvalidEnvelopeRunsNothing(t *testing.T) {
	h, fake := teachStart(t)
	fake.answer(0, bridge.TeachNext, bridge.TeachNext, bridge.TeachNext)
	res := h.call("teach_batch", map[string]any{"steps": []any{
		map[string]any{"explanation": "one", "next_preview": "n", "actions": []any{map[string]any{"action": "type", "text": "1"}}},
		map[string]any{"explanation": "two", "actions": []any{map[string]any{"action": "type", "text": "2"}}},
		map[string]any{"explanation": "three", "next_preview": "n", "actions": []any{map[string]any{"action": "type", "text": "3"}}},
	}})
	if !res.IsError {
		t.Fatalf("a batch with an invalid step succeeded: %s", text(res))
	}
	d := structured(t, res)
	if f := d["failed"].(map[string]any); f["index"] != 1.0 || !strings.Contains(f["error"].(string), "next_preview") {
		t.Errorf("failed = %v, want step index 1 missing next_preview", f)
	}
	if r := d["remaining"].([]any); len(r) != 2 {
		t.Errorf("remaining = %v, want steps 0 and 2", r)
	}
	if got := fake.actions(); len(got) != 0 {
		t.Errorf("the invalid batch did %v, want nothing", got)
	}
}

func TestTeachBatchRuntimeFailure(t *testing.T) {
	h, fake := teachStart(t)
	fake.answer(0, bridge.TeachNext, bridge.TeachNext, bridge.TeachNext)
	fake.fail("Key", 0, errors.New("the keyboard is gone"))
	res := h.call("teach_batch", map[string]any{"steps": []any{
		map[string]any{"explanation": "one", "next_preview": "n", "actions": []any{map[string]any{"action": "type", "text": "1"}}},
		map[string]any{"explanation": "two", "next_preview": "n", "actions": []any{map[string]any{"action": "type", "text": "2"}, map[string]any{"action": "key", "text": "Return"}}},
		map[string]any{"explanation": "three", "next_preview": "n", "actions": []any{map[string]any{"action": "type", "text": "3"}}},
	}})
	if !res.IsError {
		t.Fatalf("a failing batch succeeded: %s", text(res))
	}
	d := structured(t, res)
	completed, remaining := d["completed"].([]any), d["remaining"].([]any)
	failed := d["failed"].(map[string]any)
	if len(completed) != 1 || completed[0].(map[string]any)["index"] != 0.0 {
		t.Errorf("completed = %v, want step 0", completed)
	}
	if failed["index"] != 1.0 || !strings.Contains(failed["error"].(string), "keyboard is gone") {
		t.Errorf("failed = %v, want step 1 with the key error", failed)
	}
	if len(remaining) != 1 || remaining[0].(map[string]any)["index"] != 2.0 {
		t.Errorf("remaining = %v, want step 2", remaining)
	}
	want := []string{"TeachShow one at none", `Type "1"`, "TeachShow two at none", `Type "2"`, "Key Return"}
	if diff := cmp.Diff(want, fake.actions()); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
}

// TestTeachBatchUsesPreBatchScreenshot: a step's screenshot of another
// size does not rebase the later steps' anchors and clicks.
func TestTeachBatchUsesPreBatchScreenshot(t *testing.T) {
	h, fake := teachStart(t) // 960x540 of 1920x1080
	fake.mu.Lock()
	fake.displays[0].Logical = bridge.Size{Width: 1280, Height: 720}
	fake.displays[0].Physical = bridge.Size{Width: 1280, Height: 720}
	fake.mu.Unlock()
	fake.answer(0, bridge.TeachNext, bridge.TeachNext)
	res := h.ok("teach_batch", map[string]any{"steps": []any{
		map[string]any{"explanation": "one", "next_preview": "n", "actions": []any{map[string]any{"action": "screenshot"}}},
		map[string]any{"explanation": "two", "next_preview": "n", "anchor": []int{100, 100}, "actions": []any{map[string]any{"action": "left_click", "coordinate": []int{200, 200}}}},
	}})
	want := []string{"TeachShow one at none", "TeachShow two at 201,201", `Click 401,401 left x1 ""`}
	if diff := cmp.Diff(want, fake.actions()); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if _, img := imageOf(t, res); img.Bounds().Dx() != 960 {
		t.Errorf("final screenshot is %v wide", img.Bounds())
	}
}

func TestTeachBatchFinalScreenshotOnlyWithActions(t *testing.T) {
	h, fake := teachStart(t)
	fake.answer(0, bridge.TeachNext, bridge.TeachNext)
	fake.mu.Lock()
	before := len(fake.captures)
	fake.mu.Unlock()
	res := h.ok("teach_batch", map[string]any{"steps": []any{
		map[string]any{"explanation": "one", "next_preview": "n"},
		map[string]any{"explanation": "two", "next_preview": "n", "actions": []any{}},
	}})
	for _, c := range res.Content {
		if _, ok := c.(*mcp.ImageContent); ok {
			t.Error("a batch without actions returned a screenshot")
		}
	}
	if d := structured(t, res); len(d["completed"].([]any)) != 2 {
		t.Errorf("completed = %v, want both steps", d["completed"])
	}
	fake.mu.Lock()
	after := len(fake.captures)
	fake.mu.Unlock()
	if after != before {
		t.Errorf("a batch without actions took %d captures", after-before)
	}
}

func TestTeachBatchExitReportsProgress(t *testing.T) {
	h, fake := teachStart(t)
	fake.answer(0, bridge.TeachNext, bridge.TeachExit)
	res := h.ok("teach_batch", map[string]any{"steps": []any{
		map[string]any{"explanation": "one", "next_preview": "n", "actions": []any{map[string]any{"action": "type", "text": "1"}}},
		map[string]any{"explanation": "two", "next_preview": "n", "actions": []any{map[string]any{"action": "type", "text": "2"}}},
		map[string]any{"explanation": "three", "next_preview": "n"},
	}})
	d := structured(t, res)
	if d["exited"] != true || len(d["completed"].([]any)) != 1 || len(d["remaining"].([]any)) != 2 {
		t.Errorf("exit at step 2 = %v, want exited, 1 completed, 2 remaining", d)
	}
	if got := fake.actions(); slices.Contains(got, `Type "2"`) {
		t.Errorf("the step exited at ran: %v", got)
	}
}

// TestModelClickOnTooltipRefused: while a step waits for the user, a
// click at the tooltip's Next button is refused, and the step still waits.
func TestModelClickOnTooltipRefused(t *testing.T) {
	h, fake := teachStart(t)
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := h.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "teach_step", Arguments: map[string]any{
			"explanation": "e", "next_preview": "n", "actions": []any{map[string]any{"action": "type", "text": "ran"}},
		}})
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	// Should a check below fail, the user still answers, so the waiting
	// call ends with the test.
	t.Cleanup(func() { fake.answer(0, bridge.TeachExit) })
	waitShown(t, fake, 1)
	next := overlayBounds.Next
	// The Next button's centre, in the 960x540 screenshot's pixels.
	at := []int{(next.X + next.Width/2) / 2, (next.Y + next.Height/2) / 2}
	h.bad("left_click", map[string]any{"coordinate": at}, "teaching tooltip", "only the user")
	// A second step cannot replace the waiting one either.
	h.bad("teach_step", map[string]any{"explanation": "x", "next_preview": "y"}, "another teaching step")
	fake.answer(0, bridge.TeachExit)
	res := <-done
	if d := structured(t, res); d["exited"] != true {
		t.Errorf("teach_step = %v, want exited", d)
	}
	for _, a := range fake.actions() {
		if strings.HasPrefix(a, "Click") || strings.HasPrefix(a, "Type") {
			t.Errorf("the model's click or the step's actions ran: %v", fake.actions())
		}
	}
	// With the tooltip down, the same point may be clicked again.
	h.ok("left_click", map[string]any{"coordinate": at})
}

// TestTeachStepCancelTakesTooltipDown: a call cancelled while it waits
// (the user's Escape ends the turn the same way) takes the tooltip down
// and runs nothing.
func TestTeachStepCancelTakesTooltipDown(t *testing.T) {
	h, fake := teachStart(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: "teach_step", Arguments: map[string]any{
			"explanation": "e", "next_preview": "n", "actions": []any{map[string]any{"action": "type", "text": "ran"}},
		}})
		done <- err
	}()
	waitShown(t, fake, 1)
	cancel()
	<-done
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, visible, hides := fake.overlayState(); !visible && hides > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tooltip stayed up after the call was cancelled")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if slices.Contains(fake.actions(), `Type "ran"`) {
		t.Error("the cancelled step ran its actions")
	}
	// The action slot is free again.
	h.ok("mouse_move", map[string]any{"coordinate": []int{1, 1}})
}

// TestTeachNeedsTeachAccess: with consent, the teaching tools need
// request_teach_access; request_access alone does not enable them.
func TestTeachNeedsTeachAccess(t *testing.T) {
	m := newTestConsent(t, "xterm")
	h := start(t, newFake(), Options{Teach: true, Consent: m, Gates: []Gate{AccessGate(m.Session())}})
	args := map[string]any{"explanation": "e", "next_preview": "n"}
	h.bad("teach_step", args, "request_teach_access")
	h.ok("request_access", map[string]any{"apps": []string{"xterm"}, "reason": "r"})
	h.bad("teach_step", args, "request_teach_access")
	h.ok("request_teach_access", map[string]any{"apps": []string{"xterm"}, "reason": "r"})
	h.fake.answer(0, bridge.TeachExit)
	if d := structured(t, h.ok("teach_step", args)); d["exited"] != true {
		t.Errorf("teach_step after request_teach_access = %v", d)
	}
	// The user's Escape withdraws teaching with everything else.
	m.Session().Revoke()
	h.bad("teach_step", args, "Escape")
}
