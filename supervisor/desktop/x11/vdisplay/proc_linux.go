//go:build unix

package vdisplay

import (
	"os/exec"
	"syscall"
)

// setProcAttr puts the child in its own process group, so Close can stop
// it with everything it forked, and has the kernel send it SIGTERM if
// deskhand dies without closing it.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
