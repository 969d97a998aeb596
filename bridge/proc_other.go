//go:build unix && !linux

package bridge

import (
	"os/exec"
	"syscall"
)

// sysProcAttr puts the helper in its own process group, so that killing
// the group also kills anything it spawned. (Only Linux can also ask the
// kernel to kill the helper when the supervisor dies; the macOS helper
// watches its parent itself.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitExit reaps cmd's process, then calls exited. Without waitid's
// WNOWAIT the exit is only seen by reaping; the group id stays reserved
// while any member lives, so killing the group afterwards still reaches
// the stragglers.
func waitExit(cmd *exec.Cmd, exited func()) error {
	err := cmd.Wait()
	exited()
	return err
}

// killGroup sends sig to the helper's process group.
func killGroup(pid int, sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }
