//go:build unix

package x11

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"sync"
	"time"

	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
)

// ErrWayland is the display gate's refusal on a Wayland session.
var ErrWayland = errors.New("this is a Wayland session, and deskhand can only control X11 desktops for now: " +
	"its input would reach only the XWayland windows and its screenshots would miss the rest. " +
	"Ask the user to log in to an X11 session, or to run deskhand with --virtual-display 1920x1080 for a private X desktop")

// connectTimeout bounds a connection attempt: an X server that accepts
// the socket but never answers (stopped, or wedged) must not hang a gate
// or doctor.
const connectTimeout = 5 * time.Second

// Extensions the probe asks for: the one deskhand needs (XTEST), the two
// it does better with, and the one that marks a Wayland session's server.
var probedExtensions = []string{"XTEST", "MIT-SHM", "RANDR", "XWAYLAND"}

// Probe is what one look at an X display found. doctor reports it line by
// line; the display gate refuses by its Usable.
type Probe struct {
	Display       string
	Vendor        string
	Width, Height int
	// Extensions says, for each of XTEST, MIT-SHM, RANDR and XWAYLAND,
	// whether the server has it.
	Extensions map[string]bool
}

// Usable reports why deskhand cannot drive the display, nil when it can:
// it needs XTEST, the extension its input goes through, and refuses
// XWayland, a Wayland session's X server, whose native windows deskhand
// can neither see nor control.
func (p *Probe) Usable() error {
	if !p.Extensions["XTEST"] {
		return fmt.Errorf("the X display %s has no XTEST extension, which deskhand needs to send input; ask the user to enable XTEST in the X server", p.Display)
	}
	if p.Extensions["XWAYLAND"] {
		return ErrWayland
	}
	return nil
}

// ProbeDisplay connects to display and probes it (see Probe). The caller
// closes the connection; on error there is none.
func ProbeDisplay(ctx context.Context, display string) (*Probe, *xgb.Conn, error) {
	conn, err := connect(ctx, display)
	if err != nil {
		return nil, nil, fmt.Errorf("the X display %s cannot be reached (%v), so nothing can be seen or done. Ask the user to check that the X server is running and that deskhand was started with the right DISPLAY", display, err)
	}
	p, err := probe(ctx, conn, display)
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return p, conn, nil
}

func probe(ctx context.Context, conn *xgb.Conn, display string) (*Probe, error) {
	setup := xproto.Setup(conn)
	screen := setup.DefaultScreen(conn)
	p := &Probe{Display: display, Vendor: string(setup.Vendor), Width: int(screen.WidthInPixels), Height: int(screen.HeightInPixels),
		Extensions: map[string]bool{}}
	cookies := make([]xproto.QueryExtensionCookie, len(probedExtensions))
	for i, ext := range probedExtensions {
		cookies[i] = xproto.QueryExtension(conn, uint16(len(ext)), ext)
	}
	for i, ext := range probedExtensions {
		var rep *xproto.QueryExtensionReply
		err := within(ctx, func() (err error) { rep, err = cookies[i].Reply(); return err })
		if err != nil {
			return nil, fmt.Errorf("the X display %s does not answer (%v); ask the user to check the X server", display, err)
		}
		p.Extensions[ext] = rep.Present
	}
	return p, nil
}

// quietXGB silences xgb's own logging (it writes to stderr, which is for
// deskhand's log records).
var quietXGB sync.Once

// connect opens a connection, giving up after connectTimeout or when ctx
// ends.
func connect(ctx context.Context, display string) (*xgb.Conn, error) {
	// xgb's goroutines read its Logger: set it once, before any of them.
	quietXGB.Do(func() { xgb.Logger = log.New(io.Discard, "", 0) })
	return openWithin(ctx, func() (*xgb.Conn, error) { return xgb.NewConnDisplay(display) }, (*xgb.Conn).Close)
}

// openWithin runs open, which connects to an X server and waits for its
// setup reply, giving up after connectTimeout or when ctx ends: a stopped
// server never sends that reply. A connection that opens after the caller
// gave up is closed.
func openWithin[T any](ctx context.Context, open func() (T, error), closeLate func(T)) (T, error) {
	type result struct {
		c   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		c, err := open()
		ch <- result{c, err}
	}()
	t := time.NewTimer(connectTimeout)
	defer t.Stop()
	var err error
	select {
	case r := <-ch:
		return r.c, r.err
	case <-t.C:
		err = fmt.Errorf("no answer within %v", connectTimeout)
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	go func() {
		if r := <-ch; r.err == nil {
			closeLate(r.c)
		}
	}()
	var zero T
	return zero, err
}

// within runs f, a round trip, bounded by ctx and a second.
func within(ctx context.Context, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
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

// DisplayCheck is gate 2 on X11: before each action, the display answers
// and its Probe is Usable. It keeps one connection and makes one round
// trip per check; a connection that broke or did not answer is closed, and
// the display reopened and probed again, on the next check. The round
// trip goes over an XCB connection of its own (xping) made on the calling
// thread; where XCB cannot connect, over the probe's xgb connection.
type DisplayCheck struct {
	display string

	mu   sync.Mutex
	ping *xping
	conn *xgb.Conn
	// drawn is where the screen was drawn, from the XCB connection's
	// DAMAGE reports (drawn.go).
	drawn drawnLog
}

// NewDisplayCheck returns a check of display.
func NewDisplayCheck(display string) *DisplayCheck {
	return &DisplayCheck{display: display}
}

// Check is the gate function.
func (d *DisplayCheck) Check(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.ping != nil:
		follows := d.ping.followsDrawing()
		if follows {
			d.drawn.beginPing()
		}
		sent := time.Now()
		var subtracted uint32
		if err := d.ping.ping(ctx, &subtracted); err == nil {
			d.drawn.subtracted(subtracted)
			if follows && d.ping.drain(false, d.drawn.add) {
				d.drawn.pinged(sent)
			} else if follows {
				d.stopFollowingLocked()
			}
			return nil
		}
		d.drawn.pingFailed()
	case d.conn != nil:
		conn := d.conn
		if err := within(ctx, func() error { _, err := xproto.GetInputFocus(conn).Reply(); return err }); err == nil {
			return nil
		}
	}
	d.closeLocked()
	p, conn, err := ProbeDisplay(ctx, d.display)
	if err != nil {
		return err
	}
	if err := p.Usable(); err != nil {
		conn.Close()
		return err
	}
	if ping, err := openPing(ctx, d.display); err == nil {
		conn.Close()
		d.ping = ping
	} else {
		d.conn = conn
	}
	return nil
}

// Close closes the connection.
func (d *DisplayCheck) Close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closeLocked()
}

// Mark is taken before a read of the staleness reference starts (a
// capture, a settling read), and handed back to Commit once the helper
// answered, or to Abort when the read failed; ok false when the display
// cannot vouch for a read yet.
func (d *DisplayCheck) Mark() (mark uint64, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.drawn.mark()
}

// Commit says the read that took mark is the helper's reference now.
func (d *DisplayCheck) Commit(mark uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.drawn.commit(mark)
}

// Abort says the read that took mark failed.
func (d *DisplayCheck) Abort(mark uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.drawn.abort(mark)
}

// Undrawn reports whether no drawing reached any of rects (root window
// coordinates) since the helper's reference was read, as of a check that
// began at or after since; false whenever that is not certain.
func (d *DisplayCheck) Undrawn(rects []geometry.Rect, since time.Time) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ping == nil || !d.ping.followsDrawing() {
		return false
	}
	if !d.ping.drain(true, d.drawn.add) {
		d.stopFollowingLocked()
		return false
	}
	return d.drawn.undrawn(rects, since)
}

// DrawnRects makes a round trip to the display, then lists where drawing
// reached (root window coordinates) since the helper's reference was
// read; ok false whenever that is not certain.
func (d *DisplayCheck) DrawnRects(ctx context.Context) (rects []geometry.Rect, ok bool) {
	if err := d.Check(ctx); err != nil {
		return nil, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ping == nil || !d.ping.followsDrawing() {
		return nil, false
	}
	if !d.ping.drain(true, d.drawn.add) {
		d.stopFollowingLocked()
		return nil, false
	}
	return d.drawn.drawnRects()
}

// stopFollowingLocked gives DAMAGE up on this connection after it
// reported an error: reports may be missing from then on.
func (d *DisplayCheck) stopFollowingLocked() {
	d.drawn.lost()
	d.ping.stopFollowing()
}

func (d *DisplayCheck) closeLocked() {
	d.drawn.lost()
	if d.ping != nil {
		d.ping.close()
		d.ping = nil
	}
	if d.conn != nil {
		d.conn.Close()
		d.conn = nil
	}
}
