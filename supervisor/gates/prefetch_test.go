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

// TestPrefetchedPatchCheck: the staleness gate takes the answer of the
// check started after the kill switch, one check per click.
func TestPrefetchedPatchCheck(t *testing.T) {
	f, _ := newEpochFixture(t)
	ctx := context.Background()
	click := mcpserver.Action{Tool: "left_click", Target: onZenity}
	// The first action hides the unapproved window; then capture.
	if err := f.check(click); err != nil {
		t.Fatal(err)
	}
	if _, err := f.exec.Capture(ctx, bridge.CaptureRequest{}); err != nil {
		t.Fatal(err)
	}
	n := f.patchChecks()
	if err := f.check(click); err != nil {
		t.Fatalf("click on an unchanged target: %v", err)
	}
	if got := f.patchChecks() - n; got != 1 {
		t.Errorf("%d patch checks for one click, want 1", got)
	}
	f.d.patch = bridge.PatchCheck{Changed: true, DifferingPixels: 200}
	if err := f.check(click); err == nil || !strings.Contains(err.Error(), "take a new screenshot") {
		t.Fatalf("click on a changed target, answered ahead: %v", err)
	}
}

// TestPrefetchWindowMappedMeanwhile: a window mapped over the target
// after the check started ahead read it, while the gates between ran, is
// seen: the epoch moved on, so the staleness gate checks again.
func TestPrefetchWindowMappedMeanwhile(t *testing.T) {
	f, d := newEpochFixture(t)
	ctx := context.Background()
	click := mcpserver.Action{Tool: "left_click", Target: onZenity}
	if err := f.check(click); err != nil {
		t.Fatal(err)
	}
	if _, err := f.exec.Capture(ctx, bridge.CaptureRequest{}); err != nil {
		t.Fatal(err)
	}
	d.mu.Lock()
	d.afterCheck = d.mapOverTarget
	d.mu.Unlock()
	n := f.patchChecks()
	err := f.check(click)
	if err == nil || !strings.Contains(err.Error(), "take a new screenshot") {
		t.Fatalf("click on a target covered after the early check: %v, want a stale-screenshot refusal", err)
	}
	if got := f.patchChecks() - n; got != 2 {
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
	if err := f.check(click); err != nil {
		t.Fatal(err)
	}
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
	n := f.patchChecks()
	err := f.check(click)
	if err == nil || !strings.Contains(err.Error(), "take a new screenshot") {
		t.Fatalf("click after the gates hid a window: %v, want a stale-screenshot refusal", err)
	}
	if len(f.d.hides) == 0 {
		t.Fatal("the gates hid nothing; the test needs the unapproved window hidden")
	}
	if got := f.patchChecks() - n; got != 2 {
		t.Errorf("%d patch checks, want 2 (ahead, and again after the hide)", got)
	}
}
