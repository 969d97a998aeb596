package lock

import (
	"os"
	"syscall"
)

// changeTime is fi's inode change time in nanoseconds, 0 when unknown.
func changeTime(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
