package wayland

import (
	"fmt"
	"strings"
)

// GNOMEBackend is the helper backend for GNOME: Mutter's ScreenCast and
// RemoteDesktop D-Bus APIs (helpers/PROTOCOL.md, "GNOME (mutter)").
const GNOMEBackend = "gnome-mutter"

// ErrGNOMENoWindows says why serve refuses to act in a GNOME session.
var ErrGNOMENoWindows = fmt.Errorf("GNOME (mutter) gives deskhand no window list, so it cannot tell which app is in front, mask unapproved windows or hide them; serve refuses every action that needs them rather than guess")

// IsGNOME reports whether env's native Wayland session is GNOME's
// (XDG_CURRENT_DESKTOP names GNOME, as "GNOME" or "ubuntu:GNOME").
func IsGNOME(env []string) bool {
	if _, ok := Session(env); !ok {
		return false
	}
	for _, d := range strings.Split(getenv(env, "XDG_CURRENT_DESKTOP"), ":") {
		if strings.EqualFold(d, "gnome") {
			return true
		}
	}
	return false
}

// GNOMEHelperEnv is what the helper needs to reach a GNOME session: its
// backend forced to mutter, no DISPLAY, the Wayland display, the runtime
// dir (PipeWire's socket) and the session bus (Mutter's APIs).
func GNOMEHelperEnv(env []string) []string {
	out := []string{"DESKHAND_HELPER_BACKEND=mutter", "DISPLAY="}
	for _, k := range []string{"WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "XDG_CURRENT_DESKTOP"} {
		if v := getenv(env, k); v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// ExplainGNOME says, for the doctor, what the helper can do in a GNOME
// session and what it cannot, and that serve refuses what needs windows.
func (s Support) ExplainGNOME() []Line {
	if s.DisplayError != "" {
		return []Line{{Status: "FAIL", Detail: "GNOME session " + s.Display + ": " + s.DisplayError,
			Fix: "run deskhand inside the GNOME session (its DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR), with PipeWire running"}}
	}
	if s.Backend != GNOMEBackend {
		return []Line{{Status: "FAIL", Detail: fmt.Sprintf("the capture helper answers with backend %q, not %q", s.Backend, GNOMEBackend),
			Fix: "install a helper built with GNOME support (deskhand install)"}}
	}
	var works []string
	for _, c := range []struct{ capability, what string }{
		{"capture", "screenshots"}, {"input.pointer", "mouse"}, {"input.keyboard", "keyboard"},
	} {
		if s.Has(c.capability) {
			works = append(works, c.what)
		}
	}
	lines := []Line{{Status: "ok", Detail: fmt.Sprintf("GNOME session %s (helper backend %s, Mutter's ScreenCast and RemoteDesktop): %s work",
		s.Display, s.Backend, strings.Join(works, ", "))}}
	for _, m := range s.Missing {
		lines = append(lines, Line{Status: "warn", Detail: "missing: " + m})
	}
	return append(lines,
		Line{Status: "warn", Detail: ErrGNOMENoWindows.Error(),
			Fix: "run deskhand with --virtual-display for a private desktop it can see whole"},
		Line{Status: "warn", Detail: ErrNoEscapeWatcher.Error()})
}
