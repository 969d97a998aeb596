package gates

import (
	"context"
	"errors"
	"time"

	"github.com/deskhand/deskhand/bridge"
)

// The staleness gate checks every click (and every other action that
// lands on pixels) against a reference image of the screen: at first the
// latest screenshot or zoom, and after each of deskhand's own input
// actions, the screen as that action left it. So the model's own changes
// never count as stale (a click that opens a menu, typing that fills a
// field), while anything else that changed the screen since deskhand last
// looked does: a window mapped over the target after a mouse_move, a
// dialog that popped up during a wait.
//
// "As the action left it" is read once the screen settles: the helper
// re-reads the latest capture's area (patch_baseline) right after the
// action, then every settleStep until a read at least settleMin after the
// action finds at most settleQuiet pixels changed since the one before (a
// blinking text cursor stays under that), for at most settleMax. A change that starts later than that, even
// one the action caused, is treated as someone else's: the click is
// refused and the model asked for a new screenshot, which is the safe
// way to be wrong.
const (
	settleStep  = 50 * time.Millisecond
	settleMin   = 100 * time.Millisecond
	settleMax   = 600 * time.Millisecond
	settleQuiet = 200
)

// baseliner is a Desktop that can refresh the staleness reference;
// *bridge.Client is one.
type baseliner interface {
	PatchBaseline(ctx context.Context, tolerance int) (*bridge.PatchBaseline, error)
}

// rebaseline makes the screen as the last action left it the staleness
// reference. The settling runs in the background, so the action's result
// goes back to the model at once (a mouse_move stays a millisecond); the
// staleness gate waits for it (awaitReference) before it checks a click.
// A newer action's settling supersedes an older one's. Where the reference
// cannot be refreshed (an older helper, an error), the gate falls back to
// checking only the first action after a capture.
func (g *Gates) rebaseline(ctx context.Context) {
	done := make(chan struct{})
	g.mu.Lock()
	last := g.last
	g.acted = true
	g.settleGen++
	gen := g.settleGen
	g.settled = done
	g.mu.Unlock()
	b, ok := g.opts.Desktop.(baseliner)
	if last == nil || !ok {
		close(done)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleMax+2*time.Second)
	go func() {
		defer close(done)
		defer cancel()
		if g.settle(ctx, b, gen) {
			g.mu.Lock()
			if g.last == last && g.settleGen == gen {
				g.acted = false
			}
			g.mu.Unlock()
		}
	}()
}

// settle refreshes the reference until the screen is quiet; false means
// it could not, or a newer action took over.
func (g *Gates) settle(ctx context.Context, b baseliner, gen uint64) bool {
	start := time.Now()
	for {
		g.mu.Lock()
		superseded := g.settleGen != gen
		g.mu.Unlock()
		if superseded {
			return false
		}
		res, err := b.PatchBaseline(ctx, patchTolerance)
		var be *bridge.Error
		if errors.As(err, &be) && be.Name == "no_capture" {
			return false
		}
		if err != nil {
			g.log.Warn("refreshing the staleness reference; checking only the first click after the next screenshot", "err", err)
			return false
		}
		if since := time.Since(start); since >= settleMin && res.DifferingPixels <= settleQuiet || since >= settleMax {
			return true
		}
		select {
		case <-time.After(settleStep):
		case <-ctx.Done():
			return false
		}
	}
}

// supersedeSettling stops the settling in progress and waits until it is
// over, before a capture: a settling read after the capture would make
// the helper's reference the screen as it is then, not as the model saw
// it in the capture.
func (g *Gates) supersedeSettling(ctx context.Context) error {
	g.mu.Lock()
	g.settleGen++
	g.mu.Unlock()
	return g.awaitReference(ctx)
}

// awaitReference waits until the latest action's settling is over, so
// the staleness gate checks against the screen as that action left it.
func (g *Gates) awaitReference(ctx context.Context) error {
	g.mu.Lock()
	ch := g.settled
	g.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}
