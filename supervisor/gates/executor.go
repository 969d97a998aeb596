package gates

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/input"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// maskAttempts bounds the captures of one screenshot with a helper that
// cannot mask by exclusion: a window of an unapproved app that appears
// while the capture is taken makes it start over with that window masked
// too.
const maskAttempts = 3

// Wrap returns an executor that does what inner does, and:
//   - paints every window of an unapproved app over in each capture
//     (screenshot, zoom). The helper is asked to paint every window but
//     the approved ones, judged from the windows as they are when it reads
//     the pixels, so a popup that opens or a window that moves after the
//     gates listed the windows is painted where it is. A helper that
//     cannot do that gets the unapproved windows by id, and the capture
//     is taken again while a new one appeared meanwhile;
//   - remembers the latest capture, for the staleness gate;
//   - clears the clipboard again after each input action while the
//     clipboard guard is on;
//   - tells the Escape watcher about deskhand's own Escape keys.
func (g *Gates) Wrap(inner mcpserver.Executor) mcpserver.Executor {
	return &guarded{Executor: inner, g: g}
}

type guarded struct {
	mcpserver.Executor
	g *Gates
}

func (e *guarded) Capture(ctx context.Context, req bridge.CaptureRequest) (*bridge.Capture, error) {
	g := e.g
	ids, keep, err := g.maskIDs(ctx)
	if err != nil {
		return nil, err
	}
	given := req.Mask
	for attempt := 1; ; attempt++ {
		r := req
		r.Mask = union(given, ids)
		r.MaskOthers, r.Keep = true, missing(keep, given)
		if g.opts.MaskColor != nil {
			r.MaskColor = g.opts.MaskColor
		}
		img, err := e.Executor.Capture(ctx, r)
		if err != nil {
			return nil, err
		}
		if img.MaskOthers {
			src := img.Source
			g.mu.Lock()
			g.last, g.acted = &src, false
			g.mu.Unlock()
			return img, nil
		}
		after, _, err := g.maskIDs(ctx)
		if err != nil {
			return nil, err
		}
		if late := missing(after, r.Mask); len(late) == 0 {
			src := img.Source
			g.mu.Lock()
			g.last, g.acted = &src, false
			g.mu.Unlock()
			return img, nil
		} else if attempt == maskAttempts {
			return nil, fmt.Errorf("windows of unapproved apps kept appearing during the screenshot (%v); try again in a moment", late)
		}
		ids = union(ids, after)
	}
}

func union(a, b []uint32) []uint32 {
	out := slices.Clone(a)
	for _, id := range b {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

func missing(want, have []uint32) []uint32 {
	var out []uint32
	for _, id := range want {
		if !slices.Contains(have, id) {
			out = append(out, id)
		}
	}
	return out
}

// after runs once an input action has been sent: the clipboard guard
// clears the clipboard again (a click may have copied something into it),
// and the staleness gate notes that the screen may now differ from the
// latest capture on purpose.
func (e *guarded) after(ctx context.Context, err error) error {
	g := e.g
	g.mu.Lock()
	g.acted = true
	guarding := g.guarding
	g.mu.Unlock()
	if guarding {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if cerr := g.opts.Desktop.WriteClipboard(ctx, ""); cerr != nil {
			g.log.Warn("clearing the clipboard after an action", "err", cerr)
			if err == nil {
				err = fmt.Errorf("the action ran, but the clipboard could not be cleared after it: %w", cerr)
			}
		}
	}
	return err
}

func (e *guarded) MoveMouse(ctx context.Context, to geometry.Point) error {
	return e.after(ctx, e.Executor.MoveMouse(ctx, to))
}

func (e *guarded) Click(ctx context.Context, at geometry.Point, b mcpserver.Button, count int, mods string) error {
	return e.after(ctx, e.Executor.Click(ctx, at, b, count, mods))
}

func (e *guarded) MouseDown(ctx context.Context, b mcpserver.Button) error {
	return e.after(ctx, e.Executor.MouseDown(ctx, b))
}

func (e *guarded) MouseUp(ctx context.Context, b mcpserver.Button) error {
	return e.after(ctx, e.Executor.MouseUp(ctx, b))
}

func (e *guarded) Drag(ctx context.Context, from, to geometry.Point) error {
	return e.after(ctx, e.Executor.Drag(ctx, from, to))
}

func (e *guarded) Scroll(ctx context.Context, at geometry.Point, dir string, amount int) error {
	return e.after(ctx, e.Executor.Scroll(ctx, at, dir, amount))
}

func (e *guarded) Type(ctx context.Context, text string) error {
	return e.after(ctx, e.Executor.Type(ctx, text))
}

func (e *guarded) Key(ctx context.Context, keys string) error {
	defer e.ownEscape(keys)()
	return e.after(ctx, e.Executor.Key(ctx, keys))
}

func (e *guarded) HoldKey(ctx context.Context, combo string, d time.Duration) error {
	defer e.ownEscape(combo)()
	return e.after(ctx, e.Executor.HoldKey(ctx, combo, d))
}

func (e *guarded) OpenApplication(ctx context.Context, app string) (*mcpserver.LaunchedApp, error) {
	out, err := e.Executor.OpenApplication(ctx, app)
	return out, e.after(ctx, err)
}

const keysymEscape input.Keysym = 0xff1b

// ownEscape tells the Escape watcher, when keys press Escape, that this
// Escape is deskhand's own; it returns the function that ends the mark.
func (e *guarded) ownEscape(keys string) func() {
	w := e.g.opts.Escape
	if w == nil {
		return func() {}
	}
	combos, err := input.ParseKeys(keys)
	if err != nil {
		return func() {}
	}
	for _, c := range combos {
		if slices.Contains(c.Keys, keysymEscape) {
			return w.Synthetic()
		}
	}
	return func() {}
}
