package cleanup

// The turn journal. Windows hidden and the clipboard stashed during a turn
// live in memory until the turn's end gives them back; a deskhand that
// crashes or is killed (SIGKILL, the OOM killer, a power cut of the
// client) would leave the user's windows minimised and their clipboard
// text lost. So before the safety layer hides a window or clears the
// selections, it writes what it is about to take into a journal file,
// and the turn's end removes the file once it has given everything back.
// A deskhand that finds the journal of a dead one for its display
// restores it (RepairLeftovers): at start, before it serves, and at the
// start of each of its turns; `deskhand doctor --repair` does the same by
// hand.
//
// Each process writes its own file, turn-KEY-PID.json in the state
// directory, KEY naming the X server as the computer-use lock does
// (lock.DisplayKey), so two deskhands on one display never overwrite each
// other's record. The record names its writer by pid, process start time
// and host, as the lock does: only the journal of a process that is gone
// (or whose pid now belongs to another process) is repaired; a live
// deskhand's is left alone.
//
// The stash holds the user's clipboard text. The file is created 0600 in
// a directory made 0700, written to a temporary file, fsynced and renamed
// into place (then the directory is fsynced), so a crash leaves either
// the old record or the new one, never half of one. A journal is only
// read when it is a regular file of this user closed to everyone else, so
// another user cannot plant text for deskhand to paste onto the user's
// clipboard. The text rests on disk only while the turn holds it; removing
// the file does not wipe the disk blocks it used.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/lock"
)

// JournalVersion is the version of the journal's record format.
const JournalVersion = 1

// Record is one deskhand's turn journal: what its current turn took from
// the desktop and must give back.
type Record struct {
	Version int `json:"version"`
	// Owner is the deskhand that wrote it (pid, start time, host) and the
	// session whose turn it is.
	Owner   lock.Owner `json:"owner"`
	Display string     `json:"display"`
	Updated time.Time  `json:"updated"`
	// Hidden are the windows the turn hid, or was about to hide.
	Hidden []uint32 `json:"hidden,omitempty"`
	// Stash is the clipboard guard's stash while the turn holds it.
	Stash *Stash `json:"stash,omitempty"`
	// Path is the file the record was read from.
	Path string `json:"-"`
}

func (r *Record) empty() bool { return len(r.Hidden) == 0 && r.Stash == nil }

// Mine reports whether this process wrote the record.
func (r *Record) Mine() bool {
	me := lock.Self()
	return r.Owner.PID == me.PID && r.Owner.StartTime == me.StartTime && r.Owner.Host == me.Host
}

// Dead reports whether the deskhand that wrote the record is gone, so its
// record may be repaired.
func (r *Record) Dead() bool { return !r.Mine() && lock.Stale(r.Owner) }

// Describe says what the record holds (never the text), for logs and
// `deskhand doctor`.
func (r *Record) Describe() string {
	var parts []string
	if n := len(r.Hidden); n == 1 {
		parts = append(parts, "1 hidden window")
	} else if n > 1 {
		parts = append(parts, fmt.Sprintf("%d hidden windows", n))
	}
	if r.Stash != nil {
		var sels []string
		for _, sel := range Selections {
			if r.Stash.Of(sel).Had {
				sels = append(sels, map[bridge.Selection]string{bridge.SelectionClipboard: "clipboard", bridge.SelectionPrimary: "PRIMARY", bridge.SelectionCutBuffer: "cut buffer"}[sel])
			}
		}
		switch len(sels) {
		case 0:
			parts = append(parts, "the cleared selections (they held no text)")
		case 1:
			parts = append(parts, "the stashed "+sels[0]+" text")
		default:
			parts = append(parts, "the stashed "+strings.Join(sels[:len(sels)-1], ", ")+" and "+sels[len(sels)-1]+" text")
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, " and ")
}

// Journal writes this process's record for one display. Its methods are
// safe for concurrent use; a nil *Journal keeps nothing.
type Journal struct {
	dir     string
	display string
	path    string

	mu  sync.Mutex
	rec Record
}

// NewJournal returns the journal of this process for X display display
// in the state directory dir. It touches nothing until there is something
// to record.
func NewJournal(dir, display string) *Journal {
	return &Journal{dir: dir, display: display,
		path: filepath.Join(dir, journalPrefix(display)+strconv.Itoa(os.Getpid())+".json")}
}

// Path returns the journal file's path.
func (j *Journal) Path() string { return j.path }

// Dir returns the journal's directory.
func (j *Journal) Dir() string { return j.dir }

// Display returns the X display the journal is for.
func (j *Journal) Display() string { return j.display }

func journalPrefix(display string) string { return "turn-" + lock.DisplayKey(display) + "-" }

// hide records windows that are about to be hidden.
func (j *Journal) hide(session string, ids []uint32) error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	next := j.rec
	next.Hidden = slices.Clone(next.Hidden)
	for _, id := range ids {
		if !slices.Contains(next.Hidden, id) {
			next.Hidden = append(next.Hidden, id)
		}
	}
	if len(next.Hidden) == len(j.rec.Hidden) {
		return nil
	}
	return j.writeLocked(session, next)
}

// stash records the clipboard guard's stash, or its release (nil).
func (j *Journal) stash(session string, s *Stash) error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if s == nil && j.rec.Stash == nil {
		return nil
	}
	next := j.rec
	if s != nil {
		copied := *s
		s = &copied
	}
	next.Stash = s
	return j.writeLocked(session, next)
}

// clear removes the record: the turn's end has given everything back.
func (j *Journal) clear() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.writeLocked("", Record{})
}

// writeLocked makes next the record on disk; an empty one removes the
// file. j.rec changes only once the disk has it.
func (j *Journal) writeLocked(session string, next Record) error {
	if next.empty() {
		if err := os.Remove(j.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing the turn journal: %w", err)
		}
		j.rec = Record{}
		return nil
	}
	next.Version = JournalVersion
	next.Owner = lock.Self()
	next.Owner.SessionID = session
	next.Display = j.display
	next.Updated = time.Now().UTC().Truncate(time.Millisecond)
	if err := writeDurably(j.path, next); err != nil {
		return stateDirError(j.dir, err)
	}
	j.rec = next
	return nil
}

// stateDirError says why the turn journal cannot be written in dir, and
// what fixes it, for the model to tell the user.
func stateDirError(dir string, err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("the disk that holds deskhand's state directory %s is full (%w). Ask the user to free space on it, or to restart deskhand with --state-dir none, which keeps no turn journal", dir, err)
	}
	return fmt.Errorf("%w. Ask the user to fix deskhand's state directory %s (--state-dir), or to restart deskhand with --state-dir none, which keeps no turn journal", err, dir)
}

// writeDurably replaces path with rec so that a crash at any moment
// leaves a whole record: written aside (0600), fsynced, renamed, and the
// rename fsynced.
func writeDurably(path string, rec Record) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding the turn journal: %w", err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating the state directory for the turn journal: %w", err)
	}
	// CreateTemp makes the file 0600: the stash is the user's text.
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing the turn journal: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the turn journal: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("syncing the turn journal: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the turn journal: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("putting the turn journal in place: %w", err)
	}
	return syncDir(dir)
}

// ReadJournals returns the journals in dir of every deskhand on the X
// server of display, live or dead, and an error for each file that is
// not a journal deskhand may trust (another user's, open to others, or
// not parsing).
func ReadJournals(dir, display string) ([]*Record, []error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []error{fmt.Errorf("reading the state directory %s: %w", dir, err)}
	}
	prefix := journalPrefix(display)
	var recs []*Record
	var errs []error
	for _, e := range entries {
		pid, ok := strings.CutSuffix(strings.TrimPrefix(e.Name(), prefix), ".json")
		if !ok || !strings.HasPrefix(e.Name(), prefix) || pid == "" || strings.Trim(pid, "0123456789") != "" {
			continue
		}
		rec, err := readJournal(filepath.Join(dir, e.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		recs = append(recs, rec)
	}
	return recs, errs
}

func readJournal(path string) (*Record, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("reading the turn journal %s: %w", path, err)
	}
	switch uid, known := fileOwner(fi); {
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("the turn journal %s is not a regular file, so deskhand does not trust it; remove it", path)
	case known && uid != os.Geteuid():
		return nil, fmt.Errorf("the turn journal %s belongs to uid %d, not to you, so deskhand does not trust it; remove it", path, uid)
	case fi.Mode().Perm()&0o077 != 0:
		return nil, fmt.Errorf("the turn journal %s has mode %04o, open to other users, so deskhand does not trust it; remove it", path, fi.Mode().Perm())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the turn journal %s: %w", path, err)
	}
	var rec Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("the turn journal %s does not parse (%v); remove it", path, err)
	}
	if rec.Version != JournalVersion || rec.Owner.PID <= 0 {
		return nil, fmt.Errorf("the turn journal %s is of version %d or names no process, which this deskhand does not read; remove it", path, rec.Version)
	}
	rec.Path = path
	return &rec, nil
}

// Repair gives back what rec's turn took: it shows its hidden windows
// again (opts.Restore, which skips windows that no longer exist) and puts
// the stash back the way the end of a turn does when deskhand exits (the
// user's text through opts.KeepClipboard, so it outlives the caller; no
// text where they had none). A selection that holds the user's text
// already is left to its owner. The record's file is removed when all of
// it is back; otherwise it stays for another try.
func Repair(ctx context.Context, opts Options, rec *Record) error {
	var errs []error
	if len(rec.Hidden) > 0 && opts.Restore != nil {
		if _, err := opts.Restore(ctx, rec.Hidden); err != nil {
			errs = append(errs, fmt.Errorf("showing the hidden windows again: %w", err))
		}
	}
	if rec.Stash != nil {
		c := &Controller{opts: opts}
		// Wrote is false: the writer's selections died with it, so a
		// selection holding the user's text has a live owner.
		if err := c.putBack(ctx, ClipGuard{Held: true, Stash: *rec.Stash}, true); err != nil {
			errs = append(errs, fmt.Errorf("putting the clipboard back: %w", err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if rec.Path != "" {
		if err := os.Remove(rec.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing the repaired turn journal: %w", err)
		}
	}
	return nil
}

// guardWait bounds the wait for another repair of the same display.
const guardWait = 30 * time.Second

// RepairLeftovers repairs (see Repair) the journals in dir that dead
// deskhands on the X server of display left, and returns the ones it
// repaired. The caller holds the display's computer-use lock, so that no
// live deskhand's turn is using the selections meanwhile; a guard file
// keeps two repairs of one display apart.
func RepairLeftovers(ctx context.Context, opts Options, dir, display string) ([]*Record, error) {
	// Every turn begins with this: without a dead deskhand's record it
	// costs one directory read.
	if recs, errs := ReadJournals(dir, display); !slices.ContainsFunc(recs, (*Record).Dead) {
		return nil, errors.Join(errs...)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("creating the state directory: %w", err)
	}
	unlock, err := lock.Guard(filepath.Join(dir, strings.TrimSuffix(journalPrefix(display), "-")+".guard"), guardWait, "the turn journal guard", "another deskhand is repairing; try again later")
	if err != nil {
		return nil, err
	}
	defer unlock()
	recs, errs := ReadJournals(dir, display)
	var repaired []*Record
	for _, rec := range recs {
		if !rec.Dead() {
			continue
		}
		if err := Repair(ctx, opts, rec); err != nil {
			errs = append(errs, fmt.Errorf("repairing the turn journal %s of pid %d: %w", rec.Path, rec.Owner.PID, err))
			continue
		}
		repaired = append(repaired, rec)
	}
	return repaired, errors.Join(errs...)
}

// JournalHide records in the turn journal that windows ids are about to
// be hidden; the caller hides them only when it succeeds, so that a crash
// cannot leave a window hidden that no journal names.
func (c *Controller) JournalHide(ids []uint32) error {
	c.mu.Lock()
	t := c.turn
	c.mu.Unlock()
	if t == nil {
		return ErrTurnEnded
	}
	if err := c.opts.Journal.hide(t.session, ids); err != nil {
		return fmt.Errorf("recording the windows about to be hidden: %w", err)
	}
	return nil
}

// Hold makes s the held stash, after recording it in the turn journal:
// the selections are cleared only once a crash can no longer lose the
// user's text.
func (g *ClipGuard) Hold(s Stash) error {
	if g.record != nil {
		if err := g.record(&s); err != nil {
			return fmt.Errorf("recording the clipboard stash: %w", err)
		}
	}
	g.Held, g.Stash = true, s
	return nil
}

// journalClip arms t's clipboard guard to record its stash.
func (c *Controller) journalClip(t *turn) {
	if c.opts.Journal == nil {
		return
	}
	t.clip.record = func(s *Stash) error { return c.opts.Journal.stash(t.session, s) }
}

// syncClipJournal drops the stash from the journal once the guard let it
// go.
func (c *Controller) syncClipJournal(t *turn) {
	if t.clip.Held {
		return
	}
	if err := c.opts.Journal.stash(t.session, nil); err != nil {
		c.log.Warn("updating the turn journal", "err", err)
	}
}

// clearJournal removes the turn journal once the turn's end gave
// everything back.
func (c *Controller) clearJournal(log *slog.Logger) {
	if err := c.opts.Journal.clear(); err != nil {
		log.Warn("removing the turn journal", "err", err)
	}
}
