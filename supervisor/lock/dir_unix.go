//go:build unix

package lock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Dir is the directory of the lock files: $XDG_RUNTIME_DIR/deskhand; when
// XDG_RUNTIME_DIR is unset (MCP clients may start servers with a bare
// environment), /run/user/UID/deskhand if /run/user/UID is the user's
// private runtime directory, which is what systemd-logind sets
// XDG_RUNTIME_DIR to, so both kinds of deskhand agree; else
// /tmp/deskhand-UID. /tmp is used literally, not $TMPDIR, for the same
// reason. Dir only names the directory; Acquire creates and checks it.
func Dir() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		return filepath.Join(d, "deskhand")
	}
	uid := os.Getuid()
	run := filepath.Join("/run/user", strconv.Itoa(uid))
	if private(run, uid) == nil {
		return filepath.Join(run, "deskhand")
	}
	return filepath.Join("/tmp", "deskhand-"+strconv.Itoa(uid))
}

// ensureDir creates dir (mode 0700) if it does not exist and checks that
// it is a real directory that belongs to this user and that no one else
// may enter: anyone who could write in it could fake the lock or remove
// it from under its owner.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the computer-use lock directory: %w", err)
	}
	if err := private(dir, os.Getuid()); err != nil {
		return fmt.Errorf("the computer-use lock directory %s %v, so another user could take or fake the lock; deskhand does not use it. "+
			"Remove it (deskhand makes it again), or make it yours with mode 0700, or set XDG_RUNTIME_DIR to your own runtime directory", dir, err)
	}
	return nil
}

// private checks that path is a directory (not a symbolic link) owned by
// uid, closed to group and others.
func private(path string, uid int) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return errors.New("is a symbolic link")
	case !fi.IsDir():
		return errors.New("is not a directory")
	case !ok:
		return errors.New("has no owner information")
	case int(st.Uid) != uid:
		return fmt.Errorf("belongs to uid %d, not to you (uid %d)", st.Uid, uid)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("has mode %04o, open to other users", fi.Mode().Perm())
	}
	return nil
}

// CheckDir reports why dir (see Dir) cannot hold the lock, nil when it is
// private to this user or does not exist yet (Acquire makes it), for
// `deskhand doctor`.
func CheckDir(dir string) error {
	err := private(dir, os.Getuid())
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return fmt.Errorf("the computer-use lock directory %s %v", dir, err)
}
