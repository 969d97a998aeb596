//go:build unix

package record

import "syscall"

// oNoFollow refuses to open the record through a symbolic link.
const oNoFollow = syscall.O_NOFOLLOW
