package bridge

import (
	"os"
	"os/exec"
	"syscall"
)

// sysProcAttr gives the helper a process group of its own and no console
// window: Windows has no signals for a group, so stopping the helper
// closes its stdin first and then terminates it (killGroup).
func sysProcAttr() *syscall.SysProcAttr {
	const createNoWindow = 0x08000000 // CREATE_NO_WINDOW
	return &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP | createNoWindow}
}

// waitExit reaps cmd's process, then calls exited.
func waitExit(cmd *exec.Cmd, exited func()) error {
	err := cmd.Wait()
	exited()
	return err
}

// killGroup terminates the helper: Windows delivers no SIGTERM, so every
// signal ends it at once (the polite step is closing its stdin).
func killGroup(pid int, _ syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
		p.Release()
	}
}
