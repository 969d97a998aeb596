//go:build unix

package x11

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

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

// seat is the lock's own connection to the X server, made at the first
// use and kept while the process runs: closing it would free the
// selection.
type seat struct {
	display string

	mu sync.Mutex
	x  *lockConn // nil until made, and after a failure
}

// lockConn is one connection of a seat, with the window that owns the
// selection and carries the record, and the atoms. It never changes, so
// a use abandoned on a stopped server may go on reading it.
type lockConn struct {
	c        *xgb.Conn
	win      xproto.Window
	sel, rec xproto.Atom
}

var errGone = errors.New("the window is gone")

// lockReplyWait bounds each use of the lock's connection: an X server
// that stopped answering must not hold the lock's callers, and every
// session of the process behind them, for ever.
const lockReplyWait = 5 * time.Second

func (s *seat) String() string { return "the X selection " + lockSelection + " on " + s.display }

// do runs use on the seat's connection, made first if need be. When use
// fails, or the server does not answer within lockReplyWait, the
// connection is dropped: closing it frees what it owned, once the server
// reads again (xgb's Close makes one round trip, so it runs on its own).
func (s *seat) do(use func(x *lockConn) error) error {
	if s.x == nil {
		c, err := connect(context.Background(), s.display)
		if err != nil {
			return fmt.Errorf("connecting to the X display %s for the computer-use lock: %w", s.display, err)
		}
		var x *lockConn
		if err := s.within(c, func() (err error) { x, err = makeLockConn(c); return err }); err != nil {
			return err
		}
		s.x = x
	}
	x := s.x
	err := s.within(x.c, func() error { return use(x) })
	if err != nil {
		s.x = nil
	}
	return err
}

// within runs use, which talks over c, and drops c when it fails or the
// server does not answer in time.
func (s *seat) within(c *xgb.Conn, use func() error) error {
	done := make(chan error, 1)
	go func() {
		// Nothing reads xgb's events (a SelectionClear, say), and a full
		// queue would stall the replies.
		for {
			if ev, xerr := c.PollForEvent(); ev == nil && xerr == nil {
				break
			}
		}
		done <- use()
	}()
	var err error
	select {
	case err = <-done:
	case <-time.After(lockReplyWait):
		err = fmt.Errorf("no answer within %s", lockReplyWait)
	}
	if err != nil {
		go c.Close()
		return fmt.Errorf("the computer-use lock on the X display %s: %w", s.display, err)
	}
	return nil
}

// makeLockConn makes the window that owns the selection and carries the
// record: InputOnly and never mapped, so no one sees it and no window
// manager manages it.
func makeLockConn(c *xgb.Conn) (*lockConn, error) {
	sel, err := xproto.InternAtom(c, false, uint16(len(lockSelection)), lockSelection).Reply()
	if err != nil {
		return nil, err
	}
	rec, err := xproto.InternAtom(c, false, uint16(len(lockRecord)), lockRecord).Reply()
	if err != nil {
		return nil, err
	}
	win, err := xproto.NewWindowId(c)
	if err != nil {
		return nil, err
	}
	root := xproto.Setup(c).DefaultScreen(c).Root
	if err := xproto.CreateWindowChecked(c, 0, win, root, -1, -1, 1, 1, 0, xproto.WindowClassInputOnly, 0,
		xproto.CwOverrideRedirect, []uint32{1}).Check(); err != nil {
		return nil, err
	}
	return &lockConn{c: c, win: win, sel: sel.Atom, rec: rec.Atom}, nil
}

func (s *seat) Take(rec lock.Owner) (holder *lock.Owner, err error) {
	data, err := json.Marshal(rec)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	err = s.do(func(x *lockConn) error {
		for range 3 {
			// The record first, so that it is whole the moment the
			// selection is ours.
			if err := xproto.ChangePropertyChecked(x.c, xproto.PropModeReplace, x.win, x.rec, xproto.AtomString, 8,
				uint32(len(data)), data).Check(); err != nil {
				return err
			}
			// Under the grab no other client's request runs between the
			// look and the take, so two deskhands cannot both find it
			// free.
			xproto.GrabServer(x.c)
			was, err := xproto.GetSelectionOwner(x.c, x.sel).Reply()
			if err == nil && was.Owner == xproto.WindowNone {
				xproto.SetSelectionOwner(x.c, x.win, x.sel, xproto.TimeCurrentTime)
			}
			xproto.UngrabServer(x.c)
			if err != nil {
				return err
			}
			now, err := xproto.GetSelectionOwner(x.c, x.sel).Reply()
			switch {
			case err != nil:
				return err
			case now.Owner == x.win:
				return nil
			case now.Owner == xproto.WindowNone:
				continue // released meanwhile
			}
			holder, err = x.record(now.Owner)
			if !errors.Is(err, errGone) {
				return err
			}
		}
		return errors.New("its holder keeps changing; try again")
	})
	if err != nil {
		return nil, err // and holder may still be written by an abandoned use
	}
	return holder, nil
}

// record reads the lock record of the holder's window w; errGone when w
// is destroyed meanwhile.
func (x *lockConn) record(w xproto.Window) (*lock.Owner, error) {
	r, err := xproto.GetProperty(x.c, false, w, x.rec, xproto.AtomString, 0, 1<<16).Reply()
	var gone xproto.WindowError
	if errors.As(err, &gone) {
		return nil, errGone
	}
	if err != nil {
		return nil, err
	}
	var o lock.Owner
	if json.Unmarshal(r.Value, &o) != nil || o.PID <= 0 || o.SessionID == "" {
		// Not a deskhand's record: the selection is held all the same,
		// and only its owner's exit frees it.
		return &lock.Owner{SessionID: "unknown", Command: fmt.Sprintf("an X client without a deskhand record, window 0x%x", uint32(w))}, nil
	}
	return &o, nil
}

func (s *seat) Kept() (kept bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.x == nil {
		return false, nil // dropped, and what it owned with it
	}
	err = s.do(func(x *lockConn) error {
		r, err := xproto.GetSelectionOwner(x.c, x.sel).Reply()
		kept = err == nil && r.Owner == x.win
		return err
	})
	if err != nil {
		return false, err
	}
	return kept, nil
}

func (s *seat) Give() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.x == nil {
		return nil
	}
	// An error drops the connection, and with it the selection.
	_ = s.do(func(x *lockConn) error {
		// Setting no owner would free another client's selection too:
		// look and set under a grab.
		xproto.GrabServer(x.c)
		r, err := xproto.GetSelectionOwner(x.c, x.sel).Reply()
		if err == nil && r.Owner == x.win {
			xproto.SetSelectionOwner(x.c, xproto.WindowNone, x.sel, xproto.TimeCurrentTime)
		}
		xproto.UngrabServer(x.c)
		if err != nil {
			return err
		}
		// A round trip: the lock is free when Give returns.
		_, err = xproto.GetInputFocus(x.c).Reply()
		return err
	})
	return nil
}

func (s *seat) Holder() (holder *lock.Owner, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	err = s.do(func(x *lockConn) error {
		for range 3 {
			r, err := xproto.GetSelectionOwner(x.c, x.sel).Reply()
			if err != nil || r.Owner == xproto.WindowNone {
				return err
			}
			holder, err = x.record(r.Owner)
			if !errors.Is(err, errGone) {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return holder, nil
}
