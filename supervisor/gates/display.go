package gates

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// ErrWayland is the display gate's refusal on a Wayland session.
var ErrWayland = errors.New("this is a Wayland session, and deskhand can only control X11 desktops for now: " +
	"its input would reach only the XWayland windows and its screenshots would miss the rest. " +
	"Ask the user to log in to an X11 session, or to run deskhand with --virtual-display 1920x1080 for a private X desktop")

// DisplayCheck checks, before each action, that the X display answers,
// has XTEST (the extension deskhand sends input through) and is not
// XWayland: an X server that announces the XWAYLAND extension is a Wayland
// session's, whose native windows deskhand can neither see nor control. It
// keeps one connection and makes one round trip per check; a connection
// that broke is reopened on the next check. The round trip and the
// reconnection are bounded (a second, connectTimeout), so a stopped X server fails the check
// instead of hanging it.
type DisplayCheck struct {
	display string

	mu   sync.Mutex
	conn *xgb.Conn
}

// NewDisplayCheck returns a check of display.
func NewDisplayCheck(display string) *DisplayCheck {
	return &DisplayCheck{display: display}
}

// Check is the gate function.
func (d *DisplayCheck) Check(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn != nil {
		if err := d.ping(ctx); err == nil {
			return nil
		}
		d.conn.Close()
		d.conn = nil
	}
	type opened struct {
		conn *xgb.Conn
		err  error
	}
	got := make(chan opened, 1)
	go func() {
		conn, err := d.open()
		got <- opened{conn, err}
	}()
	t := time.NewTimer(connectTimeout)
	defer t.Stop()
	select {
	case o := <-got:
		if o.err != nil {
			return o.err
		}
		d.conn = o.conn
		return nil
	case <-t.C:
	case <-ctx.Done():
	}
	// xgb has no deadlines of its own: the connection is closed whenever
	// the server gets round to answering.
	go func() {
		if o := <-got; o.conn != nil {
			o.conn.Close()
		}
	}()
	if err := ctx.Err(); err != nil {
		return context.Cause(ctx)
	}
	return fmt.Errorf("the X display %s does not answer (no reply within %s; the X server may be stopped or hung), so nothing can be seen or done. Ask the user to check the X server, then try again", d.display, connectTimeout)
}

// connectTimeout bounds connecting to the display and checking its
// extensions.
const connectTimeout = 2 * time.Second

// open connects and checks the extensions.
func (d *DisplayCheck) open() (*xgb.Conn, error) {
	conn, err := xgb.NewConnDisplay(d.display)
	if err != nil {
		return nil, fmt.Errorf("the X display %s cannot be reached (%v), so nothing can be seen or done. Ask the user to check that the X server is running and that deskhand was started with the right DISPLAY", d.display, err)
	}
	ext := "XTEST"
	rep, err := xproto.QueryExtension(conn, uint16(len(ext)), ext).Reply()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("the X display %s does not answer (%v); ask the user to check the X server", d.display, err)
	}
	if !rep.Present {
		conn.Close()
		return nil, fmt.Errorf("the X display %s has no XTEST extension, which deskhand needs to send input; ask the user to enable XTEST in the X server", d.display)
	}
	xw := "XWAYLAND"
	rep, err = xproto.QueryExtension(conn, uint16(len(xw)), xw).Reply()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("the X display %s does not answer (%v); ask the user to check the X server", d.display, err)
	}
	if rep.Present {
		conn.Close()
		return nil, ErrWayland
	}
	return conn, nil
}

// ping makes one round trip, bounded by ctx and a second.
func (d *DisplayCheck) ping(ctx context.Context) error {
	done := make(chan error, 1)
	conn := d.conn
	go func() {
		_, err := xproto.GetInputFocus(conn).Reply()
		done <- err
	}()
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return errors.New("no answer within a second")
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Close closes the connection.
func (d *DisplayCheck) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn != nil {
		d.conn.Close()
		d.conn = nil
	}
}
