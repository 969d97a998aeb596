//go:build linux

package x11

import (
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// kept is one selection a keeper serves.
type kept struct {
	utf8     []byte
	latin1   []byte
	isLatin1 bool
}

// keepSelections takes the CLIPBOARD and PRIMARY selections of display
// that s has text for, and returns the function that serves them (ICCCM:
// TARGETS, TIMESTAMP, the UTF-8 targets, and STRING when the text is
// Latin-1) until other clients have taken them all.
func keepSelections(display string, s cleanup.Stash) (func() error, error) {
	conn, err := xgb.NewConnDisplay(display)
	if err != nil {
		return nil, fmt.Errorf("connecting to X display %q: %w", display, err)
	}
	names := []string{"CLIPBOARD", "TARGETS", "TIMESTAMP", "UTF8_STRING", "STRING", "TEXT",
		"text/plain;charset=utf-8", "text/plain", "ATOM", "INTEGER", "DESKHAND_KEEPER"}
	atoms := map[string]xproto.Atom{}
	for _, n := range names {
		r, err := xproto.InternAtom(conn, false, uint16(len(n)), n).Reply()
		if err != nil {
			conn.Close()
			return nil, fmt.Errorf("interning %s: %w", n, err)
		}
		atoms[n] = r.Atom
	}
	screen := xproto.Setup(conn).DefaultScreen(conn)
	win, err := xproto.NewWindowId(conn)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if err := xproto.CreateWindowChecked(conn, 0, win, screen.Root, -10, -10, 1, 1, 0, xproto.WindowClassInputOnly,
		screen.RootVisual, xproto.CwEventMask, []uint32{xproto.EventMaskPropertyChange}).Check(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("creating the keeper's window: %w", err)
	}
	// A real timestamp for SetSelectionOwner (ICCCM forbids CurrentTime):
	// the server's time of a property change on our own window.
	xproto.ChangeProperty(conn, xproto.PropModeAppend, win, atoms["DESKHAND_KEEPER"], atoms["STRING"], 8, 0, nil)
	var ts xproto.Timestamp
	for ts == 0 {
		ev, err := conn.WaitForEvent()
		if err != nil || ev == nil {
			conn.Close()
			return nil, fmt.Errorf("waiting for the server's time: %v", err)
		}
		if pn, ok := ev.(xproto.PropertyNotifyEvent); ok && pn.Window == win {
			ts = pn.Time
		}
	}
	serving := map[xproto.Atom]*kept{}
	for _, sel := range []struct {
		atom xproto.Atom
		clip cleanup.Clip
	}{{atoms["CLIPBOARD"], s.Clipboard}, {xproto.AtomPrimary, s.Primary}} {
		if !sel.clip.Had {
			continue
		}
		xproto.SetSelectionOwner(conn, win, sel.atom, ts)
		owner, err := xproto.GetSelectionOwner(conn, sel.atom).Reply()
		if err != nil || owner.Owner != win {
			conn.Close()
			return nil, fmt.Errorf("taking the selection: another client owns it (%v)", err)
		}
		k := &kept{utf8: []byte(sel.clip.Text)}
		k.latin1, k.isLatin1 = toLatin1(sel.clip.Text)
		serving[sel.atom] = k
	}
	if len(serving) == 0 {
		conn.Close()
		return nil, errors.New("nothing to keep")
	}
	serve := func() error {
		defer conn.Close()
		for {
			ev, err := conn.WaitForEvent()
			if ev == nil && err == nil {
				return errLostClipboard // connection closed
			}
			if err != nil {
				continue // an X error about a requestor that went away
			}
			switch e := ev.(type) {
			case xproto.SelectionClearEvent:
				delete(serving, e.Selection)
				if len(serving) == 0 {
					return errLostClipboard
				}
			case xproto.SelectionRequestEvent:
				prop := e.Property
				if prop == xproto.AtomNone {
					prop = e.Target // an obsolete client
				}
				k := serving[e.Selection]
				if k == nil {
					k = &kept{}
				}
				targets := []xproto.Atom{atoms["TARGETS"], atoms["TIMESTAMP"], atoms["UTF8_STRING"], atoms["TEXT"], atoms["text/plain;charset=utf-8"]}
				if k.isLatin1 {
					targets = append(targets, atoms["STRING"], atoms["text/plain"])
				}
				ok := true
				switch e.Target {
				case atoms["TARGETS"]:
					buf := make([]byte, 4*len(targets))
					for i, a := range targets {
						binary.LittleEndian.PutUint32(buf[4*i:], uint32(a))
					}
					xproto.ChangeProperty(conn, xproto.PropModeReplace, e.Requestor, prop, atoms["ATOM"], 32, uint32(len(targets)), buf)
				case atoms["TIMESTAMP"]:
					buf := make([]byte, 4)
					binary.LittleEndian.PutUint32(buf, uint32(ts))
					xproto.ChangeProperty(conn, xproto.PropModeReplace, e.Requestor, prop, atoms["INTEGER"], 32, 1, buf)
				case atoms["UTF8_STRING"], atoms["TEXT"], atoms["text/plain;charset=utf-8"]:
					xproto.ChangeProperty(conn, xproto.PropModeReplace, e.Requestor, prop, atoms["UTF8_STRING"], 8, uint32(len(k.utf8)), k.utf8)
				case atoms["STRING"], atoms["text/plain"]:
					if k.isLatin1 {
						xproto.ChangeProperty(conn, xproto.PropModeReplace, e.Requestor, prop, atoms["STRING"], 8, uint32(len(k.latin1)), k.latin1)
					} else {
						ok = false
					}
				default:
					ok = false
				}
				if serving[e.Selection] == nil {
					ok = false
				}
				if !ok {
					prop = xproto.AtomNone
				}
				notify := xproto.SelectionNotifyEvent{Time: e.Time, Requestor: e.Requestor, Selection: e.Selection, Target: e.Target, Property: prop}
				xproto.SendEvent(conn, false, e.Requestor, xproto.EventMaskNoEvent, string(notify.Bytes()))
			}
		}
	}
	return serve, nil
}

// toLatin1 converts text to ISO 8859-1, reporting whether it can be.
func toLatin1(text string) ([]byte, bool) {
	out := make([]byte, 0, len(text))
	for _, r := range text {
		if r > 0xff || r == utf8.RuneError {
			return nil, false
		}
		out = append(out, byte(r))
	}
	return out, true
}
