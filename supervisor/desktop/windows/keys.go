package windows

import (
	"fmt"

	"github.com/deskhand/deskhand/supervisor/input"
)

// Virtual-key codes (WinUser.h) deskhand sends by name.
const (
	vkBack     = 0x08
	vkTab      = 0x09
	vkReturn   = 0x0D
	vkShift    = 0x10
	vkControl  = 0x11
	vkMenu     = 0x12 // Alt
	vkPause    = 0x13
	vkCapital  = 0x14
	vkEscape   = 0x1B
	vkSpace    = 0x20
	vkPrior    = 0x21
	vkNext     = 0x22
	vkEnd      = 0x23
	vkHome     = 0x24
	vkLeft     = 0x25
	vkUp       = 0x26
	vkRight    = 0x27
	vkDown     = 0x28
	vkSnapshot = 0x2C
	vkInsert   = 0x2D
	vkDelete   = 0x2E
	vkLWin     = 0x5B
	vkRWin     = 0x5C
	vkApps     = 0x5D
	vkF1       = 0x70
	vkNumLock  = 0x90
	vkScroll   = 0x91
	vkLShift   = 0xA0
	vkRShift   = 0xA1
	vkLControl = 0xA2
	vkRControl = 0xA3
	vkLMenu    = 0xA4
	vkRMenu    = 0xA5
)

// namedVK maps the X keysyms of the keys that are not characters to
// virtual keys; ext marks the extended keys (KEYEVENTF_EXTENDEDKEY), which
// Windows tells apart from their keypad twins by that flag alone.
var namedVK = map[input.Keysym]struct {
	vk  uint16
	ext bool
}{
	0xff08: {vkBack, false}, 0xff09: {vkTab, false}, 0xff0d: {vkReturn, false}, 0xff8d: {vkReturn, true},
	0xff13: {vkPause, false}, 0xff14: {vkScroll, false}, 0xff1b: {vkEscape, false}, 0xff61: {vkSnapshot, true},
	0xff50: {vkHome, true}, 0xff51: {vkLeft, true}, 0xff52: {vkUp, true}, 0xff53: {vkRight, true},
	0xff54: {vkDown, true}, 0xff55: {vkPrior, true}, 0xff56: {vkNext, true}, 0xff57: {vkEnd, true},
	0xff63: {vkInsert, true}, 0xffff: {vkDelete, true}, 0xff67: {vkApps, true}, 0xff7f: {vkNumLock, true},
	0xffe5: {vkCapital, false}, 0x20: {vkSpace, false},
	0xffe1: {vkLShift, false}, 0xffe2: {vkRShift, false},
	0xffe3: {vkLControl, false}, 0xffe4: {vkRControl, true},
	0xffe9: {vkLMenu, false}, 0xffea: {vkRMenu, true}, 0xffe7: {vkLMenu, false}, 0xffe8: {vkRMenu, true},
	0xffeb: {vkLWin, true}, 0xffec: {vkRWin, true},
}

// virtualKey is the virtual key of k: a named key, F1 to F24, a digit or
// a letter (either case: Windows has one key for both, and the caller
// holds Shift for the upper case, as ParseCombo asks). Other characters
// depend on the layout and are typed as text instead (Text), so they are
// refused here rather than guessed.
func virtualKey(k input.Keysym) (vk uint16, ext bool, err error) {
	if n, ok := namedVK[k]; ok {
		return n.vk, n.ext, nil
	}
	switch {
	case k >= 0xffbe && k <= 0xffd5: // F1..F24
		return vkF1 + uint16(k-0xffbe), false, nil
	case k >= '0' && k <= '9', k >= 'A' && k <= 'Z':
		return uint16(k), false, nil
	case k >= 'a' && k <= 'z':
		return uint16(k - 'a' + 'A'), false, nil
	}
	return 0, false, fmt.Errorf("key %#x has no fixed virtual key on Windows: send letters, digits, F1 to F24, the modifiers and the editing and arrow keys, and type other characters as text", uint32(k))
}
