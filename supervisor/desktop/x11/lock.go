package x11

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/deskhand/deskhand/supervisor/lock"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// The computer-use lock of an X server is the selection lockSelection,
// owned by a small unmapped window of the holder's, whose property
// lockRecord holds the holder's lock.Owner as JSON. A selection belongs
// to the server, not to a screen, so one name covers all its screens, as
// the lock always has (lock.DisplayKey).
const (
	lockSelection = "_DESKHAND_LOCK"
	lockRecord    = "_DESKHAND_LOCK_OWNER"
)

// Lock returns the computer-use lock of display, kept on the X server
// itself, as ICCCM's manager selections are: every client of the display
// meets there, whatever its environment, home, state directory, user or
// sandbox, and the server frees the selection the moment its owner's
// connection closes, so a crashed holder is never waited for.
func Lock(display string, opts lock.Options) *lock.Lock {
	return lock.OnSeat(&seat{display: display}, opts)
}

// seat is the lock's own connection to the X server, opened at the first
// use and kept while the process runs: closing it would free the
// selection.
type seat struct {
	display string

	mu       sync.Mutex
	conn     *xgb.Conn
	win      xproto.Window
	sel, rec xproto.Atom
}

var errGone = errors.New("the window is gone")

func (s *seat) String() string { return "the X selection " + lockSelection + " on " + s.display }

// open connects, if not connected, and makes the window that owns the
// selection and carries the record: InputOnly and never mapped, so no
// one sees it and no window manager manages it.
func (s *seat) open() error {
	if s.conn != nil {
		return nil
	}
	conn, err := connect(context.Background(), s.display)
	if err != nil {
		return fmt.Errorf("connecting to the X display %s for the computer-use lock: %w", s.display, err)
	}
	sel, err := xproto.InternAtom(conn, false, uint16(len(lockSelection)), lockSelection).Reply()
	if err != nil {
		conn.Close()
		return fmt.Errorf("naming the computer-use lock on %s: %w", s.display, err)
	}
	rec, err := xproto.InternAtom(conn, false, uint16(len(lockRecord)), lockRecord).Reply()
	if err != nil {
		conn.Close()
		return fmt.Errorf("naming the computer-use lock on %s: %w", s.display, err)
	}
	win, err := xproto.NewWindowId(conn)
	if err != nil {
		conn.Close()
		return fmt.Errorf("making the computer-use lock's window on %s: %w", s.display, err)
	}
	root := xproto.Setup(conn).DefaultScreen(conn).Root
	if err := xproto.CreateWindowChecked(conn, 0, win, root, -1, -1, 1, 1, 0, xproto.WindowClassInputOnly, 0,
		xproto.CwOverrideRedirect, []uint32{1}).Check(); err != nil {
		conn.Close()
		return fmt.Errorf("making the computer-use lock's window on %s: %w", s.display, err)
	}
	s.conn, s.win, s.sel, s.rec = conn, win, sel.Atom, rec.Atom
	return nil
}

// broken drops a connection that failed: the server has freed whatever
// it owned.
func (s *seat) broken(err error) error {
	s.conn.Close()
	s.conn = nil
	return fmt.Errorf("the computer-use lock on the X display %s: %w", s.display, err)
}

// drain throws away the events and errors xgb queued (a SelectionClear,
// say): nothing reads them, and a full queue would stall the replies.
func (s *seat) drain() {
	for {
		if ev, xerr := s.conn.PollForEvent(); ev == nil && xerr == nil {
			return
		}
	}
}

func (s *seat) Take(rec lock.Owner) (*lock.Owner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(); err != nil {
		return nil, err
	}
	s.drain()
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	for range 3 {
		// The record first, so that it is whole the moment the selection
		// is ours.
		if err := xproto.ChangePropertyChecked(s.conn, xproto.PropModeReplace, s.win, s.rec, xproto.AtomString, 8,
			uint32(len(data)), data).Check(); err != nil {
			return nil, s.broken(err)
		}
		// Under the grab no other client's request runs between the look
		// and the take, so two deskhands cannot both find it free.
		xproto.GrabServer(s.conn)
		was, err := xproto.GetSelectionOwner(s.conn, s.sel).Reply()
		if err == nil && was.Owner == xproto.WindowNone {
			xproto.SetSelectionOwner(s.conn, s.win, s.sel, xproto.TimeCurrentTime)
		}
		xproto.UngrabServer(s.conn)
		if err != nil {
			return nil, s.broken(err)
		}
		now, err := xproto.GetSelectionOwner(s.conn, s.sel).Reply()
		switch {
		case err != nil:
			return nil, s.broken(err)
		case now.Owner == s.win:
			return nil, nil
		case now.Owner == xproto.WindowNone:
			continue // released meanwhile
		}
		holder, err := s.record(now.Owner)
		if errors.Is(err, errGone) {
			continue
		}
		return holder, err
	}
	return nil, fmt.Errorf("taking the computer-use lock on %s: its holder keeps changing; try again", s.display)
}

// record reads the lock record of the holder's window w.
func (s *seat) record(w xproto.Window) (*lock.Owner, error) {
	r, err := xproto.GetProperty(s.conn, false, w, s.rec, xproto.AtomString, 0, 1<<16).Reply()
	var gone xproto.WindowError
	if errors.As(err, &gone) {
		return nil, errGone
	}
	if err != nil {
		return nil, s.broken(err)
	}
	var o lock.Owner
	if json.Unmarshal(r.Value, &o) != nil || o.PID <= 0 || o.SessionID == "" {
		// Not a deskhand's record: the selection is held all the same,
		// and only its owner's exit frees it.
		return &lock.Owner{SessionID: "unknown", Command: fmt.Sprintf("an X client without a deskhand record, window 0x%x", uint32(w))}, nil
	}
	return &o, nil
}

func (s *seat) Kept() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return false, nil
	}
	s.drain()
	r, err := xproto.GetSelectionOwner(s.conn, s.sel).Reply()
	if err != nil {
		return false, s.broken(err)
	}
	return r.Owner == s.win, nil
}

func (s *seat) Give() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return nil
	}
	// Setting no owner would free another client's selection too: look
	// and set under a grab.
	xproto.GrabServer(s.conn)
	r, err := xproto.GetSelectionOwner(s.conn, s.sel).Reply()
	if err == nil && r.Owner == s.win {
		xproto.SetSelectionOwner(s.conn, xproto.WindowNone, s.sel, xproto.TimeCurrentTime)
	}
	xproto.UngrabServer(s.conn)
	if err == nil {
		// A round trip: the lock is free when Give returns.
		_, err = xproto.GetInputFocus(s.conn).Reply()
	}
	if err != nil {
		// The connection is gone, and with it the selection.
		s.broken(err)
	}
	return nil
}

func (s *seat) Holder() (*lock.Owner, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.open(); err != nil {
		return nil, err
	}
	s.drain()
	for range 3 {
		r, err := xproto.GetSelectionOwner(s.conn, s.sel).Reply()
		if err != nil {
			return nil, s.broken(err)
		}
		if r.Owner == xproto.WindowNone {
			return nil, nil
		}
		o, err := s.record(r.Owner)
		if !errors.Is(err, errGone) {
			return o, err
		}
	}
	return nil, nil
}
