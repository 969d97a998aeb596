package gates

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// epochDesktop is the fake desktop with a windows epoch, which the patch
// check started ahead needs; afterCheck, when set, runs once right after
// a patch check took its answer, and afterHide after a hide, once a
// patch check has answered.
type epochDesktop struct {
	*fakeDesktop
	mu         sync.Mutex
	epoch      uint64
	afterCheck func()
	afterHide  func()
	checked    chan struct{} // closed by the first patch check
	once       sync.Once
}

func (d *epochDesktop) Hide(ctx context.Context, ids []uint32) ([]uint32, error) {
	out, err := d.fakeDesktop.Hide(ctx, ids)
	d.mu.Lock()
	hook := d.afterHide
	d.afterHide = nil
	d.mu.Unlock()
	if hook != nil {
		// The check ahead has read the screen before the hide changed it.
		select {
		case <-d.checked:
		case <-time.After(10 * time.Second):
			return nil, errors.New("no patch check before the hide")
		}
		hook()
	}
	return out, err
}

func (d *epochDesktop) WindowsEpoch(context.Context) (bridge.WindowsEpoch, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return bridge.WindowsEpoch{Stream: "test", Epoch: d.epoch}, nil
}

func (d *epochDesktop) PatchCheck(ctx context.Context, req bridge.PatchCheckRequest) (*bridge.PatchCheck, error) {
	res, err := d.fakeDesktop.PatchCheck(ctx, req)
	d.once.Do(func() { close(d.checked) })
	d.mu.Lock()
	hook := d.afterCheck
	d.afterCheck = nil
	d.mu.Unlock()
	if hook != nil {
		hook()
	}
	return res, err
}

// mapOverTarget is a window mapped over the click's target just after a
// patch check read it: the epoch moves on and the pixels differ.
func (d *epochDesktop) mapOverTarget() {
	d.mu.Lock()
	d.epoch++
	d.mu.Unlock()
	d.fakeDesktop.mu.Lock()
	d.fakeDesktop.patch = bridge.PatchCheck{Changed: true, DifferingPixels: 225}
	d.fakeDesktop.mu.Unlock()
}

func newEpochFixture(t *testing.T) (*fixture, *epochDesktop) {
	f := newFixture(t, consent.Flags{})
	d := &epochDesktop{fakeDesktop: f.d, checked: make(chan struct{})}
	f.g.opts.Desktop = d
	return f, d
}

func (f *fixture) patchChecks() int {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	return len(f.d.patches)
}

// screenshotAfter runs the turn's first action (whose gates hide the
// unapproved window) and then captures, so the next click has a
// screenshot to be checked against.
func (f *fixture) screenshotAfter(first mcpserver.Action) {
	f.t.Helper()
	f.mustCheck(first)
	if _, err := f.exec.Capture(context.Background(), bridge.CaptureRequest{}); err != nil {
		f.t.Fatal(err)
	}
}

// staleChecks runs a's gates, which must refuse it as stale (what says
// why), and returns how many patch checks they made on the way.
func (f *fixture) staleChecks(a mcpserver.Action, what string) int {
	f.t.Helper()
	n := f.patchChecks()
	if err := f.check(a); err == nil || !strings.Contains(err.Error(), "take a new screenshot") {
		f.t.Fatalf("%s: %v, want a stale-screenshot refusal", what, err)
	}
	return f.patchChecks() - n
}

// TestPrefetchedPatchCheck: the staleness gate takes the answer of the
// check started after the kill switch, one check per click.
func TestPrefetchedPatchCheck(t *testing.T) {
	f, _ := newEpochFixture(t)
	click := mcpserver.Action{Tool: "left_click", Target: onZenity}
	f.screenshotAfter(click)
	n := f.patchChecks()
	if err := f.check(click); err != nil {
		t.Fatalf("click on an unchanged target: %v", err)
	}
	if got := f.patchChecks() - n; got != 1 {
		t.Errorf("%d patch checks for one click, want 1", got)
	}
	f.d.patch = bridge.PatchCheck{Changed: true, DifferingPixels: 200}
	f.staleChecks(click, "click on a changed target, answered ahead")
}

// TestPrefetchWindowMappedMeanwhile: a window mapped over the target
// after the check started ahead read it, while the gates between ran, is
// seen: the epoch moved on, so the staleness gate checks again.
func TestPrefetchWindowMappedMeanwhile(t *testing.T) {
	f, d := newEpochFixture(t)
	click := mcpserver.Action{Tool: "left_click", Target: onZenity}
	f.screenshotAfter(click)
	d.mu.Lock()
	d.afterCheck = d.mapOverTarget
	d.mu.Unlock()
	if got := f.staleChecks(click, "click on a target covered after the early check"); got != 2 {
		t.Errorf("%d patch checks, want 2 (ahead, and again once the epoch moved)", got)
	}
}

// TestPrefetchHideChecksAgain: when the gates hide a window, the screen
// changed after the early check, so the staleness gate checks again.
func TestPrefetchHideChecksAgain(t *testing.T) {
	f, d := newEpochFixture(t)
	ctx := context.Background()
	click := mcpserver.Action{Tool: "left_click", Target: onZenity}
	// The turn begins and the unapproved window is hidden; the user
	// brings it back.
	f.mustCheck(click)
	f.d.restore([]uint32{4})
	d.mu.Lock()
	d.epoch++
	d.mu.Unlock()
	f.d.mu.Lock()
	f.d.hides = nil
	f.d.mu.Unlock()
	if _, err := f.exec.Capture(ctx, bridge.CaptureRequest{}); err != nil {
		t.Fatal(err)
	}
	// The next action hides it again; say hiding it changed the
	// target's pixels (the epoch push comes later).
	d.mu.Lock()
	d.checked, d.once = make(chan struct{}), sync.Once{}
	d.afterHide = func() {
		f.d.mu.Lock()
		f.d.patch = bridge.PatchCheck{Changed: true, DifferingPixels: 225}
		f.d.mu.Unlock()
	}
	d.mu.Unlock()
	got := f.staleChecks(click, "click after the gates hid a window")
	if len(f.d.hides) == 0 {
		t.Fatal("the gates hid nothing; the test needs the unapproved window hidden")
	}
	if got != 2 {
		t.Errorf("%d patch checks, want 2 (ahead, and again after the hide)", got)
	}
}

// TestPrefetchSettlingReadMeanwhile: a settling read of the last action's
// screen that ran after the check ahead had read the target made the
// helper's reference newer than what that check compared with, so the
// staleness gate checks again.
func TestPrefetchSettlingReadMeanwhile(t *testing.T) {
	f, d := newEpochFixture(t)
	click := mcpserver.Action{Tool: "left_click", Target: onZenity}
	f.screenshotAfter(click)
	d.mu.Lock()
	d.afterCheck = func() {
		f.g.mu.Lock()
		f.g.baselineReads += 2 // one read, begun and ended
		f.g.mu.Unlock()
		d.fakeDesktop.mu.Lock()
		d.fakeDesktop.patch = bridge.PatchCheck{Changed: true, DifferingPixels: 225}
		d.fakeDesktop.mu.Unlock()
	}
	d.mu.Unlock()
	if got := f.staleChecks(click, "click after a settling read that followed the early check"); got != 2 {
		t.Errorf("%d patch checks, want 2 (ahead, and again after the settling read)", got)
	}
}
