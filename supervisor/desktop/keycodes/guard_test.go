package keycodes

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/supervisor/input"
)

// ctlFake adds XKB controls to fakeBackend.
type ctlFake struct {
	*fakeBackend
	cmu  sync.Mutex
	ctls xkbControls
	sets int
}

func (f *ctlFake) controls() (xkbControls, error) {
	f.cmu.Lock()
	defer f.cmu.Unlock()
	return f.ctls, nil
}

func (f *ctlFake) setControls(c xkbControls) error {
	f.cmu.Lock()
	defer f.cmu.Unlock()
	f.ctls.enabled = f.ctls.enabled&^guardedControls | c.enabled&guardedControls
	f.ctls.mouseKeysButton, f.ctls.accessXOptions = c.mouseKeysButton, c.accessXOptions
	f.sets++
	return nil
}

func (f *ctlFake) set(enabled uint32) {
	f.cmu.Lock()
	f.ctls.enabled = enabled
	f.cmu.Unlock()
}

func (f *ctlFake) enabled() uint32 {
	c, _ := f.controls()
	return c.enabled
}

func newCtlInput(t *testing.T, kb keyboard, ctls xkbControls) (*Input, *ctlFake) {
	t.Helper()
	f := &ctlFake{fakeBackend: newFake(), ctls: ctls}
	f.kb = kb
	return openFake(t, f), f
}

// TestGuardPutsBackControls: a control deskhand's keys switch on (five
// Shift presses with AccessXKeys) is put back before the next
// combination; one the user switches on between operations is kept,
// through ReleaseAll too.
func TestGuardPutsBackControls(t *testing.T) {
	ctx := context.Background()
	in, f := newCtlInput(t, testKeyboard(), xkbControls{enabled: ctlRepeatKeys | ctlAccessXKeys})
	shifts := 0
	f.onEvent = func(ev string) {
		if ev == "key 50 up" {
			if shifts++; shifts == 5 {
				f.set(f.enabled() | ctlStickyKeys)
			}
		}
	}
	if err := front(in).Key(ctx, "shift shift shift shift shift a"); err != nil {
		t.Fatal(err)
	}
	if f.enabled()&ctlStickyKeys != 0 {
		t.Errorf("StickyKeys still on after the key call")
	}
	if f.sets == 0 {
		t.Errorf("the guard never set the controls")
	}

	// The user's own change.
	f.onEvent = nil
	f.set(ctlRepeatKeys | ctlAccessXKeys | ctlMouseKeys)
	if err := front(in).Key(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := in.ReleaseAll(ctx); err != nil {
		t.Fatal(err)
	}
	if f.enabled()&ctlMouseKeys == 0 {
		t.Errorf("deskhand turned the user's MouseKeys off")
	}
	// RepeatKeys is not guarded (hold_key may turn autorepeat off).
	f.onEvent = func(ev string) {
		if ev == "key 38 down" {
			f.set(f.enabled() &^ ctlRepeatKeys)
		}
	}
	if err := front(in).Key(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if f.enabled()&ctlRepeatKeys != 0 {
		t.Errorf("the guard put RepeatKeys back")
	}
}

// TestGuardHeldKey: a control that changes while deskhand holds a key
// (holding Shift toggles SlowKeys under AccessXKeys) is deskhand's doing
// and is put back when the key is released.
func TestGuardHeldKey(t *testing.T) {
	in, f := newCtlInput(t, testKeyboard(), xkbControls{enabled: ctlAccessXKeys})
	ctx := context.Background()
	done := make(chan error, 1)
	f.onEvent = func(ev string) {
		if ev == "key 50 down" {
			go func() {
				f.set(f.enabled() | 1<<1)       // SlowKeys, a while into the hold
				done <- front(in).Key(ctx, "a") // an operation during the hold
			}()
		}
	}
	if err := front(in).HoldKey(ctx, "shift", 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if f.enabled() != ctlAccessXKeys {
		t.Errorf("controls after the hold = %#x, want %#x", f.enabled(), ctlAccessXKeys)
	}
}

// TestGuardUnlatches: modifiers an operation leaves latched (StickyKeys
// on) are unlatched, so a chord cannot be sent one key per call.
func TestGuardUnlatches(t *testing.T) {
	in, f := newCtlInput(t, testKeyboard(), xkbControls{enabled: ctlStickyKeys})
	f.onEvent = func(ev string) {
		if ev == "key 37 up" {
			f.mu.Lock()
			f.state.latched |= modControl
			f.mu.Unlock()
		}
	}
	if err := front(in).Key(context.Background(), "ctrl"); err != nil {
		t.Fatal(err)
	}
	if evs := f.take(); !slices.Contains(evs, "latch 0x4=0x0") {
		t.Errorf("events %v: ctrl was not unlatched", evs)
	}
}

// TestCheckPressRefusesWhatTheLayoutMakesOfAKey: a chord of allowed keys
// is refused when, with its modifiers held, a key is a refused keysym
// (shift+Num_Lock is Pointer_EnableKeys in keypad(pointerkeys)) or has a
// refused XKB action; keypad keys are refused while MouseKeys is on. The
// refused key is never pressed.
func TestCheckPressRefusesWhatTheLayoutMakesOfAKey(t *testing.T) {
	kb := testKeyboard()
	kb.keys = append(kb.keys,
		keyInfo{code: 77, typ: 1, syms: []Keysym{0xff7f, 0xfef9}, acts: []uint8{xkbActionLockMods, xkbActionLockControls}}, // Num_Lock, Pointer_EnableKeys
		keyInfo{code: 22, typ: 0, syms: []Keysym{0xff08}, acts: []uint8{xkbActionTerminate}},                               // BackSpace that kills the server
	)
	tests := []struct {
		keys      string
		mouseKeys bool
		want      string
		code      string
	}{
		{"shift+Num_Lock", false, "Pointer_EnableKeys", "key 77 down"},
		{"BackSpace", false, "kills the X server", "key 22 down"},
		{"KP_End", true, "MouseKeys", "key 87 down"},
	}
	for _, tt := range tests {
		var ctls xkbControls
		if tt.mouseKeys {
			ctls.enabled = ctlMouseKeys
		}
		in, f := newCtlInput(t, kb, ctls)
		err := front(in).Key(context.Background(), tt.keys)
		var na *input.KeyNotAllowedError
		if !errors.As(err, &na) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Key(%q) = %v, want a input.KeyNotAllowedError saying %q", tt.keys, err, tt.want)
		}
		if evs := f.take(); slices.Contains(evs, tt.code) {
			t.Errorf("Key(%q) pressed the refused key: %v", tt.keys, evs)
		}
	}
	// Without the modifier, and with MouseKeys off, the same keys work.
	in, _ := newCtlInput(t, kb, xkbControls{})
	for _, keys := range []string{"Num_Lock", "KP_End"} {
		if err := front(in).Key(context.Background(), keys); err != nil {
			t.Errorf("Key(%q) = %v", keys, err)
		}
	}
}

func TestActionRefusal(t *testing.T) {
	tests := []struct {
		act       uint8
		mouseKeys bool
		refused   bool
	}{
		{xkbActionNone, false, false},
		{xkbActionSetMods, true, false},
		{xkbActionLockMods, false, false},
		{xkbActionLatchGroup, false, false},
		{xkbActionMovePtr, false, false},
		{xkbActionMovePtr, true, true},
		{xkbActionPtrBtn, true, true},
		{xkbActionLockPtrBtn, true, true},
		{xkbActionSetPtrDflt, true, true},
		{xkbActionTerminate, false, true},
		{xkbActionSwitchScreen, false, true},
		{xkbActionSetControls, false, true},
		{xkbActionLockControls, false, true},
		{xkbActionISOLock, false, true},
		{xkbActionXFree86Privte, false, true},
		{0x06, false, true}, // LockGroup: the layout stays switched
		{0x11, false, true}, // RedirectKey
		{0x12, false, true}, // DeviceBtn
	}
	for _, tt := range tests {
		if got := actionRefusal(tt.act, tt.mouseKeys) != ""; got != tt.refused {
			t.Errorf("actionRefusal(%#x, mouseKeys=%v) refused = %v, want %v", tt.act, tt.mouseKeys, got, tt.refused)
		}
	}
}

func TestControlsDiff(t *testing.T) {
	a := xkbControls{enabled: ctlRepeatKeys | ctlAccessXKeys}
	b := a
	b.enabled |= ctlStickyKeys | ctlMouseKeys
	if a.same(b) {
		t.Errorf("%+v.same(%+v) = true", a, b)
	}
	if got, want := a.diff(b), "StickyKeys on, MouseKeys on"; got != want {
		t.Errorf("diff = %q, want %q", got, want)
	}
	c := a
	c.enabled &^= ctlRepeatKeys // autorepeat is not guarded
	if !a.same(c) {
		t.Errorf("a change of RepeatKeys alone counts as a change")
	}
}
