//go:build unix

package wayland

import (
	"fmt"
	"strings"

	"github.com/deskhand/deskhand/supervisor/desktop/x11/vdisplay"
)

// Plan is the desktop serve works on, as PlanDisplay chose it from
// --virtual-display and the environment.
type Plan struct {
	// Session is the user's native Wayland session to drive, "" for none.
	Session string
	// Sway: start a private headless sway of Width x Height.
	Sway          bool
	Width, Height int
	// X11 is the --virtual-display value for the X11 plan
	// (x11.PlanDisplay) when neither of the above is chosen.
	X11 string
	// Note says why a private desktop asked for on a Wayland host is an
	// X11 one, "" otherwise.
	Note string
}

// PlanDisplay decides what --virtual-display (flag) means here. The rule:
//
//   - sway:WIDTHxHEIGHT (or sway, 1920x1080) always starts a private
//     headless sway, and is an error where it cannot (sway missing, or
//     deskhand running as root, which sway refuses);
//   - xvfb:WIDTHxHEIGHT (or xvfb) always starts a private Xvfb desktop;
//   - WIDTHxHEIGHT on a native Wayland session (WAYLAND_DISPLAY set,
//     DISPLAY unset) starts a private headless sway when swayUsable says
//     one can run, else a private Xvfb desktop (Note says why), and
//     elsewhere a private Xvfb desktop as it always has;
//   - auto and off on a native Wayland session drive that session;
//     everywhere else they keep their X11 meaning.
//
// swayUsable reports why a private sway cannot start (sway.CheckTools).
func PlanDisplay(flag string, env []string, swayUsable func() error) (Plan, error) {
	v := strings.ToLower(strings.TrimSpace(flag))
	kind, size, _ := strings.Cut(v, ":")
	if kind != "sway" && kind != "xvfb" {
		kind, size = "", v
	} else if size == "" {
		size = "1920x1080"
	}
	session, native := Session(env)
	switch kind {
	case "xvfb":
		return Plan{X11: size}, nil
	case "sway":
		w, h, err := vdisplay.ParseSize(size)
		if err != nil {
			return Plan{}, fmt.Errorf("--virtual-display %s: %w", flag, err)
		}
		if err := swayUsable(); err != nil {
			return Plan{}, fmt.Errorf("--virtual-display %s: %w", flag, err)
		}
		return Plan{Sway: true, Width: w, Height: h}, nil
	}
	switch v {
	case "", "auto", "off", "none", "no", "false":
		if native {
			return Plan{Session: session}, nil
		}
		return Plan{X11: flag}, nil
	}
	w, h, err := vdisplay.ParseSize(size)
	if err != nil || !native {
		// x11.PlanDisplay says what is wrong with a bad value.
		return Plan{X11: flag}, nil
	}
	if err := swayUsable(); err != nil {
		return Plan{X11: flag, Note: "a private Xvfb desktop instead of sway: " + err.Error()}, nil
	}
	return Plan{Sway: true, Width: w, Height: h}, nil
}
