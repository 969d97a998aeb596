package keycodes

import "time"

// backend is the display-specific half of Input. Every method is called on
// Input's worker goroutine only, which is locked to one OS thread.
// abandoner is a backend that can give up its connection from another
// goroutine than the worker's, while the worker is stuck in a call (see
// Input.Close).
type abandoner interface {
	abandon()
}

// waker is a backend that can wake the display server ahead of a request
// that must be answered fast: it sends a request that does nothing, on
// the connection the next request goes on (see holdCtx). Worker only.
type waker interface {
	wake()
}

type backend interface {
	// alive reports an error once the connection to the display is lost.
	alive() error
	// sync waits until the server has processed every request sent so
	// far and reports any X error they caused.
	sync() error
	close()

	move(x, y int) error
	position() (Point, error)
	button(b Button, down bool) error

	key(code keycode, down bool) error
	kbdState() (kbdState, error)
	keyboard() (keyboard, error)
	latchMods(mask, values modMask) error
	lockMods(mask, values modMask) error
	// bind maps codes[i] to syms[i] at every shift level; unbind empties
	// codes again.
	bind(codes []keycode, syms []Keysym) error
	unbind(codes []keycode) error
	// confirmRead waits until the application with the keyboard focus
	// has read every event sent so far, when it can tell (true); false
	// when the application offers no way to ask. An error means it did
	// not answer within timeout.
	confirmRead(timeout time.Duration) (bool, error)

	// grab holds off every other client's requests until ungrab (X:
	// GrabServer), so that a check and the keys after it are one step.
	grab() error
	ungrab() error
	// focusChain lists the window with the keyboard focus and its
	// ancestors, innermost first; empty when no window has it.
	focusChain() ([]uint32, error)
	// keyRepeats reports whether code autorepeats while held;
	// setKeyRepeat turns that on or off.
	keyRepeats(code keycode) (bool, error)
	setKeyRepeat(code keycode, on bool) error
}

// kbdState is the XKB keyboard state: modifiers in effect by how they got
// there, and the effective group.
type kbdState struct {
	base, latched, locked modMask
	group                 int
}
