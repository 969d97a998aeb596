package gates

import (
	"time"

	"github.com/deskhand/deskhand/internal/speedups"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// markRead takes a mark before a read of the reference; the returned
// function is called with whether the read became the reference.
func (g *Gates) markRead() func(ok bool) {
	d := g.opts.Drawn
	if d == nil {
		return func(bool) {}
	}
	mark, ok := d.Mark()
	if !ok {
		return func(bool) {}
	}
	return func(read bool) {
		if read {
			d.Commit(mark)
		} else {
			d.Abort(mark)
		}
	}
}

// noteChecking records when the gates began checking a, for undrawn:
// the display gate's check of a comes after it.
func (g *Gates) noteChecking(a *mcpserver.Action) {
	if g.opts.Drawn == nil {
		return
	}
	now := time.Now()
	g.mu.Lock()
	g.checking, g.checkingSince = a, now
	g.mu.Unlock()
}

// screenChanged is called after the gates changed the screen themselves
// (a hide, a turn's start, a selection written): the display's word on
// drawing, as of a check before that change, is not taken for the action
// being checked.
func (g *Gates) screenChanged() {
	g.mu.Lock()
	g.checking = nil
	g.mu.Unlock()
}

// undrawn reports whether the display vouches that no drawing reached
// rect since the reference was read, as of a's own display check.
func (g *Gates) undrawn(a *mcpserver.Action, rect geometry.Rect) bool {
	d := g.opts.Drawn
	if d == nil || !speedups.On(speedups.Drawn) {
		return false
	}
	g.mu.Lock()
	mine := g.checking == a
	since := g.checkingSince
	g.mu.Unlock()
	if !mine {
		return false
	}
	return d.Undrawn([]geometry.Rect{rect}, since)
}
