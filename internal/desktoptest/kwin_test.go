//go:build unix

package desktoptest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKWinAuthorizesOnlyTheEntry checks the two facts the KWin backend
// stands on: KWin offers its restricted globals to an executable its
// desktop entry names when it runs as the session's user, and to nothing
// else (not to root, who KWin cannot identify, and not to another binary).
func TestKWinAuthorizesOnlyTheEntry(t *testing.T) {
	Require(t, "wayland-info")
	k := StartKWin(t, KWinOptions{Width: 1024, Height: 640, Authorize: []string{"/usr/bin/wayland-info"}})
	restricted := []string{"org_kde_kwin_fake_input", "org_kde_plasma_window_management", "zkde_screencast_unstable_v1"}
	authorized := k.RunAsUser(t, "/usr/bin/wayland-info")
	for _, g := range restricted {
		if !strings.Contains(authorized, "'"+g+"'") {
			t.Errorf("wayland-info run as %s with a desktop entry does not see %s:\n%s", WaylandUser, g, authorized)
		}
	}
	asRoot := k.Run(t, "wayland-info")
	// A copy of the same program at another path is not authorized.
	other := filepath.Join(k.Dir(), "home", "wayland-info")
	b, err := os.ReadFile("/usr/bin/wayland-info")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(other, b, 0o755); err != nil {
		t.Fatal(err)
	}
	copied := k.RunAsUser(t, other)
	for _, g := range restricted {
		if strings.Contains(asRoot, "'"+g+"'") {
			t.Errorf("wayland-info run as root sees %s", g)
		}
		if strings.Contains(copied, "'"+g+"'") {
			t.Errorf("an unlisted copy of wayland-info sees %s", g)
		}
	}
	if !strings.Contains(asRoot, "wl_compositor") || !strings.Contains(asRoot, "zwlr_data_control_manager_v1") {
		t.Errorf("wayland-info run as root lists no ordinary globals:\n%s", asRoot)
	}
	if ws := k.Windows(t); len(ws) != 0 {
		t.Errorf("a fresh KWin lists windows %+v, want none", ws)
	}
	Require(t, "zenity")
	pid := k.StartApp(t, "zenity", "--info", "--title=kwin harness", "--text=hello")
	w := k.WaitWindow(t, pid)
	if w.Caption != "kwin harness" || w.AppID != "zenity" || w.Minimized || !w.Active || w.UUID == "" {
		t.Errorf("KWin lists zenity as %+v, want its title, app_id zenity, shown, active, with its uuid", w)
	}
}
