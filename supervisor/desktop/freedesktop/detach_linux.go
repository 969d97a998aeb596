package freedesktop

import (
	"os/exec"
	"syscall"
)

// detach starts the application in a session of its own, so that it
// outlives deskhand and no signal meant for deskhand (a Ctrl-C in its
// terminal, the client stopping it) reaches it.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// ownSession starts the process in a session of its own.
func ownSession(cmd *exec.Cmd) { detach(cmd) }
