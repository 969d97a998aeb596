//go:build !unix

package lock

import (
	"os"
	"path/filepath"
)

// Dir is the directory of the lock files (the lock itself needs a Unix
// system; see guard).
func Dir() string { return filepath.Join(os.TempDir(), "deskhand") }

func ensureDir(dir string) error { return os.MkdirAll(dir, 0o700) }

// CheckDir reports why dir cannot hold the lock (never, here).
func CheckDir(dir string) error { return nil }
