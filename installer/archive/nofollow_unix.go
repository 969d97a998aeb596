//go:build unix

package archive

import "syscall"

const noFollow = syscall.O_NOFOLLOW
