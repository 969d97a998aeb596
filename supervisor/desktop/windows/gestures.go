package windows

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deskhand/deskhand/supervisor/input"
)

// Gestures is the input Windows offers: single pointer moves, buttons,
// wheel turns and keys, and text (Input implements it with SendInput).
type Gestures interface {
	Position(ctx context.Context) (input.Point, error)
	Move(ctx context.Context, p input.Point) error
	Button(ctx context.Context, b input.Button, down bool) error
	Wheel(ctx context.Context, direction string, clicks int) error
	Key(ctx context.Context, k input.Keysym, down bool) error
	Text(ctx context.Context, s string) error
	ReleaseAll(ctx context.Context) error
	Close() error
}

// Backend makes whole gestures (a click held for its press time, a drag
// in steps, chords, runs of text) of g's single events: input.Input's
// backend on Windows. Whatever a gesture pressed it releases, whatever
// fails.
type Backend struct{ g Gestures }

// NewBackend returns the backend over g.
func NewBackend(g Gestures) *Backend { return &Backend{g: g} }

var _ input.Backend = (*Backend)(nil)

func (b *Backend) Position(ctx context.Context) (input.Point, error) { return b.g.Position(ctx) }

func (b *Backend) Move(ctx context.Context, p input.Point) error { return b.g.Move(ctx, p) }

func (b *Backend) Button(ctx context.Context, btn input.Button, down bool) error {
	return b.g.Button(ctx, btn, down)
}

func (b *Backend) ReleaseAll(ctx context.Context) error { return b.g.ReleaseAll(ctx) }

func (b *Backend) Close() error { return b.g.Close() }

// hold presses keys in order; release lets go of what it pressed, in
// reverse, even after ctx ended.
func (b *Backend) hold(ctx context.Context, keys []input.Keysym) (release func() error, err error) {
	var pressed []input.Keysym
	release = func() error {
		var first error
		for _, k := range slices.Backward(pressed) {
			if err := b.g.Key(context.WithoutCancel(ctx), k, false); err != nil && first == nil {
				first = err
			}
		}
		pressed = nil
		return first
	}
	for _, k := range keys {
		if _, _, err := virtualKey(k); err != nil {
			release()
			return nil, err
		}
		if err := b.g.Key(ctx, k, true); err != nil {
			release()
			return nil, err
		}
		pressed = append(pressed, k)
	}
	return release, nil
}

// withKeys runs fn with keys held, releasing them after.
func (b *Backend) withKeys(ctx context.Context, keys []input.Keysym, fn func() error) (err error) {
	release, err := b.hold(ctx, keys)
	if err != nil {
		return err
	}
	defer func() {
		if rerr := release(); err == nil {
			err = rerr
		}
	}()
	return fn()
}

func (b *Backend) Click(ctx context.Context, at *input.Point, btn input.Button, count int, press time.Duration, mods []input.Keysym) error {
	if at != nil {
		if err := b.g.Move(ctx, *at); err != nil {
			return err
		}
	}
	return b.withKeys(ctx, mods, func() error {
		for i := range count {
			if i > 0 {
				if err := input.Sleep(ctx, input.ClickGap); err != nil {
					return err
				}
			}
			if err := b.g.Button(ctx, btn, true); err != nil {
				return err
			}
			input.Sleep(context.WithoutCancel(ctx), press)
			if err := b.g.Button(context.WithoutCancel(ctx), btn, false); err != nil {
				return err
			}
		}
		return nil
	})
}

func (b *Backend) Drag(ctx context.Context, from, to input.Point, mods []input.Keysym) error {
	return b.withKeys(ctx, mods, func() (err error) {
		if err := b.g.Move(ctx, from); err != nil {
			return err
		}
		if err := b.g.Button(ctx, input.ButtonLeft, true); err != nil {
			return err
		}
		defer func() {
			if uerr := b.g.Button(context.WithoutCancel(ctx), input.ButtonLeft, false); err == nil {
				err = uerr
			}
		}()
		if err := input.Sleep(ctx, input.DragHoldDelay); err != nil {
			return err
		}
		for i := 1; i <= input.DragSteps; i++ {
			if err := b.g.Move(ctx, input.DragStep(from, to, i)); err != nil {
				return err
			}
			if err := input.Sleep(ctx, input.DragStepDelay); err != nil {
				return err
			}
		}
		return nil
	})
}

// wheelNames are the directions Input.Wheel takes, by input.Wheel.
var wheelNames = [...]string{input.WheelUp: "up", input.WheelDown: "down", input.WheelLeft: "left", input.WheelRight: "right"}

func (b *Backend) Wheel(ctx context.Context, at input.Point, w input.Wheel, clicks int, mods []input.Keysym) error {
	if int(w) >= len(wheelNames) {
		return fmt.Errorf("unknown scroll direction %d", w)
	}
	if err := b.g.Move(ctx, at); err != nil {
		return err
	}
	return b.withKeys(ctx, mods, func() error { return b.g.Wheel(ctx, wheelNames[w], clicks) })
}

// chordKeys are c's keys as Windows presses them: an upper-case letter
// is its key with Shift, as on X11.
func chordKeys(c input.Combo) []input.Keysym {
	const shift = input.Keysym(0xffe1)
	var keys []input.Keysym
	for _, k := range c.Keys {
		if k >= 'A' && k <= 'Z' {
			if !slices.Contains(keys, shift) {
				keys = append([]input.Keysym{shift}, keys...)
			}
			k += 'a' - 'A'
		}
		keys = append(keys, k)
	}
	return keys
}

func (b *Backend) Chords(ctx context.Context, chords []input.Combo) error {
	for _, c := range chords {
		for _, k := range chordKeys(c) {
			if _, _, err := virtualKey(k); err != nil {
				return input.StoppedKeys(0, len(chords), fmt.Errorf("pressing %s: %w", c, err))
			}
		}
	}
	for i, c := range chords {
		if err := input.Cause(ctx); err != nil {
			return input.StoppedKeys(i, len(chords), err)
		}
		if err := b.withKeys(ctx, chordKeys(c), func() error { return nil }); err != nil {
			return input.StoppedKeys(i, len(chords), err)
		}
	}
	return nil
}

func (b *Backend) HoldChord(ctx context.Context, c input.Combo, d time.Duration) error {
	return b.withKeys(ctx, chordKeys(c), func() error {
		input.Sleep(ctx, d) // ended early by ctx: released all the same
		return nil
	})
}

// Text types the items in runs of at most input.TypeRun characters,
// never past a line break, each after a fresh check of ctx.
func (b *Backend) Text(ctx context.Context, items []input.TextItem) error {
	typed := 0
	for rest := items; len(rest) > 0; {
		n := input.RunLength(rest)
		var run strings.Builder
		for _, it := range rest[:n] {
			run.WriteRune(it.Char)
		}
		err := input.Cause(ctx)
		if err == nil {
			err = b.g.Text(ctx, run.String())
		}
		if err != nil {
			return input.StoppedTyping(items, typed, err)
		}
		typed += n
		rest = rest[n:]
	}
	return nil
}
