package cli

import (
	"context"

	"github.com/deskhand/deskhand/supervisor/desktop/windows"
	"github.com/deskhand/deskhand/supervisor/lock"
)

// displayChecks reports whether deskhand can reach the user's desktop,
// with the display gate's own check (windows.CheckDisplay), and whether
// the low-level keyboard hook that hears the user's Escape installs.
func displayChecks(ctx context.Context, _, virtualDisplay string) ([]check, displayState) {
	if _, err := windows.Open(ctx, windows.Options{VirtualDisplay: virtualDisplay}); err != nil {
		return []check{{status: "FAIL", name: "display", detail: err.Error(), fix: "unset DESKHAND_VIRTUAL_DISPLAY"}}, displayReached
	}
	if err := windows.CheckDisplay(); err != nil {
		return []check{{status: "FAIL", name: "display", detail: err.Error(), fix: "run deskhand in your own logged-in desktop session, with the screen unlocked"}}, displayDown
	}
	checks := []check{{status: "ok", name: "display", detail: "the desktop of " + windows.SessionName()}}
	if _, stop, err := windows.WatchEscape(func() {}); err != nil {
		checks = append(checks, check{status: "warn", name: "escape", detail: err.Error() + "; the user can still stop deskhand by closing the MCP client"})
	} else {
		stop()
		checks = append(checks, check{status: "ok", name: "escape", detail: "the keyboard hook hears the user's Escape"})
	}
	return checks, displayReached
}

// displayLock is the session's computer-use lock, whatever display names.
func displayLock(_ string, opts lock.Options) *lock.Lock { return windows.Lock(opts) }

// waylandChecks: Windows has no Wayland session.
func waylandChecks(context.Context, string) []check { return nil }

// desktopName names the desktop doctor checks: this session.
func desktopName() string { return windows.SessionName() }
