//go:build !unix

package lock

import "errors"

func guard(path string) (func(), error) {
	return nil, errors.New("the computer-use lock needs a Unix system")
}

func pidExists(pid int) bool { return pid > 0 }
