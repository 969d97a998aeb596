//go:build unix

package wayland

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/deskhand/deskhand/supervisor/input"
)

// This file is the Wayland input backend. On a wlroots compositor the keys
// and the pointer go through the capture helper's input methods
// (helpers/PROTOCOL.md, "Input methods (Wayland only)"): no well-kept Go
// Wayland client speaks zwlr_virtual_pointer_v1 and zwp_virtual_keyboard_v1.
// The helper works in whole gestures (a click, a combination, a text), as
// input.Backend does.
//
// What carries over: the keysym allowlist (every combination is parsed by
// input.ParseCombo, every text by input.PlanText), the Guard (its Check runs before each
// run of keys, as on macOS it is the only check: Wayland does not say
// which window has the focus), and the deadlines (each call is bounded by
// InputOptions.CallTimeout and by the caller's context). What does not
// map: keycodes (KeyPress hears of no key; the Escape watcher does not run
// on Wayland anyway), XKB controls and keycode borrowing (the helper
// uploads its own keymap per burst, so there is nothing of the user's to
// restore), autorepeat (a virtual keyboard does not repeat), the pointer
// position (Wayland does not tell a client where the pointer is: Position
// answers the last point deskhand moved to), held modifiers during a click,
// drag or scroll (refused), and hold_key (refused: the helper presses and
// releases a combination in one call).

// ErrInputUnsupported is wrapped by every operation the Wayland input
// backend cannot perform.
var ErrInputUnsupported = errors.New("not supported on Wayland")

// Caller sends one helper request and decodes its result into result;
// bridge.Client.Call is one.
type Caller func(ctx context.Context, method string, params, result any) error

// InputOptions configure NewInput.
type InputOptions struct {
	// Call reaches the helper. Required.
	Call Caller
	// CallTimeout bounds each helper call; 0 means DefaultCallTimeout.
	CallTimeout time.Duration
}

// DefaultCallTimeout bounds a helper input call when InputOptions does
// not say.
const DefaultCallTimeout = 3 * time.Second

var _ input.Backend = (*Input)(nil)

// Input is the input.Backend that sends through the helper.
type Input struct {
	call    Caller
	timeout time.Duration

	mu        sync.Mutex // one gesture at a time, in order
	closed    bool
	closeOnce sync.Once
	closeErr  error
	pos       input.Point
	down      map[input.Button]bool
}

// NewInput returns an input backend that sends through the helper's
// Wayland input methods. It opens nothing: the helper is reached on
// first use.
func NewInput(opts InputOptions) (*Input, error) {
	if opts.Call == nil {
		return nil, errors.New("opening Wayland input: no helper to send through")
	}
	t := opts.CallTimeout
	if t <= 0 {
		t = DefaultCallTimeout
	}
	return &Input{call: opts.Call, timeout: t, down: map[input.Button]bool{}}, nil
}

// send makes one helper call, bounded by the call timeout, under w.mu.
func (w *Input) send(ctx context.Context, method string, params map[string]any) error {
	if w.closed {
		return input.ErrClosed
	}
	if err := input.Cause(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, w.timeout, input.ErrStalled)
	defer cancel()
	var ok struct {
		OK bool `json:"ok"`
	}
	if err := w.call(ctx, method, params, &ok); err != nil {
		if c := context.Cause(ctx); c != nil {
			return fmt.Errorf("sending %s: %w", method, c)
		}
		return fmt.Errorf("sending %s: %w", method, err)
	}
	return nil
}

func (w *Input) lock() func() {
	w.mu.Lock()
	return w.mu.Unlock
}

func noMods(mods []input.Keysym, what string) error {
	if len(mods) == 0 {
		return nil
	}
	return fmt.Errorf("holding %s during a %s is %w: the helper presses a key combination and releases it in one step; send the keys with key instead", input.Combo{Keys: mods}, what, ErrInputUnsupported)
}

// Move puts the pointer at p.
func (w *Input) Move(ctx context.Context, p input.Point) error {
	defer w.lock()()
	return w.moveLocked(ctx, p)
}

func (w *Input) moveLocked(ctx context.Context, p input.Point) error {
	if err := w.send(ctx, "pointer_move", map[string]any{"x": p.X, "y": p.Y}); err != nil {
		return err
	}
	w.pos = p
	return nil
}

// Position is the last point deskhand moved the pointer to: Wayland does
// not tell a client where the pointer is.
func (w *Input) Position(context.Context) (input.Point, error) {
	defer w.lock()()
	if w.closed {
		return input.Point{}, input.ErrClosed
	}
	return w.pos, nil
}

// Click clicks with the helper's own press time; press does not apply.
func (w *Input) Click(ctx context.Context, at *input.Point, b input.Button, count int, _ time.Duration, mods []input.Keysym) error {
	if err := noMods(mods, "click"); err != nil {
		return err
	}
	defer w.lock()()
	if at != nil {
		if err := w.moveLocked(ctx, *at); err != nil {
			return err
		}
	}
	return w.send(ctx, "pointer_button", map[string]any{"button": b.String(), "action": "click", "count": count})
}

func (w *Input) Button(ctx context.Context, b input.Button, down bool) error {
	defer w.lock()()
	action := "release"
	if down {
		action = "press"
	}
	if err := w.send(ctx, "pointer_button", map[string]any{"button": b.String(), "action": action}); err != nil {
		return err
	}
	w.down[b] = down
	return nil
}

func (w *Input) Drag(ctx context.Context, from, to input.Point, mods []input.Keysym) error {
	if err := noMods(mods, "drag"); err != nil {
		return err
	}
	defer w.lock()()
	if err := w.moveLocked(ctx, from); err != nil {
		return err
	}
	if err := w.send(ctx, "pointer_button", map[string]any{"button": "left", "action": "press"}); err != nil {
		return err
	}
	// The button goes up whatever happens after it went down.
	release := func() error {
		return w.send(context.WithoutCancel(ctx), "pointer_button", map[string]any{"button": "left", "action": "release"})
	}
	for i := 1; i <= input.DragSteps; i++ {
		if err := input.Sleep(ctx, input.DragStepDelay); err != nil {
			return errors.Join(err, release())
		}
		if err := w.moveLocked(ctx, input.DragStep(from, to, i)); err != nil {
			return errors.Join(err, release())
		}
	}
	if err := input.Sleep(ctx, input.DragHoldDelay); err != nil {
		return errors.Join(err, release())
	}
	return release()
}

func (w *Input) Wheel(ctx context.Context, at input.Point, wheel input.Wheel, amount int, mods []input.Keysym) error {
	if err := noMods(mods, "scroll"); err != nil {
		return err
	}
	if amount > 100 {
		return fmt.Errorf("scroll amount %d is out of range on Wayland: scroll at most 100 clicks at a time", amount)
	}
	dx, dy := 0, 0
	switch wheel {
	case input.WheelUp:
		dy = -amount
	case input.WheelDown:
		dy = amount
	case input.WheelLeft:
		dx = -amount
	case input.WheelRight:
		dx = amount
	}
	defer w.lock()()
	if err := w.moveLocked(ctx, at); err != nil {
		return err
	}
	return w.send(ctx, "pointer_scroll", map[string]any{"dx": dx, "dy": dy})
}

// check runs the Guard's check before a run of keys: on Wayland it is the
// only check, since the compositor names no focused window.
func check(ctx context.Context) error {
	g := input.GuardOf(ctx)
	if g == nil {
		return nil
	}
	_, err := g.Check(ctx)
	return err
}

func (w *Input) Chords(ctx context.Context, combos []input.Combo) error {
	names := make([][]input.Keysym, len(combos))
	for i, c := range combos {
		for _, k := range c.Keys {
			// An upper-case letter is the shifted key, as on X11 (ParseCombo).
			if k >= 'A' && k <= 'Z' {
				if !slices.Contains(names[i], 0xffe1) {
					names[i] = append(names[i], 0xffe1)
				}
				k += 'a' - 'A'
			}
			if err := key(k); err != nil {
				return fmt.Errorf("nothing was pressed: %w", err)
			}
			names[i] = append(names[i], k)
		}
		if len(names[i]) > 8 {
			return fmt.Errorf("nothing was pressed: %q holds %d keys; on Wayland a combination holds at most 8", c, len(names[i]))
		}
	}
	defer w.lock()()
	for i, n := range names {
		if err := check(ctx); err != nil {
			return input.StoppedKeys(i, len(names), err)
		}
		if err := w.send(ctx, "key_combo", map[string]any{"keys": n}); err != nil {
			return input.StoppedKeys(i, len(names), err)
		}
	}
	return nil
}

// HoldChord is refused: the helper presses and releases a combination in
// one call.
func (w *Input) HoldChord(_ context.Context, c input.Combo, _ time.Duration) error {
	return fmt.Errorf("holding %s is %w: the helper presses and releases a combination in one step; use key instead", c, ErrInputUnsupported)
}

func (w *Input) Text(ctx context.Context, items []input.TextItem) error {
	// The same runs as X11: at most input.TypeRun characters, never past
	// a line break, each after a fresh check.
	var runs []string
	for rest := items; len(rest) > 0; {
		n := input.RunLength(rest)
		var b strings.Builder
		for _, it := range rest[:n] {
			b.WriteRune(it.Char)
		}
		runs = append(runs, b.String())
		rest = rest[n:]
	}
	defer w.lock()()
	typed := 0
	for _, r := range runs {
		err := check(ctx)
		if err == nil {
			err = w.send(ctx, "key_type", map[string]any{"text": r})
		}
		if err != nil {
			return input.StoppedTyping(items, typed, err)
		}
		typed += utf8.RuneCountInString(r)
	}
	return nil
}

// ReleaseAll lets go of the buttons Button left down; the helper holds
// no key between calls.
func (w *Input) ReleaseAll(ctx context.Context) error {
	defer w.lock()()
	return w.releaseAllLocked(ctx)
}

func (w *Input) releaseAllLocked(ctx context.Context) error {
	var errs []error
	for b, down := range w.down {
		if down {
			if err := w.send(context.WithoutCancel(ctx), "pointer_button", map[string]any{"button": b.String(), "action": "release"}); err != nil {
				errs = append(errs, err)
				continue
			}
			w.down[b] = false
		}
	}
	return errors.Join(errs...)
}

// Close releases what is held and refuses every later call.
func (w *Input) Close() error {
	w.closeOnce.Do(func() {
		defer w.lock()()
		w.closeErr = w.releaseAllLocked(context.Background())
		w.closed = true
	})
	return w.closeErr
}

// key checks that the helper's key_combo presses k: a character, F1 to
// F24, a modifier, or an editing or arrow key (combo_key in
// helpers/linux/src/wayland/input.rs).
func key(k input.Keysym) error {
	switch {
	case k >= 0xffe1 && k <= 0xffe4, k >= 0xffe7 && k <= 0xffec, k >= 0xff50 && k <= 0xff57, k >= 0xffbe && k <= 0xffd5,
		slices.Contains([]input.Keysym{0xff0d, 0xff8d, 0xff08, 0xff09, 0xff1b, 0xffff, 0xff63, 0xff67}, k),
		k >= 0x20 && k <= 0x7e, k >= 0xa0 && k <= 0xff, k >= 0x1000100 && k <= 0x110ffff:
		return nil
	}
	return fmt.Errorf("key %s is %w: the helper's virtual keyboard sends characters, F1 to F24, the modifiers and the editing and arrow keys", input.Combo{Keys: []input.Keysym{k}}, ErrInputUnsupported)
}
