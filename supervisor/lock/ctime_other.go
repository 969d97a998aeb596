//go:build !linux

package lock

import "os"

// changeTime is unknown here: sameFile goes by the inode, size, mode and
// modification time.
func changeTime(os.FileInfo) int64 { return 0 }
