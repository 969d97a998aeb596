package gates

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// fakeDrawn is a display's record of drawing that vouches for every
// target while vouch is set, and records what it was told and asked.
type fakeDrawn struct {
	mu      sync.Mutex
	vouch   bool
	marks   uint64
	commits []uint64
	aborts  []uint64
	asked   []time.Time // the since of each question
	rects   []geometry.Rect
	// drawn and located answer DrawnRects.
	drawn   []geometry.Rect
	located bool
}

func (d *fakeDrawn) Mark() (uint64, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.marks++
	return d.marks, true
}

func (d *fakeDrawn) Commit(m uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.commits = append(d.commits, m)
}

func (d *fakeDrawn) Abort(m uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.aborts = append(d.aborts, m)
}

func (d *fakeDrawn) Undrawn(rects []geometry.Rect, since time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.asked = append(d.asked, since)
	d.rects = append(d.rects, rects...)
	return d.vouch
}

func (d *fakeDrawn) DrawnRects(context.Context) ([]geometry.Rect, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.drawn, d.located
}

// TestDrawnSparesThePatchCheck: where the display vouches that nothing was
// drawn over the target since the reference was read, the staleness gate
// asks the helper nothing, as of the click's own display check; where it
// does not, the helper's patch check decides, as before. Captures mark
// and commit their read.
func TestDrawnSparesThePatchCheck(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	d := &fakeDrawn{vouch: true}
	f.g.opts.Drawn = d
	click := mcpserver.Action{Tool: "left_click", Target: onZenity}
	f.screenshotAfter(click)
	d.mu.Lock()
	if len(d.commits) != 1 || d.commits[0] != d.marks {
		t.Errorf("a capture marked %d reads and committed %v, want its mark committed", d.marks, d.commits)
	}
	d.mu.Unlock()

	n := f.patchChecks()
	before := time.Now()
	if err := f.check(click); err != nil {
		t.Fatalf("click on a target nothing was drawn over: %v", err)
	}
	if got := f.patchChecks() - n; got != 0 {
		t.Errorf("%d patch checks for a click the display vouched for, want 0", got)
	}
	d.mu.Lock()
	last, rect := d.asked[len(d.asked)-1], d.rects[len(d.rects)-1]
	d.mu.Unlock()
	if last.Before(before) {
		t.Errorf("the gate asked as of %v, before the click's gates began (%v)", last, before)
	}
	if want := (geometry.Rect{X: onZenity.X - patchSize/2, Y: onZenity.Y - patchSize/2, Width: patchSize, Height: patchSize}); rect != want {
		t.Errorf("the gate asked about %v, want the helper's patch %v", rect, want)
	}

	// Drawn over: the helper compares, and refuses a changed target.
	d.mu.Lock()
	d.vouch = false
	d.mu.Unlock()
	f.d.mu.Lock()
	f.d.patch.Changed, f.d.patch.DifferingPixels = true, 200
	f.d.mu.Unlock()
	if got := f.staleChecks(click, "click on a target drawn over"); got < 1 {
		t.Errorf("%d patch checks for a click the display did not vouch for, want at least 1", got)
	}
}

// TestDrawnNotTakenAfterAHide: when the click's own gates hide a window,
// the screen changed after the display check the record answers for, so
// the helper compares the pixels even where the display vouches.
func TestDrawnNotTakenAfterAHide(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	d := &fakeDrawn{vouch: true}
	f.g.opts.Drawn = d
	click := mcpserver.Action{Tool: "left_click", Target: onZenity}
	// The turn begins and the unapproved window is hidden; the user
	// brings it back, and a screenshot follows.
	f.mustCheck(click)
	f.d.restore([]uint32{4})
	f.d.mu.Lock()
	f.d.hides = nil
	f.d.mu.Unlock()
	if _, err := f.exec.Capture(context.Background(), bridge.CaptureRequest{}); err != nil {
		t.Fatal(err)
	}
	// The next click's gates hide it again, which changed the target.
	f.d.mu.Lock()
	f.d.patch = bridge.PatchCheck{Changed: true, DifferingPixels: 225}
	f.d.mu.Unlock()
	if got := f.staleChecks(click, "click after the gates hid a window"); got != 1 {
		t.Errorf("%d patch checks, want 1", got)
	}
	if len(f.d.hides) == 0 {
		t.Fatal("the gates hid nothing; the test needs the unapproved window hidden")
	}
}
