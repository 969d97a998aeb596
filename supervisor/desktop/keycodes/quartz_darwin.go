package keycodes

// The macOS backend: Quartz Event Services, called through purego (the
// loader robotgo's own cgo-free macOS backend uses), so this file builds and
// vets with CGO_ENABLED=0 on any machine. It presents the Input logic with
// a keyboard of the layout-independent Mac keys (supervisor/platform
// MacKeys) plus spare keycodes; every character is "bound" to a spare
// keycode and sent as a Unicode key event, which types it on any layout.
// With Command, Control or Option held, a bound character is a shortcut,
// which macOS matches by key: it is sent as the key that types it on the
// active layout, found, and checked by every chord that key means, through
// QuartzShortcuts at the moment of the press (never a US-layout guess: on
// AZERTY the US "A" key is Q, and Cmd-A would quit the app).
//
// Every event deskhand posts carries SyntheticMarker in its
// eventSourceUserData field, so the helper's teaching overlay can tell it
// from the user's own input.
//
// New routes here on darwin (no shortcuts: a shortcut character is then
// refused); NewQuartz names the backend and its shortcut resolver.

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/deskhand/deskhand/supervisor/platform"
	"github.com/ebitengine/purego"
)

// NewQuartz starts an Input that posts macOS Quartz events, sending
// shortcut characters as the keys shortcuts resolves. It fails when macOS
// has not granted Accessibility, which event posting needs.
func NewQuartz(opts Options, shortcuts QuartzShortcuts) (*Input, error) {
	return newInput(opts, func(display string) (backend, string, error) {
		b, name, err := openQuartz(display)
		if err == nil {
			b.(*quartzBackend).shortcuts = shortcuts
		}
		return b, name, err
	})
}

// QuartzShortcuts finds the key that sends a shortcut's character on the
// active keyboard layout. It is asked at each press, on the input thread,
// and refuses (an error the key tool reports) when the layout has no such
// key or when the press would mean a system shortcut other than the one
// asked, which no gate has checked.
type QuartzShortcuts interface {
	ShortcutKey(mods platform.Modifier, r rune) (code uint16, err error)
}

// SyntheticMarker is what every event deskhand posts carries in its
// eventSourceUserData field (helpers/macos TeachOverlay.syntheticMarker
// holds the same value): "dskhand" and a version byte.
const SyntheticMarker int64 = 0x6473_6b68_616e_6401

// Quartz keycodes: a Mac virtual key code plus quartzCodeOffset, so the
// X keycode range rules (8 is the lowest) hold; codes from quartzFirstSpare
// up carry bound characters.
const (
	quartzCodeOffset = 8
	quartzFirstSpare = 136
)

// Quartz Event Services constants (CGEventTypes.h).
const (
	cgHIDEventTap          = 0
	cgSourceHIDSystemState = 1
	cgMouseMoved           = 5
	cgScrollUnitLine       = 1
	cgFieldClickState      = 1
	cgFieldSourceUserData  = 42
	cgFlagShift            = 0x00020000
	cgFlagControl          = 0x00040000
	cgFlagOption           = 0x00080000
	cgFlagCommand          = 0x00100000
	doubleClickWindow      = 500 * time.Millisecond
	doubleClickSlop        = 4
)

type cgPoint struct{ X, Y float64 }

// quartzAPI is the slice of CoreGraphics and ApplicationServices used here.
type quartzAPI struct {
	sourceCreate         func(state int32) uintptr
	create               func(source uintptr) uintptr
	createMouseEvent     func(source uintptr, kind uint32, at cgPoint, button uint32) uintptr
	createKeyboardEvent  func(source uintptr, code uint16, down bool) uintptr
	createScrollEvent2   func(source uintptr, units uint32, wheels uint32, w1, w2, w3 int32) uintptr
	keyboardSetUnicode   func(event uintptr, length uint64, chars *uint16)
	setFlags             func(event uintptr, flags uint64)
	setIntegerValueField func(event uintptr, field uint32, value int64)
	getLocation          func(event uintptr) cgPoint
	post                 func(tap uint32, event uintptr)
	release              func(ref uintptr)
	axIsProcessTrusted   func() bool
}

var loadQuartz = sync.OnceValues(func() (*quartzAPI, error) {
	const (
		cg = "/System/Library/Frameworks/CoreGraphics.framework/CoreGraphics"
		cf = "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation"
		as = "/System/Library/Frameworks/ApplicationServices.framework/ApplicationServices"
	)
	libs := map[string]uintptr{}
	for _, path := range []string{cg, cf, as} {
		lib, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			return nil, fmt.Errorf("loading %s: %w", path, err)
		}
		libs[path] = lib
	}
	q := &quartzAPI{}
	var err error
	func() {
		// RegisterLibFunc panics on a missing symbol.
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("binding Quartz Event Services: %v", r)
			}
		}()
		purego.RegisterLibFunc(&q.sourceCreate, libs[cg], "CGEventSourceCreate")
		purego.RegisterLibFunc(&q.create, libs[cg], "CGEventCreate")
		purego.RegisterLibFunc(&q.createMouseEvent, libs[cg], "CGEventCreateMouseEvent")
		purego.RegisterLibFunc(&q.createKeyboardEvent, libs[cg], "CGEventCreateKeyboardEvent")
		// The fixed-arity variant: purego cannot call the variadic one.
		purego.RegisterLibFunc(&q.createScrollEvent2, libs[cg], "CGEventCreateScrollWheelEvent2")
		purego.RegisterLibFunc(&q.keyboardSetUnicode, libs[cg], "CGEventKeyboardSetUnicodeString")
		purego.RegisterLibFunc(&q.setFlags, libs[cg], "CGEventSetFlags")
		purego.RegisterLibFunc(&q.setIntegerValueField, libs[cg], "CGEventSetIntegerValueField")
		purego.RegisterLibFunc(&q.getLocation, libs[cg], "CGEventGetLocation")
		purego.RegisterLibFunc(&q.post, libs[cg], "CGEventPost")
		purego.RegisterLibFunc(&q.release, libs[cf], "CFRelease")
		purego.RegisterLibFunc(&q.axIsProcessTrusted, libs[as], "AXIsProcessTrusted")
	}()
	if err != nil {
		return nil, err
	}
	return q, nil
})

// errNoAccessibility says what the user must do; event posting without the
// grant is silently dropped by macOS.
var errNoAccessibility = errors.New("macOS has not granted Accessibility to deskhand, so its mouse and keyboard events would be dropped; " +
	"open System Settings > Privacy & Security > Accessibility, switch on deskhand (or the app that runs it, such as Terminal), then restart deskhand")

func openQuartz(string) (backend, string, error) {
	q, err := loadQuartz()
	if err != nil {
		return nil, "", fmt.Errorf("opening Quartz Event Services: %w", err)
	}
	if !q.axIsProcessTrusted() {
		return nil, "", errNoAccessibility
	}
	return &quartzBackend{q: q, bound: map[keycode]rune{}, held: map[keycode]bool{}, shortcutDown: map[keycode]uint16{}}, "quartz", nil
}

// errNoShortcuts: without a resolver there is no telling which key types a
// character on the user's layout, and guessing the US one is the bug.
var errNoShortcuts = errors.New("this deskhand cannot read the macOS keyboard layout, so it cannot send shortcuts with characters; " +
	"use keys that do not depend on the layout (Return, Tab, arrows, F-keys) or the type tool")

// quartzBackend implements backend with Quartz events. Only Input's worker
// goroutine calls it.
type quartzBackend struct {
	q     *quartzAPI
	bound map[keycode]rune
	held  map[keycode]bool // modifier keys held
	// shortcuts resolves shortcut characters; shortcutDown remembers the
	// key each bound keycode pressed, so its release lifts that key even
	// if the layout changed in between.
	shortcuts    QuartzShortcuts
	shortcutDown map[keycode]uint16
	buttons      [4]bool  // by Button; index 0 unused
	last         struct { // the last button press, for click counting
		button Button
		at     time.Time
		pos    Point
		count  int64
	}
}

func (b *quartzBackend) alive() error {
	if !b.q.axIsProcessTrusted() {
		return errNoAccessibility
	}
	return nil
}

// sync has nothing to wait for: CGEventPost hands each event to the window
// server before it returns.
func (b *quartzBackend) sync() error { return nil }
func (b *quartzBackend) close()      {}

// post creates an event with a HID-state source, lets set adjust it, posts
// it and releases it.
func (b *quartzBackend) post(create func(source uintptr) uintptr, set func(event uintptr)) error {
	source := b.q.sourceCreate(cgSourceHIDSystemState)
	event := create(source)
	if source != 0 {
		b.q.release(source)
	}
	if event == 0 {
		return errors.New("Quartz could not create an input event")
	}
	if set != nil {
		set(event)
	}
	b.q.setIntegerValueField(event, cgFieldSourceUserData, SyntheticMarker)
	b.q.post(cgHIDEventTap, event)
	b.q.release(event)
	return nil
}

func (b *quartzBackend) position() (Point, error) {
	event := b.q.create(0)
	if event == 0 {
		return Point{}, errors.New("Quartz could not read the pointer position")
	}
	p := b.q.getLocation(event)
	b.q.release(event)
	return Point{X: int(p.X), Y: int(p.Y)}, nil
}

// mouseEvents are the down, up and dragged event types and the button
// number of each button (CGEventTypes.h).
var mouseEvents = map[Button][4]uint32{
	ButtonLeft:   {1, 2, 6, 0},
	ButtonRight:  {3, 4, 7, 1},
	ButtonMiddle: {25, 26, 27, 2},
}

func (b *quartzBackend) move(x, y int) error {
	kind, button := uint32(cgMouseMoved), uint32(0)
	// With a button held, macOS expects dragged events, or drags do nothing.
	for _, btn := range []Button{ButtonLeft, ButtonRight, ButtonMiddle} {
		if b.buttons[btn] {
			kind, button = mouseEvents[btn][2], mouseEvents[btn][3]
			break
		}
	}
	at := cgPoint{float64(x), float64(y)}
	return b.post(func(s uintptr) uintptr { return b.q.createMouseEvent(s, kind, at, button) }, b.withFlags)
}

func (b *quartzBackend) button(btn Button, down bool) error {
	switch btn {
	case buttonWheelUp, buttonWheelDown, buttonWheelLeft, buttonWheelRight:
		if !down {
			return nil
		}
		// Line units; positive is up and left, as X's buttons 4 and 6.
		var vertical, horizontal int32
		switch btn {
		case buttonWheelUp:
			vertical = 1
		case buttonWheelDown:
			vertical = -1
		case buttonWheelLeft:
			horizontal = 1
		case buttonWheelRight:
			horizontal = -1
		}
		return b.post(func(s uintptr) uintptr {
			return b.q.createScrollEvent2(s, cgScrollUnitLine, 2, vertical, horizontal, 0)
		}, b.withFlags)
	}
	kinds, ok := mouseEvents[btn]
	if !ok {
		return fmt.Errorf("button %v has no macOS mouse event", btn)
	}
	pos, err := b.position()
	if err != nil {
		return err
	}
	if down {
		// macOS counts multi-clicks from the click state field, not from
		// timing, so deskhand keeps the count the way the system would.
		l := &b.last
		near := abs(pos.X-l.pos.X) <= doubleClickSlop && abs(pos.Y-l.pos.Y) <= doubleClickSlop
		if l.button == btn && near && time.Since(l.at) < doubleClickWindow {
			l.count++
		} else {
			l.count = 1
		}
		l.button, l.at, l.pos = btn, time.Now(), pos
	}
	kind := kinds[1]
	if down {
		kind = kinds[0]
	}
	b.buttons[btn] = down
	count := b.last.count
	at := cgPoint{float64(pos.X), float64(pos.Y)}
	return b.post(func(s uintptr) uintptr { return b.q.createMouseEvent(s, kind, at, kinds[3]) }, func(e uintptr) {
		b.q.setIntegerValueField(e, cgFieldClickState, count)
		b.withFlags(e)
	})
}

// flags are the modifier flags of the modifier keys held.
func (b *quartzBackend) flags() uint64 {
	var f uint64
	for code := range b.held {
		if k, ok := quartzKeyForCode(code); ok {
			switch k.Modifier {
			case platform.Shift:
				f |= cgFlagShift
			case platform.Control:
				f |= cgFlagControl
			case platform.Option:
				f |= cgFlagOption
			case platform.Command:
				f |= cgFlagCommand
			}
		}
	}
	return f
}

func (b *quartzBackend) withFlags(event uintptr) { b.q.setFlags(event, b.flags()) }

// mods are the modifier keys held, as platform modifiers.
func (b *quartzBackend) mods() platform.Modifier {
	var m platform.Modifier
	for code := range b.held {
		if k, ok := quartzKeyForCode(code); ok {
			m |= k.Modifier
		}
	}
	return m
}

func (b *quartzBackend) key(code keycode, down bool) error {
	if vk, ok := b.shortcutDown[code]; ok && !down {
		delete(b.shortcutDown, code)
		return b.post(func(s uintptr) uintptr { return b.q.createKeyboardEvent(s, vk, false) }, b.withFlags)
	}
	if r, ok := b.bound[code]; ok {
		if mods := b.mods(); mods&(platform.Command|platform.Control|platform.Option) != 0 && down {
			// A shortcut: macOS matches Command-C by key, not by text.
			if b.shortcuts == nil {
				return errNoShortcuts
			}
			vk, err := b.shortcuts.ShortcutKey(mods, r)
			if err != nil {
				return err
			}
			b.shortcutDown[code] = vk
			return b.post(func(s uintptr) uintptr { return b.q.createKeyboardEvent(s, vk, true) }, b.withFlags)
		}
		units := utf16.Encode([]rune{r})
		return b.post(func(s uintptr) uintptr { return b.q.createKeyboardEvent(s, 0, down) }, func(e uintptr) {
			b.q.keyboardSetUnicode(e, uint64(len(units)), &units[0])
			b.withFlags(e)
		})
	}
	k, ok := quartzKeyForCode(code)
	if !ok {
		return fmt.Errorf("keycode %d is neither a Mac key nor bound to a character", code)
	}
	if k.Modifier != 0 {
		if down {
			b.held[code] = true
		} else {
			delete(b.held, code)
		}
	}
	return b.post(func(s uintptr) uintptr { return b.q.createKeyboardEvent(s, k.Code, down) }, b.withFlags)
}

// quartzKeyForCode finds the Mac key a (non-spare) keycode stands for.
func quartzKeyForCode(code keycode) (platform.MacKey, bool) {
	if code < quartzCodeOffset || code >= quartzFirstSpare {
		return platform.MacKey{}, false
	}
	vk := uint16(code) - quartzCodeOffset
	for _, k := range platform.MacKeys {
		if k.Code == vk {
			return k, true
		}
	}
	return platform.MacKey{}, false
}

// kbdState reports nothing held, latched or locked: characters go out as
// Unicode events, which Caps Lock and the layout's levels do not change.
func (b *quartzBackend) kbdState() (kbdState, error) { return kbdState{}, nil }

func (b *quartzBackend) latchMods(mask, values modMask) error { return nil }
func (b *quartzBackend) lockMods(mask, values modMask) error  { return nil }

// keyboard is one level per key: the layout-independent Mac keys, with
// modifier keys setting their X modifier, then the spare keycodes.
func (b *quartzBackend) keyboard() (keyboard, error) {
	kb := keyboard{types: []keyType{{mask: 0}}}
	used := map[keycode]bool{}
	for _, k := range platform.MacKeys {
		code := keycode(k.Code + quartzCodeOffset)
		if used[code] {
			continue // a second keysym for the same key (Meta_L, Alt_L)
		}
		used[code] = true
		var set modMask
		switch k.Modifier {
		case platform.Shift:
			set = modShift
		case platform.Control:
			set = modControl
		case platform.Option:
			set = mod1
		case platform.Command:
			set = mod4
		}
		kb.keys = append(kb.keys, keyInfo{code: code, typ: 0, syms: []Keysym{Keysym(k.Keysym)}, setMods: set})
	}
	for code := quartzFirstSpare; code <= 255; code++ {
		kb.keys = append(kb.keys, keyInfo{code: keycode(code), typ: -1})
	}
	return kb, nil
}

// bind records which character each spare keycode sends. Only character
// keysyms can be bound: Latin-1 and Unicode ones.
func (b *quartzBackend) bind(codes []keycode, syms []Keysym) error {
	for i, code := range codes {
		r, ok := keysymRune(syms[i])
		if !ok {
			return fmt.Errorf("keysym %v has no macOS key and is not a character", syms[i])
		}
		b.bound[code] = r
	}
	return nil
}

func (b *quartzBackend) unbind(codes []keycode) error {
	for _, code := range codes {
		delete(b.bound, code)
	}
	return nil
}

// confirmRead has nothing to wait for: each posted event carries its own
// character, so taking a binding back cannot change what an application
// has yet to read.
func (b *quartzBackend) confirmRead(time.Duration) (bool, error) { return true, nil }

// keysymRune is the character a character keysym stands for.
func keysymRune(k Keysym) (rune, bool) {
	switch {
	case k >= 0x20 && k <= 0x7e, k >= 0xa0 && k <= 0xff:
		return rune(k), true
	case k > 0x01000000 && k <= 0x0110ffff: // Unicode keysyms
		return rune(k - 0x01000000), true
	}
	return 0, false
}

// Quartz has no server grab and no window ids a Guard would know; a
// guarded operation relies on its Guard's Check alone here.
func (b *quartzBackend) grab() error                      { return nil }
func (b *quartzBackend) ungrab() error                    { return nil }
func (b *quartzBackend) focusChain() ([]uint32, error)    { return nil, errFocusUnknown }
func (b *quartzBackend) keyRepeats(keycode) (bool, error) { return false, nil }
func (b *quartzBackend) setKeyRepeat(keycode, bool) error { return nil }

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
