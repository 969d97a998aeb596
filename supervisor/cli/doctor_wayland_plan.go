//go:build unix && !darwin

package cli

import (
	"fmt"
	"os"

	"github.com/deskhand/deskhand/supervisor/desktop/sway"
	"github.com/deskhand/deskhand/supervisor/desktop/wayland"
)

// waylandDisplayCheck reports, when serve would work on a Wayland desktop
// (the user's native session, or its own private headless sway), the
// display line serve's own plan gives (wayland.PlanDisplay), so doctor
// and serve agree; ok is false when serve would use X11, which
// displayChecks reports.
func waylandDisplayCheck(virtualDisplay string) (c check, state displayState, ok bool) {
	plan, err := wayland.PlanDisplay(virtualDisplay, os.Environ(), sway.CheckTools)
	switch {
	case err != nil:
		return check{status: "FAIL", name: "display", detail: err.Error(),
			fix: "run deskhand as your own user with sway installed (Debian/Ubuntu: apt-get install sway), or set DESKHAND_VIRTUAL_DISPLAY to xvfb:1920x1080 for a private X11 desktop"}, displayDown, true
	case plan.Sway:
		return check{status: "ok", name: "display", detail: fmt.Sprintf("`deskhand serve` starts its own private headless sway (%dx%d, its own XDG_RUNTIME_DIR, WAYLAND_DISPLAY and session bus) for each session and stops it, with its apps, on exit; the user's session is not touched", plan.Width, plan.Height)}, displayOwn, true
	case plan.Session != "":
		return check{status: "ok", name: "display", detail: "native Wayland session " + plan.Session + ": `deskhand serve` works on it (see the wayland lines for what this compositor supports); --virtual-display WIDTHxHEIGHT starts a private headless sway instead"}, displayOwn, true
	}
	if plan.Note != "" {
		return check{status: "warn", name: "display", detail: "--virtual-display starts " + plan.Note}, displayOwn, true
	}
	return check{}, 0, false
}
