//go:build unix

package desktoptest

import "syscall"

// setDeathSig asks the kernel to send sig to the child when the thread
// that started it dies.
func setDeathSig(attr *syscall.SysProcAttr, sig syscall.Signal) { attr.Pdeathsig = sig }
