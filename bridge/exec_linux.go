package bridge

import "os"

// execTarget returns what spawn executes: Path, or, when the caller
// checked an open descriptor (Exe), that descriptor, passed to the child
// as fd 3 and executed as /proc/self/fd/3, so the kernel runs the very
// file that was hashed whatever Path names by now. It is passed rather
// than named by the parent's own number because that one is
// close-on-exec: an interpreter started for a script would find it
// closed. The helper keeps fd 3 open, read-only, on its own executable.
func execTarget(opts *Options) (path string, extra []*os.File, cleanup func(), err error) {
	if opts.Exe == nil {
		return opts.Path, nil, func() {}, nil
	}
	return "/proc/self/fd/3", []*os.File{opts.Exe}, func() {}, nil
}
