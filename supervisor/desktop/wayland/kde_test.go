//go:build unix

package wayland

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIsKDE(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		want bool
	}{
		{[]string{"WAYLAND_DISPLAY=wayland-0", "XDG_CURRENT_DESKTOP=KDE"}, true},
		{[]string{"WAYLAND_DISPLAY=wayland-0", "XDG_CURRENT_DESKTOP=foo:kde"}, true},
		{[]string{"WAYLAND_DISPLAY=wayland-0", "XDG_CURRENT_DESKTOP=GNOME"}, false},
		// XWayland: deskhand drives the X11 apps there.
		{[]string{"WAYLAND_DISPLAY=wayland-0", "DISPLAY=:0", "XDG_CURRENT_DESKTOP=KDE"}, false},
	} {
		if got := IsKDE(tc.env); got != tc.want {
			t.Errorf("IsKDE(%q) = %v, want %v", tc.env, got, tc.want)
		}
	}
}

func TestGateKDE(t *testing.T) {
	all := []string{"capture", "capture.mask", "windows", "window_at", "input.pointer", "input.keyboard", "clipboard"}
	ok := Support{Backend: KDEBackend, Capabilities: all}
	if err := ok.GateKDE("/opt/deskhand-helper"); err != nil {
		t.Errorf("GateKDE with every capability = %v, want nil", err)
	}
	// Without the entry KWin withholds windows and screenshots: the
	// refusal names what is missing and the file and keys to add.
	bare := Support{Backend: KDEBackend, Capabilities: []string{"clipboard", "displays"}}
	err := bare.GateKDE("/opt/deskhand-helper")
	if err == nil {
		t.Fatal("GateKDE without KWin's restricted interfaces = nil, want a refusal")
	}
	for _, want := range []string{"screenshots", "window list", "stacking order", "mouse input", KDEEntryFile,
		"Exec=/opt/deskhand-helper", "X-KDE-Wayland-Interfaces=" + KDEWaylandInterfaces, "X-KDE-DBUS-Restricted-Interfaces=" + KDEDBusInterfaces} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("GateKDE refusal %q does not say %q", err, want)
		}
	}
	// Only window_at missing (a wlroots-style list with no stacking):
	// still refused, since the gates trust a kde-kwin list's order.
	noStack := Support{Backend: KDEBackend, Capabilities: all[:3]}
	if err := noStack.GateKDE(""); err == nil || !strings.Contains(err.Error(), "stacking order") {
		t.Errorf("GateKDE without window_at = %v, want a refusal naming the stacking order", err)
	}
	wlr := Support{Backend: Backend, Capabilities: all}
	if err := wlr.GateKDE(""); err == nil || !strings.Contains(err.Error(), KDEBackend) {
		t.Errorf("GateKDE of a %s helper = %v, want a refusal naming %s", Backend, err, KDEBackend)
	}
	if err := (Support{Backend: KDEBackend, DisplayError: "no socket"}).GateKDE(""); err == nil || !strings.Contains(err.Error(), "no socket") {
		t.Errorf("GateKDE of an unreachable session = %v, want its error", err)
	}
}

func TestKDEEntryNamesTheRealPath(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "deskhand-helper")
	if err := os.WriteFile(real, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	entry := KDEEntry(link)
	if !strings.Contains(entry, "\nExec="+real+"\n") {
		t.Errorf("KDEEntry(%s) =\n%s\nwant Exec= the resolved %s", link, entry, real)
	}
	for _, want := range []string{"[Desktop Entry]", "X-KDE-Wayland-Interfaces=" + KDEWaylandInterfaces, "X-KDE-DBUS-Restricted-Interfaces=" + KDEDBusInterfaces} {
		if !strings.Contains(entry, want) {
			t.Errorf("KDEEntry lacks %q:\n%s", want, entry)
		}
	}
}
