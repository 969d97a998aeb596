package gates

import (
	"time"

	"github.com/deskhand/deskhand/bridge"
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

// undrawn reports whether the display vouches that no drawing reached
// rect since the reference was read, as of a's own display check; with
// anyCheck, as of the latest check, whichever action it was for (a guess
// of what undrawn will say, for the prefetch).
func (g *Gates) undrawn(a *mcpserver.Action, rect geometry.Rect, anyCheck bool) bool {
	d := g.opts.Drawn
	if d == nil {
		return false
	}
	var since time.Time
	if !anyCheck {
		g.mu.Lock()
		mine := g.checking == a
		since = g.checkingSince
		g.mu.Unlock()
		if !mine {
			return false
		}
	}
	return d.Undrawn([]geometry.Rect{rect}, since)
}

// likelyUndrawn guesses, from the latest display check, that the display
// will vouch for every point of a (undrawn), so no patch check need be
// started ahead; checkStaleness asks the helper still where it does not.
func (g *Gates) likelyUndrawn(a *mcpserver.Action, last bridge.Rect) bool {
	if g.opts.Drawn == nil {
		return false
	}
	for _, pt := range points(a) {
		patch, ok := patchAround(pt, last)
		if !ok || !g.undrawn(a, patch, true) {
			return false
		}
	}
	return true
}
