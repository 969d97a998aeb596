package cleanup

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/supervisor/lock"
)

// onDisk reads the journal file at path, nil when there is none.
func onDisk(t *testing.T, path string) *Record {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("journal %s does not parse: %v\n%s", path, err, data)
	}
	return &rec
}

// TestJournalTurn: a turn's hides and stash are on disk (0600, naming
// this process) before the caller acts, a released stash leaves the
// record, and the turn's end removes the file after giving everything
// back.
func TestJournalTurn(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	r := &recorder{clipboard: "cleared"}
	opts := r.options()
	j := NewJournal(dir, ":7.0")
	opts.Journal = j
	c := New(opts)
	if want := filepath.Join(dir, "turn-7-"+strconv.Itoa(os.Getpid())+".json"); j.Path() != want {
		t.Fatalf("Path() = %s, want %s", j.Path(), want)
	}
	if _, err := c.Begin("s1"); err != nil {
		t.Fatal(err)
	}
	if err := c.JournalHide([]uint32{5, 6}); err != nil {
		t.Fatalf("JournalHide: %v", err)
	}
	rec := onDisk(t, j.Path())
	me := lock.Self()
	if rec == nil || !slices.Equal(rec.Hidden, []uint32{5, 6}) || rec.Owner.PID != me.PID || rec.Owner.StartTime != me.StartTime ||
		rec.Owner.SessionID != "s1" || rec.Display != ":7.0" || rec.Stash != nil {
		t.Fatalf("journal after JournalHide = %+v", rec)
	}
	if fi, _ := os.Stat(j.Path()); fi.Mode().Perm() != 0o600 {
		t.Errorf("journal mode %04o, want 0600", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("state directory mode %04o, want 0700", fi.Mode().Perm())
	}
	c.AddHidden([]uint32{5})

	// The stash is on disk when Hold returns, before anything is cleared.
	err := c.Clipboard(func(g *ClipGuard) error {
		if err := g.Hold(userText("secret")); err != nil {
			return err
		}
		if rec := onDisk(t, j.Path()); rec == nil || rec.Stash == nil || rec.Stash.Clipboard != (Clip{Text: "secret", Had: true}) || !slices.Equal(rec.Hidden, []uint32{5, 6}) {
			t.Errorf("journal inside Hold = %+v", rec)
		}
		g.Hidden, g.Wrote = true, true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !c.End(ReasonIdle) {
		t.Fatal("End reported no turn")
	}
	if r.clipboard != "secret" || !slices.Equal(r.restored, []uint32{5}) {
		t.Errorf("turn end: clipboard %q, restored %v", r.clipboard, r.restored)
	}
	if rec := onDisk(t, j.Path()); rec != nil {
		t.Errorf("journal after the turn ended = %+v, want none", rec)
	}

	// A stash the guard lets go of leaves the journal.
	if _, err := c.Begin("s2"); err != nil {
		t.Fatal(err)
	}
	c.Clipboard(func(g *ClipGuard) error { return g.Hold(userText("again")) })
	if rec := onDisk(t, j.Path()); rec == nil || rec.Stash == nil {
		t.Fatalf("journal after Hold = %+v", rec)
	}
	c.Clipboard(func(g *ClipGuard) error { g.Held, g.Stash = false, Stash{}; return nil })
	if rec := onDisk(t, j.Path()); rec != nil {
		t.Errorf("journal after the stash was let go = %+v, want none", rec)
	}
	c.Close()
}

// TestJournalUnwritable: when the journal cannot be written, Hold holds
// nothing (so the guard clears nothing) and JournalHide fails (so the
// gate hides nothing), each saying what to do.
func TestJournalUnwritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	opts := (&recorder{}).options()
	opts.Journal = NewJournal(filepath.Join(file, "state"), ":1")
	c := New(opts)
	defer c.Close()
	if _, err := c.Begin("s"); err != nil {
		t.Fatal(err)
	}
	if err := c.JournalHide([]uint32{1}); err == nil || !strings.Contains(err.Error(), "--state-dir") {
		t.Errorf("JournalHide = %v, want an error naming --state-dir", err)
	}
	var held bool
	err := c.Clipboard(func(g *ClipGuard) error {
		err := g.Hold(userText("secret"))
		held = g.Held
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "--state-dir") || held {
		t.Errorf("Hold = %v, held %v; want an error naming --state-dir and nothing held", err, held)
	}
}

// deadOwner returns a lock owner whose process has exited.
func deadOwner(t *testing.T) lock.Owner {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	o := lock.Self()
	o.PID = cmd.Process.Pid
	return o
}

func plant(t *testing.T, dir, name string, rec Record, mode os.FileMode) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	rec.Version = JournalVersion
	data, _ := json.Marshal(rec)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRepairLeftovers: only the journals of dead deskhands on the same X
// server are repaired (every spelling of the display is one server); a
// live one's, another display's and a file open to other users are left
// alone; a repair that fails keeps its journal for another try.
func TestRepairLeftovers(t *testing.T) {
	dir := t.TempDir()
	dead := deadOwner(t)
	live := lock.Self()
	live.PID = os.Getppid() // alive, but not this process
	live.StartTime = 0      // unknown: counts as alive
	user := Stash{Clipboard: Clip{Text: "user's", Had: true}, Primary: Clip{Text: "", Had: false}}
	deadPath := plant(t, dir, "turn-3-"+strconv.Itoa(dead.PID)+".json", Record{Owner: dead, Display: "unix:3", Hidden: []uint32{9, 10}, Stash: &user}, 0o600)
	livePath := plant(t, dir, "turn-3-"+strconv.Itoa(live.PID)+".json", Record{Owner: live, Display: ":3", Hidden: []uint32{11}}, 0o600)
	otherPath := plant(t, dir, "turn-4-"+strconv.Itoa(dead.PID)+".json", Record{Owner: dead, Display: ":4", Hidden: []uint32{12}}, 0o600)
	openPath := plant(t, dir, "turn-3-1.json", Record{Owner: dead, Display: ":3", Stash: &Stash{Clipboard: Clip{Text: "planted", Had: true}}}, 0o644)

	r := &recorder{clipboard: ""}
	opts := r.options()
	var kept []Stash
	opts.KeepClipboard = func(ctx context.Context, s Stash) error { kept = append(kept, s); return nil }
	repaired, err := RepairLeftovers(context.Background(), opts, dir, ":3.0")
	if err == nil || !strings.Contains(err.Error(), "open to other users") {
		t.Errorf("RepairLeftovers error = %v, want one about the file open to other users", err)
	}
	if len(repaired) != 1 || repaired[0].Path != deadPath {
		t.Fatalf("repaired %+v, want only %s", repaired, deadPath)
	}
	if !slices.Equal(r.restored, []uint32{9, 10}) {
		t.Errorf("restored %v, want [9 10]", r.restored)
	}
	if len(kept) != 1 || kept[0].Clipboard.Text != "user's" || kept[0].Primary.Had {
		t.Errorf("kept %+v, want the user's clipboard only", kept)
	}
	if r.clipboard == "planted" || slices.ContainsFunc(kept, func(s Stash) bool { return s.Clipboard.Text == "planted" }) {
		t.Errorf("the text of a journal open to other users reached the clipboard")
	}
	for path, want := range map[string]bool{deadPath: false, livePath: true, otherPath: true, openPath: true} {
		if _, err := os.Stat(path); (err == nil) != want {
			t.Errorf("%s exists = %v, want %v", path, err == nil, want)
		}
	}

	// A failed repair keeps the journal.
	failing := plant(t, dir, "turn-3-"+strconv.Itoa(dead.PID)+".json", Record{Owner: dead, Display: ":3", Hidden: []uint32{9}}, 0o600)
	os.Remove(openPath)
	opts.Restore = func(ctx context.Context, ids []uint32) ([]uint32, error) { return nil, errors.New("no display") }
	if _, err := RepairLeftovers(context.Background(), opts, dir, ":3"); err == nil || !strings.Contains(err.Error(), "no display") {
		t.Errorf("RepairLeftovers with a failing restore = %v", err)
	}
	if _, err := os.Stat(failing); err != nil {
		t.Errorf("the journal of a failed repair is gone: %v", err)
	}
}

// TestRecordMineAndDead: this process's own record is neither dead nor
// repairable; a reused pid (same pid, another start time) is dead.
func TestRecordMineAndDead(t *testing.T) {
	mine := &Record{Owner: lock.Self()}
	if !mine.Mine() || mine.Dead() {
		t.Errorf("own record: Mine %v, Dead %v", mine.Mine(), mine.Dead())
	}
	if mine.Owner.StartTime != 0 {
		reused := &Record{Owner: lock.Self()}
		reused.Owner.StartTime++
		if reused.Mine() || !reused.Dead() {
			t.Errorf("reused pid: Mine %v, Dead %v", reused.Mine(), reused.Dead())
		}
	}
	if d := (&Record{Owner: deadOwner(t)}); !d.Dead() {
		t.Errorf("record of an exited process is not dead")
	}
}
