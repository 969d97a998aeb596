//go:build unix

package wayland

import (
	"context"
	"slices"
	"testing"
)

// TestWaylandPlanPicksTheHelperBackend: the user's GNOME session gets the
// gnome-mutter helper and the refusing gate; any other native Wayland
// session the wlroots one.
func TestWaylandPlanPicksTheHelperBackend(t *testing.T) {
	base := []string{"WAYLAND_DISPLAY=wayland-0", "XDG_RUNTIME_DIR=/run/user/1000", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus"}
	for _, c := range []struct {
		desktop, backend string
		gnome            bool
	}{
		{"XDG_CURRENT_DESKTOP=ubuntu:GNOME", "DESKHAND_HELPER_BACKEND=mutter", true},
		{"XDG_CURRENT_DESKTOP=sway", "DESKHAND_HELPER_BACKEND=wayland", false},
	} {
		p, x11Flag, err := Open(context.Background(), Options{VirtualDisplay: "auto", Env: append(slices.Clone(base), c.desktop)})
		if err != nil || p == nil || x11Flag != "" {
			t.Fatalf("%s: Open = %v, %q, %v; want the native session", c.desktop, p, x11Flag, err)
		}
		if p.gnome != c.gnome || !slices.Contains(p.HelperEnv(), c.backend) {
			t.Errorf("%s: gnome %v, helper env %v; want gnome %v and %s", c.desktop, p.gnome, p.HelperEnv(), c.gnome, c.backend)
		}
	}
}
