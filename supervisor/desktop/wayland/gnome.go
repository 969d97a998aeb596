//go:build unix

package wayland

import (
	"errors"
	"fmt"
	"strings"
)

// GNOMEBackend is the helper backend for GNOME: Mutter's ScreenCast and
// RemoteDesktop D-Bus APIs (helpers/PROTOCOL.md, "GNOME (mutter)").
const GNOMEBackend = "gnome-mutter"

// ErrGNOMENoWindows says why serve refuses to act in a GNOME session.
// Every screenshot is masked to the approved apps and every input action
// checks the app under its points and in front, so no tool that touches
// the desktop can be allowed there; the fix is a desktop deskhand can see.
// Nor are the few that would be harmless (wait, cursor_position): they are
// of no use without a screenshot, and one gate refusing every action
// keeps GNOME fail-closed as tools are added.
var ErrGNOMENoWindows = errors.New("GNOME (mutter) gives apps no window list, no window under a point and no clipboard, so deskhand cannot check which app an action would reach, mask unapproved apps in a screenshot or hide them; it refuses every screenshot and every input action in a GNOME session rather than guess")

// gnomeWhatToDo is what a refusal in a GNOME session tells the model.
const gnomeWhatToDo = "Tell the user: restart deskhand with --virtual-display WIDTHxHEIGHT (for example --virtual-display 1920x1080) for a private desktop it can see whole, or run it in an X11 or wlroots (sway) session; do not try to act on this desktop some other way"

// GateGNOME is the display gate's verdict in a GNOME session: always a
// refusal (ErrGNOMENoWindows, then what to do), the session's own trouble
// first when the helper cannot reach it.
func (s Support) GateGNOME() error {
	if s.DisplayError != "" {
		return fmt.Errorf("the GNOME session cannot be reached (%s), and even when it can, %w. %s", s.DisplayError, ErrGNOMENoWindows, gnomeWhatToDo)
	}
	if s.Backend != GNOMEBackend {
		return fmt.Errorf("the capture helper answers with backend %q, not %q, and even with it, %w. %s", s.Backend, GNOMEBackend, ErrGNOMENoWindows, gnomeWhatToDo)
	}
	return fmt.Errorf("%w. %s", ErrGNOMENoWindows, gnomeWhatToDo)
}

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
	works := s.offers([]feature{
		{"capture", "screenshots"}, {"input.pointer", "mouse"}, {"input.keyboard", "keyboard"},
	})
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
