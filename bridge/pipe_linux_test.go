package bridge

import (
	"os"
	"syscall"
	"testing"
)

// TestGrowPipe checks that GrowPipe enlarges a pipe's buffer and a Unix
// socket's send buffer, the two kinds of stdout a server gets.
func TestGrowPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	GrowPipe(w)
	size, _, errno := syscall.Syscall(syscall.SYS_FCNTL, w.Fd(), 1032 /* F_GETPIPE_SZ */, 0)
	if errno != 0 {
		t.Fatalf("F_GETPIPE_SZ: %v", errno)
	}
	if size < PipeBytes {
		t.Errorf("after GrowPipe the pipe holds %d bytes, want %d", size, PipeBytes)
	}

	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b := os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
	defer a.Close()
	defer b.Close()
	before, err := syscall.GetsockoptInt(fds[0], syscall.SOL_SOCKET, syscall.SO_SNDBUF)
	if err != nil {
		t.Fatal(err)
	}
	GrowPipe(a)
	after, err := syscall.GetsockoptInt(fds[0], syscall.SOL_SOCKET, syscall.SO_SNDBUF)
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("after GrowPipe the socket's send buffer is %d bytes, was %d; want it grown", after, before)
	}
}
