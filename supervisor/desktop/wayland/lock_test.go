//go:build unix

package wayland_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/deskhand/deskhand/supervisor/desktop/wayland"
	"github.com/deskhand/deskhand/supervisor/lock"
)

// TestLockBesideSocket: deskhands that reach one compositor socket by
// different ways (their own XDG_RUNTIME_DIR through a symbolic link, or
// WAYLAND_DISPLAY as a path) find one lock file, beside the socket.
func TestLockBesideSocket(t *testing.T) {
	run := t.TempDir()
	if err := os.WriteFile(filepath.Join(run, "wayland-1"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "run")
	if err := os.Symlink(run, link); err != nil {
		t.Fatal(err)
	}
	real, err := filepath.EvalSymlinks(run)
	if err != nil {
		t.Fatal(err)
	}
	want := lock.Path(filepath.Join(real, "deskhand"), "wayland-1")
	for _, c := range []struct {
		env     []string
		display string
	}{
		{[]string{"XDG_RUNTIME_DIR=" + run}, "wayland-1"},
		{[]string{"XDG_RUNTIME_DIR=" + link}, "wayland-1"},
		{[]string{"XDG_RUNTIME_DIR=/elsewhere"}, filepath.Join(link, "wayland-1")},
	} {
		if got := wayland.Lock(c.env, c.display, lock.Options{}).Path(); got != want {
			t.Errorf("Lock(%q, %q).Path() = %q, want %q", c.env, c.display, got, want)
		}
	}
}
