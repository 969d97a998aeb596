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

// epochDesktop is the fake desktop with a windows epoch, which the tests
// of the drawn record need; afterCheck, when set, runs once right after
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
