//go:build unix

package x11

import (
	"context"
	"testing"
	"time"

	"github.com/deskhand/deskhand/supervisor/geometry"
)

// TestDrawnFollowsTheScreen: the display gate's connection sees every
// drawing over a target since the reference was read, the same area drawn
// again and again included (which DAMAGE's DeltaRectangles level reports
// only once its region was emptied), and vouches for a target nothing
// reached.
func TestDrawnFollowsTheScreen(t *testing.T) {
	d, c := checkedXvfb(t)
	if c.ping == nil || !c.ping.followsDrawing() {
		t.Fatal("the display gate's XCB connection does not follow DAMAGE on Xvfb")
	}
	check := func() time.Time {
		t.Helper()
		since := time.Now()
		if err := c.Check(context.Background()); err != nil {
			t.Fatalf("Check: %v", err)
		}
		return since
	}
	// read stands for a reference read as the gates make one: the mark
	// of an earlier check, committed once the read is over.
	read := func() {
		t.Helper()
		check()
		mark, ok := c.Mark()
		if !ok {
			t.Fatal("no mark after a display check")
		}
		c.Commit(mark)
	}
	fill := d.ChangingWindow(t, 100, 100, 50, 50)
	fill(0)
	inside := geometry.Rect{X: 110, Y: 110, Width: 15, Height: 15}
	edge := geometry.Rect{X: 149, Y: 149, Width: 3, Height: 3}
	outside := geometry.Rect{X: 400, Y: 400, Width: 15, Height: 15}

	read()
	since := check()
	if !c.Undrawn([]geometry.Rect{inside, edge, outside}, since) {
		t.Fatal("nothing was drawn since the reference was read, yet the display does not vouch for it")
	}
	for i := 1; i <= 4; i++ {
		fill(i)
		since := check()
		if c.Undrawn([]geometry.Rect{inside}, since) {
			t.Fatalf("round %d: the window was drawn over the target since the reference was read, and the display vouches for the target", i)
		}
		if c.Undrawn([]geometry.Rect{edge}, since) {
			t.Fatalf("round %d: the drawing reached the target's corner, and the display vouches for it", i)
		}
		if !c.Undrawn([]geometry.Rect{outside}, since) {
			t.Fatalf("round %d: the drawing was far from the target, yet the display does not vouch for it", i)
		}
		read()
		since = check()
		if !c.Undrawn([]geometry.Rect{inside, edge}, since) {
			t.Fatalf("round %d: nothing was drawn since the new reference was read, yet the display does not vouch for it", i)
		}
	}
	// An action whose own display check has not run yet is not vouched
	// for on an older check's word.
	if c.Undrawn([]geometry.Rect{outside}, time.Now()) {
		t.Fatal("the display vouched as of a check older than the action")
	}
}
