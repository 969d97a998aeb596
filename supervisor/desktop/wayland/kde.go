//go:build unix

package wayland

import (
	"fmt"
	"path/filepath"
	"strings"
)

// KDEBackend is the helper backend for KWin: plasma window management,
// KWin's ScreenShot2 D-Bus API and fake input (helpers/PROTOCOL.md, "KDE
// (KWin)").
const KDEBackend = "kde-kwin"

// KDEEntryFile is where a Plasma session reads the desktop entry that
// authorizes the helper, under the user's home.
const KDEEntryFile = "~/.local/share/applications/deskhand-helper.desktop"

// KDE's restricted interfaces, in the desktop entry keys KWin reads: it
// offers them only to a program whose executable (/proc/PID/exe) is the
// Exec= of an entry that lists them.
const (
	KDEWaylandInterfaces = "org_kde_kwin_fake_input,org_kde_kwin_keystate,org_kde_plasma_window_management,zkde_screencast_unstable_v1"
	KDEDBusInterfaces    = "org.kde.KWin.ScreenShot2"
)

// KDEEntry is the desktop entry that authorizes the helper at helperPath
// (made absolute, symlinks resolved, as KWin compares it) on KWin.
func KDEEntry(helperPath string) string {
	if real, err := filepath.EvalSymlinks(helperPath); err == nil {
		helperPath = real
	}
	if abs, err := filepath.Abs(helperPath); err == nil {
		helperPath = abs
	}
	return fmt.Sprintf(`[Desktop Entry]
Type=Application
Name=deskhand helper
Exec=%s
NoDisplay=true
X-KDE-Wayland-Interfaces=%s
X-KDE-DBUS-Restricted-Interfaces=%s
`, helperPath, KDEWaylandInterfaces, KDEDBusInterfaces)
}

// IsKDE reports whether env's native Wayland session is KDE Plasma's
// (XDG_CURRENT_DESKTOP names KDE).
func IsKDE(env []string) bool {
	if _, ok := Session(env); !ok {
		return false
	}
	for _, d := range strings.Split(getenv(env, "XDG_CURRENT_DESKTOP"), ":") {
		if strings.EqualFold(d, "kde") {
			return true
		}
	}
	return false
}

// KDEHelperEnv is what the helper needs to reach a Plasma session: the
// Wayland backend, no DISPLAY, the Wayland display and runtime dir, and
// the session bus (KWin's ScreenShot2).
func KDEHelperEnv(env []string) []string {
	out := []string{"DESKHAND_HELPER_BACKEND=wayland", "DISPLAY="}
	for _, k := range []string{"WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS", "XDG_CURRENT_DESKTOP"} {
		if v := getenv(env, k); v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// kdeNeeded are the capabilities deskhand cannot act without on KWin.
// window_at stands for the stacking order: the gates trust a kde-kwin
// window list to be top first (NoStacking is off there), which only
// plasma window management tells.
var kdeNeeded = []feature{
	{"capture", "screenshots (org.kde.KWin.ScreenShot2)"},
	{"windows", "the window list that decides which app is in front (org_kde_plasma_window_management)"},
	{"capture.mask", "masking unapproved windows (org_kde_plasma_window_management)"},
	{"window_at", "the stacking order that says which window is under a point (org_kde_plasma_window_management)"},
	{"input.pointer", "mouse input (org_kde_kwin_fake_input)"},
	{"input.keyboard", "keyboard input (org_kde_kwin_fake_input)"},
}

// kdeAuthorize is what to do when KWin withholds its restricted
// interfaces.
func kdeAuthorize(helperPath string) string {
	exe := helperPath
	if exe == "" {
		exe = "<the full path of deskhand-helper>"
	}
	return fmt.Sprintf("KWin gives them only to a program a desktop entry authorizes: tell the user to create %s with Exec=%s, X-KDE-Wayland-Interfaces=%s and X-KDE-DBUS-Restricted-Interfaces=%s (`deskhand doctor` prints the file), then log out and in again, or run deskhand with --virtual-display for a private desktop",
		KDEEntryFile, exe, KDEWaylandInterfaces, KDEDBusInterfaces)
}

// GateKDE is the display gate's verdict in a Plasma session: nil when the
// helper is the kde-kwin backend with every capability deskhand needs,
// else a refusal that names what is missing and what to do.
func (s Support) GateKDE(helperPath string) error {
	if s.DisplayError != "" {
		return fmt.Errorf("the KDE Wayland session cannot be reached: %s", s.DisplayError)
	}
	if s.Backend != KDEBackend {
		return fmt.Errorf("the capture helper answers with backend %q, not %q, so it does not read KWin's window list and stacking; install a helper built with KDE support (deskhand install)", s.Backend, KDEBackend)
	}
	if missing := s.lacks(kdeNeeded); len(missing) > 0 {
		return fmt.Errorf("KWin does not give deskhand %s, so it cannot act here safely. %s", strings.Join(missing, ", "), kdeAuthorize(helperPath))
	}
	return nil
}

// ExplainKDE says, for the doctor, what the helper can do in a Plasma
// session, what is missing, and the desktop entry that authorizes it.
func (s Support) ExplainKDE(helperPath string) []Line {
	if err := s.GateKDE(helperPath); err != nil {
		lines := []Line{{Status: "FAIL", Detail: err.Error(),
			Fix: fmt.Sprintf("write %s holding:\n%s", KDEEntryFile, KDEEntry(helperPath))}}
		for _, m := range s.Missing {
			lines = append(lines, Line{Status: "warn", Detail: "missing: " + m})
		}
		return lines
	}
	works := s.offers([]feature{
		{"capture", "screenshots"}, {"windows", "window list with geometry and stacking"}, {"capture.mask", "masking"},
		{"hide", "hiding windows"}, {"window_at", "the window under a point"}, {"clipboard", "clipboard"},
		{"input.pointer", "mouse"}, {"input.keyboard", "keyboard"},
	})
	lines := []Line{{Status: "ok", Detail: fmt.Sprintf("KDE Plasma session %s (helper backend %s, authorized by its desktop entry): %s work",
		s.Display, s.Backend, strings.Join(works, ", "))}}
	for _, m := range s.Missing {
		lines = append(lines, Line{Status: "warn", Detail: "missing: " + m})
	}
	return append(lines, Line{Status: "warn", Detail: ErrNoEscapeWatcher.Error()})
}
