package gates

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

func newPrefix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b[:]))
}

// stopped returns why ctx ended, if it did: a turn that ended stops the
// actions still queued behind it with its own cause.
func stopped(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	return context.Cause(ctx)
}

// 1. Kill switch.
func (g *Gates) checkKillSwitch(ctx context.Context, a *mcpserver.Action) error {
	if err := stopped(ctx); err != nil {
		return err
	}
	if off, why := g.opts.KillSwitch(); off {
		return fmt.Errorf("deskhand is switched off (%s), so it does nothing on this computer. Only the user can switch it on again; tell them, and do not try to act some other way", why)
	}
	g.noteChecking(a)
	return nil
}

// 2. Display and OS permissions.
func (g *Gates) checkDisplay(ctx context.Context, a *mcpserver.Action) error {
	if g.opts.Display == nil {
		return nil
	}
	return g.opts.Display(ctx)
}

// 3. Cross-session lock; taking it begins the turn.
func (g *Gates) checkLock(ctx context.Context, a *mcpserver.Action) error {
	if err := stopped(ctx); err != nil {
		return err
	}
	id := g.SessionID(a.Session)
	fresh, err := g.opts.Lock.Acquire(id)
	if err != nil {
		return err
	}
	began, err := g.opts.Turns.Begin(id)
	if err != nil {
		return err
	}
	if fresh || began {
		g.log.Debug("took the computer", "session", id, "lock_fresh", fresh, "turn_began", began)
		g.screenChanged()
	}
	return nil
}

// 4. Hide unapproved apps.
func (g *Gates) checkHide(ctx context.Context, a *mcpserver.Action) error {
	if g.opts.KeepUnapprovedVisible {
		return nil
	}
	list, err := g.windows(ctx, a)
	if err != nil {
		return err
	}
	var ids []uint32
	for _, w := range list.Windows {
		// Override-redirect windows (menus, popups) cannot be minimized;
		// they are masked, and input aimed at them is refused.
		if !w.Hidden && !w.Minimized && !w.OverrideRedirect && g.opts.Consent.Tier(w.App) == catalog.TierNone {
			ids = append(ids, w.ID)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := g.opts.Turns.JournalHide(ids); err != nil {
		// Hidden without a record, a crash would leave them hidden.
		// Screenshots mask them anyway; input is refused here, with the
		// cause, where the gates after this one would blame the
		// unapproved window in front and send the model after it.
		g.log.Warn("not hiding the windows of unapproved apps", "windows", ids, "err", err)
		if !classify(a).Input {
			return nil
		}
		return fmt.Errorf("windows of apps not approved for this session are on screen, and deskhand hides them before it acts, which it cannot do now: %w", err)
	}
	hidden, err := g.opts.Desktop.Hide(ctx, ids)
	g.dropTables()
	g.screenChanged()
	var be *bridge.Error
	if errors.As(err, &be) && be.Name == "no_such_window" {
		// One closed between the listing and the hide: list again.
		g.forget(a)
		return g.checkHide(ctx, a)
	}
	if err != nil {
		// Screenshots mask these windows anyway, and input aimed at
		// them is refused by the next gates.
		g.log.Warn("hiding the windows of unapproved apps", "windows", ids, "err", err)
		return nil
	}
	g.opts.Turns.AddHidden(hidden)
	g.log.Debug("hid the windows of unapproved apps", "windows", hidden)
	// Hiding moves the focus: the next gates need the new list.
	g.forget(a)
	return nil
}

// 5. The frontmost app: approved; the full tier for keys.
func (g *Gates) checkFrontmost(ctx context.Context, a *mcpserver.Action) error {
	k := classify(a)
	if !k.Input {
		return nil
	}
	list, err := g.windows(ctx, a)
	if err != nil {
		return err
	}
	front := list.Frontmost
	if front == nil {
		if k.Keys {
			return fmt.Errorf("no window has the keyboard focus, so %s would go nowhere you can see. Click into a window of an approved app first, then try again", k.What)
		}
		return nil
	}
	tier := g.opts.Consent.Tier(*front)
	switch {
	case tier == catalog.TierNone:
		return fmt.Errorf("the focused window belongs to %s, which is not approved for this session, so nothing may be done while it is in front. "+
			"Click a window of an approved app to bring it to the front, or call request_access for %s if the task needs it. %s",
			appName(*front), appName(*front), consent.AntiSubversionHint)
	case k.Keys && tier < catalog.TierFull:
		return errors.New("the keys would go to the focused app. " + consent.TierRefusal(*front, tier, catalog.TierFull, k.What))
	}
	return nil
}

// 6. The app under each point the action touches.
func (g *Gates) checkTarget(ctx context.Context, a *mcpserver.Action) error {
	k := classify(a)
	if k.Launch {
		return g.checkLaunch(a)
	}
	if err := g.checkPID(ctx, a, k); err != nil {
		return err
	}
	if k.PointTier == catalog.TierNone {
		return nil
	}
	for _, pt := range points(a) {
		at, err := g.windowAt(ctx, a, pt)
		if err != nil {
			return fmt.Errorf("finding the window at (%d, %d): %w", pt.X, pt.Y, err)
		}
		if at.Window == nil || at.App == nil {
			if k.BareOK {
				continue
			}
			return fmt.Errorf("there is no window at screen point (%d, %d), so %s there is refused: on the bare desktop it opens the window manager's menus, which are off limits. Take a screenshot and aim at an approved app's window", pt.X, pt.Y, k.What)
		}
		if tier := g.opts.Consent.Tier(*at.App); tier < k.PointTier {
			return fmt.Errorf("the window at screen point (%d, %d) is %q of %s. %s", pt.X, pt.Y, at.Window.Title, appName(*at.App), consent.TierRefusal(*at.App, tier, k.PointTier, k.What))
		}
	}
	return nil
}

// points lists where a pointer action lands: its start and its end.
func points(a *mcpserver.Action) []geometry.Point {
	var out []geometry.Point
	if a.From != nil {
		out = append(out, *a.From)
	}
	if a.Target != nil {
		out = append(out, *a.Target)
	}
	return out
}

// checkLaunch resolves the app open_application names, once: an app that
// does not resolve is refused (fail closed), and one that does is launched
// by the exact id resolved here (the action's App is replaced with it), so
// the executor cannot start another app than the one approved.
func (g *Gates) checkLaunch(a *mcpserver.Action) error {
	if g.opts.ResolveApp == nil {
		return errors.New("this desktop cannot tell which application open_application would start, so launching is refused; ask the user to start it")
	}
	app, err := g.opts.ResolveApp(a.App)
	if err != nil {
		return fmt.Errorf("cannot tell which application %q is, so it may not be opened: %w", a.App, err)
	}
	if g.opts.Consent.Tier(app) == catalog.TierNone {
		return fmt.Errorf("%s is not approved for this session, so it may not be opened. Call request_access for it first if the task needs it. %s", appName(app), consent.AntiSubversionHint)
	}
	switch {
	case app.DesktopID != "":
		a.App = app.DesktopID
	case app.BundleID != "":
		a.App = app.BundleID
	}
	return nil
}

// Staleness: every action that lands on pixels must find them as they
// looked when deskhand last looked: in the latest capture, or, after
// deskhand's own input, as that input left them (baseline.go). The guard
// is against the screen changing while the model was looking at an old
// screenshot, such as a window or dialog appearing over the target; what
// the model's own actions changed (a click selects, highlights or opens
// something) is in the reference and does not count.
//
// A patch of patchSize² pixels counts as changed when over a fifth of its
// pixels differ by more than patchTolerance in some channel: a blinking
// text cursor (two pixels wide) or antialiasing does not trip it, a window
// moved over the point does.
const (
	patchSize      = 15
	patchTolerance = 24
	patchChanged   = 5 // differing × patchChanged ≥ size² means changed
)

// 8. Pixel staleness.
func (g *Gates) checkStaleness(ctx context.Context, a *mcpserver.Action) error {
	k := classify(a)
	if k.Settles {
		// Waiting for the screen to settle includes the settling of
		// deskhand's own last action.
		return g.awaitReference(ctx)
	}
	if !k.CheckPixels {
		return nil
	}
	if err := g.foreignAt(a); err != nil {
		return err
	}
	if g.settling() != nil {
		// While the last action's settling runs, a target that matches
		// the reference as it stands looks as deskhand last saw it, so
		// the click need not wait; one that differs may still be
		// changing under that action, and is checked once it settled.
		g.mu.Lock()
		last := g.last
		g.mu.Unlock()
		if last != nil && g.checkPatches(ctx, a, *last) == nil {
			return nil
		}
	}
	if err := g.awaitReference(ctx); err != nil {
		return err
	}
	g.mu.Lock()
	acted, last := g.acted, g.last
	g.mu.Unlock()
	if acted || last == nil {
		// No capture yet, or a reference that could not be refreshed
		// after deskhand's own input: see above.
		return nil
	}
	return g.checkPatches(ctx, a, *last)
}

// checkPatches compares the patch around each point of a with the
// helper's reference; last is the latest capture's source rectangle.
func (g *Gates) checkPatches(ctx context.Context, a *mcpserver.Action, last bridge.Rect) error {
	for _, pt := range points(a) {
		patch, ok := patchAround(pt, last)
		if !ok {
			return fmt.Errorf("screen point (%d, %d) lies outside the area of your latest screenshot or zoom, so it cannot be checked against what you saw; take a new screenshot, then use coordinates from it", pt.X, pt.Y)
		}
		if g.undrawn(a, patch) {
			continue // the helper would find the same pixels
		}
		size := patch.Width
		res, err := g.opts.Desktop.PatchCheck(ctx, bridge.PatchCheckRequest{X: pt.X, Y: pt.Y, Size: size, Tolerance: patchTolerance})
		var be *bridge.Error
		if errors.As(err, &be) && be.Name == "no_capture" {
			return nil
		}
		if errors.As(err, &be) && be.Name == "out_of_bounds" {
			return fmt.Errorf("screen point (%d, %d) lies outside the area of your latest screenshot or zoom; take a new screenshot, then use coordinates from it", pt.X, pt.Y)
		}
		if err != nil {
			return fmt.Errorf("checking the target against the latest screenshot: %w", err)
		}
		if res.DifferingPixels*patchChanged >= size*size {
			return fmt.Errorf("the screen at the target (%d, %d) has changed since your latest screenshot (%d of %d pixels differ), so the click might land on something else: take a new screenshot and aim again",
				pt.X, pt.Y, res.DifferingPixels, size*size)
		}
	}
	return nil
}

// patchAround is the patch the helper compares around pt: patchSize
// square, or smaller near the edge of last; ok false when pt is outside.
func patchAround(pt geometry.Point, last bridge.Rect) (geometry.Rect, bool) {
	for size := patchSize; size >= 1; size -= 2 {
		half := size / 2
		if pt.X-half >= last.X && pt.Y-half >= last.Y && pt.X+half < last.X+last.Width && pt.Y+half < last.Y+last.Height {
			return geometry.Rect{X: pt.X - half, Y: pt.Y - half, Width: size, Height: size}, true
		}
	}
	return geometry.Rect{}, false
}

// 9. System shortcuts.
func (g *Gates) checkKeys(ctx context.Context, a *mcpserver.Action) error {
	if a.Keys == "" || g.opts.Consent.Flags().SystemKeyCombos {
		return nil
	}
	if classify(a).OneCombo {
		return g.keys.CheckCombo(a.Keys)
	}
	// Any other tool that carries keys: check every combination in it.
	return g.keys.CheckKeys(a.Keys)
}

// maskIDs lists the windows of unapproved apps (mask) and of approved ones
// (keep). Hidden windows are listed too: one that comes back on screen
// before the capture is read is still painted over.
func (g *Gates) maskIDs(ctx context.Context) (mask, keep []uint32, err error) {
	list, err := g.listWindows(ctx, true)
	if err != nil {
		return nil, nil, fmt.Errorf("finding the windows to mask: %w", err)
	}
	for _, w := range list.Windows {
		if g.opts.Consent.Tier(w.App) == catalog.TierNone {
			if !slices.Contains(mask, w.ID) {
				mask = append(mask, w.ID)
			}
		} else if !slices.Contains(keep, w.ID) {
			keep = append(keep, w.ID)
		}
	}
	return mask, keep, nil
}
