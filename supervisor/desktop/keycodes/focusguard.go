package keycodes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/deskhand/deskhand/supervisor/input"
)

// holdPoll is how often a guarded HoldKey re-reads the focus.
const holdPoll = 20 * time.Millisecond

// errFocusUnknown is a backend's answer when it cannot name the focused
// window (macOS): the Guard's Check is then the only check.
var errFocusUnknown = errors.New("the focused window cannot be identified on this platform")

// checked is what a Guard's last Check allowed, and when.
type checked struct {
	allowed []uint32
	at      time.Time
}

// checkReuse is how long a Check's answer serves the runs of one Type that
// follow it without a line break in between: the focus itself is still
// verified for every run, against windows that were allowed that recently.
const checkReuse = 100 * time.Millisecond

// guardedSend runs send, which presses keys, under g (nil: just runs it).
// See Guard. last, when not nil, keeps the latest Check's answer for the
// next run; fresh asks for a new Check regardless. A window listed after
// the focus moved (a new dialog of an allowed app) gets a second Check
// before the keys are refused.
func (in *Input) guardedSend(ctx context.Context, g *Guard, last *checked, fresh bool, send func() error) error {
	if g == nil {
		return send()
	}
	if last == nil {
		last = &checked{}
	}
	for attempt := 0; ; attempt++ {
		if err := input.Cause(ctx); err != nil {
			return err
		}
		allowed := last.allowed
		if fresh || attempt > 0 || allowed == nil || time.Since(last.at) > checkReuse {
			var err error
			if allowed, err = g.Check(ctx); err != nil {
				return err
			}
			last.allowed, last.at = allowed, time.Now()
		}
		if err := in.be.grab(); err != nil {
			return err
		}
		chain, err := in.be.focusChain()
		if errors.Is(err, errFocusUnknown) || err == nil && slices.ContainsFunc(chain, func(w uint32) bool { return slices.Contains(allowed, w) }) {
			serr := send()
			return errors.Join(serr, in.be.ungrab())
		}
		if uerr := in.be.ungrab(); err == nil {
			err = uerr
		}
		if err != nil {
			return err
		}
		if attempt == 1 {
			return &input.FocusError{Focus: chain}
		}
	}
}

// awaitRead waits until the focused application has read the keys sent so
// far (see unbind), so that what they did (a dialog closing, the focus
// moving) has happened before the next check.
func (in *Input) awaitRead() error {
	if err := in.be.sync(); err != nil {
		return err
	}
	read, err := in.be.confirmRead(pingTimeout)
	if err != nil && in.be.alive() != nil {
		return err
	}
	if err != nil || !read {
		// No answer: the application may be busy or gone (a dialog that
		// closed); either way give the window manager time to move the
		// focus.
		time.Sleep(in.settle)
	}
	return nil
}

// holdAllowed reports whether the focus is still on a window g allowed at
// its last Check, re-checking once when it is not, and returns the
// allowed windows to use next time.
func (in *Input) holdAllowed(ctx context.Context, g *Guard, allowed []uint32) ([]uint32, error) {
	var chain []uint32
	err := in.do(ctx, func(context.Context, *op) error {
		var err error
		chain, err = in.be.focusChain()
		return err
	})
	if errors.Is(err, errFocusUnknown) {
		return allowed, nil
	}
	if err != nil {
		return allowed, err
	}
	if slices.ContainsFunc(chain, func(w uint32) bool { return slices.Contains(allowed, w) }) {
		return allowed, nil
	}
	// A window the last Check did not know, or a change Check describes
	// better.
	allowed, err = g.Check(ctx)
	if err != nil {
		return allowed, err
	}
	if !slices.ContainsFunc(chain, func(w uint32) bool { return slices.Contains(allowed, w) }) {
		return allowed, &input.FocusError{Focus: chain}
	}
	return allowed, nil
}

// noRepeat turns autorepeat off for codes that have it on, for as long as
// they are held, so that a held key never types into whichever window
// takes the focus meanwhile; restoreRepeat turns it on again.
func (in *Input) noRepeat(codes []keycode) error {
	for _, c := range codes {
		if _, done := in.repeatOff[c]; done {
			continue
		}
		on, err := in.be.keyRepeats(c)
		if err != nil {
			return fmt.Errorf("reading the autorepeat of keycode %d: %w", c, err)
		}
		if !on {
			continue
		}
		// Record first: a restore of a key that stayed on is harmless.
		in.repeatOff[c] = true
		if err := in.be.setKeyRepeat(c, false); err != nil {
			return fmt.Errorf("turning off the autorepeat of keycode %d: %w", c, err)
		}
	}
	return in.be.sync()
}

func (in *Input) restoreRepeat(codes []keycode) error {
	var errs []error
	for _, c := range codes {
		if !in.repeatOff[c] {
			continue
		}
		if err := in.be.setKeyRepeat(c, true); err != nil {
			errs = append(errs, fmt.Errorf("turning the autorepeat of keycode %d back on: %w", c, err))
			continue
		}
		delete(in.repeatOff, c)
	}
	errs = append(errs, in.be.sync())
	return errors.Join(errs...)
}
