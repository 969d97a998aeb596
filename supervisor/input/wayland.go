package input

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// This file is the Wayland input backend. On a wlroots compositor the keys
// and the pointer go through the capture helper's input methods
// (helpers/PROTOCOL.md, "Input methods (Wayland only)"): no well-kept Go
// Wayland client speaks zwlr_virtual_pointer_v1 and zwp_virtual_keyboard_v1.
// The helper works in whole gestures (a click, a combination, a text), not
// in key codes, so this backend does not sit under the X11-shaped backend
// interface; Input's public methods hand over to it instead.
//
// What carries over: the keysym allowlist (every combination is parsed by
// ParseCombo, every text by planText), the Guard (its Check runs before each
// run of keys, as on macOS it is the only check: Wayland does not say
// which window has the focus), and the deadlines (each call is bounded by
// WaylandOptions.CallTimeout and by the caller's context). What does not
// map: keycodes (KeyPress hears of no key; the Escape watcher does not run
// on Wayland anyway), XKB controls and keycode borrowing (the helper
// uploads its own keymap per burst, so there is nothing of the user's to
// restore), autorepeat (a virtual keyboard does not repeat), the pointer
// position (Wayland does not tell a client where the pointer is: Position
// answers the last point deskhand moved to), held modifiers during a click,
// drag or scroll (refused), and hold_key (refused: the helper presses and
// releases a combination in one call).

// ErrWaylandUnsupported is wrapped by every operation the Wayland backend
// cannot perform.
var ErrWaylandUnsupported = errors.New("not supported on Wayland")

// WaylandCaller sends one helper request and decodes its result into
// result; bridge.Client.Call is one.
type WaylandCaller func(ctx context.Context, method string, params, result any) error

// WaylandOptions configure NewWayland.
type WaylandOptions struct {
	// Display names the Wayland display, such as "wayland-1".
	Display string
	// Call reaches the helper. Required.
	Call WaylandCaller
	// CallTimeout bounds each helper call; 0 means defaultStallTimeout.
	CallTimeout time.Duration
	// Logger receives debug and warning records; nil discards them.
	Logger *slog.Logger
}

// wayland is the state of an Input that sends through the helper.
type wayland struct {
	call    WaylandCaller
	timeout time.Duration

	mu     sync.Mutex // one gesture at a time, in order
	closed bool
	pos    Point
	down   map[Button]bool
}

// NewWayland returns an Input that sends through the helper's Wayland
// input methods. It opens nothing: the helper is reached on first use.
func NewWayland(opts WaylandOptions) (*Input, error) {
	if opts.Call == nil {
		return nil, errors.New("opening Wayland input: no helper to send through")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	t := opts.CallTimeout
	if t <= 0 {
		t = defaultStallTimeout
	}
	return &Input{display: opts.Display, log: log, wl: &wayland{call: opts.Call, timeout: t, down: map[Button]bool{}}}, nil
}

// send makes one helper call, bounded by the call timeout, under w.mu.
func (w *wayland) send(ctx context.Context, method string, params map[string]any) error {
	if w.closed {
		return ErrClosed
	}
	if err := cause(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeoutCause(ctx, w.timeout, ErrStalled)
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

func (w *wayland) lock() func() {
	w.mu.Lock()
	return w.mu.Unlock
}

func noMods(mods []string, what string) error {
	if len(mods) == 0 {
		return nil
	}
	if _, err := parseMods(mods); err != nil {
		return err
	}
	return fmt.Errorf("holding %s during a %s is %w: the helper presses a key combination and releases it in one step; send the keys with key instead", strings.Join(mods, "+"), what, ErrWaylandUnsupported)
}

func (in *Input) wlMove(ctx context.Context, x, y int) error {
	defer in.wl.lock()()
	return in.wl.moveLocked(ctx, x, y)
}

func (w *wayland) moveLocked(ctx context.Context, x, y int) error {
	if err := w.send(ctx, "pointer_move", map[string]any{"x": x, "y": y}); err != nil {
		return err
	}
	w.pos = Point{x, y}
	return nil
}

func (in *Input) wlPosition() (Point, error) {
	defer in.wl.lock()()
	if in.wl.closed {
		return Point{}, ErrClosed
	}
	return in.wl.pos, nil
}

func (in *Input) wlClick(ctx context.Context, button Button, count int, mods []string) error {
	if err := noMods(mods, "click"); err != nil {
		return err
	}
	defer in.wl.lock()()
	return in.wl.send(ctx, "pointer_button", map[string]any{"button": button.String(), "action": "click", "count": count})
}

func (in *Input) wlButton(ctx context.Context, button Button, down bool) error {
	defer in.wl.lock()()
	action := "release"
	if down {
		action = "press"
	}
	if err := in.wl.send(ctx, "pointer_button", map[string]any{"button": button.String(), "action": action}); err != nil {
		return err
	}
	in.wl.down[button] = down
	return nil
}

func (in *Input) wlDrag(ctx context.Context, from, to Point, mods []string) error {
	if err := noMods(mods, "drag"); err != nil {
		return err
	}
	defer in.wl.lock()()
	w := in.wl
	if err := w.moveLocked(ctx, from.X, from.Y); err != nil {
		return err
	}
	if err := w.send(ctx, "pointer_button", map[string]any{"button": "left", "action": "press"}); err != nil {
		return err
	}
	// The button goes up whatever happens after it went down.
	release := func() error {
		return w.send(context.WithoutCancel(ctx), "pointer_button", map[string]any{"button": "left", "action": "release"})
	}
	for i := 1; i <= dragSteps; i++ {
		if err := sleepCtx(ctx, dragStepDelay); err != nil {
			return errors.Join(err, release())
		}
		if err := w.moveLocked(ctx, from.X+(to.X-from.X)*i/dragSteps, from.Y+(to.Y-from.Y)*i/dragSteps); err != nil {
			return errors.Join(err, release())
		}
	}
	if err := sleepCtx(ctx, dragHoldDelay); err != nil {
		return errors.Join(err, release())
	}
	return release()
}

func (in *Input) wlScroll(ctx context.Context, x, y int, wheel Button, amount int, mods []string) error {
	if err := noMods(mods, "scroll"); err != nil {
		return err
	}
	if amount > 100 {
		return fmt.Errorf("scroll amount %d is out of range on Wayland: scroll at most 100 clicks at a time", amount)
	}
	dx, dy := 0, 0
	switch wheel {
	case buttonWheelUp:
		dy = -amount
	case buttonWheelDown:
		dy = amount
	case buttonWheelLeft:
		dx = -amount
	case buttonWheelRight:
		dx = amount
	}
	defer in.wl.lock()()
	if err := in.wl.moveLocked(ctx, x, y); err != nil {
		return err
	}
	return in.wl.send(ctx, "pointer_scroll", map[string]any{"dx": dx, "dy": dy})
}

// wlCheck runs the Guard's check before a run of keys: on Wayland it is the
// only check, since the compositor names no focused window.
func wlCheck(ctx context.Context) error {
	g := guardOf(ctx)
	if g == nil {
		return nil
	}
	_, err := g.Check(ctx)
	return err
}

func (in *Input) wlKey(ctx context.Context, combos []Combo) error {
	names := make([][]Keysym, len(combos))
	for i, c := range combos {
		for _, k := range c.Keys {
			// An upper-case letter is the shifted key, as on X11 (ParseCombo).
			if k >= 'A' && k <= 'Z' {
				if !slices.Contains(names[i], 0xffe1) {
					names[i] = append(names[i], 0xffe1)
				}
				k += 'a' - 'A'
			}
			if err := waylandKey(k); err != nil {
				return fmt.Errorf("nothing was pressed: %w", err)
			}
			names[i] = append(names[i], k)
		}
		if len(names[i]) > 8 {
			return fmt.Errorf("nothing was pressed: %q holds %d keys; on Wayland a combination holds at most 8", c, len(names[i]))
		}
	}
	defer in.wl.lock()()
	for i, n := range names {
		if err := wlCheck(ctx); err != nil {
			return pressedBefore(i, len(names), err)
		}
		if err := in.wl.send(ctx, "key_combo", map[string]any{"keys": n}); err != nil {
			return pressedBefore(i, len(names), err)
		}
	}
	return nil
}

func (in *Input) wlType(ctx context.Context, items []typeItem) error {
	// The same runs as X11: at most typeRun characters, never past a
	// line break, each after a fresh check.
	var runs []string
	var b strings.Builder
	n := 0
	for _, it := range items {
		b.WriteRune(it.char)
		n++
		if n == typeRun || isLineBreak(it.char) {
			runs = append(runs, b.String())
			b.Reset()
			n = 0
		}
	}
	if b.Len() > 0 {
		runs = append(runs, b.String())
	}
	defer in.wl.lock()()
	typed := 0
	for _, r := range runs {
		err := wlCheck(ctx)
		if err == nil {
			err = in.wl.send(ctx, "key_type", map[string]any{"text": r})
		}
		if err != nil {
			if typed == 0 {
				return fmt.Errorf("nothing was typed: %w", err)
			}
			return fmt.Errorf("typed %d of %d characters (up to %s), then stopped: %w", typed, len(items), describeUpTo(items[:typed]), err)
		}
		typed += utf8.RuneCountInString(r)
	}
	return nil
}

func (in *Input) wlReleaseAll(ctx context.Context) error {
	defer in.wl.lock()()
	var errs []error
	for b, down := range in.wl.down {
		if down {
			if err := in.wl.send(context.WithoutCancel(ctx), "pointer_button", map[string]any{"button": b.String(), "action": "release"}); err != nil {
				errs = append(errs, err)
				continue
			}
			in.wl.down[b] = false
		}
	}
	return errors.Join(errs...)
}

func (in *Input) wlClose() error {
	in.closeOnce.Do(func() {
		in.closeErr = in.wlReleaseAll(context.Background())
		in.wl.mu.Lock()
		in.wl.closed = true
		in.wl.mu.Unlock()
	})
	return in.closeErr
}

// waylandKey checks that the helper's key_combo presses k: a character,
// F1 to F24, a modifier, or an editing or arrow key (combo_key in
// helpers/linux/src/wayland/input.rs).
func waylandKey(k Keysym) error {
	switch {
	case k >= 0xffe1 && k <= 0xffe4, k >= 0xffe7 && k <= 0xffec, k >= 0xff50 && k <= 0xff57, k >= 0xffbe && k <= 0xffd5,
		slices.Contains([]Keysym{0xff0d, 0xff8d, 0xff08, 0xff09, 0xff1b, 0xffff, 0xff63, 0xff67}, k),
		k >= 0x20 && k <= 0x7e, k >= 0xa0 && k <= 0xff, k >= 0x1000100 && k <= 0x110ffff:
		return nil
	}
	return fmt.Errorf("key %s is %w: the helper's virtual keyboard sends characters, F1 to F24, the modifiers and the editing and arrow keys", Combo{Keys: []Keysym{k}}, ErrWaylandUnsupported)
}
