package bridge

import (
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
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

// TestPollPipe checks that PollPipe gives a blocking pipe's reader a
// pollable file of its own (one that takes read deadlines, which only
// the runtime's poller serves) reading the same pipe, and leaves the
// original file description blocking.
func TestPollPipe(t *testing.T) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	r, w := os.NewFile(uintptr(fds[0]), "r"), os.NewFile(uintptr(fds[1]), "w")
	defer r.Close()
	defer w.Close()
	if err := r.SetReadDeadline(time.Now()); err == nil {
		t.Fatal("a blocking pipe took a read deadline; the test cannot tell a pollable reader from it")
	}
	polled := PollPipe(r)
	if polled == r {
		t.Fatal("PollPipe(blocking pipe) returned the pipe itself")
	}
	defer polled.Close()
	if err := polled.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatalf("PollPipe(blocking pipe).SetReadDeadline = %v, want nil (a pollable file)", err)
	}
	buf := make([]byte, 16)
	if _, err := polled.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("reading an empty pipe past its deadline = %v, want %v", err, os.ErrDeadlineExceeded)
	}
	if err := polled.SetReadDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("line\n")); err != nil {
		t.Fatal(err)
	}
	if n, err := polled.Read(buf); err != nil || string(buf[:n]) != "line\n" {
		t.Fatalf("reading the polled pipe = %q, %v; want %q", buf[:n], err, "line\n")
	}
	flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fds[0]), syscall.F_GETFL, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	if flags&syscall.O_NONBLOCK != 0 {
		t.Error("PollPipe made the original file description non-blocking")
	}
	w.Close()
	if _, err := polled.Read(buf); !errors.Is(err, io.EOF) {
		t.Errorf("reading the polled pipe after its writer closed = %v, want EOF", err)
	}

	regular, err := os.CreateTemp(t.TempDir(), "regular")
	if err != nil {
		t.Fatal(err)
	}
	defer regular.Close()
	if got := PollPipe(regular); got != regular {
		t.Errorf("PollPipe(regular file) returned another file, want the file itself")
	}
}
