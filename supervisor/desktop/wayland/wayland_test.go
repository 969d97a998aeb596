//go:build unix

package wayland_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/desktop/wayland"
)

func TestSession(t *testing.T) {
	for _, c := range []struct {
		env  []string
		ok   bool
		name string
	}{
		{[]string{"WAYLAND_DISPLAY=wayland-1"}, true, "wayland-1"},
		{[]string{"WAYLAND_DISPLAY=wayland-1", "DISPLAY=:0"}, false, "wayland-1"},
		{[]string{"WAYLAND_DISPLAY=wayland-1", "DISPLAY="}, true, "wayland-1"},
		{[]string{"DISPLAY=:0"}, false, ""},
	} {
		name, ok := wayland.Session(c.env)
		if ok != c.ok || name != c.name {
			t.Errorf("Session(%q) = %q, %v; want %q, %v", c.env, name, ok, c.name, c.ok)
		}
	}
	env := wayland.HelperEnv([]string{"WAYLAND_DISPLAY=w", "XDG_RUNTIME_DIR=/run/u", "DISPLAY=:0", "HOME=/h"})
	want := []string{"DESKHAND_HELPER_BACKEND=wayland", "DISPLAY=", "WAYLAND_DISPLAY=w", "XDG_RUNTIME_DIR=/run/u"}
	if !slices.Equal(env, want) {
		t.Errorf("HelperEnv = %q, want %q", env, want)
	}
}

// TestGateRefusesWhatIsMissing: a compositor without the virtual input or
// toplevel protocols (GNOME, KDE) is refused, naming what it lacks.
func TestGateRefusesWhatIsMissing(t *testing.T) {
	s := wayland.Support{Backend: wayland.Backend, Capabilities: []string{"displays", "capture", "clipboard"}}
	err := s.Gate()
	if err == nil {
		t.Fatal("a compositor without input or a window list passed the gate")
	}
	for _, want := range []string{"zwlr_virtual_pointer_v1", "zwp_virtual_keyboard_v1", "wlr-foreign-toplevel-management", "--virtual-display"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not name %s", err, want)
		}
	}
	if err := (wayland.Support{Backend: "x11"}).Gate(); err == nil || !strings.Contains(err.Error(), "backend") {
		t.Errorf("an X11 helper passed the Wayland gate: %v", err)
	}
	if err := (wayland.Support{DisplayError: "no socket"}).Gate(); err == nil || !strings.Contains(err.Error(), "no socket") {
		t.Errorf("an unreachable display passed the gate: %v", err)
	}
}

// TestProbeOnSway asks the real helper on headless sway what it supports.
func TestProbeOnSway(t *testing.T) {
	desktoptest.Require(t, "sway", "swaymsg")
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	c := bridge.New(bridge.Options{Path: desktoptest.HelperPath(t), Env: append(w.Env(), wayland.HelperEnv(w.Env())...)})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	s, err := wayland.Probe(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Gate(); err != nil {
		t.Fatalf("sway failed the gate: %v (support %+v)", err, s)
	}
	if !s.Extensions.SwayIPC || s.Display != w.Display() {
		t.Errorf("support %+v: want sway IPC and display %s", s, w.Display())
	}
	lines := s.Explain()
	if lines[0].Status != "ok" || !strings.Contains(lines[0].Detail, "keyboard") {
		t.Errorf("first line %+v, want ok listing the keyboard", lines[0])
	}
	var escape, windowAt bool
	for _, l := range lines {
		escape = escape || strings.Contains(l.Detail, "Escape watcher does not work")
		windowAt = windowAt || strings.Contains(l.Detail, "window_at")
	}
	if !escape || !windowAt {
		t.Errorf("the report does not say the Escape watcher and window_at are missing: %+v", lines)
	}
}
