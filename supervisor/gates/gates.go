// Package gates is deskhand's execution guard: the nine checks every
// action passes, in order, against the live desktop, just before it runs
// (each tool call, each action inside computer_batch, and the showing of
// each teaching step, whose actions pass them again one by one):
//
//  1. kill switch: DESKHAND_DISABLED, or a "disabled" file in the user's
//     config directory or beside the managed policy file;
//  2. display: the platform's check (Options.Display; X11: the display
//     answers, has XTEST and is not a Wayland session's XWayland; macOS:
//     Screen Recording and Accessibility are granted);
//     (then mcpserver.AccessGate: request_access approved something, so
//     that a session without approvals never takes the lock)
//  3. cross-session lock: this session owns the desktop (package lock);
//     taking it begins the session's turn (package cleanup);
//  4. hide unapproved apps: every visible window of an app without a
//     grant is minimised, and shown again when the turn ends ("visible"
//     is the real map state: a mapped window that claims
//     _NET_WM_STATE_HIDDEN is visible; override-redirect popups cannot be
//     minimised and are only masked and refused as targets);
//  5. frontmost app: approved, and at the full tier for anything that
//     sends keys;
//  6. target app: the app under each point the action touches has the
//     tier the action needs (an app open_application starts is approved);
//  7. clipboard guard, for the clipboard, the PRIMARY selection and the
//     cut buffer alike (clipboard.go): while a click-tier app is in front (or targeted)
//     both are stashed and cleared, and cleared again after each action;
//     without clipboardRead the user's text is stashed and cleared before
//     the turn's first input, so no paste (a key chord, a middle click)
//     reveals it; without clipboardWrite it is stashed, so what a copy
//     chord put there is undone when the turn ends; the stash comes back
//     when no grant or app needs it any more, and at the end of the turn;
//     read_clipboard and write_clipboard need their grant flags;
//  8. pixel staleness: every click lands on pixels that still look as
//     they did when deskhand last looked: in the latest screenshot or
//     zoom, or as deskhand's own latest action left them (baseline.go;
//     the helper's patch_check and patch_baseline);
//  9. system shortcuts: combinations on the blocklist (package keyblock)
//     need the systemKeyCombos grant.
//
// Screenshots and zooms go through Gates.Wrap, which paints over every
// window of an unapproved app (menus, tooltips and other override-redirect
// popups included, and windows no grant identifies), so its pixels never
// leave the machine even where hiding fails. The helper places the paint
// from the windows as they are when it reads the pixels, and paints every
// window the gates did not list as approved, so a window that moves or
// opens after the gates' listing is painted too.
//
// The element tools name their app by pid, and the app must have the tier
// the action needs (elements.go): read, for its tree (get_app_state,
// wait_for) and a hover; click, for a left click (run through the
// accessibility API or the pointer), a scroll and perform_action with a
// press-like action (press, activate, expand, toggle …); full, for
// type_text, press_key, set_value, drag, right and middle clicks and
// every other action. Keys (press_key, and type_text without an element)
// also need the full-tier app in front, and press_key passes the shortcut
// blocklist. The guarded executor reads no tree or element of an app
// without a grant, and leaves unapproved apps' window titles out.
//
// What each tier allows (consent.TierAllows): read, being seen; click,
// plain left clicks (single, double, triple) and scrolling; full,
// everything. Right and middle clicks, modifier clicks, drags and button
// presses need full at their points; typing, key presses and modifier
// clicks need a full-tier app in front, because keys go to the focused
// window wherever the pointer is.
package gates

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/desktop"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/keyblock"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// Desktop is what the gates ask the capture helper; *bridge.Client
// satisfies it.
type Desktop interface {
	Windows(ctx context.Context, includeHidden bool) (*bridge.WindowList, error)
	PatchCheck(ctx context.Context, req bridge.PatchCheckRequest) (*bridge.PatchCheck, error)
	Hide(ctx context.Context, ids []uint32) ([]uint32, error)
	ReadSelection(ctx context.Context, sel bridge.Selection) (string, error)
	WriteSelection(ctx context.Context, sel bridge.Selection, text string) error
}

// Locker is the cross-session lock; *lock.Lock satisfies it.
type Locker interface {
	Acquire(session string) (fresh bool, err error)
}

// Options configure New.
type Options struct {
	// Desktop is the capture helper. Required.
	Desktop Desktop
	// Consent is the session's grants. Required.
	Consent *consent.Session
	// Lock is the cross-session lock. Required.
	Lock Locker
	// Turns tracks the turn the lock begins. Required.
	Turns *cleanup.Controller
	// Blocklist is the system-shortcut list; nil means keyblock.Default().
	Blocklist *keyblock.List
	// KillSwitch says whether deskhand is switched off, and how to
	// switch it on; nil means DefaultKillSwitch(nil).
	KillSwitch func() (off bool, why string)
	// Display checks that the display can be driven; nil skips the
	// check.
	Display func(ctx context.Context) error
	// SessionPrefix makes lock session ids unique to this process; ""
	// means a random one.
	SessionPrefix string
	// KeepUnapprovedVisible turns the hiding of unapproved windows off
	// (they are still masked in every screenshot).
	KeepUnapprovedVisible bool
	// ResolveApp finds the identity of an application open_application
	// names; nil, or an error, refuses the launch (see checkLaunch).
	ResolveApp func(name string) (bridge.App, error)
	// NoWindowCache lists the windows afresh for every check, even when
	// the Desktop can tell that nothing changed (table.go).
	NoWindowCache bool
	// NoStacking, when set, says the desktop gives no stacking order
	// (Wayland): a point inside more than one visible window is refused
	// with it rather than given to whichever is listed first.
	NoStacking error
	// Drawn, when the display keeps one, is its record of where the
	// screen was drawn, which spares the staleness gate most of its
	// helper round trips (drawn.go); nil asks the helper every time.
	Drawn desktop.Drawn
	// MaskColor paints unapproved windows; nil means the helper's default.
	MaskColor *[3]uint8
	// Logger receives the records; nil discards them.
	Logger *slog.Logger
}

// Gates holds the state the gates share.
type Gates struct {
	opts Options
	log  *slog.Logger
	keys *keyblock.List

	mu sync.Mutex
	// memo is the window list read for the action being checked.
	memoAction *mcpserver.Action
	memo       *bridge.WindowList
	// tables are the cached listings, with and without hidden windows.
	tables map[bool]*table
	// acted is true once input was sent after the latest capture and
	// the staleness reference could not be refreshed after it.
	acted bool
	// settleGen counts the settlings rebaseline started; settled is closed
	// when the newest one is over, and closing settleStop stops it.
	settleGen  uint64
	settled    chan struct{}
	settleStop chan struct{}
	// settleTimer starts the newest settling's first read; stopping it
	// before it fires ends that settling with settleEnd, so an action
	// superseded within settleStep costs no goroutine.
	settleTimer *time.Timer
	settleEnd   func()
	// last is the source rectangle of the latest capture, nil before one.
	last *bridge.Rect
	// foreign, until the next capture, refuses the actions the staleness
	// gate checks whose target lies in foreignRects, or anywhere when
	// that is nil: the screen changed there after the latest capture and
	// before deskhand's own input began (beforeInput).
	foreign      error
	foreignRects []geometry.Rect
	// checking is the action the gates began checking at checkingSince
	// (drawn.go).
	checking      *mcpserver.Action
	checkingSince time.Time
}

// New returns the gates.
func New(opts Options) (*Gates, error) {
	if opts.Desktop == nil || opts.Consent == nil || opts.Lock == nil || opts.Turns == nil {
		return nil, errors.New("gates: Options.Desktop, Consent, Lock and Turns are required")
	}
	g := &Gates{opts: opts, log: opts.Logger, keys: opts.Blocklist, tables: map[bool]*table{}}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	if g.keys == nil {
		g.keys = keyblock.Default()
	}
	if g.opts.KillSwitch == nil {
		g.opts.KillSwitch = DefaultKillSwitch(nil)
	}
	if g.opts.SessionPrefix == "" {
		g.opts.SessionPrefix = newPrefix()
	}
	return g, nil
}

// Chain returns the gates in order, with access (mcpserver.AccessGate)
// after the display check and before the lock, so that a session without
// approvals never takes the lock. access may be nil.
func (g *Gates) Chain(access mcpserver.Gate) []mcpserver.Gate {
	// Neither of the first two looks at the action (mcpserver.WholeGate).
	chain := []mcpserver.Gate{
		mcpserver.GateFunc{GateName: "kill switch", Func: g.checkKillSwitch, Whole: true},
		mcpserver.GateFunc{GateName: "display", Func: g.checkDisplay, Whole: true},
	}
	if access != nil {
		chain = append(chain, access)
	}
	return append(chain,
		gate("lock", g.checkLock),
		gate("hide unapproved apps", g.checkHide),
		gate("frontmost app", g.checkFrontmost),
		gate("target app", g.checkTarget),
		gate("clipboard", g.checkClipboard),
		gate("stale screenshot", g.checkStaleness),
		gate("system shortcut", g.checkKeys),
	)
}

func gate(name string, f func(ctx context.Context, a *mcpserver.Action) error) mcpserver.Gate {
	return mcpserver.GateFunc{GateName: name, Func: f}
}

// SessionID is the lock and turn id of an MCP session.
func (g *Gates) SessionID(mcpSession string) string {
	if mcpSession == "" {
		return g.opts.SessionPrefix
	}
	return g.opts.SessionPrefix + "/" + mcpSession
}

// kind is what an action does, for the tier checks: its tool's gate kind.
type kind = mcpserver.GateKind

// classify returns the gate kind of a's tool, from the tool's registry
// entry.
func classify(a *mcpserver.Action) kind {
	if k, ok := mcpserver.Classify(a); ok {
		return k
	}
	// A tool the registry does not classify: the strictest reading
	// (TestEveryToolIsClassified fails until it has a gate kind).
	return kind{Input: true, Keys: true, PointTier: catalog.TierFull, What: a.Tool, CheckPixels: true}
}

// windows returns the window list for a, reading it once per action.
func (g *Gates) windows(ctx context.Context, a *mcpserver.Action) (*bridge.WindowList, error) {
	g.mu.Lock()
	if g.memoAction == a && g.memo != nil {
		list := g.memo
		g.mu.Unlock()
		return list, nil
	}
	g.mu.Unlock()
	list, err := g.listWindows(ctx, false)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	g.memoAction, g.memo = a, list
	g.mu.Unlock()
	return list, nil
}

// windowAt returns the window a pointer event at pt lands in (the
// topmost visible one whose input shape holds it: windows that let clicks
// through are passed over), and its app, from the action's window list:
// the helper's window_at answers the same question, but one listing per
// action serves every gate.
func (g *Gates) windowAt(ctx context.Context, a *mcpserver.Action, pt geometry.Point) (*bridge.WindowAt, error) {
	list, err := g.windows(ctx, a)
	if err != nil {
		return nil, err
	}
	var found *bridge.WindowAt
	for _, w := range list.Windows {
		if !w.Minimized && !w.Hidden && w.TakesInputAt(pt) {
			if found != nil {
				return nil, fmt.Errorf("%q and %q both cover it: %w", found.Window.Title, w.Title, g.opts.NoStacking)
			}
			w, app := w, w.App
			found = &bridge.WindowAt{Window: &w, App: &app}
			if g.opts.NoStacking == nil {
				return found, nil
			}
		}
	}
	if found != nil {
		return found, nil
	}
	return &bridge.WindowAt{}, nil
}

func (g *Gates) forget(a *mcpserver.Action) {
	g.mu.Lock()
	if g.memoAction == a {
		g.memoAction, g.memo = nil, nil
	}
	g.mu.Unlock()
}

// appName is how refusals name an app.
func appName(app bridge.App) string {
	if e := catalog.Classify(catalog.IdentityOf(app)); e.Name != "" {
		return e.Name
	}
	for _, s := range []string{app.Name, app.Class, app.Instance, app.BundleID, app.DesktopID} {
		if s != "" {
			return s
		}
	}
	return "an unidentified application"
}
