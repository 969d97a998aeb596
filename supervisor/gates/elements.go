package gates

import (
	"context"
	"fmt"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// The element tools (list_apps, get_app_state, click, set_value …) name
// the app they act on by pid. Its identity, which the grants are keyed
// by, is that of its windows in the helper's window list: the same source
// the coordinate tools' target gate reads, so one app has one tier
// whichever family of tools reaches it.

// checkPID holds an element tool to its app's tier (kind.pidTier): the
// app must have a window deskhand can identify and a grant at least that
// high. A read-tier app's tree may be read; nothing in it is acted on.
func (g *Gates) checkPID(ctx context.Context, a *mcpserver.Action, k kind) error {
	if a.PID == 0 || k.PIDTier == catalog.TierNone {
		return nil
	}
	app, err := g.appForPID(ctx, a.PID)
	if err != nil {
		return err
	}
	tier := g.opts.Consent.Tier(app)
	if tier == catalog.TierNone {
		return fmt.Errorf("pid %d is %s, which is not approved for this session, so its windows may not be read or acted on. Call request_access for %s if the task needs it. %s",
			a.PID, appName(app), appName(app), consent.AntiSubversionHint)
	}
	if tier < k.PIDTier {
		return fmt.Errorf("pid %d is %s. %s", a.PID, appName(app), consent.TierRefusal(app, tier, k.PIDTier, k.What))
	}
	return nil
}

// appForPID finds the identity of the app with that pid from its windows,
// hidden ones included (an approved app may be minimised).
func (g *Gates) appForPID(ctx context.Context, pid int) (bridge.App, error) {
	list, err := g.listWindows(ctx, true)
	if err != nil {
		return bridge.App{}, fmt.Errorf("finding the app of pid %d: %w", pid, err)
	}
	if app, ok := appOfPID(list, pid); ok {
		return app, nil
	}
	return bridge.App{}, fmt.Errorf("no window belongs to pid %d, so deskhand cannot tell which app it is and acts on nothing of it. Call list_apps for the running apps and their pids", pid)
}

func appOfPID(list *bridge.WindowList, pid int) (bridge.App, bool) {
	for _, w := range list.Windows {
		if w.App.PID == pid {
			return w.App, true
		}
	}
	return bridge.App{}, false
}

// The element methods of the guarded executor. Reading a tree or an
// element is refused for an app without a grant even though the chain
// has already checked the action's pid: a tool that reads another pid
// than its action named (wait_for's window) must not get that app's
// contents either. Titles of unapproved apps' windows are left out of
// the app list, as their pixels are left out of every screenshot.

func (e *guarded) Windows(ctx context.Context, includeHidden bool) (*bridge.WindowList, error) {
	// The gates' own cached listing: an action's effect lists the windows
	// before and after it, and usually nothing changed between.
	list, err := e.g.listWindows(ctx, includeHidden)
	if err != nil {
		return nil, err
	}
	out := *list
	out.Windows = make([]bridge.Window, len(list.Windows))
	for i, w := range list.Windows {
		if e.g.opts.Consent.Tier(w.App) == catalog.TierNone {
			w.Title = ""
		}
		out.Windows[i] = w
	}
	return &out, nil
}

func (e *guarded) A11yApps(ctx context.Context) (*bridge.A11yApps, error) {
	apps, err := e.inner.A11yApps(ctx)
	if err != nil {
		return nil, err
	}
	list, err := e.g.listWindows(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("finding which apps are approved: %w", err)
	}
	out := *apps
	out.Apps = make([]bridge.A11yApp, len(apps.Apps))
	for i, app := range apps.Apps {
		if id, ok := appOfPID(list, app.PID); !ok || e.g.opts.Consent.Tier(id) == catalog.TierNone {
			wins := make([]bridge.A11yWindow, len(app.Windows))
			for j, w := range app.Windows {
				wins[j] = bridge.A11yWindow{Ref: w.Ref, Window: w.Window}
			}
			app.Windows = wins
		}
		out.Apps[i] = app
	}
	return &out, nil
}

func (e *guarded) approved(ctx context.Context, pid int) error {
	app, err := e.g.appForPID(ctx, pid)
	if err != nil {
		return err
	}
	if e.g.opts.Consent.Tier(app) == catalog.TierNone {
		return fmt.Errorf("pid %d is %s, which is not approved for this session, so its accessibility tree may not be read. Call request_access for it if the task needs it. %s", pid, appName(app), consent.AntiSubversionHint)
	}
	return nil
}

// A11yTree reads an approved app's tree. A capture asked for with it is
// masked exactly as Capture masks; one the helper could not mask by the
// windows of the moment is dropped and taken again through Capture.
func (e *guarded) A11yTree(ctx context.Context, req bridge.A11yTreeRequest) (*bridge.A11yTree, error) {
	if err := e.approved(ctx, req.PID); err != nil {
		return nil, err
	}
	want := req.Capture
	if want == nil {
		return e.inner.A11yTree(ctx, req)
	}
	if err := e.g.supersedeSettling(ctx); err != nil {
		return nil, err
	}
	ids, keep, err := e.g.maskIDs(ctx)
	if err != nil {
		return nil, err
	}
	r := *want
	r.Mask = union(want.Mask, ids)
	r.MaskOthers, r.Keep = true, missing(keep, want.Mask)
	if e.g.opts.MaskColor != nil {
		r.MaskColor = e.g.opts.MaskColor
	}
	req.Capture = &r
	tree, err := e.inner.A11yTree(ctx, req)
	if err != nil {
		return nil, err
	}
	switch {
	case tree.Capture != nil && tree.Capture.MaskOthers:
		e.g.captured(tree.Capture.Source)
	case tree.Capture != nil || tree.CaptureErr == nil:
		tree.Capture, tree.CaptureErr = e.Capture(ctx, *want)
	}
	return tree, nil
}

func (e *guarded) A11yElement(ctx context.Context, pid int, ref string) (*bridge.A11yNode, error) {
	if err := e.approved(ctx, pid); err != nil {
		return nil, err
	}
	return e.inner.A11yElement(ctx, pid, ref)
}

// A11yAct has been judged by the chain (the pid's tier for the action);
// what it changes on screen is the staleness gate's new reference, and a
// click-tier app's clipboard is cleared after it as after a click.
func (e *guarded) A11yAct(ctx context.Context, req bridge.A11yActRequest) error {
	if err := e.approved(ctx, req.PID); err != nil {
		return err
	}
	return e.afterAPI(ctx, e.inner.A11yAct(ctx, req))
}

// afterAPI is after for an action the accessibility API did: it sent no
// input and moved no pointer, so the staleness reference is left as the
// latest capture (or the last input's settling) made it, not refreshed
// in the background while the next call waits for the helper. A
// coordinate click where such an action changed the screen is then
// checked against what the model last saw and refused until it looks
// again: stricter than a refresh, never looser. The clipboard guard
// still runs: an action such as "copy" can fill the selections.
func (e *guarded) afterAPI(ctx context.Context, err error) error {
	if cerr := e.g.clearAfterAction(ctx); cerr != nil {
		e.g.log.Warn("clearing the clipboard after an action", "err", cerr)
		if err == nil {
			err = fmt.Errorf("the action ran, but the clipboard could not be cleared after it: %w", cerr)
		}
	}
	return err
}
