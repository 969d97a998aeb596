package gates

import (
	"context"
	"slices"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// The staleness gate's patch_check is a helper round trip on every
// click's path, behind the gates before it. It only reads pixels, so it
// starts as soon as the kill switch passes and runs while the display,
// lock, hide, frontmost, target and clipboard gates do. checkStaleness
// takes its answer only when nothing that could change it happened
// meanwhile, and otherwise asks again, as it did before:
//   - the same action, checked against the same capture area;
//   - the same staleness reference in the helper: no capture or new
//     settling began (settleGen), and no settling read ran or was in
//     flight (baselineReads);
//   - the gates hid no window and began no turn (dropPrefetch);
//   - the windows epoch is unchanged, so no window was mapped, moved or
//     raised over the target since the check was sent.
//
// The check stays one read per action, before the action; it is only
// taken earlier, by the time the gates between take.

// prefetch is one patch check started ahead of the staleness gate.
type prefetch struct {
	action    *mcpserver.Action
	points    []geometry.Point
	last      *bridge.Rect
	settleGen uint64
	reads     uint64
	epoch     bridge.WindowsEpoch
	epochOK   bool
	done      chan struct{}
	err       error // checkPatches' answer, once done is closed
}

// startPrefetch starts a's patch check when checkStaleness will make
// one: a pointer action that lands on pixels, after a capture, with the
// reference either settling or as the capture left it.
func (g *Gates) startPrefetch(ctx context.Context, a *mcpserver.Action) {
	if k := classify(a); k.Settles || !k.CheckPixels || len(points(a)) == 0 {
		return
	}
	settling := g.settling() != nil
	g.mu.Lock()
	g.pre = nil
	last, acted := g.last, g.acted
	if last == nil || (acted && !settling) || g.baselineReads%2 == 1 {
		g.mu.Unlock()
		return
	}
	p := &prefetch{action: a, points: points(a), last: last, settleGen: g.settleGen, reads: g.baselineReads, done: make(chan struct{})}
	g.mu.Unlock()
	if g.likelyUndrawn(a, *last) {
		return // the display will most likely vouch for the target
	}
	p.epoch, p.epochOK = g.windowsEpoch(ctx)
	if !p.epochOK {
		return // without the epoch a window over the target would go unseen
	}
	g.mu.Lock()
	g.pre = p
	g.mu.Unlock()
	go func() {
		defer close(p.done)
		p.err = g.checkPatches(ctx, a, *last)
	}()
}

// dropPrefetch forgets the patch check started ahead, after the gates
// changed the screen themselves; the display's word on drawing (drawn.go),
// as of a check before that change, is not taken for this action either.
func (g *Gates) dropPrefetch() {
	g.mu.Lock()
	g.pre = nil
	g.checking = nil
	g.mu.Unlock()
}

// prefetched returns the answer of the patch check started ahead for a
// against last, when it is still good (see above); ok false means ask
// again.
func (g *Gates) prefetched(ctx context.Context, a *mcpserver.Action, last bridge.Rect) (err error, ok bool) {
	g.mu.Lock()
	p := g.pre
	g.pre = nil
	g.mu.Unlock()
	if p == nil || p.action != a || *p.last != last || !slices.Equal(p.points, points(a)) {
		return nil, false
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		return context.Cause(ctx), true
	}
	g.mu.Lock()
	same := g.settleGen == p.settleGen && g.baselineReads == p.reads && g.last == p.last
	g.mu.Unlock()
	if !same {
		return nil, false
	}
	if ep, epOK := g.windowsEpoch(ctx); !epOK || ep != p.epoch {
		return nil, false
	}
	return p.err, true
}
