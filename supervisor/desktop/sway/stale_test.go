//go:build unix

package sway

import (
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRemoveStale: only a directory whose every socket lock is free goes;
// one whose lock is held (a live sway), one with no lock yet (a sway
// starting) and other names stay.
func TestRemoveStale(t *testing.T) {
	tmp := t.TempDir()
	mk := func(name string, lock bool) string {
		dir := filepath.Join(tmp, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if lock {
			if err := os.WriteFile(filepath.Join(dir, "wayland-1.lock"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	dead := mk("deskhand-sway-dead", true)
	live := mk("deskhand-sway-live", true)
	starting := mk("deskhand-sway-starting", false)
	other := mk("other-dead", true)
	f, err := os.Open(filepath.Join(live, "wayland-1.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	removeStale(tmp, slog.New(slog.DiscardHandler))
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead sway's dir is still there (%v)", err)
	}
	for _, d := range []string{live, starting, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s was removed: %v", d, err)
		}
	}
}
