//go:build unix

package sway

import (
	"slices"
	"strings"
	"testing"
)

// TestEnvNamesOnlyThePrivateSession: a client of the private sway sees
// none of the user's session variables, only the private ones.
func TestEnvNamesOnlyThePrivateSession(t *testing.T) {
	user := []string{"HOME=/home/u", "DISPLAY=:0", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus", "WAYLAND_DISPLAY=wayland-1", "WAYLAND_SOCKET=3",
		"XDG_RUNTIME_DIR=/run/user/1000", "SWAYSOCK=/run/user/1000/sway-ipc.sock", "XAUTHORITY=/home/u/.Xauthority", "LANG=C.UTF-8"}
	c := &Compositor{dir: "/tmp/deskhand-sway-1", display: "wayland-1", swaysock: "/tmp/deskhand-sway-1/sway-ipc.1000.7.sock", base: without(user, displayVars)}
	for _, env := range [][]string{c.Env(nil), c.Env(user)} {
		want := []string{"HOME=/home/u", "LANG=C.UTF-8", "WAYLAND_DISPLAY=wayland-1", "XDG_RUNTIME_DIR=/tmp/deskhand-sway-1",
			"SWAYSOCK=/tmp/deskhand-sway-1/sway-ipc.1000.7.sock", "DBUS_SESSION_BUS_ADDRESS=unix:path=/tmp/deskhand-sway-1/bus"}
		if !slices.Equal(env, want) {
			t.Errorf("Env = %q, want %q", env, want)
		}
	}
	if got := c.Display(); !strings.HasPrefix(got, "/tmp/deskhand-sway-1/") {
		t.Errorf("Display() = %q, want the socket's full path", got)
	}
}
