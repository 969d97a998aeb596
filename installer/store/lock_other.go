//go:build !unix

package store

import (
	"errors"
	"os"
)

func tryLock(*os.File) (bool, error) {
	return false, errors.New("installing helpers is supported on Unix systems only")
}
