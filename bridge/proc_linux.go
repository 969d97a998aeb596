package bridge

import (
	"os/exec"
	"syscall"
	"unsafe"
)

// sysProcAttr puts the helper in its own process group, so that killing
// the group also kills anything it spawned, and asks the kernel to SIGKILL
// it if the supervisor dies first. Pdeathsig fires when the spawning OS
// thread exits, so spawn starts the helper from a goroutine of its own.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitid(2) constants, which package syscall leaves out.
const (
	pPID    = 1         // P_PID
	wNOWAIT = 0x1000000 // WNOWAIT
)

// waitExit waits for cmd's process to exit, calls exited, then reaps it.
// Until it is reaped the exited leader's pid, and so its process group id,
// cannot be reused, which makes it safe for exited to kill the group.
func waitExit(cmd *exec.Cmd, exited func()) error {
	var siginfo [128]byte // struct siginfo; only the wait matters here
	for {
		_, _, errno := syscall.Syscall6(syscall.SYS_WAITID, pPID, uintptr(cmd.Process.Pid),
			uintptr(unsafe.Pointer(&siginfo[0])), syscall.WEXITED|wNOWAIT, 0, 0)
		if errno != syscall.EINTR {
			break
		}
	}
	exited()
	return cmd.Wait()
}

// killGroup sends sig to the helper's process group.
func killGroup(pid int, sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }
