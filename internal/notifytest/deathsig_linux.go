//go:build unix

package notifytest

import "syscall"

// setDeathSig asks the kernel to send sig to the bus when the thread that
// started it dies, so a killed test binary leaves no dbus-daemon behind.
func setDeathSig(attr *syscall.SysProcAttr, sig syscall.Signal) { attr.Pdeathsig = sig }
