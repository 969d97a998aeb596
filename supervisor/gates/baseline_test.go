package gates

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/consent"
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
	// The model's own click changes the screen; the screen settles over
	// three reads (the third at settleMin); the reference is then the
	// settled screen.
	d.diffs = []int{5000, 900, 3}
	if err := f.exec.Click(ctx, *onZenity, mcpserver.ButtonLeft, 1, ""); err != nil {
		t.Fatal(err)
	}
	// The settling runs in the background; the gate waits for it.
	if err := f.g.awaitReference(ctx); err != nil {
		t.Fatal(err)
	}
	if d.calls != 3 {
		t.Errorf("patch_baseline called %d times, want 3 (until the screen settled)", d.calls)
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
