//go:build !linux

package bridge

import "os"

// PipeBytes is the buffer GrowPipe would ask for on Linux.
const PipeBytes = 1 << 20

// GrowPipe does nothing here: only Linux lets a pipe's buffer be sized.
func GrowPipe(*os.File) {}

// PollPipe returns f: only Linux can reopen a pipe through /proc.
func PollPipe(f *os.File) *os.File { return f }
