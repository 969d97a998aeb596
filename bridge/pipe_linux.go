package bridge

import (
	"os"
	"syscall"
)

// PipeBytes is the buffer GrowPipe asks for: a screenshot's frame (about
// 300 KB of base64) fits whole, so its writer hands it over in one write
// instead of waking its reader once per 64 KiB, the default, and waiting
// for it in between.
const PipeBytes = 1 << 20

// fSetPipeSz is F_SETPIPE_SZ, which package syscall leaves out.
const fSetPipeSz = 1031

// GrowPipe enlarges the buffer of f when f is a pipe. It is an
// optimisation only: a pipe the kernel will not grow (over
// /proc/sys/fs/pipe-max-size for an unprivileged user) keeps its size,
// and anything that is not a pipe is left alone.
func GrowPipe(f *os.File) {
	info, err := f.Stat()
	if err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	if conn, err := f.SyscallConn(); err == nil {
		_ = conn.Control(func(fd uintptr) {
			_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, PipeBytes)
		})
	}
}
