package gates

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
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
// A change is deskhand's when it was drawn while deskhand's input settled
// (below). Just before an input that follows a quiet spell (no settling in
// progress), the helper compares the screen with its reference
// (beforeInput): what was drawn since is no change deskhand made, and the
// settling that follows the input would make it part of the reference.
// So if over settleQuiet pixels differ (a blinking text cursor stays
// under that), the checked actions are refused until the next capture,
// the one way the model can have seen the change: where the display says
// it drew (X11's DAMAGE, drawn.go), else everywhere.
//
// "As the action left it" is read once the screen settles: settleStep
// after the action the helper re-reads the latest capture's area
// (patch_baseline), then again every settleStep until a read at least
// settleMin after the action finds at most settleQuiet pixels changed
// since the one before (a blinking text cursor stays under that), for at
// most settleMax; then once more at settleMax. A change that starts later than that, even one the
// action caused, is treated as someone else's: the click is refused and
// the model asked for a new screenshot, which is the safe way to be
// wrong.
//
// The settling stays off the next action's path: the first read waits
// settleStep, so a burst of actions (a drag's moves, a batch) costs the
// helper no reads until it pauses, and a click is first checked against
// the reference as it stands (checkStaleness); it waits for the settling
// only where its target differs from that reference, which is when the
// previous action may still be changing it.
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
// staleness gate waits for it (awaitReference) where a click's target
// differs from the reference. A newer action's settling supersedes an
// older one's. Where the reference cannot be refreshed (an older helper,
// an error), the gate falls back to checking only the first action after
// a capture.
func (g *Gates) rebaseline(ctx context.Context) {
	start := time.Now()
	done, stop := make(chan struct{}), make(chan struct{})
	var once sync.Once
	end := func() { once.Do(func() { close(done) }) }
	g.mu.Lock()
	last := g.last
	g.acted = true
	g.stopSettlingLocked()
	g.settleGen++
	gen := g.settleGen
	g.settled, g.settleStop = done, stop
	g.mu.Unlock()
	b, ok := g.opts.Desktop.(baseliner)
	if last == nil || !ok {
		end()
		return
	}
	// The first read waits settleStep on a timer rather than in a
	// goroutine of its own: the next action of a burst stops it before
	// it fires, and nothing else runs.
	base := context.WithoutCancel(ctx)
	t := time.AfterFunc(settleStep, func() {
		defer end()
		ctx, cancel := context.WithDeadline(base, start.Add(settleMax+2*time.Second))
		defer cancel()
		if g.settle(ctx, b, stop, start) {
			g.mu.Lock()
			if g.last == last && g.settleGen == gen {
				g.acted = false
			}
			g.mu.Unlock()
		}
	})
	g.mu.Lock()
	if g.settleStop == stop {
		g.settleTimer, g.settleEnd = t, end
	} else if t.Stop() {
		// Superseded before the timer was recorded.
		end()
	}
	g.mu.Unlock()
}

// stopSettlingLocked tells the settling in progress, if any, to stop at
// its next step, and ends it at once when its first read has not begun;
// g.mu must be held.
func (g *Gates) stopSettlingLocked() {
	if g.settleStop != nil {
		close(g.settleStop)
		g.settleStop = nil
	}
	if g.settleTimer != nil {
		if g.settleTimer.Stop() {
			g.settleEnd()
		}
		g.settleTimer, g.settleEnd = nil, nil
	}
}

// settle refreshes the reference until the screen is quiet, from settleStep
// after start; false means it could not, or a newer action or a capture
// took over (stop closed).
func (g *Gates) settle(ctx context.Context, b baseliner, stop <-chan struct{}, start time.Time) bool {
	var next time.Duration // the timer waited for the first read
	for {
		if next > 0 {
			select {
			case <-time.After(next):
			case <-stop:
				return false
			case <-ctx.Done():
				return false
			}
		}
		select {
		case <-stop:
			return false
		default:
		}
		res, err := g.readBaseline(ctx, b)
		var be *bridge.Error
		if errors.As(err, &be) && be.Name == "no_capture" {
			return false
		}
		if err != nil {
			g.log.Warn("refreshing the staleness reference; checking only the first click after the next screenshot", "err", err)
			return false
		}
		since := time.Since(start)
		switch {
		case since >= settleMax:
			return true
		case since >= settleMin && res.DifferingPixels <= settleQuiet:
			// Settled. One more read at settleMax takes what the action
			// drew late (a transition, a fade) as its own, so that the
			// next input does not count it as someone else's.
			next = time.Until(start.Add(settleMax))
		default:
			next = settleStep
		}
	}
}

// readBaseline makes the screen as it is now the helper's reference.
func (g *Gates) readBaseline(ctx context.Context, b baseliner) (*bridge.PatchBaseline, error) {
	read := g.markRead()
	res, err := b.PatchBaseline(ctx, patchTolerance)
	read(err == nil)
	return res, err
}

// beforeInput runs just before deskhand sends input: what was drawn since
// the reference was read, and before this input began, is not deskhand's,
// and would become part of the reference once the input settles. While
// the previous input's settling runs, what is drawn is that input's, so
// nothing is read then; nor where the display vouches that nothing was
// drawn (drawn.go).
func (g *Gates) beforeInput(ctx context.Context) {
	if g.settling() != nil {
		return
	}
	g.mu.Lock()
	last, acted, whole := g.last, g.acted, g.foreign != nil && g.foreignRects == nil
	g.mu.Unlock()
	b, ok := g.opts.Desktop.(baseliner)
	if last == nil || acted || whole || !ok {
		// Nothing to be stale against, or nothing checked against it
		// (see checkStaleness), or all of it refused already.
		return
	}
	area := geometry.Rect{X: last.X, Y: last.Y, Width: last.Width, Height: last.Height}
	var rects []geometry.Rect
	located := false
	if d := g.opts.Drawn; d != nil {
		var all []geometry.Rect
		all, located = d.DrawnRects(ctx)
		for _, r := range all {
			if overlaps(r, area) {
				rects = append(rects, r)
			}
		}
		if located && len(rects) == 0 {
			return // nothing was drawn in the capture's area
		}
	}
	res, err := g.readBaseline(ctx, b)
	var be *bridge.Error
	var foreign error
	switch {
	case errors.As(err, &be) && be.Name == "no_capture":
		return
	case err != nil:
		foreign, located = fmt.Errorf("deskhand could not tell whether the screen changed between your latest screenshot and your last action (%v), so no click is checked against that screenshot any more: take a new screenshot and aim again", err), false
	case res.DifferingPixels > settleQuiet:
		foreign = fmt.Errorf("the screen changed after your latest screenshot and before your last action (%d pixels differ), where you have not seen it, so the target may not be what you saw: take a new screenshot and aim again", res.DifferingPixels)
	default:
		return
	}
	g.mu.Lock()
	if g.last == last {
		if located {
			g.foreignRects = append(g.foreignRects, rects...)
		} else {
			g.foreignRects = nil
		}
		g.foreign = foreign
	}
	g.mu.Unlock()
}

// foreignAt returns the refusal for an action with a point in a region
// drawn before deskhand's input that the model has not seen; nil when
// there is none.
func (g *Gates) foreignAt(a *mcpserver.Action) error {
	g.mu.Lock()
	foreign, rects := g.foreign, g.foreignRects
	g.mu.Unlock()
	if foreign == nil {
		return nil
	}
	for _, pt := range points(a) {
		if rects == nil {
			return foreign
		}
		patch := geometry.Rect{X: pt.X - patchSize/2, Y: pt.Y - patchSize/2, Width: patchSize, Height: patchSize}
		for _, r := range rects {
			if overlaps(r, patch) {
				return foreign
			}
		}
	}
	return nil
}

// overlaps reports whether a and b share a pixel.
func overlaps(a, b geometry.Rect) bool {
	return a.X < b.X+b.Width && b.X < a.X+a.Width && a.Y < b.Y+b.Height && b.Y < a.Y+a.Height
}

// captured makes the capture of src the staleness reference.
func (g *Gates) captured(src bridge.Rect) {
	g.mu.Lock()
	g.last, g.acted, g.foreign, g.foreignRects = &src, false, nil, nil
	g.mu.Unlock()
}

// supersedeSettling stops the settling in progress and waits until it is
// over, before a capture: a settling read after the capture would make
// the helper's reference the screen as it is then, not as the model saw
// it in the capture.
func (g *Gates) supersedeSettling(ctx context.Context) error {
	g.mu.Lock()
	g.settleGen++
	g.stopSettlingLocked()
	g.mu.Unlock()
	return g.awaitReference(ctx)
}

// settling returns the latest action's settling while it is still in
// progress, nil once it is over.
func (g *Gates) settling() <-chan struct{} {
	g.mu.Lock()
	ch := g.settled
	g.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	default:
		return ch
	}
}

// awaitReference waits until the latest action's settling is over, so
// the staleness gate checks against the screen as that action left it.
func (g *Gates) awaitReference(ctx context.Context) error {
	ch := g.settling()
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
