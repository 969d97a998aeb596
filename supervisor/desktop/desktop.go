// Package desktop is the seam between deskhand's shared safety layer and
// its desktop platforms: Platform, the one interface every platform
// implements, and the types it shares with them. It names no platform;
// each platform is a package under it that the supervisor picks by OS
// (seam_<os>.go) and that imports nothing above this package
// (supervisor's imports_test.go checks):
//
//   - x11: Linux on X11 (Xorg, Xvfb); it can start a private virtual
//     desktop (x11/vdisplay).
//   - wayland: native Wayland sessions (wlroots compositors such as sway,
//     KDE's KWin; GNOME, where serve refuses every action), the user's or
//     a private headless sway (package sway), and which desktop
//     --virtual-display means on a Wayland host (PlanDisplay).
//   - macos: macOS, through the Swift helper's protocol extensions; it
//     never starts a virtual display.
//   - freedesktop: what freedesktop.org desktops share whatever their
//     display server (desktop entries and app launch, D-Bus
//     notifications), which the x11 and wayland platforms both use.
//
// The name is not "platform": supervisor/platform holds platform facts the
// shared safety layer reads as data (system shortcuts, bundle-id rules),
// while these packages talk to a desktop system.
package desktop

import (
	"context"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/input"
	"github.com/deskhand/deskhand/supervisor/lock"
)

// Platform is what differs between the desktops deskhand drives; the MCP
// layer, the gates, consent, geometry, the turn cleanup and the catalog
// are shared and name no platform's type. Every capability is a method,
// so a new platform states each one, if only to say it has none.
type Platform interface {
	// Display names the desktop the server works on (":1",
	// "macos-console"), chosen when the platform was opened: the user's,
	// or a private virtual one the platform started. It keys the lock
	// and the state file.
	Display() string
	// Lock is the cross-session lock of the desktop, where every
	// deskhand on it meets whatever its environment (X11: a selection
	// on the display; elsewhere a file keyed by the desktop).
	Lock(opts lock.Options) *lock.Lock
	// Private is true for a virtual desktop the platform started, which
	// ends with deskhand (and so needs no turn journal).
	Private() bool
	// HelperEnv is what the capture helper needs to find the display.
	HelperEnv() []string
	// DisplayGate is gate 2: the display answers and deskhand has what it
	// needs there (X11: XTEST, not XWayland; macOS: Screen Recording and
	// Accessibility), else a refusal saying what the user should do.
	DisplayGate(helper *bridge.Client) func(ctx context.Context) error
	// OpenInput opens the pointer and keyboard; keyPress hears of each
	// key press just before it is sent.
	OpenInput(keyPress func(code uint8)) (*input.Input, error)
	// WatchEscape calls onEscape for each Escape the user presses; own
	// is the input's keyPress, telling deskhand's own presses apart.
	WatchEscape(onEscape func()) (own func(code uint8), stop func(), err error)
	// KeepClipboard keeps the clipboard text a turn put back after
	// deskhand exits, where the platform's clipboard needs an owner; the
	// keeper is the capture helper at helper (X11: its keep mode).
	KeepClipboard(ctx context.Context, helper string, s cleanup.Stash) error
	// Notify tells the user that deskhand stopped using the computer.
	Notify(ctx context.Context, summary, body string) error
	// ResolveApp finds the identity of an app open_application names;
	// Launcher launches one the platform's way.
	ResolveApp(name string) (bridge.App, error)
	Launcher(helper *bridge.Client) Launcher
	// InstalledApps lists the apps request_access may name beside the
	// running ones (freedesktop: the desktop entries the helper reads);
	// nil where apps are found running or by name (macOS bundles).
	InstalledApps(ctx context.Context, helper *bridge.Client) ([]bridge.App, error)
	// SessionCapture is how consent session sess's screenshots are taken
	// where the compositor itself can leave out the apps sess has not
	// approved (macOS: include_apps); nil where the helper's capture,
	// masked by the gates, is all there is.
	SessionCapture(helper *bridge.Client, sess *consent.Session) Capture
	// NoStacking is the gates' refusal where a point lies in more than
	// one window and the desktop does not say which is on top (most of
	// Wayland); nil where it gives the stacking order.
	NoStacking() error
	// Drawn is the display's own record of where the screen was drawn,
	// which spares the staleness gate most of its helper round trips;
	// nil where the display keeps none.
	Drawn() Drawn
	// Close stops what opening the platform started.
	Close()
}

// Launcher starts applications the platform's way (desktop entries on
// Linux, bundle ids on macOS) and waits for a window of theirs.
type Launcher interface {
	OpenApplication(ctx context.Context, app string) (*LaunchedApp, error)
}

// LaunchedApp reports an application OpenApplication started.
type LaunchedApp struct {
	// DesktopID is the desktop-entry id (without ".desktop").
	DesktopID string `json:"desktop_id"`
	Name      string `json:"name"`
	// Exec is the command line that was run.
	Exec []string `json:"exec"`
	PID  int      `json:"pid"`
	// Window is the window that mapped.
	Window *bridge.Window `json:"window,omitempty"`
}

// Capture takes a screenshot.
type Capture func(ctx context.Context, req bridge.CaptureRequest) (*bridge.Capture, error)

// Drawn is the display's own record of where the screen was drawn (X11:
// DAMAGE on the display gate's connection). With it the staleness gate
// passes a target that no drawing reached since the helper's reference
// was read without asking the helper; anywhere else, and wherever the
// record is unsure, the helper compares the pixels as before.
type Drawn interface {
	// Mark is taken before a read of the reference; ok false when the
	// display cannot vouch for a read yet.
	Mark() (mark uint64, ok bool)
	// Commit says the read that took mark is the helper's reference now;
	// Abort says it failed.
	Commit(mark uint64)
	Abort(mark uint64)
	// Undrawn reports whether no drawing reached any of rects since the
	// reference was read, as of a display check that began at or after
	// since (the zero time: any check).
	Undrawn(rects []geometry.Rect, since time.Time) bool
	// DrawnRects makes a round trip to the display and lists where
	// drawing reached since the reference was read; ok false when the
	// display cannot say.
	DrawnRects(ctx context.Context) (rects []geometry.Rect, ok bool)
}
