//go:build unix

package lock

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// guardWait bounds the wait for the guard: holders keep it for a few
// file operations only.
const guardWait = 5 * time.Second

// guard takes an exclusive flock on path (creating it) and returns the
// function that lets it go. The guard file stays: removing it would let
// two processes lock two different files of the same name.
func guard(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening the computer-use lock guard: %w", err)
	}
	deadline := time.Now().Add(guardWait)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("locking the computer-use lock guard %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("locking the computer-use lock guard %s: another process has held it for over %s; if no deskhand is stuck, remove the file", path, guardWait)
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
