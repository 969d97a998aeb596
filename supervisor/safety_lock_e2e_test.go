package supervisor_test

// End-to-end tests of "one lock per display, whatever the state
// directory": servers with different --state-dir values, started with
// different spellings of one display, share one lock in the user's
// runtime directory.
//
//	go test ./supervisor -run SafetyLock -v

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/lock"
)

// lockFileOf is the lock file of d's display for servers started with
// d.AppEnv(), whose XDG_RUNTIME_DIR is inside the desktop's directory.
func lockFileOf(d *desktoptest.Desktop) string {
	return lock.Path(filepath.Join(d.Dir(), "runtime", "deskhand"), d.Display())
}

// TestSafetyLockPerDisplay: a second and a third server on the same X
// server, each with its own --state-dir and its own spelling of the
// display (":N", ":N.0", "unix:N"), get cu_lock_held naming the first;
// the lock file is in the runtime directory, not in any state directory;
// once the first server is gone the next one takes the computer.
func TestSafetyLockPerDisplay(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	w := d.StartGTK(t, "app")
	d.Focus(t, w.ID)
	var states []string
	server := func(display string) *e2e {
		state := t.TempDir()
		states = append(states, state)
		e := gatedServer(t, d, []string{"DISPLAY=" + display}, "--allow", "zenity", "--state-dir", state)
		e.access([]string{"zenity"})
		return e
	}
	first := server(d.Display())
	second := server(d.Display() + ".0")
	third := server("unix" + d.Display())

	first.ok("screenshot", nil)
	held := fmt.Sprintf("pid %d", first.cmd.Process.Pid)
	second.bad("screenshot", nil, "cu_lock_held", held)
	third.bad("cursor_position", nil, "cu_lock_held", held)
	owner, err := lock.Read(lockFileOf(d))
	if err != nil || owner == nil || owner.PID != first.cmd.Process.Pid {
		t.Fatalf("lock %s after the first server's screenshot = %+v, %v; want pid %d", lockFileOf(d), owner, err, first.cmd.Process.Pid)
	}
	if fi, err := os.Stat(filepath.Dir(lockFileOf(d))); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("the lock directory: %v, %v; want mode 0700", fi, err)
	}
	for _, state := range states {
		matches, _ := filepath.Glob(filepath.Join(state, "*.lock"))
		if len(matches) > 0 {
			t.Errorf("lock files in the state directory %s: %v", state, matches)
		}
	}
	first.ok("screenshot", nil)

	first.cs.Close()
	waitFor(t, "the first server to release the lock", 20*time.Second, func() bool {
		o, _ := lock.Read(lockFileOf(d))
		return o == nil
	})
	second.ok("screenshot", nil)
	third.bad("screenshot", nil, "cu_lock_held", fmt.Sprintf("pid %d", second.cmd.Process.Pid))
}

// TestSafetyLockDirRefused: a lock directory other users may write to is
// refused with a message that says how to fix it, and nothing acts;
// `deskhand doctor` reports the same.
func TestSafetyLockDirRefused(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	w := d.StartGTK(t, "app")
	d.Focus(t, w.ID)
	runDir := t.TempDir()
	dir := filepath.Join(runDir, "deskhand")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	e := gatedServer(t, d, []string{"XDG_RUNTIME_DIR=" + runDir}, "--allow", "zenity")
	e.access([]string{"zenity"})
	e.bad("screenshot", nil, dir, "mode 0777", "XDG_RUNTIME_DIR")
	if matches, _ := filepath.Glob(filepath.Join(dir, "*.lock")); len(matches) > 0 {
		t.Errorf("a lock was taken in the open directory: %v", matches)
	}
	doctor := exec.Command(deskhandBinary(t), "doctor")
	doctor.Env = append(d.AppEnv(), "XDG_RUNTIME_DIR="+runDir, "DESKHAND_HELPER="+desktoptest.HelperPath(t))
	out, _ := doctor.CombinedOutput()
	if !strings.Contains(string(out), "FAIL  cu lock") || !strings.Contains(string(out), "mode 0777") {
		t.Errorf("deskhand doctor with an open lock directory:\n%s", out)
	}
}
