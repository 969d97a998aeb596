package input

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Errors callers may test for.
var (
	// ErrClosed is returned by every method after Close.
	ErrClosed = errors.New("input: closed")
	// ErrStalled is returned while the display does not answer: by the
	// call that waited past the backend's stall timeout and by every call
	// after it, until the display answers again.
	ErrStalled = errors.New("input: the display is not answering")
)

// Backend sends gestures to one desktop: a pointer move, a click, a
// button held or let go, a drag, wheel clicks, key chords, exact text.
// The arguments are checked before a backend sees them (points on
// screen, known buttons, allowlisted keysyms, valid text); the backend
// maps keysyms and characters to its own codes, checks the Guard in the
// context (GuardOf) before each run of keys, releases what a failed or
// cancelled gesture pressed, and bounds each call when its display may
// stop answering (ErrStalled). Its methods are safe for concurrent use.
type Backend interface {
	// Position reports where the pointer is.
	Position(ctx context.Context) (Point, error)
	Move(ctx context.Context, p Point) error
	// Click moves the pointer to at unless at is nil, then clicks b count
	// times (1 to 3), each press held for press, with the keys mods held
	// throughout.
	Click(ctx context.Context, at *Point, b Button, count int, press time.Duration, mods []Keysym) error
	// Button presses b and leaves it down, or lets it go, whether or not
	// the backend pressed it.
	Button(ctx context.Context, b Button, down bool) error
	// Drag presses the left button at from, moves to to in steps (see
	// DragSteps) and lets go there, with the keys mods held throughout.
	Drag(ctx context.Context, from, to Point, mods []Keysym) error
	// Wheel moves the pointer to at and turns the wheel clicks times.
	Wheel(ctx context.Context, at Point, w Wheel, clicks int, mods []Keysym) error
	// Chords presses and releases each chord in turn; StoppedKeys words
	// an error part-way.
	Chords(ctx context.Context, chords []Combo) error
	// HoldChord presses c, holds it for d or until ctx ends, and releases
	// it; other calls may run meanwhile.
	HoldChord(ctx context.Context, c Combo, d time.Duration) error
	// Text types text exactly, whatever the keyboard layout; StoppedTyping
	// words an error part-way.
	Text(ctx context.Context, text []TextItem) error
	// ReleaseAll releases every button and key the backend holds and
	// undoes any change it made to the keyboard.
	ReleaseAll(ctx context.Context) error
	Close() error
}

// Point is a position in desktop coordinates (pixels, origin at the
// top-left of the whole screen).
type Point struct{ X, Y int }

// Button is a pointer button, numbered as X numbers them.
type Button uint8

// The buttons Click, Down and Up accept.
const (
	ButtonLeft   Button = 1
	ButtonMiddle Button = 2
	ButtonRight  Button = 3
)

func (b Button) String() string {
	switch b {
	case ButtonLeft:
		return "left"
	case ButtonMiddle:
		return "middle"
	case ButtonRight:
		return "right"
	}
	return fmt.Sprintf("button%d", uint8(b))
}

// ParseButton accepts "left", "right" and "middle" (or "center"), in any
// case.
func ParseButton(s string) (Button, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "left":
		return ButtonLeft, nil
	case "right":
		return ButtonRight, nil
	case "middle", "center":
		return ButtonMiddle, nil
	}
	return 0, fmt.Errorf("unknown mouse button %q; use left, right or middle", s)
}

func (b Button) validate() error {
	if b != ButtonLeft && b != ButtonMiddle && b != ButtonRight {
		return fmt.Errorf("unknown mouse button %d; use ButtonLeft, ButtonRight or ButtonMiddle", uint8(b))
	}
	return nil
}

// Wheel is a direction to turn the scroll wheel in.
type Wheel uint8

// The wheel directions, in the order of the X buttons 4 to 7 that send
// them.
const (
	WheelUp Wheel = iota
	WheelDown
	WheelLeft
	WheelRight
)

func (w Wheel) String() string {
	return [...]string{"up", "down", "left", "right"}[w]
}

// Click timing. Presses and releases sent back to back work without a
// window manager, but under one that grabs clicks on client windows to
// focus them (openbox, xfwm4 and others do, and replay the click to the
// application) GTK 3 measurably lost the first click of a fast double
// click and counted multi-clicks short when the button was held under
// about 8 ms or clicks came closer than that, more often on a loaded
// machine. 20 ms, well under any double-click time (GTK: 400 ms), passed
// every run. xdotool holds 12 ms; robotgo.Click 5 ms and 200 ms between
// the clicks of its double click. The likely cause (not confirmed by a
// trace of the server's events) is the window manager's click-to-focus
// grab (a synchronous passive grab on the button, the press replayed with
// AllowEvents once it has focused and raised the window): GTK 3 judges
// multi-clicks and press-release pairs by the events' server time stamps,
// and a release that arrives before the replayed press has been
// dispatched gets a time stamp that makes it look like part of the
// previous click. It is not in deskhand's hands, so the hold is a setting
// (SetClickPress; serve --click-press-ms) for desktops without that grab.
const (
	// DefaultClickPress is how long a click holds the button.
	DefaultClickPress = 20 * time.Millisecond
	// MaxClickPress bounds SetClickPress: longer is a press, not a click.
	MaxClickPress = 500 * time.Millisecond
	// ClickGap separates the clicks of a double or triple click.
	ClickGap = 20 * time.Millisecond
)

// Drag timing: several motion events, spaced out, so that toolkits see
// the pointer travel past their drag threshold and drag-and-drop targets
// have time to answer before the release (about 110 ms in all).
const (
	DragSteps     = 10
	DragStepDelay = 8 * time.Millisecond
	DragHoldDelay = 30 * time.Millisecond
)

// Sleep waits d, or until ctx ends, and says which: nil, or ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// DragStep is where step i of DragSteps of a drag from from to to moves.
func DragStep(from, to Point, i int) Point {
	return Point{from.X + (to.X-from.X)*i/DragSteps, from.Y + (to.Y-from.Y)*i/DragSteps}
}

// Input checks mouse and keyboard requests and hands them to its Backend
// as gestures. Its methods are safe for concurrent use as far as the
// backend's are.
//
// Every method that presses something releases it before returning, except
// Down and HoldKey (until its duration ends). When an operation fails, or
// its context is cancelled, the backend releases whatever it pressed.
// ReleaseAll releases everything still held, and Close calls it.
type Input struct {
	be Backend
	// clickPress is the click press time plus one nanosecond; 0 means
	// DefaultClickPress.
	clickPress atomic.Int64
}

// New returns an Input that sends through be.
func New(be Backend) *Input { return &Input{be: be} }

// SetClickPress sets how long each click holds the button, from 0 (press
// and release back to back) to MaxClickPress.
func (in *Input) SetClickPress(d time.Duration) error {
	if d < 0 || d > MaxClickPress {
		return fmt.Errorf("click press time %v is out of range: use 0 to %v", d, MaxClickPress)
	}
	in.clickPress.Store(int64(d) + 1)
	return nil
}

func (in *Input) clickHold() time.Duration {
	if d := in.clickPress.Load(); d > 0 {
		return time.Duration(d - 1)
	}
	return DefaultClickPress
}

// Close releases everything still held and closes the backend. It is
// safe to call more than once.
func (in *Input) Close() error { return in.be.Close() }

// ReleaseAll releases every mouse button and key the backend pressed and
// still holds (from Down, a running HoldKey, or an operation cut short),
// last pressed first, and undoes its changes to the keyboard. It runs
// even when ctx is already done.
func (in *Input) ReleaseAll(ctx context.Context) error {
	return in.be.ReleaseAll(context.WithoutCancel(ctx))
}

// --- mouse ---

func checkPoint(x, y int) error {
	if x < 0 || y < 0 {
		return fmt.Errorf("coordinate (%d, %d) is off screen: X and Y must be zero or more", x, y)
	}
	return nil
}

// Move puts the pointer at (x, y). The display clamps positions beyond
// the screen's right and bottom edges.
func (in *Input) Move(ctx context.Context, x, y int) error {
	if err := checkPoint(x, y); err != nil {
		return err
	}
	return in.be.Move(ctx, Point{x, y})
}

// Position reports where the pointer is.
func (in *Input) Position(ctx context.Context) (Point, error) {
	return in.be.Position(ctx)
}

// Click clicks button count times (1 single, 2 double, 3 triple) at the
// pointer's position, holding the keys named in mods (such as "shift" or
// "ctrl"; any name ParseCombo accepts) for the whole click.
//
// Each click holds the button for the click press time and multi-clicks
// are ClickGap apart (see there for why); a triple click takes about
// 100 ms.
func (in *Input) Click(ctx context.Context, button Button, count int, mods []string) error {
	return in.click(ctx, nil, button, count, mods)
}

// ClickAt moves the pointer to (x, y) and clicks there, as Move and then
// Click would, in one gesture.
func (in *Input) ClickAt(ctx context.Context, x, y int, button Button, count int, mods []string) error {
	if err := checkPoint(x, y); err != nil {
		return err
	}
	return in.click(ctx, &Point{X: x, Y: y}, button, count, mods)
}

func (in *Input) click(ctx context.Context, at *Point, button Button, count int, mods []string) error {
	if err := button.validate(); err != nil {
		return err
	}
	if count < 1 || count > 3 {
		return fmt.Errorf("click count %d is out of range: use 1 (single), 2 (double) or 3 (triple)", count)
	}
	modSyms, err := ParseMods(mods)
	if err != nil {
		return err
	}
	return in.be.Click(ctx, at, button, count, in.clickHold(), modSyms)
}

// ParseMods parses modifier key names (any ParseCombo accepts) into the
// keysyms to hold.
func ParseMods(mods []string) ([]Keysym, error) {
	var out []Keysym
	for _, m := range mods {
		c, err := ParseCombo(m)
		if err != nil {
			return nil, fmt.Errorf("modifier: %w", err)
		}
		out = append(out, c.Keys...)
	}
	return out, nil
}

// Down presses button and leaves it pressed (for a drag the caller drives
// itself). Up, ReleaseAll or Close releases it.
func (in *Input) Down(ctx context.Context, button Button) error {
	if err := button.validate(); err != nil {
		return err
	}
	return in.be.Button(ctx, button, true)
}

// Up releases button, whether or not this package pressed it.
func (in *Input) Up(ctx context.Context, button Button) error {
	if err := button.validate(); err != nil {
		return err
	}
	return in.be.Button(context.WithoutCancel(ctx), button, false)
}

// Drag presses the left button at from, moves to to in a few steps and
// releases it there, holding the modifier keys mods (as for Click) for
// the whole drag.
func (in *Input) Drag(ctx context.Context, from, to Point, mods ...string) error {
	if err := checkPoint(from.X, from.Y); err != nil {
		return err
	}
	if err := checkPoint(to.X, to.Y); err != nil {
		return err
	}
	modSyms, err := ParseMods(mods)
	if err != nil {
		return err
	}
	return in.be.Drag(ctx, from, to, modSyms)
}

// Scroll moves the pointer to (x, y) and turns the wheel amount clicks in
// direction: "up", "down", "left" or "right", holding the modifier keys
// mods (as for Click) meanwhile.
func (in *Input) Scroll(ctx context.Context, x, y int, direction string, amount int, mods ...string) error {
	if err := checkPoint(x, y); err != nil {
		return err
	}
	var wheel Wheel
	switch strings.ToLower(strings.TrimSpace(direction)) {
	case "up":
		wheel = WheelUp
	case "down":
		wheel = WheelDown
	case "left":
		wheel = WheelLeft
	case "right":
		wheel = WheelRight
	default:
		return fmt.Errorf("unknown scroll direction %q; use up, down, left or right", direction)
	}
	if amount < 1 {
		return fmt.Errorf("scroll amount %d is out of range: scroll at least 1 click", amount)
	}
	modSyms, err := ParseMods(mods)
	if err != nil {
		return err
	}
	return in.be.Wheel(ctx, Point{x, y}, wheel, amount, modSyms)
}

// --- keyboard ---

// Key presses and releases each key combination in keys, xdotool-style:
// "ctrl+shift+t", "Return", "super", "alt+F4", or several separated by
// spaces ("ctrl+a ctrl+c"). See ParseCombo for key names.
func (in *Input) Key(ctx context.Context, keys string) error {
	combos, err := ParseKeys(keys)
	if err != nil {
		return err
	}
	return in.be.Chords(ctx, combos)
}

// StoppedKeys words the error of a Chords call that stopped before chord
// i of n.
func StoppedKeys(i, n int, err error) error {
	if n == 1 {
		return fmt.Errorf("nothing was pressed: %w", err)
	}
	return fmt.Errorf("pressed %d of %d key combinations, then stopped: %w", i, n, err)
}

// HoldKey presses the combination, holds it for d (or until ctx is done)
// and releases it. Other operations may run while it is held; ReleaseAll
// releases it early.
func (in *Input) HoldKey(ctx context.Context, combo string, d time.Duration) error {
	c, err := ParseCombo(combo)
	if err != nil {
		return err
	}
	if d < 0 {
		return fmt.Errorf("hold duration %s is negative", d)
	}
	return in.be.HoldChord(ctx, c, d)
}

// Type types text exactly, whatever the keyboard layout. "\n" (and
// "\r\n") types Return, "\t" Tab. Other control characters are an error,
// and nothing is typed.
func (in *Input) Type(ctx context.Context, text string) error {
	items, err := PlanText(text)
	if err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	return in.be.Text(ctx, items)
}

// TextItem is one character of text to type: the keysyms that produce
// it, best first.
type TextItem struct {
	Char rune
	Syms []Keysym
}

// PlanText checks text and maps each character to its keysyms; "\r\n"
// becomes one line break.
func PlanText(text string) ([]TextItem, error) {
	if !utf8.ValidString(text) {
		return nil, fmt.Errorf("the text is not valid UTF-8")
	}
	items := make([]TextItem, 0, len(text))
	prevCR := false
	for i, r := range text {
		if r == '\n' && prevCR {
			prevCR = false
			continue // \r\n is one line break
		}
		prevCR = r == '\r'
		syms, err := textKeysyms(r)
		if err != nil {
			return nil, fmt.Errorf("character %d of the text: %w", utf8.RuneCountInString(text[:i])+1, err)
		}
		items = append(items, TextItem{Char: r, Syms: syms})
	}
	return items, nil
}

// TypeRun bounds the characters a guarded Text sends between two checks
// of the Guard.
const TypeRun = 32

// RunLength is how many of items a guarded Text sends between two
// checks: up to and including the first line break, at most TypeRun.
func RunLength(items []TextItem) int {
	for i, it := range items {
		if IsLineBreak(it.Char) || i+1 == TypeRun {
			return i + 1
		}
	}
	return len(items)
}

// IsLineBreak reports whether r ends a line of typed text.
func IsLineBreak(r rune) bool { return r == '\n' || r == '\r' }

// StoppedTyping words the error of a Text call that typed the first
// typed of items and then stopped.
func StoppedTyping(items []TextItem, typed int, err error) error {
	if typed == 0 {
		return fmt.Errorf("nothing was typed: %w", err)
	}
	return fmt.Errorf("typed %d of %d characters (up to %s), then stopped: %w", typed, len(items), describeUpTo(items[:typed]), err)
}

// describeUpTo names where typing stopped, for the model: the line it was
// on, quoted, or its last characters.
func describeUpTo(done []TextItem) string {
	var line []rune
	breaks := 0
	for _, it := range done {
		if IsLineBreak(it.Char) {
			breaks++
			line = line[:0]
			continue
		}
		line = append(line, it.Char)
	}
	if len(line) > 20 {
		line = line[len(line)-20:]
	}
	if len(line) == 0 && breaks > 0 {
		return fmt.Sprintf("the end of line %d", breaks)
	}
	return fmt.Sprintf("%q on line %d", string(line), breaks+1)
}
