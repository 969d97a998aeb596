package keycodes

import (
	"fmt"
	"sync"
	"time"
)

// Xlib has no per-call timeout: a request that needs a reply, or an XSync,
// blocks its thread until the X server answers, and a stopped (SIGSTOP) or
// wedged server never does. A second connection would not help either:
// robotgo keeps one per process, and the server is the part that is stuck.
// So the worker's backend calls are watched instead. Each one records when
// it began; a caller that finds the worker inside one call for longer than
// the stall timeout stops waiting and gets ErrStalled, and the Input is
// marked stalled: later calls fail at once with the same error instead of
// queueing behind the stuck one. The abandoned operation's context is
// cancelled and it may press nothing more.
//
// When the server answers again the stuck call returns on its own, the
// worker finishes the abandoned operation (releasing what it pressed),
// then releases everything the Input still holds, because the caller that
// held a button was told it failed, and clears the mark.
const (
	defaultStallTimeout = 3 * time.Second
	// openTimeout bounds connecting: XOpenDisplay waits for the server's
	// connection setup reply.
	openTimeout = 10 * time.Second
)

// stallWatch is what callers and the worker share about the backend call
// in progress.
type stallWatch struct {
	timeout time.Duration

	mu      sync.Mutex
	busy    time.Time // the backend call in progress began; zero: none
	stalled time.Time // a caller gave up on the worker; zero: not stalled
}

func (w *stallWatch) enter() {
	w.mu.Lock()
	w.busy = time.Now()
	w.mu.Unlock()
}

func (w *stallWatch) leave() {
	w.mu.Lock()
	w.busy = time.Time{}
	w.mu.Unlock()
}

// check returns the stall error when the Input is marked stalled, or marks
// it when the call in progress has run past the timeout.
func (w *stallWatch) check(display string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stalled.IsZero() && !w.busy.IsZero() && time.Since(w.busy) > w.timeout {
		w.stalled = w.busy
	}
	if w.stalled.IsZero() {
		return nil
	}
	return fmt.Errorf("%w: X display %q has not answered for %s (the X server is stopped, hung or overloaded). "+
		"Nothing more is sent until it answers, and every button and key deskhand holds is released then; "+
		"ask the user to check the X server, or try again in a moment",
		ErrStalled, display, time.Since(w.stalled).Round(100*time.Millisecond))
}

// giveUp marks the Input stalled on the call in progress, for a caller
// that waited on the display itself for the whole timeout (warpNow), and
// returns the stall error.
func (w *stallWatch) giveUp(display string) error {
	w.mu.Lock()
	if w.stalled.IsZero() {
		w.stalled = w.busy
		if w.stalled.IsZero() {
			w.stalled = time.Now().Add(-w.timeout)
		}
	}
	w.mu.Unlock()
	return w.check(display)
}

// isStalled reports the mark without setting it.
func (w *stallWatch) isStalled() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.stalled.IsZero()
}

func (w *stallWatch) clear() {
	w.mu.Lock()
	w.stalled = time.Time{}
	w.mu.Unlock()
}

// watched times every call into a backend for the stallWatch, and refuses
// presses and motion while the Input is stalled: the operation that sent
// them was abandoned and its caller told it failed.
type watched struct {
	be      backend
	w       *stallWatch
	display string
}

// watch wraps be, keeping its XKB controls when it has them.
func watch(be backend, w *stallWatch, display string) backend {
	wb := &watched{be: be, w: w, display: display}
	if cb, ok := be.(controlsBackend); ok {
		return &watchedControls{watched: wb, cb: cb}
	}
	return wb
}

func (b *watched) refuse() error {
	if b.w.isStalled() {
		return b.w.check(b.display)
	}
	return nil
}

func (b *watched) alive() error {
	b.w.enter()
	defer b.w.leave()
	return b.be.alive()
}

func (b *watched) sync() error {
	b.w.enter()
	defer b.w.leave()
	return b.be.sync()
}

func (b *watched) close() {
	b.w.enter()
	defer b.w.leave()
	b.be.close()
}

func (b *watched) move(x, y int) error {
	if err := b.refuse(); err != nil {
		return err
	}
	b.w.enter()
	defer b.w.leave()
	return b.be.move(x, y)
}

func (b *watched) position() (Point, error) {
	b.w.enter()
	defer b.w.leave()
	return b.be.position()
}

func (b *watched) button(btn Button, down bool) error {
	if down {
		if err := b.refuse(); err != nil {
			return err
		}
	}
	b.w.enter()
	defer b.w.leave()
	return b.be.button(btn, down)
}

func (b *watched) key(code keycode, down bool) error {
	if down {
		if err := b.refuse(); err != nil {
			return err
		}
	}
	b.w.enter()
	defer b.w.leave()
	return b.be.key(code, down)
}

func (b *watched) kbdState() (kbdState, error) {
	b.w.enter()
	defer b.w.leave()
	return b.be.kbdState()
}

func (b *watched) keyboard() (keyboard, error) {
	b.w.enter()
	defer b.w.leave()
	return b.be.keyboard()
}

func (b *watched) latchMods(mask, values modMask) error {
	b.w.enter()
	defer b.w.leave()
	return b.be.latchMods(mask, values)
}

func (b *watched) lockMods(mask, values modMask) error {
	b.w.enter()
	defer b.w.leave()
	return b.be.lockMods(mask, values)
}

func (b *watched) bind(codes []keycode, syms []Keysym) error {
	b.w.enter()
	defer b.w.leave()
	return b.be.bind(codes, syms)
}

func (b *watched) unbind(codes []keycode) error {
	b.w.enter()
	defer b.w.leave()
	return b.be.unbind(codes)
}

func (b *watched) confirmRead(timeout time.Duration) (bool, error) {
	b.w.enter()
	defer b.w.leave()
	return b.be.confirmRead(timeout)
}

// watchedControls is watched for a backend with XKB controls.
type watchedControls struct {
	*watched
	cb controlsBackend
}

func (b *watchedControls) controls() (xkbControls, error) {
	b.w.enter()
	defer b.w.leave()
	return b.cb.controls()
}

func (b *watchedControls) setControls(c xkbControls) error {
	b.w.enter()
	defer b.w.leave()
	return b.cb.setControls(c)
}

func (b *watched) grab() error {
	b.w.enter()
	defer b.w.leave()
	return b.be.grab()
}

func (b *watched) ungrab() error {
	b.w.enter()
	defer b.w.leave()
	return b.be.ungrab()
}

func (b *watched) focusChain() ([]uint32, error) {
	b.w.enter()
	defer b.w.leave()
	return b.be.focusChain()
}

func (b *watched) keyRepeats(code keycode) (bool, error) {
	b.w.enter()
	defer b.w.leave()
	return b.be.keyRepeats(code)
}

func (b *watched) setKeyRepeat(code keycode, on bool) error {
	b.w.enter()
	defer b.w.leave()
	return b.be.setKeyRepeat(code, on)
}
