package freedesktop

import (
	"os/exec"
	"syscall"
)

// detach starts the process in a process group of its own, so that a
// Ctrl-C meant for deskhand does not reach it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// ownSession is detach: Windows has no sessions of this kind.
func ownSession(cmd *exec.Cmd) { detach(cmd) }
