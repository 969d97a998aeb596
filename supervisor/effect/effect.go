// Package effect finds what an input action changed: the parts of the
// screen that look different once it settled, and the windows that
// opened, closed, were retitled or took the focus. The MCP layer reports
// it with each action's result, so a model learns that a click on a
// disabled button did nothing without taking a screenshot to find out.
//
// Settling ends early: once something changed, when the screen has been
// quiet for Settle.Quiet; when nothing changes, at Settle.Cap.
package effect

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// Source tells which parts of the screen look different since it was last
// asked; *bridge.Client is one. It answers method_not_found or
// unsupported where the platform cannot tell.
type Source interface {
	ScreenChanges(ctx context.Context) (*bridge.ScreenChanges, error)
}

// Settle bounds the wait for an action's effect.
type Settle struct {
	// Quiet is how long the screen must stay unchanged after a change.
	Quiet time.Duration
	// Cap is the longest wait, and the whole wait when nothing changes.
	Cap time.Duration
}

// The default settling, measured by TestBenchEffectSettle (docs/tools.md
// has the figures): on a 2-core machine at a load of 20, the first change
// of a GTK check box, zenity or xterm typing and an xmessage dialog came
// within 261 ms of the input, and a check box's own changes were at most
// 229 ms apart. A lower cap would read a slow app's change as none.
var DefaultSettle = Settle{Quiet: 200 * time.Millisecond, Cap: 600 * time.Millisecond}

// poll is how often the screen is asked about while settling.
const poll = 20 * time.Millisecond

// Watch follows one action, from just before it to its settling.
type Watch struct {
	src Source
	// cannot says why the screen's changes are unknown ("" when known).
	cannot string
	// ambient holds the areas that were changing before the action (a
	// spinner, a clock, a blinking caret): changes inside them are not the
	// action's.
	ambient []geometry.Rect
}

// maxAmbient bounds the areas remembered as changing by themselves.
const maxAmbient = 512

// firstSample is how long the screen is watched before the first action,
// when nothing is known yet of what changes by itself.
const firstSample = 60 * time.Millisecond

// Begin starts following an action. What changed since the previous
// action settled, and ongoing (the areas still changing by themselves
// when it did, Screen.Ongoing), is taken to change by itself, except
// within tail (Screen.Tail: the previous action's own change, still
// going when its wait ended), which would otherwise hide the same
// place's change from every later action. src may be nil (nothing can
// tell).
func Begin(ctx context.Context, src Source, ongoing, tail []geometry.Rect) *Watch {
	w := &Watch{src: src, ambient: slices.Clone(ongoing)}
	if src == nil {
		w.cannot = cannotTellHere
		return w
	}
	res, err := src.ScreenChanges(ctx)
	if err == nil && res.First {
		time.Sleep(firstSample)
		res, err = src.ScreenChanges(ctx)
	}
	if err != nil {
		w.cannot = cannotTell(err)
		return w
	}
	// Kept as the pieces they are: the bounds of two spinners would
	// take in whatever lies between them.
	for _, r := range res.Changed {
		if slices.ContainsFunc(tail, func(t geometry.Rect) bool { return touches(t, r) }) {
			continue
		}
		if len(w.ambient) < maxAmbient && !slices.Contains(w.ambient, r) {
			w.ambient = append(w.ambient, r)
		}
	}
	return w
}

// ambientHolds says whether r lies in or beside an area that changes by
// itself (a progress bar grows into the next cells), and takes it into
// that area when it does.
func (w *Watch) ambientHolds(r geometry.Rect) bool {
	for _, a := range w.ambient {
		if touches(a, r) {
			if len(w.ambient) < maxAmbient && !slices.Contains(w.ambient, r) {
				w.ambient = append(w.ambient, r)
			}
			return true
		}
	}
	return false
}

// cannotTellHere is the effect where the desktop keeps no record of what
// it redrew that deskhand can read (Wayland compositors give screencopy
// frames of the whole output; macOS is not wired yet): deskhand does not
// guess by comparing screenshots.
const cannotTellHere = "this desktop does not tell deskhand what changed on screen; take a screenshot to see the result"

func cannotTell(err error) string {
	var be *bridge.Error
	if errors.As(err, &be) && (be.Code == bridge.CodeMethodNotFound || be.Code == bridge.CodeUnsupported) {
		return cannotTellHere
	}
	return "what changed on screen could not be read: " + err.Error()
}

// Screen is what the screen did after the action.
type Screen struct {
	// Known is false where the platform cannot tell; Why says so.
	Known bool
	Why   string
	// Changed lists the changed rectangles in the global logical space,
	// merged, largest first.
	Changed []geometry.Rect
	// StillChanging is true when the screen had not been quiet for
	// Settle.Quiet by Settle.Cap.
	StillChanging bool
	// Waited is how long the settling took.
	Waited time.Duration
	// First and Last are when the first and last change were seen, and
	// Gap the longest quiet between two changes (all zero when none was):
	// what the settling defaults are measured by.
	First, Last, Gap time.Duration
	// Ongoing are the areas that changed by themselves meanwhile, left
	// out of Changed; Tail is Changed when StillChanging. The next Begin
	// takes both.
	Ongoing, Tail []geometry.Rect
}

// End waits for the screen to settle, as s says, and returns what changed.
func (w *Watch) End(ctx context.Context, s Settle) Screen {
	if w.cannot != "" {
		return Screen{Why: w.cannot}
	}
	start := time.Now()
	var rects, ongoing []geometry.Rect
	var firstChange, lastChange time.Time
	var gap time.Duration
	for {
		// Poll, but ask once more right when the quiet time or the cap
		// ends rather than up to a poll later.
		wait := min(poll, s.Cap-time.Since(start))
		if !lastChange.IsZero() {
			wait = min(wait, s.Quiet-time.Since(lastChange))
		}
		timer := time.NewTimer(max(wait, 0))
		select {
		case <-ctx.Done():
			timer.Stop()
			return Screen{Why: "the action's time ran out before the screen settled"}
		case <-timer.C:
		}
		res, err := w.src.ScreenChanges(ctx)
		if err != nil {
			return Screen{Why: cannotTell(err)}
		}
		now := time.Now()
		for _, r := range res.Changed {
			if w.ambientHolds(r) {
				ongoing = append(ongoing, r)
				continue
			}
			if firstChange.IsZero() {
				firstChange = now
			}
			if !lastChange.IsZero() {
				gap = max(gap, now.Sub(lastChange))
			}
			lastChange = now
			rects = append(rects, r)
		}
		quiet := !lastChange.IsZero() && now.Sub(lastChange) >= s.Quiet
		if quiet || now.Sub(start) >= s.Cap {
			sc := Screen{Known: true, Changed: Merge(rects), StillChanging: !lastChange.IsZero() && !quiet, Waited: now.Sub(start), Ongoing: ongoing, Gap: gap}
			if !firstChange.IsZero() {
				sc.First, sc.Last = firstChange.Sub(start), lastChange.Sub(start)
			}
			if sc.StillChanging {
				sc.Tail = sc.Changed
			}
			return sc
		}
	}
}

// near is how far apart two changed rectangles may be and still be
// reported as one: a label and its check box, the letters of a word.
const near = 8

// Merge joins rectangles that overlap or lie within near of each other,
// until none do, and sorts the result largest first.
func Merge(rects []geometry.Rect) []geometry.Rect {
	out := slices.Clone(rects)
	for merged := true; merged; {
		merged = false
		for i := 0; i < len(out) && !merged; i++ {
			for j := i + 1; j < len(out); j++ {
				if touches(out[i], out[j]) {
					out[i] = union(out[i], out[j])
					out = slices.Delete(out, j, j+1)
					merged = true
					break
				}
			}
		}
	}
	return Largest(out)
}

// Largest sorts rects largest first.
func Largest(rects []geometry.Rect) []geometry.Rect {
	slices.SortStableFunc(rects, func(a, b geometry.Rect) int { return cmp.Compare(b.Width*b.Height, a.Width*a.Height) })
	return rects
}

func touches(a, b geometry.Rect) bool {
	return a.X-near < b.X+b.Width && b.X-near < a.X+a.Width &&
		a.Y-near < b.Y+b.Height && b.Y-near < a.Y+a.Height
}

func union(a, b geometry.Rect) geometry.Rect {
	x0, y0 := min(a.X, b.X), min(a.Y, b.Y)
	x1, y1 := max(a.X+a.Width, b.X+b.Width), max(a.Y+a.Height, b.Y+b.Height)
	return geometry.Rect{X: x0, Y: y0, Width: x1 - x0, Height: y1 - y0}
}

// Subtract returns rects less every part covered by cut.
func Subtract(rects []geometry.Rect, cut geometry.Rect) []geometry.Rect {
	var out []geometry.Rect
	for _, r := range rects {
		x0, y0 := max(r.X, cut.X), max(r.Y, cut.Y)
		x1, y1 := min(r.X+r.Width, cut.X+cut.Width), min(r.Y+r.Height, cut.Y+cut.Height)
		if x1 <= x0 || y1 <= y0 {
			out = append(out, r)
			continue
		}
		// Above, below, then left and right of the overlap.
		add := func(x, y, w, h int) {
			if w > 0 && h > 0 {
				out = append(out, geometry.Rect{X: x, Y: y, Width: w, Height: h})
			}
		}
		add(r.X, r.Y, r.Width, y0-r.Y)
		add(r.X, y1, r.Width, r.Y+r.Height-y1)
		add(r.X, y0, x0-r.X, y1-y0)
		add(x1, y0, r.X+r.Width-x1, y1-y0)
	}
	return out
}

// Hidden returns the parts of the screen that show windows hide says must
// not be seen: each such window's frame, less the windows stacked above
// it. list is top of the stack first.
func Hidden(list *bridge.WindowList, hide func(bridge.Window) bool) []geometry.Rect {
	if list == nil {
		return nil
	}
	var out []geometry.Rect
	for i, w := range list.Windows {
		if w.Minimized || w.Hidden || !hide(w) {
			continue
		}
		area := []geometry.Rect{w.Bounds}
		for _, above := range list.Windows[:i] {
			if !above.Minimized && !above.Hidden && !hide(above) {
				area = Subtract(area, above.Bounds)
			}
		}
		out = append(out, area...)
	}
	return out
}
