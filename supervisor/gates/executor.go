package gates

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
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
//   - clears the clipboard, PRIMARY and the cut buffer again after each
//     input action while a click-tier app is in play;
//   - holds the live-state gates for the whole of a keyboard action or a
//     drag (see watch.go).
func (g *Gates) Wrap(inner mcpserver.Executor) mcpserver.Executor {
	return &guarded{inner: inner, g: g}
}

// guarded forwards every method of the executor explicitly, never by
// embedding: a method added to mcpserver.Executor is a compile error here
// until someone decides what the safety layer does around it.
type guarded struct {
	inner mcpserver.Executor
	g     *Gates
}

// Displays, CursorPosition, ReadClipboard and WriteClipboard need nothing
// around them: they change nothing on screen, and the gates' chain has
// already decided whether the clipboard may be read or written.

func (e *guarded) Displays(ctx context.Context) ([]bridge.Display, error) {
	return e.inner.Displays(ctx)
}

func (e *guarded) CursorPosition(ctx context.Context) (geometry.Point, error) {
	return e.inner.CursorPosition(ctx)
}

func (e *guarded) ReadClipboard(ctx context.Context) (string, error) {
	return e.inner.ReadClipboard(ctx)
}

func (e *guarded) WriteClipboard(ctx context.Context, text string) error {
	return e.inner.WriteClipboard(ctx, text)
}

// ReleaseAll lets go of what is held; releasing is always allowed.
func (e *guarded) ReleaseAll(ctx context.Context) error {
	return e.inner.ReleaseAll(ctx)
}

func (e *guarded) Capture(ctx context.Context, req bridge.CaptureRequest) (*bridge.Capture, error) {
	if req.Preview {
		return e.preview(ctx, req)
	}
	return e.capture(ctx, req)
}

// preview captures req without making it what clicks are checked
// against. The helper keeps one reference, its latest capture, so the
// reference before is read again (as a 1×1 image nobody sees), and the
// changes the model has not seen stay refused (foreign). Should that read
// fail, the preview stays the reference: clicks outside it are refused
// until a new screenshot, which is the safe way to be wrong.
func (e *guarded) preview(ctx context.Context, req bridge.CaptureRequest) (*bridge.Capture, error) {
	g := e.g
	g.mu.Lock()
	last, foreign, rects := g.last, g.foreign, g.foreignRects
	g.mu.Unlock()
	img, err := e.capture(ctx, req)
	if err != nil || last == nil {
		return img, err
	}
	ref := *last
	if _, err := e.capture(ctx, bridge.CaptureRequest{Rect: &ref, Width: 1, Height: 1, Format: bridge.FormatPNG}); err != nil {
		g.log.Debug("restoring the staleness reference after a preview", "err", err)
		return img, nil
	}
	g.mu.Lock()
	g.foreign, g.foreignRects = foreign, rects
	g.mu.Unlock()
	return img, nil
}

func (e *guarded) capture(ctx context.Context, req bridge.CaptureRequest) (*bridge.Capture, error) {
	if err := e.g.supersedeSettling(ctx); err != nil {
		return nil, err
	}
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
		read := g.markRead()
		img, err := e.inner.Capture(ctx, r)
		read(err == nil)
		if err != nil {
			return nil, err
		}
		if img.MaskOthers {
			g.captured(img.Source)
			g.noteMask(ctx, img)
			return img, nil
		}
		after, _, err := g.maskIDs(ctx)
		if err != nil {
			return nil, err
		}
		if late := missing(after, r.Mask); len(late) == 0 {
			g.captured(img.Source)
			g.noteMask(ctx, img)
			return img, nil
		} else if attempt == maskAttempts {
			return nil, fmt.Errorf("windows of unapproved apps kept appearing during the screenshot (%v); try again in a moment", late)
		}
		ids = union(ids, after)
	}
}

// noteMask tells the model, in img.Note, when the mask paints over most
// of an image and whose window it is for, so that a flat image is not
// taken for the screen.
func (g *Gates) noteMask(ctx context.Context, img *bridge.Capture) {
	c := img.MaskCover
	area := int64(img.Source.Width) * int64(img.Source.Height)
	if c == nil || area == 0 || 2*c.Pixels <= area {
		return
	}
	who := "windows of apps that are not approved"
	if c.Window != nil {
		if list, err := g.listWindows(ctx, true); err == nil {
			for _, w := range list.Windows {
				if w.ID == *c.Window {
					who = fmt.Sprintf("a window of %s, which is not approved for this session", appName(w.App))
					if w.Title != "" {
						who = fmt.Sprintf("the window %q of %s, which is not approved for this session", w.Title, appName(w.App))
					}
				}
			}
		}
	}
	img.Note = fmt.Sprintf(" %d%% of this image is masked (painted over in one flat colour), most of it for %s: those pixels do not show the screen.",
		c.Pixels*100/area, who)
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

// after runs once an input action has been sent (beforeInput ran just
// before it was): the clipboard guard
// clears the selections again while a click-tier app is in play (a click
// may have selected or copied something), and the staleness gate takes
// the screen as the action left it as its new reference (see baseline.go).
// timeInput records at debug level how long an input action took in the
// executor, which is where `make bench` splits an action's time between
// the gates, the input and the server around them.
func (g *Gates) timeInput(ctx context.Context, what string, start time.Time) {
	if g.log.Enabled(ctx, slog.LevelDebug) {
		g.log.Debug("input sent", "what", what, "took", time.Since(start))
	}
}

func (e *guarded) after(ctx context.Context, err error) error {
	g := e.g
	g.rebaseline(ctx)
	if cerr := g.clearAfterAction(ctx); cerr != nil {
		g.log.Warn("clearing the clipboard after an action", "err", cerr)
		if err == nil {
			err = fmt.Errorf("the action ran, but the clipboard could not be cleared after it: %w", cerr)
		}
	}
	return err
}

func (e *guarded) MoveMouse(ctx context.Context, to geometry.Point) error {
	defer e.g.timeInput(ctx, "mouse_move", time.Now())
	e.g.beforeInput(ctx)
	return e.after(ctx, e.inner.MoveMouse(ctx, to))
}

func (e *guarded) Click(ctx context.Context, at geometry.Point, b mcpserver.Button, count int, mods string) error {
	defer e.g.timeInput(ctx, "click", time.Now())
	e.g.beforeInput(ctx)
	return e.after(ctx, e.inner.Click(ctx, at, b, count, mods))
}

func (e *guarded) MouseDown(ctx context.Context, b mcpserver.Button) error {
	e.g.beforeInput(ctx)
	return e.after(ctx, e.inner.MouseDown(ctx, b))
}

func (e *guarded) MouseUp(ctx context.Context, b mcpserver.Button) error {
	e.g.beforeInput(ctx)
	return e.after(ctx, e.inner.MouseUp(ctx, b))
}

func (e *guarded) Scroll(ctx context.Context, at geometry.Point, dir string, amount int, mods string) error {
	e.g.beforeInput(ctx)
	return e.after(ctx, e.inner.Scroll(ctx, at, dir, amount, mods))
}

func (e *guarded) OpenApplication(ctx context.Context, app string) (*mcpserver.LaunchedApp, error) {
	e.g.beforeInput(ctx)
	out, err := e.inner.OpenApplication(ctx, app)
	return out, e.after(ctx, err)
}

// The teaching overlay is deskhand's own window, not input to any app:
// the gates' chain has already judged the teaching step that shows it
// (mcpserver's teach.go), and its buttons answer only the user's real
// clicks, so nothing more goes around these. Hiding is always allowed.

func (e *guarded) TeachShow(ctx context.Context, req bridge.TeachShowRequest) (*bridge.TeachShown, error) {
	return e.inner.TeachShow(ctx, req)
}

func (e *guarded) TeachPoll(ctx context.Context) (*bridge.TeachState, error) {
	return e.inner.TeachPoll(ctx)
}

func (e *guarded) TeachHide(ctx context.Context) error {
	return e.inner.TeachHide(ctx)
}
