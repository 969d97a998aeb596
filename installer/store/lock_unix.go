//go:build unix

package store

import (
	"errors"
	"os"
	"syscall"
)

// oNoFollow makes open(2) fail with ELOOP on a symbolic link.
const oNoFollow = syscall.O_NOFOLLOW

// oNonBlock makes open(2) of a FIFO return at once instead of waiting for
// a writer; on a regular file it changes nothing.
const oNonBlock = syscall.O_NONBLOCK

// oDirectory makes open(2) fail with ENOTDIR on anything but a directory.
const oDirectory = syscall.O_DIRECTORY

// tryLock takes an exclusive flock on f without waiting; false means
// another open file description holds it.
func tryLock(f *os.File) (bool, error) { return flockNB(f, syscall.LOCK_EX) }

// tryShared takes a shared flock on f without waiting; false means an
// exclusive one is held.
func tryShared(f *os.File) (bool, error) { return flockNB(f, syscall.LOCK_SH) }

func flockNB(f *os.File, how int) (bool, error) {
	err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return false, nil
	}
	return err == nil, err
}

func isLoop(err error) bool { return errors.Is(err, syscall.ELOOP) }

// owner returns the uid owning fi.
func owner(fi os.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// links returns fi's hard-link count.
func links(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
