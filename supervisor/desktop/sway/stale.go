//go:build unix

package sway

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
)

// removeStale removes the runtime directories, under tmp, of this user's
// private sways that died without deskhand closing them (deskhand was
// killed; the kernel then killed sway). A directory is stale when the
// lock of each Wayland socket in it can be taken: libwayland holds it
// for as long as the compositor serves the socket. A directory with no
// socket lock yet may be another deskhand's sway still starting, and is
// left alone.
func removeStale(tmp string, log *slog.Logger) {
	dirs, _ := filepath.Glob(filepath.Join(tmp, "deskhand-sway-*"))
	for _, dir := range dirs {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
			continue
		}
		locks, _ := filepath.Glob(filepath.Join(dir, "wayland-*.lock"))
		if len(locks) == 0 || !allFree(locks) {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			log.Warn("removing a dead private sway's runtime dir", "dir", dir, "err", err)
			continue
		}
		log.Info("removed a dead private sway's runtime dir", "dir", dir)
	}
}

// allFree reports whether no process holds any of the lock files.
func allFree(locks []string) bool {
	for _, l := range locks {
		f, err := os.Open(l)
		if err != nil {
			return false
		}
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		f.Close() // releases the lock too
		if errors.Is(err, syscall.EWOULDBLOCK) || err != nil {
			return false
		}
	}
	return true
}
