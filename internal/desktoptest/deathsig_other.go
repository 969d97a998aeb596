//go:build unix && !linux

package desktoptest

import "syscall"

// setDeathSig does nothing where the kernel has no parent-death signal
// (macOS), so a test binary killed before its cleanups run can leave
// its desktop's processes behind there. The desktops need Xvfb, which
// only the Linux CI runs; this keeps the package, and the tests that
// import it, compiling elsewhere.
func setDeathSig(*syscall.SysProcAttr, syscall.Signal) {}
