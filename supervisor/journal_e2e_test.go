//go:build unix

package supervisor_test

// End-to-end tests of the turn journal: a deskhand killed with SIGKILL in
// the middle of a turn, with an unapproved xterm minimised by the hide
// gate and the user's clipboard, PRIMARY and cut buffer stashed and
// cleared by the clipboard guard (the session has no clipboardRead), is
// repaired by the next deskhand on the display before it serves, and by
// `deskhand doctor --repair`; a live deskhand's journal is left alone.
// The evidence is the window's WM_STATE and map state (xprop, xwininfo)
// and xclip's view of the three selections.
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run Journal -v

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// journals lists the turn journal files in state.
func journals(t *testing.T, state string) []string {
	t.Helper()
	got, err := filepath.Glob(filepath.Join(state, "turn-*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// midTurn makes e's turn hide the unapproved window and stash the user's
// selections, and checks both happened and were journalled.
func midTurn(t *testing.T, e *e2e, app, unapproved *desktoptest.Window, state string) {
	t.Helper()
	d := e.d
	e.screenshot("screenshot", nil)
	waitFor(t, "the hide gate to minimise the unapproved xterm", 10*time.Second, func() bool { return d.WindowInfo(t, unapproved.ID).Minimized() })
	x, y := center(app, 0, -20)
	e.ok("left_click", map[string]any{"coordinate": e.at(x, y)})
	wantSelections(t, d, "during a turn without clipboardRead", "", "")
	files := journals(t, state)
	if len(files) != 1 {
		// Not fatal: what a restart gives back is the evidence.
		t.Errorf("turn journals in the state directory during the turn: %v, want one", files)
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Errorf("the turn journal %s has mode %04o, want 0600: it holds the user's clipboard", f, perm)
		}
	}
}

// kill ends e's server with SIGKILL, so that no cleanup runs, and checks
// that it left the window hidden and the selections without the user's
// text.
func kill(t *testing.T, e *e2e, unapproved *desktoptest.Window) {
	t.Helper()
	pid := e.cmd.Process.Pid
	if err := e.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the server to die", 10*time.Second, func() bool { return syscall.Kill(pid, 0) != nil || isZombie(pid) })
	if !e.d.WindowInfo(t, unapproved.ID).Minimized() {
		t.Fatalf("the xterm is not minimised after the SIGKILL: nothing to repair, the test proves nothing")
	}
	if got := selection(t, e.d, "clipboard"); got == userClipboard {
		t.Fatalf("the clipboard holds the user's text after the SIGKILL: nothing to repair, the test proves nothing")
	}
}

// waitShown waits until w is no longer minimised and is mapped again.
func waitShown(t *testing.T, d *desktoptest.Desktop, w *desktoptest.Window, when string) {
	t.Helper()
	deadline := time.Now().Add(turnEnd)
	for {
		info := d.WindowInfo(t, w.ID)
		if !info.Minimized() && info.Viewable {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not show the hidden xterm again within %s: WM_STATE %q, _NET_WM_STATE %v, viewable %v", when, turnEnd, info.State, info.NetState, info.Viewable)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// doctor runs `deskhand doctor` with args on d and returns its output.
func doctor(t *testing.T, d *desktoptest.Desktop, args ...string) string {
	t.Helper()
	cmd := exec.Command(deskhandBinary(t), append([]string{"doctor"}, args...)...)
	cmd.Env = append(d.AppEnv(), "DESKHAND_HELPER="+desktoptest.HelperPath(t))
	out, err := cmd.CombinedOutput()
	t.Logf("deskhand doctor %v (%v):\n%s", args, err, out)
	return string(out)
}

// TestJournalRestart: SIGKILL mid-turn leaves the xterm minimised and the
// selections cleared; a deskhand started on the display while the first
// still runs leaves its journal alone (putting the clipboard back would
// hand it to the first one's turn); after the SIGKILL, the next deskhand
// gives both back before it serves, and removes the journal.
func TestJournalRestart(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	app := d.StartGTK(t, "approved")
	d.Move(t, app.ID, 100, 100, 0, 0)
	other := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"-geometry", "40x10+900+500"}, Class: "XTerm"})
	d.Focus(t, app.ID)
	app = d.WindowInfo(t, app.ID)
	userSelections(t, d)
	state := t.TempDir()

	first := gatedServer(t, d, nil, "--allow", "zenity", "--state-dir", state, "--idle-timeout", "0")
	first.access([]string{"zenity"})
	midTurn(t, first, app, other, state)

	// A second deskhand on the display, with the same state directory,
	// while the first is alive and in its turn. Its own runtime directory
	// gives it a lock of its own, so that only the journal's record of a
	// live writer keeps it off the first one's record.
	second := gatedServer(t, d, []string{"XDG_RUNTIME_DIR=" + t.TempDir()}, "--allow", "zenity", "--state-dir", state, "--idle-timeout", "0")
	// Connecting returns once it serves: any repair it would do is done.
	if !d.WindowInfo(t, other.ID).Minimized() {
		t.Errorf("a second deskhand showed the window the live first one hid")
	}
	wantSelections(t, d, "with a second deskhand started during the first one's turn", "", "")
	if out := doctor(t, d, "--state-dir", state); !strings.Contains(out, "is in a turn with 1 hidden window and the stashed clipboard, PRIMARY and cut buffer text") {
		t.Errorf("doctor does not report the live deskhand's turn journal")
	}
	second.cs.Close()

	kill(t, first, other)
	if out := doctor(t, d, "--state-dir", state); !strings.Contains(out, "which is gone, left 1 hidden window and the stashed clipboard, PRIMARY and cut buffer text") || !strings.Contains(out, "deskhand doctor --repair") {
		t.Errorf("doctor does not report the journal the killed deskhand left")
	}

	third := gatedServer(t, d, nil, "--allow", "zenity", "--state-dir", state, "--idle-timeout", "0")
	waitShown(t, d, other, "a restarted deskhand")
	waitUserSelections(t, d, "a restarted deskhand")
	waitFor(t, "the repaired journal to go", 10*time.Second, func() bool { return len(journals(t, state)) == 0 })
	// It serves as usual afterwards.
	third.access([]string{"zenity"})
	third.ok("cursor_position", nil)
}

// TestJournalDoctorRepair: what a deskhand killed mid-turn left is given
// back by `deskhand doctor --repair`, without a server.
func TestJournalDoctorRepair(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	app := d.StartGTK(t, "approved")
	d.Move(t, app.ID, 100, 100, 0, 0)
	other := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"-geometry", "40x10+900+500"}, Class: "XTerm"})
	d.Focus(t, app.ID)
	app = d.WindowInfo(t, app.ID)
	userSelections(t, d)
	state := t.TempDir()

	e := gatedServer(t, d, nil, "--allow", "zenity", "--state-dir", state, "--idle-timeout", "0")
	e.access([]string{"zenity"})
	midTurn(t, e, app, other, state)
	kill(t, e, other)

	out := doctor(t, d, "--state-dir", state, "--repair")
	if !strings.Contains(out, "repair: gave back what deskhand pid") {
		t.Errorf("doctor --repair does not say what it gave back")
	}
	waitShown(t, d, other, "doctor --repair")
	waitUserSelections(t, d, "doctor --repair")
	if files := journals(t, state); len(files) != 0 {
		t.Errorf("journals left after doctor --repair: %v", files)
	}
	if out := doctor(t, d, "--state-dir", state, "--repair"); !strings.Contains(out, "nothing to give back") {
		t.Errorf("a second doctor --repair does not say there is nothing left")
	}
}

// TestJournalRepairAtTurn: a deskhand that starts while another one is
// in its turn cannot repair yet (the display is the other's); once that
// one is killed, this one's first turn gives its windows and clipboard
// back before it acts.
func TestJournalRepairAtTurn(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	app := d.StartGTK(t, "approved")
	d.Move(t, app.ID, 100, 100, 0, 0)
	other := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"-geometry", "40x10+900+500"}, Class: "XTerm"})
	d.Focus(t, app.ID)
	app = d.WindowInfo(t, app.ID)
	userSelections(t, d)
	state := t.TempDir()

	first := gatedServer(t, d, nil, "--allow", "zenity", "--state-dir", state, "--idle-timeout", "0")
	first.access([]string{"zenity"})
	midTurn(t, first, app, other, state)
	// The xterm at the full tier and both clipboard grants: this
	// server's own turn hides and stashes nothing.
	second := gatedServer(t, d, nil, "--allow", "zenity", "--allow", "xterm=full", "--grant", "clipboardRead,clipboardWrite",
		"--state-dir", state, "--idle-timeout", "0")
	second.access([]string{"zenity", "xterm"}, "clipboardRead", "clipboardWrite")
	if !d.WindowInfo(t, other.ID).Minimized() {
		t.Errorf("a deskhand started during another one's turn showed the window that one hid")
	}
	wantSelections(t, d, "with a second deskhand started during the first one's turn", "", "")
	second.bad("cursor_position", nil, "cu_lock_held")

	kill(t, first, other)
	second.ok("cursor_position", nil)
	waitShown(t, d, other, "the first turn of the deskhand that outlived the killed one")
	waitUserSelections(t, d, "the first turn of the deskhand that outlived the killed one")
	waitFor(t, "the repaired journal to go", 10*time.Second, func() bool {
		for _, f := range journals(t, state) {
			if !strings.HasSuffix(f, "-"+strconv.Itoa(second.cmd.Process.Pid)+".json") {
				return false
			}
		}
		return true
	})
}
