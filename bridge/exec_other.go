//go:build !linux

package bridge

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// execTarget returns what spawn executes: Path, or, when the caller
// checked an open descriptor (Exe), a copy of that descriptor's bytes in
// a new directory only this user can enter, since there is no way to
// execute a descriptor here; so a file put at Path after the check never
// runs. cleanup removes the copy once the helper has started.
func execTarget(opts *Options) (path string, extra []*os.File, cleanup func(), err error) {
	if opts.Exe == nil {
		return opts.Path, nil, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "deskhand-helper-")
	if err != nil {
		return "", nil, nil, fmt.Errorf("copying the checked helper: %w", err)
	}
	cleanup = func() { os.RemoveAll(dir) }
	path = filepath.Join(dir, filepath.Base(opts.Path))
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o500)
	if err == nil {
		_, err = io.Copy(out, io.NewSectionReader(opts.Exe, 0, 1<<62))
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		cleanup()
		return "", nil, nil, fmt.Errorf("copying the checked helper: %w", err)
	}
	return path, nil, cleanup, nil
}
