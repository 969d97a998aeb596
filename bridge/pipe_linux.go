package bridge

import (
	"os"
	"strconv"
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

// PollPipe returns a reader of the pipe f reads from (a server's stdin)
// whose reads wait in the Go runtime's network poller instead of blocking
// a thread in read(2). A process gets its stdin blocking, and a blocking
// read costs each request a hand-off between threads: the thread that
// reads the line wakes the goroutine that handles it, then blocks in the
// next read, and that goroutine waits until the scheduler takes the
// reading thread's processor back (tens of microseconds). A pollable
// reader parks instead, and the handler runs on the same thread at once.
//
// It opens the pipe again through /proc, which makes a file description
// of its own: setting O_NONBLOCK on f's would change it for every process
// that shares f (a shell's terminal, a wrapper's pipe). Anything that is
// not a pipe, or that cannot be reopened, is returned as it is; so is f
// when the reopened file is not the same pipe.
func PollPipe(f *os.File) *os.File {
	info, err := f.Stat()
	if err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		return f
	}
	conn, err := f.SyscallConn()
	if err != nil {
		return f
	}
	var fd int
	var openErr error
	if err := conn.Control(func(ffd uintptr) {
		fd, openErr = syscall.Open("/proc/self/fd/"+strconv.Itoa(int(ffd)), syscall.O_RDONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	}); err != nil || openErr != nil {
		return f
	}
	polled := os.NewFile(uintptr(fd), f.Name())
	if same, err := polled.Stat(); err != nil || !os.SameFile(info, same) {
		polled.Close()
		return f
	}
	return polled
}
