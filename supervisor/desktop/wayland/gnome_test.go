//go:build unix

package wayland

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestIsGNOME(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want bool
	}{
		{[]string{"WAYLAND_DISPLAY=wayland-0", "XDG_CURRENT_DESKTOP=GNOME"}, true},
		{[]string{"WAYLAND_DISPLAY=wayland-0", "XDG_CURRENT_DESKTOP=ubuntu:GNOME"}, true},
		{[]string{"WAYLAND_DISPLAY=wayland-0", "XDG_CURRENT_DESKTOP=sway"}, false},
		{[]string{"WAYLAND_DISPLAY=wayland-0"}, false},
		// XWayland apps are driven through X11 when DISPLAY is set.
		{[]string{"WAYLAND_DISPLAY=wayland-0", "DISPLAY=:0", "XDG_CURRENT_DESKTOP=GNOME"}, false},
		{[]string{"XDG_CURRENT_DESKTOP=GNOME"}, false},
	} {
		if got := IsGNOME(c.env); got != c.want {
			t.Errorf("IsGNOME(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}

func TestGNOMEHelperEnvCarriesTheSessionBus(t *testing.T) {
	env := GNOMEHelperEnv([]string{"WAYLAND_DISPLAY=wayland-0", "XDG_RUNTIME_DIR=/run/user/1000",
		"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus", "XDG_CURRENT_DESKTOP=GNOME", "SWAYSOCK=/x", "HOME=/h"})
	for _, want := range []string{"DESKHAND_HELPER_BACKEND=mutter", "DISPLAY=", "WAYLAND_DISPLAY=wayland-0",
		"XDG_RUNTIME_DIR=/run/user/1000", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus", "XDG_CURRENT_DESKTOP=GNOME"} {
		if !slices.Contains(env, want) {
			t.Errorf("helper env %v lacks %s", env, want)
		}
	}
	if strings.Contains(strings.Join(env, " "), "SWAYSOCK") {
		t.Errorf("helper env %v carries SWAYSOCK", env)
	}
}

func TestExplainGNOMESaysServeRefuses(t *testing.T) {
	s := Support{Backend: GNOMEBackend, Display: "wayland-0", Capabilities: []string{"capture", "input.pointer", "input.keyboard"},
		Missing: []string{"windows: no window list"}}
	lines := s.ExplainGNOME()
	if lines[0].Status != "ok" || !strings.Contains(lines[0].Detail, "screenshots, mouse, keyboard work") {
		t.Errorf("first line %+v, want what works", lines[0])
	}
	var all []string
	for _, l := range lines {
		all = append(all, l.Status+" "+l.Detail)
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{"warn missing: windows: no window list", "it refuses every screenshot and every input action in a GNOME session", "Escape watcher"} {
		if !strings.Contains(text, want) {
			t.Errorf("explanation lacks %q:\n%s", want, text)
		}
	}
	if got := (Support{Backend: "wayland-wlr"}).ExplainGNOME(); got[0].Status != "FAIL" {
		t.Errorf("a wlroots helper in a GNOME session explains as %+v, want FAIL", got)
	}
}

// TestGateGNOMERefusesAlways: no answer from the helper lets an action
// through in a GNOME session, and each refusal gives the reason and what
// to do.
func TestGateGNOMERefusesAlways(t *testing.T) {
	for _, s := range []Support{
		{Backend: GNOMEBackend, Capabilities: []string{"capture", "capture.mask", "windows", "input.pointer", "input.keyboard"}},
		{Backend: GNOMEBackend, DisplayError: "no session bus"},
		{Backend: Backend, Capabilities: []string{"capture", "capture.mask", "windows", "input.pointer", "input.keyboard"}},
	} {
		err := s.GateGNOME()
		if !errors.Is(err, ErrGNOMENoWindows) {
			t.Errorf("GateGNOME(%+v) = %v, want a refusal wrapping ErrGNOMENoWindows", s, err)
			continue
		}
		for _, want := range []string{"no window list", "--virtual-display", "do not try"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("GateGNOME(%+v) = %q, lacks %q", s, err, want)
			}
		}
		if s.DisplayError != "" && !strings.Contains(err.Error(), s.DisplayError) {
			t.Errorf("GateGNOME(%+v) = %q, does not say why the session cannot be reached", s, err)
		}
	}
}
