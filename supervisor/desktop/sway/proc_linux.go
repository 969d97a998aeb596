//go:build unix

package sway

import "syscall"

// procAttr puts sway in its own process group, so Close stops what it
// forked too, and has the kernel SIGKILL it if deskhand dies first, since
// nothing else would stop it.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
