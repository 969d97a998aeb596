//go:build !unix

package store

import (
	"errors"
	"os"
)

const (
	oNoFollow  = 0
	oNonBlock  = 0
	oDirectory = 0
)

var errUnsupported = errors.New("installing helpers is supported on Unix systems only")

func tryLock(*os.File) (bool, error)   { return false, errUnsupported }
func tryShared(*os.File) (bool, error) { return false, errUnsupported }
func isLoop(error) bool                { return false }
func owner(os.FileInfo) (int, bool)    { return 0, false }
func links(os.FileInfo) uint64         { return 1 }
