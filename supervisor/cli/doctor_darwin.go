package cli

import (
	"context"
	"os"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor"
	"github.com/deskhand/deskhand/supervisor/desktop/macos"
	"github.com/deskhand/deskhand/supervisor/lock"
)

// displayChecks reports the macOS permissions with the display gate's own
// check (macos.CheckPermissions), through the helper serve would use, and
// Input Monitoring (macos.CheckInputMonitoring), which only the user's
// Escape needs, so its absence is a warning, never a failure.
func displayChecks(ctx context.Context, _, virtualDisplay string) ([]check, displayState) {
	if _, err := macos.Open(ctx, macos.Options{VirtualDisplay: virtualDisplay}); err != nil {
		return []check{{status: "FAIL", name: "display", detail: err.Error(), fix: "unset DESKHAND_VIRTUAL_DISPLAY"}}, displayReached
	}
	loc, err := supervisor.FindHelper(ctx, supervisor.LocateOptions{NoDownload: true})
	if err != nil {
		return []check{{status: "warn", name: "display", detail: "the permissions are checked through the helper, and there is none yet (see below)"}}, displayReached
	}
	defer loc.Release()
	client := bridge.New(bridge.Options{Path: loc.Path, MaxRestarts: 1, ClientName: "deskhand-doctor"})
	defer client.Close()
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	escape := check{status: "ok", name: "escape", detail: "Input Monitoring is granted: the user's Escape stops a turn"}
	if err := macos.CheckInputMonitoring(hctx, client); err != nil {
		escape = check{status: "warn", name: "escape", detail: err.Error(),
			fix: "open System Settings > Privacy & Security > Input Monitoring (" + macos.InputMonitoringPane + "), switch on deskhand's app, and restart it"}
	}
	if err := macos.CheckPermissions(hctx, client); err != nil {
		return []check{{status: "FAIL", name: "display", detail: err.Error(), fix: "open the pane named above, switch deskhand's app on, and restart it"}, escape}, displayReached
	}
	return []check{{status: "ok", name: "display", detail: "the user's screen; Screen Recording and Accessibility are granted"}, escape}, displayReached
}

// displayLock is the computer-use lock of display, a file in the user's
// lock.Dir.
func displayLock(display string, opts lock.Options) *lock.Lock {
	return lock.New(lock.Path(lock.Dir(), display), opts)
}

// desktopName names the desktop doctor checks: DISPLAY, as elsewhere.
func desktopName() string { return os.Getenv("DISPLAY") }
