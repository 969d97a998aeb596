package keycodes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/deskhand/deskhand/supervisor/input"
)

// Options configure New.
type Options struct {
	// Display is the X display to drive, such as ":0"; empty means the
	// DISPLAY environment variable.
	Display string
	// Logger receives debug and warning records; nil discards them.
	Logger *slog.Logger
	// KeyPress, when set, is called with the keycode of every key press
	// just before it is sent, on the input goroutine: the Escape watcher
	// counts deskhand's own presses off with it (cleanup.Watcher.Own).
	KeyPress func(code uint8)
}

// A borrowed keycode must keep its temporary symbol until the application
// receiving the keys has read them. The X server has processed a key event
// once XSync returns, but the application translates the keycode only when
// it reads the event, with a keymap it refreshes lazily after a
// MappingNotify by asking the server for the *current* mapping: restore the
// keycode before then and the character is lost (xdotool restores right
// after XSync and drops characters this way).
//
// So before restoring, deskhand sends the focused application a
// _NET_WM_PING (EWMH) and waits for the answer: applications handle their
// events in order, so the answer proves the key events were read. GTK
// answers pings (the tests type through it with no settle time at all);
// Qt, Chromium and Firefox advertise them too. For applications that do
// not (xterm), it waits remapSettle instead; without a ping an idle GTK
// application needed about 15 ms in tests.
const (
	remapSettle = 100 * time.Millisecond
	pingTimeout = time.Second
)

// Input is the input.Backend of one X display (or of macOS). All X calls
// run on one goroutine locked to an OS thread; the methods are safe for
// concurrent use and run one at a time, in the order they are accepted.
//
// Every method that presses something releases it before returning, except
// Button down and HoldChord (until its duration ends). When an operation fails, or
// its context is cancelled, it releases whatever it pressed. ReleaseAll
// releases everything the package still holds, and Close calls it.
type Input struct {
	display string
	log     *slog.Logger
	settle  time.Duration
	onKey   func(code uint8)

	calls     chan call
	watch     stallWatch
	quit      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
	shutErr   error // the worker's shutdown result, read once done is closed
	// abandon, when the backend has one, is set before New returns and
	// called by a Close that leaves a stuck worker behind.
	abandon func()
	// turn is held by whoever sends to the display: the worker for a
	// whole operation, or a caller that moves the pointer itself
	// (warpNow). The worker's fields below are used with it held.
	turn sync.Mutex
	// warp, when the backend has one, lets Move skip the worker
	// (warp.go); set before New returns.
	warp warper
	// wake, when the backend has one, wakes the display server just
	// before a click's release (holdCtx); worker only.
	wake func()

	// Owned by the worker goroutine.
	be    backend
	held  []pressed          // in press order
	bound map[keycode]Keysym // spare keycodes this package has bound
	guard keyGuard           // see guard.go
	// repeatOff holds the keycodes whose autorepeat this package turned
	// off while holding them (see noRepeat).
	repeatOff map[keycode]bool
}

// pressed is a key or button this package holds down.
type pressed struct {
	button bool
	code   uint8 // keycode, or X button number
}

func (p pressed) String() string {
	if p.button {
		return Button(p.code).String() + " button"
	}
	return fmt.Sprintf("keycode %d", p.code)
}

type call struct {
	ctx    context.Context
	fn     func(context.Context, *op) error
	result chan error
	// pointerOnly: fn sends pointer requests only (no key, modifier or
	// keymap change), so the keyboard guard has nothing to check.
	pointerOnly bool
}

// New connects to the X display and starts the input goroutine. It fails
// with a message that says what to fix when the display cannot be opened or
// lacks the XTEST or XKEYBOARD extension.
func New(opts Options) (*Input, error) {
	return newInput(opts, openBackend)
}

func newInput(opts Options, open func(display string) (backend, string, error)) (*Input, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	in := &Input{
		display: opts.Display,
		log:     log,
		settle:  remapSettle,
		onKey:   opts.KeyPress,
		calls:   make(chan call),
		quit:    make(chan struct{}),
		done:    make(chan struct{}),
		bound:   make(map[keycode]Keysym),

		repeatOff: make(map[keycode]bool),
		watch:     stallWatch{timeout: defaultStallTimeout},
	}
	ready := make(chan error, 1)
	go in.loop(open, ready)
	t := time.NewTimer(openTimeout)
	defer t.Stop()
	select {
	case err := <-ready:
		if err != nil {
			return nil, err
		}
	case <-t.C:
		// The worker stays stuck in the connect; should it get through
		// later, it finds quit closed and closes the connection again.
		close(in.quit)
		return nil, fmt.Errorf("opening X display %q: no answer within %s; check that the X server is running and not stopped", in.display, openTimeout)
	}
	return in, nil
}

func (in *Input) loop(open func(string) (backend, string, error), ready chan<- error) {
	defer close(in.done)
	// Every X call runs on one thread. Xlib does keep per-thread state:
	// on a lost connection (a stalled server's sockets shut by Close's
	// abandon) it takes the display's user lock for the thread that saw
	// the error and never gives it back, so a later XCloseDisplay from any
	// other thread waits for ever. That costs each operation two thread
	// wake-ups (handing the call over, handing the result back). The
	// thread is unlocked on exit rather than left to die with the
	// goroutine: a thread's death sends the parent-death signal
	// (Pdeathsig) to every child process it happened to start, such as a
	// test desktop or the capture helper.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// A click's hold ends in a preciseSleep on this thread.
	defer tightenTimerSlack()()
	be, name, err := open(in.display)
	if err != nil {
		ready <- err
		return
	}
	in.be, in.display = watch(be, &in.watch, name), name
	if a, ok := be.(abandoner); ok {
		in.abandon = a.abandon
	}
	if w, ok := be.(warper); ok {
		in.warp = w
	}
	if w, ok := be.(waker); ok {
		in.wake = func() {
			in.watch.enter()
			defer in.watch.leave()
			w.wake()
		}
	}
	in.startGuard()
	ready <- nil

	for {
		select {
		case <-in.quit:
			in.shutdown()
			return
		case c := <-in.calls:
			select {
			case <-in.quit:
				c.result <- ErrClosed
				in.shutdown()
				return
			default:
			}
			// The turn is given back before the result: the caller's
			// next move may then skip the worker.
			in.turn.Lock()
			err := in.run(c)
			in.recoverStall()
			in.turn.Unlock()
			c.result <- err
		}
	}
}

// recoverStall runs once the worker is back from an operation a caller
// gave up on: the display answers again, and nothing the caller was told
// failed may stay pressed.
func (in *Input) recoverStall() {
	if !in.watch.isStalled() {
		return
	}
	err := in.releaseAll()
	in.watch.clear()
	if err != nil {
		in.log.Warn("the X display answers again; releasing held buttons and keys", "display", in.display, "err", err)
		return
	}
	in.log.Info("the X display answers again; released held buttons and keys", "display", in.display)
}

func (in *Input) shutdown() {
	in.turn.Lock()
	defer in.turn.Unlock()
	in.beginGuard() // a change since the last operation is the user's
	in.shutErr = in.releaseAll()
	in.be.close()
}

// run executes one operation on the worker goroutine.
func (in *Input) run(c call) error {
	if err := in.settleWarp(); err != nil {
		return err
	}
	if err := in.be.alive(); err != nil {
		return err
	}
	o := &op{in: in}
	// The guard costs five round trips to the X server; an operation that
	// presses no key cannot change what it checks. It still runs when the
	// last check did not finish, or while a key is held (hold_key): then
	// a change may be deskhand's, and this operation's check puts it back.
	guarded := !c.pointerOnly || in.guard.unsettled || in.holdsKey()
	if guarded {
		in.beginGuard()
	}
	err := c.fn(c.ctx, o)
	if serr := in.be.sync(); err == nil {
		err = serr
	}
	if guarded {
		if _, gerr := in.checkGuard(); err == nil {
			err = gerr
		}
	}
	if err != nil {
		if uerr := o.undo(); uerr != nil {
			in.log.Warn("releasing input after a failed operation", "err", uerr)
		}
	}
	return err
}

// do runs fn on the worker goroutine and waits for it. fn checks ctx
// between its steps; once accepted, an operation always runs to its end
// (or to its first ctx check) so that cleanup is never skipped. The one
// exception is a display that stops answering: then do returns ErrStalled
// and leaves the operation to the worker (see deadline.go).
func (in *Input) do(ctx context.Context, fn func(context.Context, *op) error) error {
	return in.submit(ctx, call{fn: fn})
}

// doPointer is do for an operation that sends pointer requests only.
func (in *Input) doPointer(ctx context.Context, fn func(context.Context, *op) error) error {
	return in.submit(ctx, call{fn: fn, pointerOnly: true})
}

func (in *Input) submit(ctx context.Context, c call) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-in.quit:
		return ErrClosed
	default:
	}
	if err := in.watch.check(in.display); err != nil {
		return err
	}
	opCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	c.ctx, c.result = opCtx, make(chan error, 1)
	tick := time.NewTicker(in.watch.timeout / 8)
	defer tick.Stop()
	for sent := false; !sent; {
		select {
		case in.calls <- c:
			sent = true
		case <-in.quit:
			return ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			if err := in.watch.check(in.display); err != nil {
				return err
			}
		}
	}
	for {
		select {
		case err := <-c.result:
			return err
		case <-tick.C:
			if err := in.watch.check(in.display); err != nil {
				cancel(err)
				return err
			}
		}
	}
}

// Close releases everything still held (see ReleaseAll), restores any
// borrowed keycode and closes the X connections. On a display that does
// not answer it returns ErrStalled instead of waiting, after shutting the
// connections so that the worker, and the process's exit, do not wait on
// the server either. It is safe to call more than once; later calls return
// the first call's result.
func (in *Input) Close() error {
	in.closeOnce.Do(func() {
		close(in.quit)
		tick := time.NewTicker(in.watch.timeout / 8)
		defer tick.Stop()
		for {
			select {
			case <-in.done:
				in.closeErr = in.shutErr
				return
			case <-tick.C:
				// A display that does not answer must not keep the
				// process from exiting; the worker is left behind.
				if err := in.watch.check(in.display); err != nil {
					if in.abandon != nil {
						in.abandon()
					}
					in.closeErr = fmt.Errorf("closing the input: %w", err)
					return
				}
			}
		}
	})
	return in.closeErr
}

// --- press tracking (worker goroutine only) ---

// op records what one operation pressed so a failure can release it.
type op struct {
	in   *Input
	mine []pressed
}

func (o *op) press(p pressed) error {
	o.mine = append(o.mine, p)
	return o.in.press(p)
}

func (o *op) release(p pressed) error {
	if err := o.in.release(p); err != nil {
		return err // still o.mine's, for undo to try again
	}
	for i := len(o.mine) - 1; i >= 0; i-- {
		if o.mine[i] == p {
			o.mine = append(o.mine[:i], o.mine[i+1:]...)
			break
		}
	}
	return nil
}

// keep makes what the operation pressed outlive it (Down, HoldKey).
func (o *op) keep() { o.mine = nil }

// undo releases, last first, what the operation pressed and still holds.
func (o *op) undo() error {
	if len(o.mine) == 0 {
		return nil
	}
	var errs []error
	for i := len(o.mine) - 1; i >= 0; i-- {
		if o.in.isHeld(o.mine[i]) {
			errs = append(errs, o.in.release(o.mine[i]))
		}
	}
	o.mine = nil
	errs = append(errs, o.in.be.sync())
	return errors.Join(errs...)
}

func (in *Input) press(p pressed) error {
	// Track first: if the request fails half-way, a later release is
	// harmless, a missed one leaves a key stuck.
	in.held = append(in.held, p)
	if p.button {
		return in.be.button(Button(p.code), true)
	}
	if in.onKey != nil {
		in.onKey(p.code)
	}
	return in.be.key(keycode(p.code), true)
}

// release lets go of p. It stays tracked when the request fails, so that
// a later cleanup tries again.
func (in *Input) release(p pressed) error {
	var err error
	if p.button {
		err = in.be.button(Button(p.code), false)
	} else {
		err = in.be.key(keycode(p.code), false)
	}
	if err != nil {
		return err
	}
	for i := len(in.held) - 1; i >= 0; i-- {
		if in.held[i] == p {
			in.held = append(in.held[:i], in.held[i+1:]...)
			break
		}
	}
	return nil
}

// holdsKey reports whether a key (not a button) is held.
func (in *Input) holdsKey() bool {
	for _, h := range in.held {
		if !h.button {
			return true
		}
	}
	return false
}

func (in *Input) isHeld(p pressed) bool {
	for _, h := range in.held {
		if h == p {
			return true
		}
	}
	return false
}

func (in *Input) releaseAll() error {
	var errs []error
	for _, p := range slices.Backward(slices.Clone(in.held)) {
		if err := in.release(p); err != nil {
			errs = append(errs, fmt.Errorf("releasing %s: %w", p, err))
		}
	}
	errs = append(errs, in.be.sync())
	if len(in.bound) > 0 {
		codes := make([]keycode, 0, len(in.bound))
		for c := range in.bound {
			codes = append(codes, c)
		}
		errs = append(errs, in.unbind(codes))
	}
	if len(in.repeatOff) > 0 {
		codes := make([]keycode, 0, len(in.repeatOff))
		for c := range in.repeatOff {
			codes = append(codes, c)
		}
		errs = append(errs, in.restoreRepeat(codes))
	}
	errs = append(errs, in.restoreControls())
	return errors.Join(errs...)
}

// ReleaseAll releases every mouse button and key this package pressed and
// still holds (from Down, a running HoldKey, or an operation cut short),
// last pressed first, restores any keycode it borrowed, and puts back XKB
// controls deskhand's keys changed (see guard.go).
func (in *Input) ReleaseAll(ctx context.Context) error {
	// Cleanup must run even when the caller's context is already done.
	return in.do(context.WithoutCancel(ctx), func(context.Context, *op) error {
		return in.releaseAll()
	})
}

// --- mouse ---

// Move puts the pointer at p. The X server clamps positions beyond the
// screen's right and bottom edges.
func (in *Input) Move(ctx context.Context, p Point) error {
	x, y := p.X, p.Y
	if ok, err := in.warpNow(ctx, x, y); ok {
		return err
	}
	return in.doPointer(ctx, func(context.Context, *op) error {
		return in.be.move(x, y)
	})
}

// Position reports where the pointer is.
func (in *Input) Position(ctx context.Context) (Point, error) {
	var p Point
	err := in.doPointer(ctx, func(context.Context, *op) error {
		var err error
		p, err = in.be.position()
		return err
	})
	return p, err
}

// Click moves the pointer to at unless it is nil, and clicks button count
// times there, holding the keys mods for the whole click, in one turn of
// the input thread: one hop to it and back instead of two, which is a
// good part of a click's cost above its press time on a machine whose
// idle CPUs wake slowly. Each click holds the button for press and
// multi-clicks are input.ClickGap apart.
func (in *Input) Click(ctx context.Context, at *Point, button Button, count int, press time.Duration, modSyms []Keysym) error {
	do := in.do
	if len(modSyms) == 0 {
		do = in.doPointer
	}
	return do(ctx, func(ctx context.Context, o *op) error {
		if at != nil {
			if err := in.be.move(at.X, at.Y); err != nil {
				return err
			}
		}
		var kb *kbdSession
		if len(modSyms) > 0 {
			var err error
			if kb, err = in.openKeyboard(false); err != nil {
				return err
			}
			defer kb.finish(o)
			if err := kb.pressCombo(o, Combo{Keys: modSyms}); err != nil {
				return err
			}
		}
		b := pressed{button: true, code: uint8(button)}
		for i := 0; i < count; i++ {
			if i > 0 {
				if err := input.Sleep(ctx, input.ClickGap); err != nil {
					return err
				}
			}
			if err := o.press(b); err != nil {
				return fmt.Errorf("pressing the %s button: %w", button, err)
			}
			// The press has reached the server: the backend's button
			// syncs its connection, so the hold counts from here.
			if err := holdCtx(ctx, press, in.wake); err != nil {
				return err
			}
			if err := o.release(b); err != nil {
				return fmt.Errorf("releasing the %s button: %w", button, err)
			}
		}
		if kb != nil {
			return kb.releaseCombo(o)
		}
		return nil
	})
}

// Button presses button and leaves it pressed (for a drag the caller
// drives itself; Button up, ReleaseAll or Close releases it), or
// releases it, whether or not this package pressed it.
func (in *Input) Button(ctx context.Context, button Button, down bool) error {
	if !down {
		return in.up(ctx, button)
	}
	return in.doPointer(ctx, func(_ context.Context, o *op) error {
		if err := o.press(pressed{button: true, code: uint8(button)}); err != nil {
			return fmt.Errorf("pressing the %s button: %w", button, err)
		}
		if err := in.be.sync(); err != nil {
			return err
		}
		o.keep()
		return nil
	})
}

func (in *Input) up(ctx context.Context, button Button) error {
	return in.doPointer(context.WithoutCancel(ctx), func(_ context.Context, o *op) error {
		if err := in.release(pressed{button: true, code: uint8(button)}); err != nil {
			return fmt.Errorf("releasing the %s button: %w", button, err)
		}
		return nil
	})
}

// Drag presses the left button at from, moves to to in input.DragSteps
// steps and releases it there, holding the keys modSyms for the whole
// drag.
func (in *Input) Drag(ctx context.Context, from, to Point, modSyms []Keysym) error {
	do := in.do
	if len(modSyms) == 0 {
		do = in.doPointer
	}
	return do(ctx, func(ctx context.Context, o *op) error {
		if err := in.be.move(from.X, from.Y); err != nil {
			return err
		}
		release, err := in.holdMods(o, modSyms)
		if err != nil {
			return err
		}
		defer release()
		left := pressed{button: true, code: uint8(ButtonLeft)}
		if err := o.press(left); err != nil {
			return fmt.Errorf("pressing the left button: %w", err)
		}
		if err := in.be.sync(); err != nil {
			return err
		}
		for i := 1; i <= input.DragSteps; i++ {
			if err := input.Sleep(ctx, input.DragStepDelay); err != nil {
				return err
			}
			p := input.DragStep(from, to, i)
			if err := in.be.move(p.X, p.Y); err != nil {
				return err
			}
		}
		if err := input.Sleep(ctx, input.DragHoldDelay); err != nil {
			return err
		}
		if err := o.release(left); err != nil {
			return err
		}
		return release()
	})
}

// holdMods presses the modifier keys syms for the rest of o (none: a
// no-op). release lets them go; it may be called more than once.
func (in *Input) holdMods(o *op, syms []Keysym) (release func() error, err error) {
	if len(syms) == 0 {
		return func() error { return nil }, nil
	}
	kb, err := in.openKeyboard(false)
	if err != nil {
		return nil, err
	}
	if err := kb.pressCombo(o, Combo{Keys: syms}); err != nil {
		kb.finish(o)
		return nil, err
	}
	done := false
	return func() error {
		if done {
			return nil
		}
		done = true
		defer kb.finish(o)
		return kb.releaseCombo(o)
	}, nil
}

// Wheel moves the pointer to at and turns the wheel amount clicks in
// direction w, holding the keys modSyms meanwhile.
func (in *Input) Wheel(ctx context.Context, at Point, w input.Wheel, amount int, modSyms []Keysym) error {
	x, y, wheel, direction := at.X, at.Y, buttonWheelUp+Button(w), w
	do := in.do
	if len(modSyms) == 0 {
		do = in.doPointer
	}
	return do(ctx, func(ctx context.Context, o *op) error {
		if err := in.be.move(x, y); err != nil {
			return err
		}
		release, err := in.holdMods(o, modSyms)
		if err != nil {
			return err
		}
		defer release()
		w := pressed{button: true, code: uint8(wheel)}
		for i := 0; i < amount; i++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := o.press(w); err != nil {
				return fmt.Errorf("scrolling %s: %w", direction, err)
			}
			if err := o.release(w); err != nil {
				return fmt.Errorf("scrolling %s: %w", direction, err)
			}
		}
		return release()
	})
}

// --- keyboard ---

// Chords presses and releases each key combination in combos, in turn.
func (in *Input) Chords(ctx context.Context, combos []Combo) error {
	return in.do(ctx, func(ctx context.Context, o *op) error {
		kb, err := in.openKeyboard(false)
		if err != nil {
			return err
		}
		defer kb.finish(o)
		var need []Keysym
		for _, c := range combos {
			need = append(need, c.Keys...)
		}
		if err := kb.bindMissing(need); err != nil {
			return err
		}
		g := input.GuardOf(ctx)
		for i, c := range combos {
			if err := input.Cause(ctx); err != nil {
				return input.StoppedKeys(i, len(combos), err)
			}
			if g != nil && i > 0 {
				// The last combination may have moved the focus.
				if err := in.awaitRead(); err != nil {
					return err
				}
			}
			err := in.guardedSend(ctx, g, nil, true, func() error {
				if err := kb.pressCombo(o, c); err != nil {
					return err
				}
				return kb.releaseCombo(o)
			})
			if err != nil {
				return input.StoppedKeys(i, len(combos), err)
			}
			// A combination may have switched a control on (five Shift
			// presses toggle StickyKeys when AccessXKeys is on); put it
			// back before the next one can use it.
			if _, err := in.checkGuard(); err != nil {
				return err
			}
		}
		return nil
	})
}

// HoldChord presses the combination c, holds it for d (or until ctx is
// done) and releases it. Other operations may run while it is held;
// ReleaseAll releases it early.
func (in *Input) HoldChord(ctx context.Context, c Combo, d time.Duration) (err error) {
	var keys []pressed
	var borrowed, norepeat []keycode
	g := input.GuardOf(ctx)
	err = in.do(ctx, func(ctx context.Context, o *op) error {
		kb, err := in.openKeyboard(false)
		if err != nil {
			return err
		}
		if err := kb.bindMissing(c.Keys); err != nil {
			kb.finish(o)
			return err
		}
		// A held key autorepeats into whatever window has the focus; the
		// checks hold for the press, not for the repeats. Escape keeps its
		// autorepeat: the X server drops a press of a key that is already
		// down and does not repeat, so with it off a user's Escape sent
		// through the same XTEST device (VNC, xrdp) while deskhand holds
		// Escape would never reach the Escape watcher.
		for _, sym := range c.Keys {
			if st, _, ok := kb.km.lookup(sym); ok {
				norepeat = append(norepeat, kb.km.modKeycodes(st.mods)...)
				if sym != keysymEscape {
					norepeat = append(norepeat, st.code)
				}
			}
		}
		if err := in.noRepeat(norepeat); err != nil {
			kb.finish(o)
			return errors.Join(err, in.restoreRepeat(norepeat))
		}
		err = in.guardedSend(ctx, g, nil, true, func() error {
			if err := kb.pressCombo(o, c); err != nil {
				return err
			}
			return in.be.sync()
		})
		if err != nil {
			kb.finish(o)
			return errors.Join(err, in.restoreRepeat(norepeat))
		}
		keys = append(keys, kb.comboHeld...)
		// The borrowed keycodes stay bound until the keys are released.
		borrowed = kb.keepBindings()
		o.keep()
		return nil
	})
	if err != nil {
		return fmt.Errorf("nothing was held: %w", err)
	}
	waitErr := in.hold(ctx, g, d)
	relErr := in.do(context.WithoutCancel(ctx), func(context.Context, *op) error {
		var errs []error
		for i := len(keys) - 1; i >= 0; i-- {
			if in.isHeld(keys[i]) {
				errs = append(errs, in.release(keys[i]))
			}
		}
		errs = append(errs, in.be.sync())
		var still []keycode
		for _, code := range borrowed {
			if _, ok := in.bound[code]; ok {
				still = append(still, code)
			}
		}
		if len(still) > 0 {
			errs = append(errs, in.unbind(still))
		}
		errs = append(errs, in.restoreRepeat(norepeat))
		return errors.Join(errs...)
	})
	if waitErr != nil {
		waitErr = fmt.Errorf("let go early (the keys are released): %w", waitErr)
	}
	return errors.Join(waitErr, relErr)
}

// hold waits d, or until ctx ends; under a Guard it also ends, with the
// Guard's error, when the focus leaves the windows it allows.
func (in *Input) hold(ctx context.Context, g *Guard, d time.Duration) error {
	if g == nil {
		return input.Sleep(ctx, d)
	}
	deadline := time.Now().Add(d)
	var allowed []uint32
	first := true
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return nil
		}
		if !first {
			var err error
			if allowed, err = in.holdAllowed(ctx, g, allowed); err != nil {
				return err
			}
		} else {
			var err error
			if allowed, err = g.Check(ctx); err != nil {
				return err
			}
			first = false
		}
		if err := input.Sleep(ctx, min(left, holdPoll)); err != nil {
			return input.Cause(ctx)
		}
	}
}

// Type types text exactly, whatever the keyboard layout: each character is
// sent as the key (and Shift / AltGr level) that produces it in the current
// layout and group; a character the layout lacks (é on a US layout, 日,
// 🙂) is bound for the moment to a spare keycode, typed, and the keycode
// restored to its empty mapping afterwards. "\n" (and "\r\n") types Return,
// "\t" Tab. A locked Caps Lock is unlocked while typing and locked again
// after. Other control characters are an error, and nothing is typed.
//
// XTest is used directly here rather than robotgo's TypeStr, which remaps
// keys for non-ASCII text without restoring them and assumes a US layout.
func (in *Input) Text(ctx context.Context, items []input.TextItem) error {
	return in.do(ctx, func(ctx context.Context, o *op) error {
		kb, err := in.openKeyboard(true)
		if err != nil {
			return err
		}
		defer kb.finish(o)
		g := input.GuardOf(ctx)
		typed := 0
		stopped := func(err error) error { return input.StoppedTyping(items, typed, err) }
		var last checked
		for start := 0; start < len(items); {
			run := items[start:]
			fresh := start == 0
			if g != nil {
				run = run[:input.RunLength(run)]
				if start > 0 && input.IsLineBreak(items[start-1].Char) {
					fresh = true
					// The line break may have closed a dialog and moved
					// the focus: let that happen before the check.
					if err := in.awaitRead(); err != nil {
						return stopped(err)
					}
				}
			}
			end, missing := kb.chunk(run)
			if len(missing) > 0 {
				if err := kb.bind(missing); err != nil {
					return stopped(err)
				}
			}
			err := in.guardedSend(ctx, g, &last, fresh, func() error {
				for _, it := range items[start : start+end] {
					if err := input.Cause(ctx); err != nil {
						return err
					}
					st, _, ok := kb.km.lookup(it.Syms...)
					if !ok {
						return fmt.Errorf("no key types %q", it.Char)
					}
					if err := kb.tap(o, st); err != nil {
						return fmt.Errorf("typing %q: %w", it.Char, err)
					}
					typed++
				}
				return nil
			})
			if err != nil {
				return stopped(err)
			}
			start += end
			if start < len(items) {
				// Give the spare keycodes back before the next chunk reuses
				// them.
				if err := kb.restore(); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// --- keyboard sessions (worker goroutine only) ---

// kbdSession is one operation's view of the keyboard: the keymap snapshot
// it types with, the keycodes it borrowed and the lock state it changed.
type kbdSession struct {
	in        *Input
	km        *keymap
	ambient   modMask
	relock    bool
	borrowed  []keycode // bound by this session, restored by finish
	comboHeld []pressed // keys pressCombo holds, in press order
	// The snapshot's keys and types, for checkPress; mouseKeys says
	// whether MouseKeys was on when the session opened.
	keys      map[keycode]keyInfo
	types     []keyType
	mouseKeys bool
}

// openKeyboard reads the keyboard state and mapping. With clearLock, a
// locked Caps Lock is unlocked for the session (typing must not depend on
// it) and latched modifiers are cleared.
//
// Without clearLock, Caps Lock is left as it is and keys are chosen as if
// it were off, so that "ctrl+a" is ctrl and the a key rather than a
// borrowed keycode.
func (in *Input) openKeyboard(clearLock bool) (*kbdSession, error) {
	st, err := in.be.kbdState()
	if err != nil {
		return nil, err
	}
	kb := &kbdSession{in: in}
	if clearLock {
		if st.latched != 0 {
			if err := in.be.latchMods(st.latched, 0); err != nil {
				return nil, err
			}
		}
		if st.locked&modLock != 0 {
			if err := in.be.lockMods(modLock, 0); err != nil {
				return nil, err
			}
			kb.relock = true
		}
		st.locked &^= modLock
		st.latched = 0
	}
	kb.ambient = (st.base | st.latched | st.locked) &^ modLock
	if clearLock && st.base&(modShift|modControl|mod1|mod4|mod5) != 0 {
		in.log.Warn("modifiers are held while typing; the text may come out changed", "mods", fmt.Sprintf("%#02x", uint8(st.base)))
	}
	raw, err := in.be.keyboard()
	if err != nil {
		kb.finish(nil)
		return nil, err
	}
	kb.km = newKeymap(raw, kb.ambient)
	kb.types = raw.types
	kb.keys = make(map[keycode]keyInfo, len(raw.keys))
	for _, k := range raw.keys {
		kb.keys[k.code] = k
	}
	kb.mouseKeys = in.mouseKeysOn()
	return kb, nil
}

// chunk returns how many of items can be typed with one round of borrowed
// keycodes, and the keysyms to bind for them.
func (kb *kbdSession) chunk(items []input.TextItem) (int, []Keysym) {
	free := len(kb.km.spare)
	var missing []Keysym
	seen := map[Keysym]bool{}
	for i, it := range items {
		if _, _, ok := kb.km.lookup(it.Syms...); ok {
			continue
		}
		sym := it.Syms[len(it.Syms)-1]
		if seen[sym] {
			continue
		}
		if len(missing) == free && free > 0 {
			return i, missing // i > 0: the first item always fits
		}
		seen[sym] = true
		missing = append(missing, sym)
	}
	return len(items), missing
}

// bindMissing binds every keysym in syms the keymap cannot type.
func (kb *kbdSession) bindMissing(syms []Keysym) error {
	var missing []Keysym
	seen := map[Keysym]bool{}
	for _, s := range syms {
		if _, _, ok := kb.km.lookup(s); !ok && !seen[s] {
			seen[s] = true
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return kb.bind(missing)
}

// bind gives each keysym a spare keycode, at both shift levels so that no
// modifier changes what it types, and records the strokes in the keymap.
func (kb *kbdSession) bind(syms []Keysym) error {
	if len(syms) > len(kb.km.spare) {
		if len(kb.km.spare) == 0 {
			return fmt.Errorf("the keyboard layout has no key for %s and no unused keycode to borrow for it", syms[0])
		}
		return fmt.Errorf("%d characters need a temporary key but only %d keycodes are unused", len(syms), len(kb.km.spare))
	}
	codes := kb.km.spare[:len(syms)]
	kb.km.spare = kb.km.spare[len(syms):]
	// Record before binding: if the request fails half-way, restoring an
	// untouched empty keycode is harmless.
	for i, code := range codes {
		kb.in.bound[code] = syms[i]
		kb.borrowed = append(kb.borrowed, code)
	}
	if err := kb.in.be.bind(codes, syms); err != nil {
		return fmt.Errorf("binding a spare keycode: %w", err)
	}
	if err := kb.in.be.sync(); err != nil {
		return fmt.Errorf("binding a spare keycode: %w", err)
	}
	for i, code := range codes {
		kb.km.best[syms[i]] = stroke{code: code}
	}
	kb.in.log.Debug("bound spare keycodes", "codes", fmt.Sprint(codes), "keysyms", fmt.Sprint(syms))
	return nil
}

// restore gives back the keycodes this session borrowed so far.
func (kb *kbdSession) restore() error {
	if len(kb.borrowed) == 0 {
		return nil
	}
	codes := kb.borrowed
	kb.borrowed = nil
	for _, code := range codes {
		delete(kb.km.best, kb.in.bound[code])
	}
	kb.km.spare = append(kb.km.spare, codes...)
	return kb.in.unbind(codes)
}

// keepBindings hands the borrowed keycodes to the caller, who restores
// them later (HoldKey).
func (kb *kbdSession) keepBindings() []keycode {
	codes := kb.borrowed
	kb.borrowed = nil
	kb.relock = false
	return codes
}

// finish restores what the session changed: it releases what the
// operation still holds (only after a failure), then gives back borrowed
// keycodes and locks Caps Lock again.
func (kb *kbdSession) finish(o *op) {
	if o != nil && len(o.mine) > 0 {
		if err := o.undo(); err != nil {
			kb.in.log.Warn("releasing input after a failed operation", "err", err)
		}
	}
	if err := kb.restore(); err != nil {
		kb.in.log.Warn("restoring borrowed keycodes", "err", err)
	}
	if kb.relock {
		kb.relock = false
		if err := kb.in.be.lockMods(modLock, modLock); err != nil {
			kb.in.log.Warn("locking Caps Lock again", "err", err)
		}
	}
}

// unbind restores keycodes to the empty mapping they had, after letting
// applications read the key events that used them (see remapSettle).
func (in *Input) unbind(codes []keycode) error {
	read, err := in.be.confirmRead(pingTimeout)
	switch {
	case err != nil && in.be.alive() != nil:
		return err
	case err != nil:
		in.log.Warn("restoring borrowed keycodes without confirmation; characters may be lost", "err", err)
	case !read:
		in.log.Debug("focused application cannot confirm it read the keys; waiting", "settle", in.settle)
		time.Sleep(in.settle)
	}
	for _, c := range codes {
		delete(in.bound, c)
	}
	if err := in.be.unbind(codes); err != nil {
		return fmt.Errorf("restoring borrowed keycodes %v: %w", codes, err)
	}
	return in.be.sync()
}

// tap types one stroke: hold its modifiers, press and release the key,
// release the modifiers.
func (kb *kbdSession) tap(o *op, st stroke) error {
	if err := kb.checkPress(st.code, kb.ambient|st.mods, 0); err != nil {
		return err
	}
	mods := kb.km.modKeycodes(st.mods)
	for _, m := range mods {
		if err := o.press(pressed{code: uint8(m)}); err != nil {
			return err
		}
	}
	k := pressed{code: uint8(st.code)}
	if err := o.press(k); err != nil {
		return err
	}
	if err := o.release(k); err != nil {
		return err
	}
	for i := len(mods) - 1; i >= 0; i-- {
		if err := o.release(pressed{code: uint8(mods[i])}); err != nil {
			return err
		}
	}
	return nil
}

// pressCombo presses the keys of c in order, each after the modifiers its
// shift level needs (so "ctrl+T" is ctrl, shift, t), and remembers them
// for releaseCombo.
func (kb *kbdSession) pressCombo(o *op, c Combo) error {
	kb.comboHeld = kb.comboHeld[:0]
	down := map[keycode]bool{}
	mods := kb.ambient
	hold := func(code keycode, want Keysym) error {
		if down[code] {
			return nil
		}
		if err := kb.checkPress(code, mods, want); err != nil {
			return err
		}
		mods |= kb.keys[code].setMods
		down[code] = true
		p := pressed{code: uint8(code)}
		kb.comboHeld = append(kb.comboHeld, p)
		return o.press(p)
	}
	for _, sym := range c.Keys {
		st, _, ok := kb.km.lookup(sym)
		if !ok {
			if err := kb.bind([]Keysym{sym}); err != nil {
				return err
			}
			st, _, _ = kb.km.lookup(sym)
		}
		for _, m := range kb.km.modKeycodes(st.mods) {
			if err := hold(m, 0); err != nil {
				return err
			}
		}
		if err := hold(st.code, sym); err != nil {
			return err
		}
	}
	return nil
}

// releaseCombo releases what pressCombo pressed, last first.
func (kb *kbdSession) releaseCombo(o *op) error {
	for i := len(kb.comboHeld) - 1; i >= 0; i-- {
		if err := o.release(kb.comboHeld[i]); err != nil {
			return err
		}
	}
	kb.comboHeld = kb.comboHeld[:0]
	return nil
}

// holdTail is how much of a hold holdCtx waits precisely, at the end:
// the runtime's timers wake up to about a millisecond late on Linux (the
// network poller's epoll_wait takes whole milliseconds).
const holdTail = 2 * time.Millisecond

// holdSpin is how much of a hold's end the thread waits awake: a thread
// woken from a sleep runs some 40–100 µs after its timer on a virtual
// machine (the timer interrupt and the wake-up of an idle virtual CPU go
// through the hypervisor), which every click would add to its press
// time.
const holdSpin = 150 * time.Microsecond

// holdCtx waits d, to within microseconds rather than the runtime's
// millisecond, or until ctx ends: it waits on a timer, watching ctx,
// until holdTail before the end, then sleeps on the thread until holdSpin
// before it, watches the clock for the rest, and checks ctx once more. So
// a cancel (Escape) is seen at most holdTail later than during the rest
// of the hold.
//
// wake, unless nil, runs as the clock watch begins, when the hold is
// long enough to have slept. The display server has slept through the
// hold as well, and its wake-up is as slow as this thread's: woken by the
// release itself, it answered the release's round trip about 60 µs later
// on a virtual machine than when a request that does nothing had woken
// it a moment before.
func holdCtx(ctx context.Context, d time.Duration, wake func()) error {
	end := time.Now().Add(d)
	if err := input.Sleep(ctx, d-holdTail); err != nil {
		return err
	}
	preciseSleep(time.Until(end) - holdSpin)
	if wake != nil && d >= holdTail {
		wake()
	}
	for time.Now().Before(end) {
	}
	return ctx.Err()
}

// keysymEscape is Escape, the user's key for taking the computer back.
const keysymEscape Keysym = 0xff1b
