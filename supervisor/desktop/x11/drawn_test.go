//go:build unix

package x11

import (
	"testing"
	"time"

	"github.com/deskhand/deskhand/supervisor/geometry"
)

func rect(x, y, w, h int) geometry.Rect { return geometry.Rect{X: x, Y: y, Width: w, Height: h} }

// pingOK is one display check that got its answer, at sent.
func pingOK(l *drawnLog, sent time.Time) {
	l.beginPing()
	l.pinged(sent)
}

// TestDrawnLogVouchesOnlyWhenSure walks the record through the cases where
// it must not vouch for a target.
func TestDrawnLogVouchesOnlyWhenSure(t *testing.T) {
	target := []geometry.Rect{rect(10, 10, 5, 5)}
	t0 := time.Now()
	read := func(l *drawnLog) {
		m, ok := l.mark()
		if !ok {
			t.Fatal("no mark after a ping")
		}
		l.commit(m)
	}

	t.Run("before any read", func(t *testing.T) {
		var l drawnLog
		pingOK(&l, t0)
		if l.undrawn(target, t0) {
			t.Error("vouched with no reference read")
		}
	})
	t.Run("drawn between the mark and the commit", func(t *testing.T) {
		var l drawnLog
		pingOK(&l, t0)
		m, _ := l.mark()
		l.add(rect(12, 12, 1, 1), 0)
		l.commit(m)
		pingOK(&l, t0)
		if l.undrawn(target, t0) {
			t.Error("vouched for a target drawn while the read ran")
		}
	})
	t.Run("drawn before the ping that made the mark", func(t *testing.T) {
		var l drawnLog
		pingOK(&l, t0)
		read(&l)
		l.beginPing()
		l.add(rect(12, 12, 1, 1), 0) // reported while the next ping was in flight
		l.pinged(t0)
		if l.undrawn(target, t0) {
			t.Error("vouched for a target drawn after the reference was read")
		}
	})
	t.Run("reports around the ping's subtract", func(t *testing.T) {
		for _, from := range []uint32{100, 2} { // 2: the numbers wrapped
			var l drawnLog
			pingOK(&l, t0)
			l.beginPing()
			l.subtracted(from)
			before, after := rect(30, 30, 2, 2), rect(12, 12, 1, 1)
			l.add(before, from-3) // drawn while the region still held it
			l.add(after, from)    // drawn once it was emptied
			l.pinged(t0)
			read(&l)
			pingOK(&l, t0)
			if l.undrawn([]geometry.Rect{after}, t0) {
				t.Errorf("subtract %d: vouched for a target drawn after the mark's subtract", from)
			}
			if !l.undrawn([]geometry.Rect{before}, t0) {
				t.Errorf("subtract %d: a drawing from before the mark's subtract counts against it", from)
			}
		}
	})
	t.Run("a failed read keeps the older reference", func(t *testing.T) {
		var l drawnLog
		pingOK(&l, t0)
		read(&l)
		l.add(rect(12, 12, 1, 1), 0)
		pingOK(&l, t0)
		m, _ := l.mark()
		l.abort(m)
		if l.undrawn(target, t0) {
			t.Error("vouched after a failed read, for a target drawn since the last good one")
		}
	})
	t.Run("two reads at once keep the older reference", func(t *testing.T) {
		var l drawnLog
		pingOK(&l, t0)
		read(&l)
		l.add(rect(12, 12, 1, 1), 0)
		pingOK(&l, t0)
		a, _ := l.mark()
		b, _ := l.mark()
		l.commit(b)
		l.commit(a)
		pingOK(&l, t0)
		if l.undrawn(target, t0) {
			t.Error("vouched after overlapping reads, for a target drawn before both")
		}
		read(&l) // alone again: a read moves the reference on
		pingOK(&l, t0)
		if !l.undrawn(target, t0) {
			t.Error("a read alone after the overlap did not become the reference")
		}
	})
	t.Run("lost reports", func(t *testing.T) {
		var l drawnLog
		pingOK(&l, t0)
		read(&l)
		l.lost()
		if l.undrawn(target, t0) {
			t.Error("vouched after reports were lost")
		}
		pingOK(&l, t0)
		if l.undrawn(target, t0) {
			t.Error("vouched from a reference read before reports were lost")
		}
		read(&l)
		pingOK(&l, t0)
		if !l.undrawn(target, t0) {
			t.Error("a reference read after the loss is not vouched for")
		}
	})
	t.Run("a check older than the action", func(t *testing.T) {
		var l drawnLog
		pingOK(&l, t0)
		read(&l)
		if l.undrawn(target, t0.Add(time.Millisecond)) {
			t.Error("vouched as of a check older than since")
		}
		if !l.undrawn(target, t0) {
			t.Error("not vouched as of a check at since")
		}
	})
	t.Run("a failed ping is no mark", func(t *testing.T) {
		var l drawnLog
		pingOK(&l, t0)
		read(&l)
		l.add(rect(12, 12, 1, 1), 0)
		l.beginPing()
		l.pingFailed()
		m, _ := l.mark() // the older mark: drawn since it
		l.commit(m)
		if l.undrawn(target, t0) {
			t.Error("a ping that got no answer made a mark")
		}
	})
}

// TestDrawnSinceFoldsManyRects: past maxDrawnRects the rectangles fold into
// their bounding box, which still reaches every one of them.
func TestDrawnSinceFoldsManyRects(t *testing.T) {
	var s drawnSince
	var all []geometry.Rect
	for i := range maxDrawnRects + 5 {
		r := rect(i*20, i*7, 3, 3)
		all = append(all, r)
		s.add(r)
	}
	if len(s.rects) > maxDrawnRects {
		t.Fatalf("%d rectangles kept, want at most %d", len(s.rects), maxDrawnRects)
	}
	for _, r := range all {
		if !s.reaches(r) {
			t.Fatalf("%v reported, and not reached", r)
		}
	}
	if s.reaches(rect(-10, -10, 5, 5)) {
		t.Fatal("a rectangle outside every report is reached")
	}
	var empty drawnSince
	empty.add(rect(5, 5, 0, 3))
	if empty.reaches(rect(0, 0, 20, 20)) {
		t.Fatal("an empty report reaches something")
	}
}
