// Package lock is the cross-session lock: one deskhand session at a time
// controls a desktop, whichever MCP client started it. Where the desktop
// itself can keep the lock, a Seat does (OnSeat), and every client of
// that desktop meets there, whatever its environment, user or sandbox:
// on X11 a selection owned on the display, which the X server frees when
// its owner's connection closes, so a crashed owner needs no stale check.
// Elsewhere the lock is a file per display (for X displays, DisplayKey:
// ":1", ":1.0", "unix:1" and "localhost:1" are one), recording the
// owner's session id, pid, process start time and acquisition time, in a
// directory that must belong to the user and be closed to everyone else
// (Dir, or one the platform keys by its desktop).
//
// A session takes the lock with its first ordinary action (the read-only
// consent tools never take it) and keeps it until its turn ends or the
// process exits. The file is created atomically (written aside, then
// hard-linked into place, which fails when the name exists), so a reader
// never sees half a record. An owner whose process is gone, or whose pid
// now belongs to a process that started at another time (pid reuse), is
// stale and is taken over; a live owner makes Acquire fail with a
// *HeldError naming it ("cu_lock_held"). Acquisitions and releases are
// serialised between processes by an advisory lock (flock) on a guard file
// beside the lock, so two sessions that both find a stale owner cannot
// both take over. The holder's own next Acquire (one per action) is a
// stat: while the name leads to the very file it read or wrote, unchanged,
// the record in it is still its own; any other file sends it back to the
// guard and a read.
package lock

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Code is the error code a held lock is reported with, as in the closed
// computer-use server this follows.
const Code = "cu_lock_held"

// ErrHeld is wrapped by *HeldError.
var ErrHeld = errors.New(Code)

// Owner is the content of the lock file.
type Owner struct {
	SessionID string `json:"session_id"`
	PID       int    `json:"pid"`
	// StartTime is when the process started, in the platform's own unit
	// (Linux: clock ticks since boot, /proc/PID/stat field 22); 0 when
	// unknown. With PID it tells a live owner from a reused pid.
	StartTime uint64    `json:"start_time"`
	Acquired  time.Time `json:"acquired_at"`
	Host      string    `json:"host,omitempty"`
	Display   string    `json:"display,omitempty"`
	// Command is the owner's program name, for messages.
	Command string `json:"command,omitempty"`
	// Client names the MCP client of the session, when known.
	Client string `json:"client,omitempty"`
}

func (o Owner) describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "session %s (pid %d", o.SessionID, o.PID)
	if o.Command != "" {
		fmt.Fprintf(&b, ", %s", o.Command)
	}
	if o.Client != "" {
		fmt.Fprintf(&b, ", client %s", o.Client)
	}
	if o.Host != "" {
		fmt.Fprintf(&b, ", host %s", o.Host)
	}
	b.WriteString(")")
	if !o.Acquired.IsZero() {
		fmt.Fprintf(&b, " since %s", o.Acquired.Local().Format("15:04:05"))
	}
	return b.String()
}

// HeldError reports a lock held by another live session.
type HeldError struct {
	Owner Owner
	Path  string
}

func (e *HeldError) Error() string {
	return fmt.Sprintf("%s: another deskhand session controls this desktop: %s. Only one session may use the computer at a time; "+
		"wait until it finishes (its lock is released when its turn ends or its process exits) and try again, or ask the user to stop it",
		Code, e.Owner.describe())
}

func (e *HeldError) Unwrap() error { return ErrHeld }

// Path returns the lock file for X display xdisplay in dir (see Dir):
// every spelling of one X server's display gives the same file.
func Path(dir, xdisplay string) string {
	return filepath.Join(dir, "computer-use-"+DisplayKey(xdisplay)+".lock")
}

// DisplayKey names the X server an X display string reaches, for the lock
// file's name. The screen number is dropped (one server drives all its
// screens), and every local spelling of display N is the same server: no
// host, "unix", a loopback address, "localhost" or this machine's host
// name, with or without a protocol ("unix/:1", "tcp/localhost:1"), so
// ":1", ":1.0", "unix:1" and "localhost:1.0" all give "1". A TCP display
// on localhost is usually the local server's own port (6000+N), though it
// may be an SSH-forwarded one; taking them for one server can only make a
// second deskhand wait, never let two drive one desktop. Other hosts give
// "HOST_N". A string that is not HOST:N[.S] is kept, made safe for a file
// name.
func DisplayKey(xdisplay string) string {
	host, _ := os.Hostname()
	return displayKey(xdisplay, host)
}

func displayKey(xdisplay, hostname string) string {
	d := strings.TrimSpace(xdisplay)
	if d == "" {
		return "default"
	}
	local := false
	if proto, rest, ok := strings.Cut(d, "/"); ok && !strings.HasPrefix(d, "/") && strings.Contains(rest, ":") {
		local = strings.EqualFold(proto, "unix")
		d = rest
	}
	colon := strings.LastIndexByte(d, ':')
	if colon < 0 {
		return fileSafe(d)
	}
	host, num := d[:colon], d[colon+1:]
	num, _, _ = strings.Cut(num, ".")
	if num == "" || strings.Trim(num, "0123456789") != "" {
		return fileSafe(d)
	}
	num = strings.TrimLeft(num, "0")
	if num == "" {
		num = "0"
	}
	h := strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if ip := net.ParseIP(h); local || h == "" || h == "unix" || h == "localhost" || (ip != nil && ip.IsLoopback()) ||
		(hostname != "" && h == strings.ToLower(hostname)) {
		return num
	}
	return fileSafe(h) + "_" + num
}

// fileSafe keeps letters, digits, '.', '-' and '_', and replaces the rest
// with '_', so that a display name cannot leave the lock directory.
func fileSafe(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, s)
}

// NewSessionID returns a random session id.
func NewSessionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Options configure New.
type Options struct {
	// Display is recorded in the lock file.
	Display string
	// Client names the MCP client, recorded in the lock file; it may be
	// set later with SetClient.
	Client string
}

// Seat keeps the lock on the desktop itself, for one process: Lock
// tracks which of the process's sessions holds it.
type Seat interface {
	// Take makes this process the holder, recording rec where other
	// processes read it, unless another holds it: then it returns that
	// holder's record and takes nothing.
	Take(rec Owner) (holder *Owner, err error)
	// Kept reports whether what Take took is still this process's.
	Kept() (bool, error)
	// Give gives it up, if this process still holds it.
	Give() error
	// Holder returns the current holder's record, nil when none.
	Holder() (*Owner, error)
	// String names the seat in messages.
	String() string
}

// Lock is this process's handle on one lock file, or on a Seat. It is
// safe for concurrent use.
type Lock struct {
	path    string
	seat    Seat
	display string

	mu     sync.Mutex
	client string
	held   string // the session holding the lock through this handle, "" when none
	// heldFile is the lock file as it was when this handle last found
	// held's record in it (or wrote it). deskhand never writes the file
	// in place: create links a complete new file, and a takeover removes
	// the old one first. So while the name still leads to that same
	// file, unchanged, the record is still held's, and Acquire by held
	// needs one stat rather than the guard and a read (sameFile).
	heldFile os.FileInfo
	// heldRec is the record a Seat keeps for held.
	heldRec Owner

	self     Owner // pid, start time, host, command of this process
	selfOnce sync.Once
}

// New returns a handle on the lock file at path. It touches nothing.
func New(path string, opts Options) *Lock {
	return &Lock{path: path, display: opts.Display, client: opts.Client}
}

// OnSeat returns a handle on the lock seat keeps. It touches nothing.
func OnSeat(seat Seat, opts Options) *Lock {
	return &Lock{seat: seat, display: opts.Display, client: opts.Client}
}

// Path returns the lock file's path, or the name of its Seat.
func (l *Lock) Path() string {
	if l.seat != nil {
		return l.seat.String()
	}
	return l.path
}

// Holder returns the record of the process holding the lock now, nil
// when the lock is free or its file was left by a process that is gone.
func (l *Lock) Holder() (*Owner, error) {
	if l.seat != nil {
		return l.seat.Holder()
	}
	o, err := Read(l.path)
	if err != nil || o == nil || Stale(*o) {
		return nil, err
	}
	return o, nil
}

// NeedsDir reports whether the lock is a file in a directory that must
// be private (see CheckDir), not a Seat.
func (l *Lock) NeedsDir() bool { return l.seat == nil }

// SetClient records the MCP client's name for later acquisitions.
func (l *Lock) SetClient(name string) {
	l.mu.Lock()
	l.client = name
	l.mu.Unlock()
}

func (l *Lock) me() Owner {
	l.selfOnce.Do(func() {
		pid := os.Getpid()
		st, _ := startTime(pid)
		host, _ := os.Hostname()
		cmd := filepath.Base(os.Args[0])
		l.self = Owner{PID: pid, StartTime: st, Host: host, Command: cmd}
	})
	return l.self
}

// HeldBy returns the session holding the lock through this handle, "" when
// none does.
func (l *Lock) HeldBy() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.held
}

// Acquire takes the lock for session. It reports fresh when the session
// did not hold it already: a held lock is reused. A live foreign owner
// (another process, or another session of this one) gives a *HeldError.
func (l *Lock) Acquire(session string) (fresh bool, err error) {
	if session == "" {
		return false, errors.New("acquiring the computer-use lock: empty session id")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	me := l.me()
	if l.seat != nil {
		return l.acquireSeat(session, me)
	}
	if err := ensureDir(filepath.Dir(l.path)); err != nil {
		return false, err
	}
	if l.held == session && l.heldFile != nil {
		if fi, err := os.Lstat(l.path); err == nil && sameFile(l.heldFile, fi) {
			return false, nil
		}
	}
	l.heldFile = nil
	unlock, err := guard(l.path + ".guard")
	if err != nil {
		return false, err
	}
	defer unlock()

	for attempt := 0; attempt < 3; attempt++ {
		cur, raw, fi, err := readFile(l.path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Free.
		case err != nil && raw == nil:
			return false, fmt.Errorf("reading the computer-use lock %s: %w", l.path, err)
		case err != nil:
			// A record that does not parse can only come from outside
			// deskhand (the file is never written in place): it
			// protects nothing, so it is replaced.
			if rmErr := os.Remove(l.path); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) {
				return false, fmt.Errorf("removing the unreadable computer-use lock %s: %w", l.path, rmErr)
			}
		case cur.PID == me.PID && cur.StartTime == me.StartTime && cur.Host == me.Host:
			if cur.SessionID == session {
				l.held, l.heldFile = session, fi
				return false, nil
			}
			if cur.SessionID == l.held {
				return false, &HeldError{Owner: *cur, Path: l.path}
			}
			// Our pid and start time but a session this handle does not
			// know: a record left by an earlier Lock value in this
			// process; nobody holds it now.
			if err := removeIfSame(l.path, raw); err != nil {
				return false, err
			}
		case alive(*cur, me.Host):
			return false, &HeldError{Owner: *cur, Path: l.path}
		default:
			if err := removeIfSame(l.path, raw); err != nil {
				return false, err
			}
		}
		rec := me
		rec.SessionID = session
		rec.Acquired = time.Now().UTC().Truncate(time.Millisecond)
		rec.Display = l.display
		rec.Client = l.client
		err = create(l.path, rec)
		if errors.Is(err, fs.ErrExist) {
			continue // someone without the guard raced us; look again
		}
		if err != nil {
			return false, err
		}
		l.held = session
		// Under the guard no deskhand changes the file between the link
		// and this stat.
		if fi, err := os.Lstat(l.path); err == nil {
			l.heldFile = fi
		}
		return true, nil
	}
	return false, fmt.Errorf("acquiring the computer-use lock %s: it keeps changing under us; try again", l.path)
}

// Release gives the lock up if session holds it through this handle. It
// never removes another owner's lock.
func (l *Lock) Release(session string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == "" || (session != "" && l.held != session) {
		return nil
	}
	return l.releaseLocked()
}

// ReleaseAll gives the lock up, whichever of this handle's sessions holds
// it. Call it when the process exits.
func (l *Lock) ReleaseAll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held == "" {
		return nil
	}
	return l.releaseLocked()
}

// acquireSeat is Acquire on a Seat: the seat says whether this process
// holds the lock, the handle which of its sessions does.
func (l *Lock) acquireSeat(session string, me Owner) (bool, error) {
	if l.held != "" {
		kept, err := l.seat.Kept()
		switch {
		case err != nil:
			return false, err
		case kept && l.held == session:
			return false, nil
		case kept:
			return false, &HeldError{Owner: l.heldRec, Path: l.seat.String()}
		}
		// Taken from under us: the next Take says by whom.
		l.held = ""
	}
	rec := me
	rec.SessionID = session
	rec.Acquired = time.Now().UTC().Truncate(time.Millisecond)
	rec.Display = l.display
	rec.Client = l.client
	holder, err := l.seat.Take(rec)
	if err != nil {
		return false, err
	}
	if holder != nil {
		return false, &HeldError{Owner: *holder, Path: l.seat.String()}
	}
	l.held, l.heldRec = session, rec
	return true, nil
}

func (l *Lock) releaseLocked() error {
	if l.seat != nil {
		l.held = ""
		return l.seat.Give()
	}
	me := l.me()
	unlock, err := guard(l.path + ".guard")
	if err != nil {
		return err
	}
	defer unlock()
	session := l.held
	l.held, l.heldFile = "", nil
	cur, raw, err := read(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the computer-use lock %s: %w", l.path, err)
	}
	if cur.PID != me.PID || cur.StartTime != me.StartTime || cur.SessionID != session {
		// Taken over (we were judged stale, or someone removed the
		// file by hand): it is not ours to remove.
		return nil
	}
	return removeIfSame(l.path, raw)
}

// Read returns the lock's current owner, nil when the lock is free.
func Read(path string) (*Owner, error) {
	o, _, err := read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return o, err
}

// Stale reports whether o's process is gone (or its pid was reused).
func Stale(o Owner) bool {
	host, _ := os.Hostname()
	return !alive(o, host)
}

func read(path string) (*Owner, []byte, error) {
	o, raw, _, err := readFile(path)
	return o, raw, err
}

// readFile is read that also returns the file it read the record from.
func readFile(path string) (*Owner, []byte, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, nil, err
	}
	raw, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, nil, err
	}
	o, err := parse(path, raw)
	return o, raw, fi, err
}

func parse(path string, raw []byte) (*Owner, error) {
	var o Owner
	if err := json.Unmarshal(raw, &o); err != nil || o.PID <= 0 || o.SessionID == "" {
		if err == nil {
			err = errors.New("no pid or session id")
		}
		return nil, fmt.Errorf("lock file %s does not parse: %v", path, err)
	}
	return &o, nil
}

// sameFile reports whether b is the file a was, unchanged: the same inode,
// size, mode, modification and change times.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.Mode() == b.Mode() &&
		a.ModTime().Equal(b.ModTime()) && changeTime(a) == changeTime(b)
}

// create writes rec beside path and links it into place: the link fails
// when path exists, and the file is complete the moment it appears.
func create(path string, rec Owner) error {
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	data = append(data, '\n')
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".new-*")
	if err != nil {
		return fmt.Errorf("creating the computer-use lock: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing the computer-use lock: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing the computer-use lock: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fs.ErrExist
		}
		return fmt.Errorf("creating the computer-use lock %s: %w", path, err)
	}
	return nil
}

// removeIfSame removes path if it still holds raw.
func removeIfSame(path string, raw []byte) error {
	now, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading the computer-use lock %s: %w", path, err)
	}
	if !bytes.Equal(now, raw) {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the computer-use lock %s: %w", path, err)
	}
	return nil
}

// alive reports whether o's process still runs. An owner on another host
// cannot be checked and counts as alive.
func alive(o Owner, host string) bool {
	if o.Host != "" && host != "" && o.Host != host {
		return true
	}
	if !pidExists(o.PID) {
		return false
	}
	st, err := startTime(o.PID)
	if errors.Is(err, fs.ErrNotExist) {
		return false // exited meanwhile, or a zombie
	}
	if o.StartTime == 0 || err != nil || st == 0 {
		return true // no way to tell a reused pid: keep the lock
	}
	return st == o.StartTime
}
