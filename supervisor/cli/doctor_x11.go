//go:build unix && !darwin

package cli

import (
	"context"
	"fmt"
	"os"
	"os/user"

	"github.com/deskhand/deskhand/supervisor/desktop/x11"
	"github.com/deskhand/deskhand/supervisor/desktop/x11/vdisplay"
	"github.com/deskhand/deskhand/supervisor/lock"
)

// displayChecks reports the display serve would work on, with the probe
// the display gate uses (x11.ProbeDisplay), so doctor and the gate never
// disagree. virtualDisplay is serve's --virtual-display default
// ($DESKHAND_VIRTUAL_DISPLAY, else auto): with DISPLAY unset, serve starts
// its own private desktop, and doctor checks that it can instead of
// failing.
func displayChecks(ctx context.Context, display, virtualDisplay string) ([]check, displayState) {
	if c, state, ok := waylandDisplayCheck(virtualDisplay); ok {
		return []check{c}, state
	}
	plan, err := x11.PlanDisplay(virtualDisplay, display)
	if err != nil {
		c := check{status: "FAIL", name: "display", detail: err.Error(),
			fix: "run deskhand inside an X11 session, or let it start its own desktop: unset DESKHAND_VIRTUAL_DISPLAY (or set it to auto)"}
		if os.Getenv("WAYLAND_DISPLAY") != "" || os.Getenv("XDG_SESSION_TYPE") == "wayland" {
			c.detail = "this is a Wayland session without XWayland's DISPLAY, and --virtual-display is off; deskhand drives X11 only for now"
		}
		return []check{c}, displayDown
	}
	if plan.Virtual && display == "" {
		what := fmt.Sprintf("DISPLAY is not set, so `deskhand serve` starts its own private %dx%d desktop (Xvfb and openbox) for each session and stops it on exit", plan.Width, plan.Height)
		if err := vdisplay.CheckTools(""); err != nil {
			return []check{{status: "FAIL", name: "display", detail: what + ", but " + err.Error(),
				fix: "install it (`deskhand` needs Xvfb and openbox for a private desktop), or run deskhand inside an X11 session"}}, displayOwn
		}
		return []check{{status: "ok", name: "display", detail: what + "; to use your own screen, run deskhand inside your X11 session"}}, displayOwn
	}
	if plan.Virtual {
		// An explicit --virtual-display size: the user's display is left
		// alone, but it is what doctor can probe.
		if err := vdisplay.CheckTools(""); err != nil {
			return []check{{status: "FAIL", name: "display", detail: "DESKHAND_VIRTUAL_DISPLAY asks for a private desktop, but " + err.Error(), fix: "install it"}}, displayOwn
		}
	}
	p, conn, err := x11.ProbeDisplay(ctx, display)
	if err != nil {
		return []check{{status: "FAIL", name: "display", detail: err.Error(),
			fix: fmt.Sprintf("check that the X server for %s runs and is not stopped (`xset -q` should answer at once) and that this user may connect (`xhost +si:localuser:%s` grants access)", display, userName())}}, displayDown
	}
	conn.Close()
	out := []check{{status: "ok", name: "display", detail: fmt.Sprintf("X11 at %s, %dx%d, server %q", display, p.Width, p.Height, p.Vendor)}}
	// The gate's own verdict: what doctor calls broken is exactly what
	// every action would be refused for.
	if err := p.Usable(); err != nil {
		fix := "use an X server with the XTEST extension (Xorg and Xvfb enable it by default; check `xdpyinfo -ext XTEST`)"
		if p.Extensions["XWAYLAND"] {
			fix = "log in to an X11 (Xorg) session, or unset DISPLAY so that deskhand starts its own private desktop"
		}
		out[0] = check{status: "FAIL", name: "display", detail: err.Error(), fix: fix}
	}
	for _, ext := range []struct {
		name, why, fix string
		needed         bool
	}{
		{"XTEST", "synthesises mouse and keyboard input", "use an X server with the XTEST extension (Xorg and Xvfb enable it by default; check `xdpyinfo -ext XTEST`)", true},
		{"MIT-SHM", "fast screen capture (without it captures fall back to the slower GetImage)", "run deskhand on the same machine as the X server, and do not start it with -extension MIT-SHM", false},
		{"RANDR", "lists monitors (without it the whole screen is one display)", "use an X server with RandR 1.5 (any current Xorg or Xvfb)", false},
	} {
		switch {
		case p.Extensions[ext.name]:
			out = append(out, check{status: "ok", name: ext.name, detail: "present: " + ext.why})
		case ext.needed:
			out = append(out, check{status: "FAIL", name: ext.name, detail: "missing: deskhand needs it, it " + ext.why, fix: ext.fix})
		default:
			out = append(out, check{status: "warn", name: ext.name, detail: "missing: " + ext.why, fix: ext.fix})
		}
	}
	return out, displayReached
}

// userName is the user doctor runs as, for the commands its fixes name.
func userName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if name := os.Getenv("USER"); name != "" {
		return name
	}
	return "$(id -un)"
}

// displayLock is the computer-use lock of X display display, as serve
// takes it (x11.Lock).
func displayLock(display string, opts lock.Options) *lock.Lock { return x11.Lock(display, opts) }

// desktopName names the desktop doctor checks: DISPLAY.
func desktopName() string { return os.Getenv("DISPLAY") }
