package gates

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// baselineDesktop is a fakeDesktop whose helper has patch_baseline: each
// call answers the next of diffs (then 0), and makes the fake's patch
// checks find nothing changed, as the real helper's would right after.
type baselineDesktop struct {
	*fakeDesktop
	mu    sync.Mutex
	diffs []int
	calls int
}

func (d *baselineDesktop) PatchBaseline(ctx context.Context, tolerance int) (*bridge.PatchBaseline, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	n := 0
	if len(d.diffs) > 0 {
		n, d.diffs = d.diffs[0], d.diffs[1:]
	}
	d.fakeDesktop.mu.Lock()
	d.fakeDesktop.patch = bridge.PatchCheck{}
	d.fakeDesktop.mu.Unlock()
	return &bridge.PatchBaseline{DifferingPixels: n, CaptureID: 1}, nil
}

func TestStalenessAfterOwnInput(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	d := &baselineDesktop{fakeDesktop: f.d}
	f.g.opts.Desktop = d
	ctx := context.Background()
	click := mcpserver.Action{Tool: "left_click", Target: onZenity}
	if _, err := f.exec.Capture(ctx, bridge.CaptureRequest{}); err != nil {
		t.Fatal(err)
	}
	// Nothing was drawn before the model's own click, which changes the
	// screen; the screen settles over three reads (the third at
	// settleMin), and is read once more at settleMax; the reference is
	// then the settled screen.
	d.diffs = []int{0, 5000, 900, 3}
	if err := f.exec.Click(ctx, *onZenity, mcpserver.ButtonLeft, 1, ""); err != nil {
		t.Fatal(err)
	}
	// The settling runs in the background; the gate waits for it.
	if err := f.g.awaitReference(ctx); err != nil {
		t.Fatal(err)
	}
	if d.calls != 5 {
		t.Errorf("patch_baseline called %d times, want 5 (once before the click, until the screen settled, and at settleMax)", d.calls)
	}
	n := len(f.d.patches)
	if err := f.check(click); err != nil {
		t.Fatalf("the model's follow-up click on the screen its click changed: %v", err)
	}
	if len(f.d.patches) == n {
		t.Fatal("the follow-up click was not checked at all")
	}
	// After a mouse_move, something else changes the target: refused.
	if err := f.exec.MoveMouse(ctx, *onZenity); err != nil {
		t.Fatal(err)
	}
	if err := f.g.awaitReference(ctx); err != nil {
		t.Fatal(err)
	}
	f.d.patch = bridge.PatchCheck{Changed: true, DifferingPixels: 200}
	if err := f.check(click); err == nil || !strings.Contains(err.Error(), "take a new screenshot") {
		t.Fatalf("click after a mouse_move on a target something else changed: %v", err)
	}
	// The same after a scroll.
	if err := f.exec.Scroll(ctx, *onZenity, "down", 1, ""); err != nil {
		t.Fatal(err)
	}
	if err := f.g.awaitReference(ctx); err != nil {
		t.Fatal(err)
	}
	f.d.patch = bridge.PatchCheck{Changed: true, DifferingPixels: 200}
	if err := f.check(click); err == nil {
		t.Fatal("click after a scroll on a target something else changed was allowed")
	}
}

// heldBaselineDesktop is a baselineDesktop whose patch_baseline reads
// after the first free ones wait for release, so a test can act while a
// settling is in progress.
type heldBaselineDesktop struct {
	*baselineDesktop
	free    int
	release chan struct{}
	started chan struct{}
}

func (d *heldBaselineDesktop) PatchBaseline(ctx context.Context, tolerance int) (*bridge.PatchBaseline, error) {
	d.baselineDesktop.mu.Lock()
	free := d.calls < d.free
	d.baselineDesktop.mu.Unlock()
	if free {
		return d.baselineDesktop.PatchBaseline(ctx, tolerance)
	}
	select {
	case d.started <- struct{}{}:
	default:
	}
	<-d.release
	return d.baselineDesktop.PatchBaseline(ctx, tolerance)
}

func TestStalenessWaitsForSettlingOnlyWhereTheTargetChanged(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	// The read before the mouse_move is free; the settling's are held.
	d := &heldBaselineDesktop{baselineDesktop: &baselineDesktop{fakeDesktop: f.d}, free: 1, release: make(chan struct{}), started: make(chan struct{}, 1)}
	f.g.opts.Desktop = d
	ctx := context.Background()
	click := mcpserver.Action{Tool: "left_click", Target: onZenity}
	if _, err := f.exec.Capture(ctx, bridge.CaptureRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := f.exec.MoveMouse(ctx, *onZenity); err != nil {
		t.Fatal(err)
	}
	<-d.started // the settling's first read is under way, and held
	// The target matches the reference: the click goes ahead at once,
	// checked, while the settling is still held.
	n := len(f.d.patches)
	if err := f.check(click); err != nil {
		t.Fatalf("click on an unchanged target during the settling: %v", err)
	}
	if len(f.d.patches) == n {
		t.Fatal("the click during the settling was not checked")
	}
	if f.g.settling() == nil {
		t.Fatal("the settling ended while its read was held")
	}
	// The target differs from the reference: the click waits for the
	// settling (whose reads make the fake's patch match again) and is
	// then checked against the settled reference.
	f.d.mu.Lock()
	f.d.patch = bridge.PatchCheck{Changed: true, DifferingPixels: 200}
	f.d.mu.Unlock()
	n = len(f.d.patches)
	errc := make(chan error, 1)
	go func() { errc <- f.check(click) }()
	// Release the settling once the click found its target changed.
	for {
		f.d.mu.Lock()
		checked := len(f.d.patches) > n
		f.d.mu.Unlock()
		if checked {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if f.g.settling() == nil {
		t.Fatal("the settling ended while its read was held")
	}
	close(d.release)
	if err := <-errc; err != nil {
		t.Fatalf("click on a target the mouse_move's settling absorbed: %v", err)
	}
	d.mu.Lock()
	calls := d.calls
	d.mu.Unlock()
	if calls == 1 {
		t.Fatal("the click on a changed target did not wait for the settling")
	}
	if err := f.g.awaitReference(ctx); err != nil {
		t.Fatal(err)
	}
	// Once settled, a change by something else is still refused.
	f.d.mu.Lock()
	f.d.patch = bridge.PatchCheck{Changed: true, DifferingPixels: 200}
	f.d.mu.Unlock()
	if err := f.check(click); err == nil || !strings.Contains(err.Error(), "take a new screenshot") {
		t.Fatalf("click on a target something else changed after the settling: %v", err)
	}
}

func TestCaptureStopsTheSettlingAtOnce(t *testing.T) {
	f, d := capturedBaseline(t)
	ctx := context.Background()
	if err := f.exec.MoveMouse(ctx, *onZenity); err != nil {
		t.Fatal(err)
	}
	// The capture stops the settling: no read of the screen after the
	// capture's may become the reference.
	if _, err := f.exec.Capture(ctx, bridge.CaptureRequest{}); err != nil {
		t.Fatal(err)
	}
	if f.g.settling() != nil {
		t.Fatal("a settling outlived the capture")
	}
	d.mu.Lock()
	calls := d.calls
	d.mu.Unlock()
	// Nothing may read after the capture: no more reads come later.
	time.Sleep(2 * settleStep)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.calls != calls {
		t.Errorf("patch_baseline called %d more times after the capture, want none", d.calls-calls)
	}
}

// TestStalenessAfterElementAction: an element action (the accessibility
// API, no input) leaves the staleness reference alone, so the next call
// does not wait on a settling, and a coordinate click where the screen
// changed since the model's screenshot is still checked and refused.
func TestStalenessAfterElementAction(t *testing.T) {
	f, d := capturedBaseline(t)
	ctx := context.Background()
	if err := f.exec.A11yAct(ctx, bridge.A11yActRequest{PID: zenityApp.PID, Ref: "r", Op: "action", Args: map[string]any{"action": "click"}}); err != nil {
		t.Fatal(err)
	}
	if err := f.g.awaitReference(ctx); err != nil {
		t.Fatal(err)
	}
	if d.calls != 0 {
		t.Errorf("patch_baseline called %d times after an element action, want 0", d.calls)
	}
	f.d.patch = bridge.PatchCheck{Changed: true, DifferingPixels: 200}
	n := len(f.d.patches)
	err := f.check(mcpserver.Action{Tool: "left_click", Target: onZenity})
	if err == nil || !strings.Contains(err.Error(), "take a new screenshot") {
		t.Fatalf("coordinate click on a target changed since the screenshot, after an element action: %v", err)
	}
	if len(f.d.patches) == n {
		t.Fatal("the coordinate click was not checked against the screenshot")
	}
}

// TestSupersededSettlingNeverReads: an action or a capture within
// settleStep of an action ends that action's settling before its first
// read, at once; a read after a capture would make the reference the
// screen as it is then rather than as the model saw it. The newest
// action's settling still runs to the end.
func TestSupersededSettlingNeverReads(t *testing.T) {
	f, d := capturedBaseline(t)
	ctx := context.Background()
	reads := func() int {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.calls
	}

	// A capture right after an action. (The read before the action is
	// beforeInput's, not the settling's.)
	if err := f.exec.MoveMouse(ctx, *onZenity); err != nil {
		t.Fatal(err)
	}
	before := reads()
	if _, err := f.exec.Capture(ctx, bridge.CaptureRequest{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * settleStep)
	if n := reads() - before; n != 0 {
		t.Fatalf("patch_baseline called %d times after a capture superseded the settling; want none", n)
	}

	// A burst of actions: each one ends the settling before it. Only
	// the first, after a quiet spell, reads before it.
	before = reads() + 1
	for range 5 {
		settling := f.g.settling()
		if err := f.exec.MoveMouse(ctx, *onZenity); err != nil {
			t.Fatal(err)
		}
		if settling != nil {
			select {
			case <-settling:
			default:
				t.Fatal("a superseded settling was not over when the next action returned")
			}
		}
	}
	if n := reads() - before; n != 0 {
		t.Fatalf("patch_baseline called %d times during the burst; want none", n)
	}
	if err := f.g.awaitReference(ctx); err != nil {
		t.Fatal(err)
	}
	if n := reads() - before; n < 2 {
		t.Errorf("the last action's settling read the screen %d times; want it to run until settleMin", n)
	}
	f.g.mu.Lock()
	acted := f.g.acted
	f.g.mu.Unlock()
	if acted {
		t.Error("after the last action settled the reference still counts as not refreshed")
	}
}

// capturedBaseline is a fixture whose desktop counts patch_baseline reads,
// after one screenshot.
func capturedBaseline(t *testing.T) (*fixture, *baselineDesktop) {
	t.Helper()
	f := newFixture(t, consent.Flags{})
	d := &baselineDesktop{fakeDesktop: f.d}
	f.g.opts.Desktop = d
	if _, err := f.exec.Capture(context.Background(), bridge.CaptureRequest{}); err != nil {
		t.Fatal(err)
	}
	return f, d
}

// TestStalenessNotLaunderedByInput: a change drawn after the screenshot
// and before deskhand's own input stays stale after that input settles,
// whatever the input, until the next capture; a difference no patch check
// would notice (a blinking cursor) does not count.
func TestStalenessNotLaunderedByInput(t *testing.T) {
	ctx := context.Background()
	click := mcpserver.Action{Tool: "left_click", Target: onZenity}
	for _, tc := range []struct {
		name  string
		input func(e mcpserver.Executor) error
	}{
		{"mouse_move", func(e mcpserver.Executor) error { return e.MoveMouse(ctx, *onNothing) }},
		{"key", func(e mcpserver.Executor) error { return e.Key(ctx, "shift") }},
		{"scroll", func(e mcpserver.Executor) error { return e.Scroll(ctx, *onNothing, "down", 1, "") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, d := capturedBaseline(t)
			d.diffs = []int{5000} // a dialog drew over the target before the input
			if err := tc.input(f.exec); err != nil {
				t.Fatal(err)
			}
			if err := f.g.awaitReference(ctx); err != nil {
				t.Fatal(err)
			}
			if err := f.check(click); err == nil || !strings.Contains(err.Error(), "take a new screenshot") {
				t.Fatalf("click after a %s on a target drawn over before it: %v", tc.name, err)
			}
			if _, err := f.exec.Capture(ctx, bridge.CaptureRequest{}); err != nil {
				t.Fatal(err)
			}
			if err := f.check(click); err != nil {
				t.Fatalf("click after a new screenshot: %v", err)
			}
			// A blinking cursor before the input is not a change.
			d.diffs = []int{settleQuiet}
			if err := tc.input(f.exec); err != nil {
				t.Fatal(err)
			}
			if err := f.g.awaitReference(ctx); err != nil {
				t.Fatal(err)
			}
			if err := f.check(click); err != nil {
				t.Fatalf("click after a %s with only a cursor blink before it: %v", tc.name, err)
			}
		})
	}
}

// TestStalenessAfterInputWhereDrawn: where the display says where it was
// drawn, the refusal after an unseen change holds only there; where it
// says nothing was drawn, the helper is not asked before the input.
func TestStalenessAfterInputWhereDrawn(t *testing.T) {
	ctx := context.Background()
	f, d := capturedBaseline(t)
	drawn := &fakeDrawn{located: true}
	f.g.opts.Drawn = drawn
	if err := f.exec.MoveMouse(ctx, *onNothing); err != nil {
		t.Fatal(err)
	}
	if d.calls != 0 {
		t.Fatalf("patch_baseline called %d times before an input with nothing drawn, want 0", d.calls)
	}
	if _, err := f.exec.Capture(ctx, bridge.CaptureRequest{}); err != nil {
		t.Fatal(err)
	}
	drawn.drawn = []geometry.Rect{{X: onZenity.X - 50, Y: onZenity.Y - 50, Width: 100, Height: 100}}
	d.diffs = []int{5000}
	if err := f.exec.MoveMouse(ctx, *onNothing); err != nil {
		t.Fatal(err)
	}
	if err := f.g.awaitReference(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.check(mcpserver.Action{Tool: "left_click", Target: onZenity}); err == nil || !strings.Contains(err.Error(), "take a new screenshot") {
		t.Fatalf("click where the display drew before the input: %v", err)
	}
	if err := f.check(mcpserver.Action{Tool: "left_click", Target: onXterm}); err != nil {
		t.Fatalf("click where nothing was drawn: %v", err)
	}
}

// TestPreviewKeepsTheReference: an image of what an action changed (a
// preview) is not what clicks are checked against. The screenshot's area
// is read again as the reference, and a change the model has not seen
// stays refused.
func TestPreviewKeepsTheReference(t *testing.T) {
	ctx := context.Background()
	f, d := capturedBaseline(t)
	d.diffs = []int{5000} // a dialog drew over the target before the input
	if err := f.exec.MoveMouse(ctx, *onNothing); err != nil {
		t.Fatal(err)
	}
	if err := f.g.awaitReference(ctx); err != nil {
		t.Fatal(err)
	}
	n := len(d.captures)
	crop := bridge.Rect{X: 10, Y: 10, Width: 50, Height: 20}
	if _, err := f.exec.Capture(ctx, bridge.CaptureRequest{Rect: &crop, Preview: true}); err != nil {
		t.Fatal(err)
	}
	click := mcpserver.Action{Tool: "left_click", Target: onZenity}
	if err := f.check(click); err == nil || !strings.Contains(err.Error(), "take a new screenshot") {
		t.Errorf("click on a change the model has not seen, after a preview elsewhere: %v", err)
	}
	full := bridge.Rect{Width: 1920, Height: 1080}
	if got := d.captures[n:]; len(got) != 2 || got[1].Rect == nil || *got[1].Rect != full {
		t.Errorf("captures for the preview: %+v, want the crop then the screenshot's area again", got)
	}
	if f.g.last == nil || *f.g.last != full {
		t.Errorf("reference after the preview: %v, want the screenshot's area %v", f.g.last, full)
	}
}
