package supervisor

import (
	"context"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/executor"
	"github.com/deskhand/deskhand/supervisor/input"
	"github.com/deskhand/deskhand/supervisor/lock"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// desktopPlatform is what differs between the desktops deskhand drives.
// serve composes one per platform (openPlatform: seam_x11.go on Linux and
// the other Unix systems, package desktop/x11; seam_darwin.go on macOS,
// package desktop/macos; seam_wayland.go for a native wlroots session, package
// desktop/wayland); everything else,
// the MCP layer, the gates, consent, geometry, the turn cleanup and the
// catalog, is shared and names no platform's type (seam_test.go checks).
type desktopPlatform interface {
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
	Launcher(helper *bridge.Client) executor.Launcher
	// WrapExecutor adds what the platform's captures need for a consent
	// session (macOS: only approved apps are composited).
	WrapExecutor(exec mcpserver.Executor, helper *bridge.Client, sess *consent.Session) mcpserver.Executor
	// Close stops what opening the platform started.
	Close()
}
