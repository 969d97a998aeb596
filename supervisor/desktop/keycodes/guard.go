package keycodes

import (
	"errors"
	"fmt"
	"strings"

	"github.com/deskhand/deskhand/supervisor/input"
)

// This file keeps deskhand's keys from changing the keyboard behind the
// user's back: the XKB controls (StickyKeys, SlowKeys, MouseKeys ...) and
// modifiers latched or locked through them, and it refuses a press whose
// XKB action would act outside the focused application.
//
// The rule is that deskhand never leaves changed what deskhand changed.
// The controls are recorded when the Input opens; before each operation a
// difference is the user's own doing (every operation is checked after it
// runs), so it becomes the new record, unless deskhand holds a key at the
// time (a hold_key in progress); after each operation, and between
// the combinations of one Key call, a difference is deskhand's and is put
// back at once. ReleaseAll (each turn's end) and Close put the record back
// as well. An operation that sends pointer events only (a move, or a
// click, drag or scroll without modifiers) is not checked: the X server's
// pointer events change no XKB control and latch or lock nothing (they
// only clear latches, which are the user's). It is checked all the same
// when the last check did not finish or while deskhand holds a key, when
// a change may still be deskhand's.

// xkbControls are the XKB controls the guard records and restores.
type xkbControls struct {
	enabled         uint32 // XkbControlsRec.enabled_ctrls
	mouseKeysButton uint8  // mk_dflt_btn, which Pointer_Button_Dflt presses
	accessXOptions  uint16 // ax_options (StickyKeys latch-to-lock, feedback)
}

// XKB boolean controls (XKB.h).
const (
	ctlRepeatKeys  uint32 = 1 << 0
	ctlMouseKeys   uint32 = 1 << 4
	ctlAllBoolean  uint32 = 0x1fff
	ctlStickyKeys  uint32 = 1 << 3
	ctlAccessXKeys uint32 = 1 << 6
)

// guardedControls are the controls put back. RepeatKeys is left out: it is
// the user's `xset r` setting, and holding keys may turn autorepeat off on
// purpose; autorepeat sends no new kind of input.
const guardedControls = ctlAllBoolean &^ ctlRepeatKeys

var controlNames = []string{
	"RepeatKeys", "SlowKeys", "BounceKeys", "StickyKeys", "MouseKeys", "MouseKeysAccel",
	"AccessXKeys", "AccessXTimeout", "AccessXFeedback", "AudibleBell", "Overlay1", "Overlay2", "IgnoreGroupLock",
}

func (c xkbControls) same(o xkbControls) bool {
	return c.enabled&guardedControls == o.enabled&guardedControls &&
		c.mouseKeysButton == o.mouseKeysButton && c.accessXOptions == o.accessXOptions
}

// diff names the guarded controls that differ between c and o.
func (c xkbControls) diff(o xkbControls) string {
	var parts []string
	for bit, name := range controlNames {
		m := uint32(1) << bit
		if m&guardedControls != 0 && c.enabled&m != o.enabled&m {
			state := "off"
			if o.enabled&m != 0 {
				state = "on"
			}
			parts = append(parts, name+" "+state)
		}
	}
	if c.mouseKeysButton != o.mouseKeysButton {
		parts = append(parts, fmt.Sprintf("MouseKeys default button %d", o.mouseKeysButton))
	}
	if c.accessXOptions != o.accessXOptions {
		parts = append(parts, fmt.Sprintf("AccessX options %#x", o.accessXOptions))
	}
	return strings.Join(parts, ", ")
}

// controlsBackend is implemented by backends with XKB controls (X11).
type controlsBackend interface {
	controls() (xkbControls, error)
	// setControls sets the guarded controls to c's, leaving the others.
	setControls(c xkbControls) error
}

// keyGuard is the Input's record, owned by the worker goroutine.
type keyGuard struct {
	be     controlsBackend // nil: the backend has no XKB controls
	record xkbControls
	known  bool
	before kbdState // keyboard state when the current operation began
	// unsettled: the last check did not finish, so a difference may
	// still be deskhand's.
	unsettled bool
}

// startGuard records the controls as the Input opens.
func (in *Input) startGuard() {
	cb, ok := in.be.(controlsBackend)
	if !ok {
		return
	}
	in.guard.be = cb
	c, err := cb.controls()
	if err != nil {
		in.log.Warn("cannot record the XKB controls; deskhand will not put them back", "err", err)
		return
	}
	in.guard.record, in.guard.known = c, true
}

// beginGuard runs before each operation: it takes a change since the last
// operation as the user's, and notes the modifier state.
func (in *Input) beginGuard() {
	g := &in.guard
	if g.be == nil {
		return
	}
	if c, err := g.be.controls(); err == nil && !(g.known && g.record.same(c)) {
		switch {
		case (len(in.held) > 0 || g.unsettled) && g.known:
			// A key deskhand holds (hold_key) may have done it: holding
			// Shift for eight seconds toggles SlowKeys under AccessXKeys.
			// checkGuard puts it back.
		default:
			if g.known {
				in.log.Info("the XKB controls were changed outside deskhand; keeping them", "change", g.record.diff(c))
			}
			g.record, g.known = c, true
		}
	}
	if st, err := in.be.kbdState(); err == nil {
		g.before = st
	}
}

// checkGuard puts back what the operation so far changed: the controls,
// modifiers it left latched, and modifiers it left locked other than Caps
// Lock and Num Lock (which "key Caps_Lock" toggles on purpose). It reports
// what it put back, "" if nothing.
func (in *Input) checkGuard() (string, error) {
	g := &in.guard
	if g.be == nil {
		return "", nil
	}
	g.unsettled = true
	if err := in.be.sync(); err != nil {
		return "", err
	}
	var fixed []string
	if g.known {
		c, err := g.be.controls()
		if err != nil {
			return "", err
		}
		if !g.record.same(c) {
			if err := g.be.setControls(g.record); err != nil {
				return "", fmt.Errorf("putting back the XKB controls: %w", err)
			}
			fixed = append(fixed, "XKB controls ("+g.record.diff(c)+")")
		}
	}
	st, err := in.be.kbdState()
	if err != nil {
		return "", err
	}
	if latched := st.latched &^ g.before.latched; latched != 0 {
		if err := in.be.latchMods(latched, 0); err != nil {
			return "", err
		}
		fixed = append(fixed, fmt.Sprintf("latched modifiers %#02x", uint8(latched)))
	}
	if locked := st.locked &^ g.before.locked &^ (modLock | mod2); locked != 0 {
		if err := in.be.lockMods(locked, 0); err != nil {
			return "", err
		}
		fixed = append(fixed, fmt.Sprintf("locked modifiers %#02x", uint8(locked)))
	}
	if len(fixed) == 0 {
		g.unsettled = false
		return "", nil
	}
	msg := strings.Join(fixed, ", ")
	in.log.Warn("deskhand's keys changed the keyboard; put it back", "restored", msg)
	if err := in.be.sync(); err != nil {
		return msg, err
	}
	g.unsettled = false
	return msg, nil
}

// restoreControls puts the recorded controls back (turn end, Close). It
// runs after beginGuard took in the user's changes, so what differs now
// is deskhand's: a hold_key cut short, or a check that failed.
func (in *Input) restoreControls() error {
	g := &in.guard
	if g.be == nil || !g.known {
		return nil
	}
	c, err := g.be.controls()
	if err != nil {
		return err
	}
	if g.record.same(c) {
		return nil
	}
	in.log.Warn("putting the XKB controls back", "change", g.record.diff(c))
	return g.be.setControls(g.record)
}

// mouseKeysOn reports whether MouseKeys is enabled, so that keypad keys
// would move or click the pointer.
func (in *Input) mouseKeysOn() bool {
	g := &in.guard
	if g.be == nil {
		return false
	}
	c, err := g.be.controls()
	if err != nil {
		return true // fail closed: refuse keypad keys
	}
	return c.enabled&ctlMouseKeys != 0
}

// XKB action types (XKB.h) a key press may trigger.
const (
	xkbActionNone          = 0x00
	xkbActionSetMods       = 0x01
	xkbActionLatchMods     = 0x02
	xkbActionLockMods      = 0x03
	xkbActionSetGroup      = 0x04
	xkbActionLatchGroup    = 0x05
	xkbActionMovePtr       = 0x07
	xkbActionPtrBtn        = 0x08
	xkbActionLockPtrBtn    = 0x09
	xkbActionSetPtrDflt    = 0x0a
	xkbActionISOLock       = 0x0b
	xkbActionTerminate     = 0x0c
	xkbActionSwitchScreen  = 0x0d
	xkbActionSetControls   = 0x0e
	xkbActionLockControls  = 0x0f
	xkbActionXFree86Privte = 0x86
)

// actionRefusal is "" when a press may trigger action type a, else what
// the action would do.
func actionRefusal(a uint8, mouseKeys bool) string {
	switch a {
	case xkbActionNone, xkbActionSetMods, xkbActionLatchMods, xkbActionLockMods, xkbActionSetGroup, xkbActionLatchGroup:
		return ""
	case xkbActionMovePtr, xkbActionPtrBtn, xkbActionLockPtrBtn, xkbActionSetPtrDflt:
		if !mouseKeys {
			return "" // XKB ignores pointer actions while MouseKeys is off
		}
		return "MouseKeys is on, so this key moves or clicks the pointer outside the click tools' rules"
	case xkbActionTerminate:
		return "its XKB action kills the X server"
	case xkbActionSwitchScreen:
		return "its XKB action switches to another virtual terminal or screen"
	case xkbActionSetControls, xkbActionLockControls:
		return "its XKB action switches XKB controls (StickyKeys, MouseKeys ...)"
	case xkbActionXFree86Privte:
		return "its XKB action acts on the X server (grabs, video modes)"
	}
	return fmt.Sprintf("its XKB action (type %#x) acts outside the focused application", a)
}

// checkPress refuses pressing code while mods are in effect when the key
// would produce a keysym outside the allowlist (ctrl+alt+F1 is
// XF86Switch_VT_1 on most layouts) or trigger an XKB action that acts
// outside the focused application, or, while MouseKeys is on, is a keypad
// key.
func (kb *kbdSession) checkPress(code keycode, mods modMask, want Keysym) error {
	sym, act, known := kb.symAt(code, mods)
	if !known {
		// A spare keycode deskhand bound itself, to an allowed keysym.
		sym = kb.in.bound[code]
	}
	if want == 0 {
		want = sym
	}
	var why string
	if sym != 0 && sym != keysymVoid {
		var refused *input.KeyNotAllowedError
		if errors.As(input.CheckKeysym(sym), &refused) {
			why = refused.Why
		} else if kb.mouseKeys && keypadPointerKey(sym) {
			why = "MouseKeys is on, so keypad keys move or click the pointer outside the click tools' rules"
		}
	}
	if why == "" && known {
		why = actionRefusal(act, kb.mouseKeys)
	}
	if why == "" {
		return nil
	}
	if sym != 0 && sym != want {
		why = fmt.Sprintf("with the keys before it held, this key is %s on this keyboard layout, and %s", sym, why)
	}
	return &input.KeyNotAllowedError{Sym: want, Why: why}
}

// symAt is the keysym and XKB action type key code has with mods in
// effect, from the session's keymap snapshot.
func (kb *kbdSession) symAt(code keycode, mods modMask) (Keysym, uint8, bool) {
	k, ok := kb.keys[code]
	if !ok || k.typ < 0 || k.typ >= len(kb.types) {
		return 0, 0, false
	}
	if _, bound := kb.in.bound[code]; bound {
		return 0, 0, false
	}
	lvl := kb.types[k.typ].level(mods)
	if lvl >= len(k.syms) {
		lvl = 0
	}
	if len(k.syms) == 0 {
		return 0, 0, true
	}
	var act uint8
	if lvl < len(k.acts) {
		act = k.acts[lvl]
	}
	return k.syms[lvl], act, true
}

// keysymVoid is VoidSymbol, what an XKB level without a keysym holds.
const keysymVoid Keysym = 0xffffff

// keypadPointerKey reports whether MouseKeys, while enabled, may turn a
// press of k into pointer motion or a button: the standard compat map
// binds pointer actions to the keypad keysyms (KP_Space to KP_Equal).
func keypadPointerKey(k Keysym) bool {
	return k >= 0xff80 && k <= 0xffbd
}
