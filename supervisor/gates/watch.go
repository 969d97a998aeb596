package gates

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/input"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// The gates run before an action, but a hold_key lasts seconds and a long
// type sends thousands of keys: the frontmost app and the window under a
// drag can change meanwhile (a Return closes a dialog, another window
// raises itself). So the checks that read the live desktop are held for
// the whole action, two ways:
//
//   - the keyboard operations get an input.Guard: before each run of keys
//     (a line of typing, at most 32 characters; one key combination; the
//     press of a hold) the frontmost-app gate runs again on a fresh window
//     list, and the input package checks, with the X server grabbed, that
//     the focus is still on a window of a full-tier app as it sends the
//     run; a held key is re-checked every 20 ms and has no autorepeat;
//   - a watcher re-lists the windows every watchInterval while a keyboard
//     action or a drag runs, re-runs the frontmost-app and target-app
//     gates, and cancels the action, with what changed as the cause, the
//     first time one refuses. The input package honours the cancel between
//     any two events and releases what it holds.
//
// Either way the model gets an error that says what changed and how much
// was delivered.
const watchInterval = 40 * time.Millisecond

// ChangedError is why a watched action stopped: the desktop changed under
// it so that a gate now refuses it.
type ChangedError struct {
	// What names the action ("typing").
	What string
	// Err is the gate's refusal.
	Err error
}

func (e *ChangedError) Error() string {
	return fmt.Sprintf("the desktop changed while %s, so it was stopped: %v", e.What, e.Err)
}

func (e *ChangedError) Unwrap() error { return e.Err }

// recheck runs the live-state gates for a against a fresh window list.
func (g *Gates) recheck(ctx context.Context, a mcpserver.Action) error {
	probe := &a // a new pointer: windows() lists afresh for it
	defer g.forget(probe)
	if err := g.checkFrontmost(ctx, probe); err != nil {
		return err
	}
	return g.checkTarget(ctx, probe)
}

// watch returns a context that is cancelled, with a *ChangedError as its
// cause, as soon as recheck refuses a; stop ends the watch.
func (g *Gates) watch(ctx context.Context, a mcpserver.Action) (watched context.Context, stop func()) {
	wctx, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	what := classify(&a).What
	go func() {
		defer close(done)
		t := time.NewTicker(watchInterval)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
			}
			err := g.recheck(wctx, a)
			if err == nil {
				continue
			}
			if wctx.Err() == nil {
				g.log.Info("stopped an action: the desktop changed under it", "tool", a.Tool, "err", err)
				cancel(&ChangedError{What: what, Err: err})
			}
			return
		}
	}()
	return wctx, func() {
		cancel(nil)
		<-done
	}
}

// keyGuard is the input.Guard of a keyboard action: the frontmost-app
// gate on a fresh list, and every window of a full-tier app as the
// windows keys may go to.
func (g *Gates) keyGuard(a mcpserver.Action) *input.Guard {
	what := classify(&a).What
	return &input.Guard{Check: func(ctx context.Context) ([]uint32, error) {
		probe := &a
		defer g.forget(probe)
		if err := g.checkFrontmost(ctx, probe); err != nil {
			// A check cut short because the action was stopped (by the
			// watch, which names what changed in the cause) found no
			// change itself: pass the cause on.
			if cause := stopped(ctx); cause != nil {
				return nil, cause
			}
			return nil, &ChangedError{What: what, Err: err}
		}
		list, err := g.windows(ctx, probe)
		if err != nil {
			return nil, err
		}
		return g.fullTierWindows(list), nil
	}}
}

func (g *Gates) fullTierWindows(list *bridge.WindowList) []uint32 {
	var ids []uint32
	for _, w := range list.Windows {
		if g.opts.Consent.Tier(w.App) >= catalog.TierFull {
			ids = append(ids, w.ID)
		}
	}
	return ids
}

// held runs an action under the watch and, for keys, the guard, and names
// the change in its error when the watch stopped it.
func (e *guarded) held(ctx context.Context, a mcpserver.Action, run func(ctx context.Context) error) error {
	e.g.beforeInput(ctx)
	wctx, stop := e.g.watch(ctx, a)
	if classify(&a).Keys {
		wctx = input.WithGuard(wctx, e.g.keyGuard(a))
	}
	err := run(wctx)
	stop()
	var changed *ChangedError
	if err != nil && errors.As(context.Cause(wctx), &changed) && !errors.As(err, &changed) {
		// Stopped before the input package could say why.
		err = fmt.Errorf("%w (%v)", changed, err)
	}
	return e.after(ctx, err)
}

func (e *guarded) Type(ctx context.Context, text string) error {
	return e.held(ctx, mcpserver.Action{Tool: "type", Text: text}, func(ctx context.Context) error {
		return e.inner.Type(ctx, text)
	})
}

func (e *guarded) Key(ctx context.Context, keys string) error {
	return e.held(ctx, mcpserver.Action{Tool: "key", Keys: keys}, func(ctx context.Context) error {
		return e.inner.Key(ctx, keys)
	})
}

func (e *guarded) HoldKey(ctx context.Context, combo string, d time.Duration) error {
	return e.held(ctx, mcpserver.Action{Tool: "hold_key", Keys: combo}, func(ctx context.Context) error {
		return e.inner.HoldKey(ctx, combo, d)
	})
}

func (e *guarded) Drag(ctx context.Context, from, to geometry.Point, mods string) error {
	return e.held(ctx, mcpserver.Action{Tool: "left_click_drag", From: &from, Target: &to, Keys: mods}, func(ctx context.Context) error {
		return e.inner.Drag(ctx, from, to, mods)
	})
}
