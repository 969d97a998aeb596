//go:build !unix

package lock

import (
	"errors"
	"time"
)

func guard(path string) (func(), error) {
	return nil, errors.New("the computer-use lock needs a Unix system")
}

// Guard needs a Unix system.
func Guard(path string, wait time.Duration, what, hint string) (func(), error) {
	return nil, errors.New(what + " needs a Unix system")
}

func pidExists(pid int) bool { return pid > 0 }
