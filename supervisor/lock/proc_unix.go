//go:build unix

package lock

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// guardWait bounds the wait for the lock's guard: holders keep it for a
// few file operations only.
const guardWait = 5 * time.Second

func guard(path string) (func(), error) {
	return Guard(path, guardWait, "the computer-use lock guard", "if no deskhand is stuck, remove the file")
}

// Guard takes an exclusive flock on path (creating it, 0600), waiting up
// to wait for another holder, and returns the function that lets it go.
// what names the guard in errors, and hint says what to do when the wait
// runs out. The file stays: removing it would let two processes lock two
// different files of the same name.
func Guard(path string, wait time.Duration, what, hint string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", what, err)
	}
	deadline := time.Now().Add(wait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("locking %s %s: %w", what, path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("locking %s %s: another process has held it for over %s; %s", what, path, wait, hint)
		}
		time.Sleep(5 * time.Millisecond)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

// pidExists reports whether a process with the pid exists (EPERM: it
// exists but belongs to another user).
func pidExists(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
