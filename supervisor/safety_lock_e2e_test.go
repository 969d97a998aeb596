//go:build unix

package supervisor_test

// End-to-end tests of "one lock per display, whatever the environment":
// servers with different --state-dir, XDG_RUNTIME_DIR and HOME, started
// with different spellings of one display, share one lock, kept on the X
// server.
//
//	go test ./supervisor -run SafetyLock -v

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/desktop/x11"
	"github.com/deskhand/deskhand/supervisor/lock"
)

// lockReaders keeps one reader of the X11 lock per display: each holds a
// connection to the X server.
var lockReaders sync.Map

// lockOwner is the holder of d's computer-use lock as the test process
// (yet another environment) reads it off the X server, nil when free.
func lockOwner(t *testing.T, d *desktoptest.Desktop) *lock.Owner {
	t.Helper()
	l, _ := lockReaders.LoadOrStore(d.Display(), x11.Lock(d.Display(), lock.Options{}))
	o, err := l.(*lock.Lock).Holder()
	if err != nil {
		// A connection to an earlier X server of that number: the
		// reader connects again.
		o, err = l.(*lock.Lock).Holder()
	}
	if err != nil {
		t.Fatalf("reading the computer-use lock of %s: %v", d.Display(), err)
	}
	return o
}

// TestSafetyLockAcrossEnvironments: two servers on one display, each with
// its own XDG_RUNTIME_DIR, HOME and --state-dir (as a sandboxed client's
// would be), each asked to tick a row of one zenity checklist. Only the
// holder's click lands: zenity prints one row. Killed with SIGKILL, the
// holder frees the lock for the other without any cleanup of its own.
func TestSafetyLockAcrossEnvironments(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	out := filepath.Join(t.TempDir(), "zenity.out")
	w := d.StartApp(t, desktoptest.App{Name: "sh", Class: "Zenity", Args: []string{"-c",
		`zenity --list --checklist --title picks --column Pick --column Item FALSE one FALSE two FALSE three >"$1"; echo "exit $?" >>"$1"`, "sh", out}})
	d.Focus(t, w.ID)
	w = d.WindowInfo(t, w.ID)
	server := func(args ...string) *e2e {
		root := t.TempDir()
		run := filepath.Join(root, "runtime")
		if err := os.Mkdir(run, 0o700); err != nil {
			t.Fatal(err)
		}
		e := gatedServer(t, d, []string{"XDG_RUNTIME_DIR=" + run, "HOME=" + filepath.Join(root, "home")},
			append([]string{"--allow", "zenity", "--state-dir", filepath.Join(root, "state")}, args...)...)
		e.access([]string{"zenity"})
		return e
	}
	// b looks first (a click needs a screenshot of the caller's), and
	// its turn ends a second later.
	a, b := server(), server("--idle-timeout", "1s")
	b.screenshot("screenshot", nil)
	waitFor(t, "the second server's first turn to end", 20*time.Second, func() bool { return lockOwner(t, d) == nil })
	// The Pick column's box of row i (0-based) under zenity's GTK theme
	// in the test desktop.
	tick := func(e *e2e, row int) (string, bool) {
		t.Helper()
		x, y := w.Client.X+33, w.Client.Y+75+25*row
		res := e.call("left_click", map[string]any{"coordinate": e.at(x, y)})
		return resultText(res), !res.IsError
	}
	a.screenshot("screenshot", nil)
	if msg, ok := tick(a, 0); !ok {
		t.Fatalf("the first server's click: %s", msg)
	}
	if o := lockOwner(t, d); o == nil || o.PID != a.cmd.Process.Pid {
		t.Errorf("lock holder after the first server's click = %+v; want pid %d", o, a.cmd.Process.Pid)
	}
	held := fmt.Sprintf("pid %d", a.cmd.Process.Pid)
	if msg, ok := tick(b, 1); ok || !strings.Contains(msg, "cu_lock_held") || !strings.Contains(msg, held) {
		t.Errorf("the second server's click while the first holds the computer: %s", msg)
	}
	if res := b.call("screenshot", nil); !res.IsError || !strings.Contains(resultText(res), held) {
		t.Errorf("the second server's screenshot while the first holds the computer was not refused: %.200s", resultText(res))
	}

	// SIGKILL: no cleanup runs; the X server frees the selection.
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the killed server's lock to go", 10*time.Second, func() bool { return lockOwner(t, d) == nil })
	b.screenshot("screenshot", nil)
	if msg, ok := tick(b, 2); !ok {
		t.Fatalf("the second server's click once the first is gone: %s", msg)
	}
	if o := lockOwner(t, d); o == nil || o.PID != b.cmd.Process.Pid {
		t.Errorf("lock holder after the second server's click = %+v; want pid %d", o, b.cmd.Process.Pid)
	}

	// zenity's own account of what was ticked, its OK pressed from
	// outside deskhand.
	d.Focus(t, w.ID)
	d.Run(t, "xdotool", "key", "Tab", "Tab", "Return")
	var got string
	waitFor(t, "zenity to print what was ticked", 10*time.Second, func() bool {
		data, _ := os.ReadFile(out)
		got = string(data)
		return strings.Contains(got, "exit ")
	})
	if got != "one|three\nexit 0\n" {
		t.Errorf("zenity printed %q; want %q: only the holder's click, then the second server's after the holder died", got, "one|three\nexit 0\n")
	}
}

// TestSafetyLockPerDisplay: a second and a third server on the same X
// server, each with its own --state-dir and its own spelling of the
// display (":N", ":N.0", "unix:N"), get cu_lock_held naming the first;
// no lock is kept in any state directory; once the first server is gone
// the next one takes the computer.
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
	if owner := lockOwner(t, d); owner == nil || owner.PID != first.cmd.Process.Pid {
		t.Fatalf("lock after the first server's screenshot = %+v; want pid %d", owner, first.cmd.Process.Pid)
	}
	for _, state := range states {
		matches, _ := filepath.Glob(filepath.Join(state, "*.lock"))
		if len(matches) > 0 {
			t.Errorf("lock files in the state directory %s: %v", state, matches)
		}
	}
	first.ok("screenshot", nil)

	first.cs.Close()
	waitFor(t, "the first server to release the lock", 20*time.Second, func() bool { return lockOwner(t, d) == nil })
	second.ok("screenshot", nil)
	third.bad("screenshot", nil, "cu_lock_held", fmt.Sprintf("pid %d", second.cmd.Process.Pid))
}
