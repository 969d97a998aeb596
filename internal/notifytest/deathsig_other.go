//go:build unix && !linux

package notifytest

import "syscall"

// setDeathSig does nothing where the kernel has no parent-death signal
// (macOS); there the bus stops only through the test's cleanup.
func setDeathSig(*syscall.SysProcAttr, syscall.Signal) {}
