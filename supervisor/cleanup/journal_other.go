//go:build !unix

package cleanup

import "io/fs"

func fileOwner(fs.FileInfo) (int, bool) { return 0, false }

// syncDir does nothing: Windows cannot flush a directory (FlushFileBuffers
// refuses a directory handle), and NTFS journals its renames itself.
func syncDir(string) error { return nil }
