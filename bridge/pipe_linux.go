package bridge

import (
	"os"
	"syscall"
)

// PipeBytes is the buffer GrowPipe asks for: a screenshot's frame (about
// 300 KB of base64) fits whole, so its writer hands it over in one write
// instead of waking its reader once per 64 KiB (a pipe's default) or
// 208 KiB (a Unix socket's), and waiting for it in between.
const PipeBytes = 1 << 20

// fSetPipeSz is F_SETPIPE_SZ, which package syscall leaves out.
const fSetPipeSz = 1031

// GrowPipe enlarges the buffer that f, the writing end of a pipe or a
// Unix socket (Node.js runs a child's stdio over socket pairs), writes
// into. It is an optimisation only: a buffer the kernel will not grow (over
// /proc/sys/fs/pipe-max-size or net.core.wmem_max) keeps its size or gets
// the most allowed, and anything else is left alone.
func GrowPipe(f *os.File) {
	info, err := f.Stat()
	if err != nil {
		return
	}
	mode := info.Mode()
	if mode&(os.ModeNamedPipe|os.ModeSocket) == 0 {
		return
	}
	conn, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = conn.Control(func(fd uintptr) {
		if mode&os.ModeNamedPipe != 0 {
			_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSz, PipeBytes)
			return
		}
		_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_SNDBUF, PipeBytes)
	})
}
