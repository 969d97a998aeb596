//go:build unix

package desktoptest

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// idVar is the environment variable that marks every process a desktop
// starts, directly or through its children, so teardown can find strays.
const idVar = "DESKHAND_DESKTOP_ID"

// stopTimeout is how long a process group gets between SIGTERM and SIGKILL.
const stopTimeout = 3 * time.Second

// proc is one child process running in its own process group.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string // path of the file holding its stdout and stderr
	done chan struct{}
	err  error // Wait's result, valid after done is closed
}

// startProc starts cmd in its own process group with stdout and stderr
// appended to logPath. The kernel sends it deathSig when the thread that
// started it dies, which in practice means when the test binary dies
// without running its cleanups (a timeout panic, SIGKILL).
func startProc(name string, cmd *exec.Cmd, logPath string, deathSig syscall.Signal) (*proc, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("creating log for %s: %w", name, err)
	}
	defer logFile.Close()
	if cmd.Stdout == nil {
		cmd.Stdout = logFile
	}
	if cmd.Stderr == nil {
		cmd.Stderr = logFile
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSig(cmd.SysProcAttr, deathSig)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) pid() int { return p.cmd.Process.Pid }

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// logTail returns the last part of the process's log, for error messages.
func (p *proc) logTail() string {
	b, err := os.ReadFile(p.log)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	const max = 2000
	if len(b) > max {
		b = append([]byte("..."), b[len(b)-max:]...)
	}
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return "(empty log)"
	}
	return string(b)
}

// stop ends the process group: SIGTERM, then SIGKILL after timeout. The
// group is signalled even after the leader exited, since members it forked
// may remain. It reports an error only if the leader survives SIGKILL.
func (p *proc) stop(timeout time.Duration) error {
	pgid := p.pid()
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(timeout):
	}
	if groupAlive(pgid) {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("%s (pid %d) still running after SIGKILL", p.name, pgid)
	}
}

// groupAlive reports whether any process is in process group pgid.
func groupAlive(pgid int) bool {
	err := syscall.Kill(-pgid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// TaggedProcesses returns the pids of live (non-zombie) processes whose
// environment carries DESKHAND_DESKTOP_ID=id, excluding the calling process.
// Reading another process's environment needs the same user or root; other
// processes are silently skipped.
func TaggedProcesses(id string) []int {
	want := []byte(idVar + "=" + id)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || len(env) == 0 {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				if !isZombie(pid) {
					pids = append(pids, pid)
				}
				break
			}
		}
	}
	return pids
}

func isZombie(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // gone
	}
	// The state follows the parenthesised command name, which may itself
	// contain spaces or parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return false
	}
	return b[i+2] == 'Z' || b[i+2] == 'X'
}

// sweep terminates every process still carrying the desktop id: SIGTERM,
// then SIGKILL for those that remain after timeout.
func sweep(id string, timeout time.Duration) error {
	pids := TaggedProcesses(id)
	if len(pids) == 0 {
		return nil
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if len(TaggedProcesses(id)) == 0 {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	for _, pid := range TaggedProcesses(id) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	deadline = time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if len(TaggedProcesses(id)) == 0 {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("processes %v of desktop %s survive SIGKILL", TaggedProcesses(id), id)
}
