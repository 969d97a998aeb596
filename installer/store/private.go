package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// UnsafeDirError says which directory someone other than this user (and
// root) could change, what is wrong with it and how to fix it. doctor
// prints Problem and Fix; a launch refusal prints the whole Error.
type UnsafeDirError struct {
	Path    string
	Problem string // e.g. "is writable by group or others (mode drwxrwxrwx)"
	Fix     string // a command that fixes it
}

// Detail is the error without its fix: what doctor reports.
func (e *UnsafeDirError) Detail() string {
	return fmt.Sprintf("%s %s: another user could swap the helper deskhand runs, so it is refused", e.Path, e.Problem)
}

func (e *UnsafeDirError) Error() string { return e.Detail() + "; fix: " + e.Fix }

func (e *UnsafeDirError) Unwrap() error { return ErrUnsafeDir }

// CheckPrivate checks that each of dirs, and every directory above them
// (as written and with symbolic links resolved), is owned by this user or
// root and writable by no one else: whoever can write a directory on that
// path can replace what deskhand runs from it. Above dirs a directory
// writable by others is allowed when it is sticky and owned by root (like
// /tmp), since others cannot rename what they do not own in it. A path
// that does not exist yet is judged by its nearest existing parent. The
// error is an *UnsafeDirError.
func CheckPrivate(dirs ...string) error {
	uid := os.Geteuid()
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return err
		}
		chains := []string{abs}
		if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
			chains = append(chains, real)
		}
		for _, p := range chains {
			for leaf := true; ; leaf = false {
				fi, err := os.Stat(p)
				switch {
				case errors.Is(err, fs.ErrNotExist):
				case err != nil:
					return fmt.Errorf("checking the permissions of %s: %w", p, err)
				default:
					if err := checkDir(p, fi, uid, leaf); err != nil {
						return err
					}
				}
				parent := filepath.Dir(p)
				if parent == p {
					break
				}
				p = parent
			}
		}
	}
	return nil
}

func checkDir(p string, fi os.FileInfo, uid int, leaf bool) error {
	if !fi.IsDir() {
		return &UnsafeDirError{Path: p, Problem: "is not a directory", Fix: fmt.Sprintf("move it away: `mv %s %s.bak`", p, p)}
	}
	if o, ok := owner(fi); ok && o != uid && o != 0 {
		return &UnsafeDirError{Path: p, Problem: fmt.Sprintf("is owned by uid %d, not by you (uid %d) or root", o, uid),
			Fix: fmt.Sprintf("`sudo chown %d %s`, or keep deskhand's files elsewhere with XDG_DATA_HOME and XDG_STATE_HOME", uid, p)}
	}
	perm := fi.Mode().Perm()
	if perm&0o022 == 0 {
		return nil
	}
	if o, _ := owner(fi); !leaf && fi.Mode()&os.ModeSticky != 0 && o == 0 {
		return nil
	}
	return &UnsafeDirError{Path: p, Problem: fmt.Sprintf("is writable by group or others (mode %v)", fi.Mode()), Fix: fmt.Sprintf("`chmod go-w %s`", p)}
}
