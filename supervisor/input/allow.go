package input

import (
	"fmt"
	"sync"
	"unicode"
	"unicode/utf8"
)

// This file is the keysym allowlist: the keysyms deskhand may send. A key
// press does what the keymap's XKB action for it says, and X servers bind
// actions by keysym (the compat map): Pointer_Button1 clicks through
// MouseKeys, StickyKeys_Enable and friends switch XKB controls on,
// Terminate_Server kills the server, XF86Switch_VT_1 leaves the session.
// Since deskhand binds a keysym the layout lacks to a spare keycode, every
// keysym it accepts is one it can make the server act on, so the list
// names what is safe instead of what is not: characters, modifiers and the
// ordinary editing, navigation, function, keypad and reviewed media keys.

// KeyNotAllowedError is the error for a keysym outside the allowlist.
type KeyNotAllowedError struct {
	// Name is the key as the caller wrote it, when known.
	Name string
	Sym  Keysym
	// Why says what the keysym does, or that it is not reviewed.
	Why string
}

func (e *KeyNotAllowedError) Error() string {
	what := e.Sym.String()
	if e.Name != "" && e.Name != what {
		what = fmt.Sprintf("%q (%s)", e.Name, what)
	}
	return fmt.Sprintf("key %s is not allowed: %s. deskhand sends only keys that type characters and ordinary "+
		"editing, navigation, function, keypad and media keys; send one of those, or ask the user to press this key", what, e.Why)
}

// Ranges of the keysyms the allowlist reasons about (keysymdef.h).
const (
	keysymISOFirst   Keysym = 0xfe00 // ISO 9995 and AccessX keysyms
	keysymDeadFirst  Keysym = 0xfe50 // dead_grave … dead_currency
	keysymDeadLast   Keysym = 0xfe6f
	keysymDead2First Keysym = 0xfe80 // dead_a … dead_longsolidusoverlay
	keysymDead2Last  Keysym = 0xfe93 // (0xfe70-0xfe7f between them are AccessX)
	keysymKPFirst    Keysym = 0xff80 // KP_Space
	keysymKPLast     Keysym = 0xffbd // KP_Equal
	keysymF1         Keysym = 0xffbe
	keysymF35        Keysym = 0xffe0
	keysymModFirst   Keysym = 0xffe1 // Shift_L
	keysymModLast    Keysym = 0xffee // Hyper_R
	keysymIMEFirst   Keysym = 0xff21 // Kanji
	keysymIMELast    Keysym = 0xff3f // Hangul_SwitchMode and the Japanese keys
	keysymXF86VTBase Keysym = 0x1008fe01
	keysymXF86VTLast Keysym = 0x1008fe0c
)

// allowedNamed are the ordinary named keys outside the ranges above.
var allowedNamed = map[Keysym]bool{
	0xff08: true, // BackSpace
	0xff09: true, // Tab
	0xff0a: true, // Linefeed
	0xff0b: true, // Clear
	0xff0d: true, // Return
	0xff13: true, // Pause
	0xff14: true, // Scroll_Lock
	0xff15: true, // Sys_Req (Alt+SysRq is on the shortcut blocklist)
	0xff1b: true, // Escape
	0xff20: true, // Multi_key (Compose)
	0xff50: true, // Home
	0xff51: true, // Left
	0xff52: true, // Up
	0xff53: true, // Right
	0xff54: true, // Down
	0xff55: true, // Prior (Page_Up)
	0xff56: true, // Next (Page_Down)
	0xff57: true, // End
	0xff58: true, // Begin
	0xff60: true, // Select
	0xff61: true, // Print
	0xff62: true, // Execute
	0xff63: true, // Insert
	0xff65: true, // Undo
	0xff66: true, // Redo
	0xff67: true, // Menu
	0xff68: true, // Find
	0xff69: true, // Cancel
	0xff6a: true, // Help
	0xff6b: true, // Break
	0xff7e: true, // Mode_switch
	0xff7f: true, // Num_Lock
	0xffff: true, // Delete
	0xfe03: true, // ISO_Level3_Shift (AltGr)
	0xfe11: true, // ISO_Level5_Shift
	0xfe20: true, // ISO_Left_Tab (Shift+Tab)
}

// allowedXF86 are the reviewed XF86 keys: those that act on the focused
// app or on volume and brightness, then the power, session and launcher
// keys, which the system-shortcut blocklist (package keyblock) refuses
// unless the user grants systemKeyCombos. VT, grab, video-mode and
// debugging keys are not here, nor XF86Copy/Cut/Paste, which would copy
// and paste outside the clipboard guard's chords, nor hardware switches
// (XF86WLAN, XF86Display, XF86TouchpadToggle ...).
var allowedXF86 = []string{
	// power, session and launchers: system shortcuts
	"XF86PowerOff", "XF86PowerDown", "XF86Sleep", "XF86Suspend", "XF86Hibernate", "XF86LogOff", "XF86ScreenSaver",
	"XF86Eject", "XF86Launch0", "XF86Launch1", "XF86Launch2", "XF86Launch3", "XF86Launch4", "XF86Launch5",
	"XF86Launch6", "XF86Launch7", "XF86Launch8", "XF86Launch9", "XF86LaunchA", "XF86LaunchB", "XF86LaunchC",
	"XF86LaunchD", "XF86LaunchE", "XF86LaunchF", "XF86Explorer", "XF86Terminal", "XF86WWW", "XF86Mail",
	"XF86Calculator", "XF86MyComputer", "XF86HomePage", "XF86Search",
	// the focused app, volume and brightness
	"XF86AudioLowerVolume", "XF86AudioMute", "XF86AudioRaiseVolume", "XF86AudioMicMute",
	"XF86AudioPlay", "XF86AudioPause", "XF86AudioStop", "XF86AudioPrev", "XF86AudioNext",
	"XF86AudioRecord", "XF86AudioRewind", "XF86AudioForward", "XF86AudioRepeat",
	"XF86AudioRandomPlay", "XF86AudioCycleTrack",
	"XF86MonBrightnessUp", "XF86MonBrightnessDown",
	"XF86KbdBrightnessUp", "XF86KbdBrightnessDown", "XF86KbdLightOnOff",
	"XF86Back", "XF86Forward", "XF86Stop", "XF86Refresh", "XF86Reload",
	"XF86ZoomIn", "XF86ZoomOut",
}

var allowedXF86Syms = sync.OnceValue(func() map[Keysym]bool {
	m := make(map[Keysym]bool, len(allowedXF86))
	for _, name := range allowedXF86 {
		sym, ok := keysyms().exact[name]
		if !ok {
			panic("input: allowlisted keysym " + name + " is not in keysymTable")
		}
		m[sym] = true
	}
	return m
})

// CheckKeysym reports whether deskhand may send k, and if not, why (a
// *KeyNotAllowedError).
func CheckKeysym(k Keysym) error {
	if why := refusal(k); why != "" {
		return &KeyNotAllowedError{Sym: k, Why: why}
	}
	return nil
}

// refusal is "" for an allowed keysym, else what the keysym does.
func refusal(k Keysym) string {
	switch {
	case k >= 0x20 && k <= 0x7e, k >= 0xa0 && k <= 0xff:
		return "" // Latin-1 characters
	case k >= unicodeKeysym && k <= unicodeKeysymHi:
		// Unicode keysyms have no XKB actions; only control codes are
		// not characters.
		if r := rune(k - unicodeKeysym); !utf8.ValidRune(r) || unicode.IsControl(r) {
			return "it is a Unicode control code or not a code point, not a character"
		}
		return ""
	case allowedNamed[k]:
		return ""
	case k >= keysymModFirst && k <= keysymModLast:
		return "" // Shift, Control, Caps_Lock, Shift_Lock, Meta, Alt, Super, Hyper
	case k >= keysymF1 && k <= keysymF35:
		return ""
	case k >= keysymKPFirst && k <= keysymKPLast:
		return ""
	case k >= keysymDeadFirst && k <= keysymDeadLast, k >= keysymDead2First && k <= keysymDead2Last:
		return "" // dead keys compose accented characters
	case k >= keysymIMEFirst && k <= keysymIMELast:
		return "" // input-method keys (Kanji, Henkan, Hangul ...)
	case allowedXF86Syms()[k]:
		return ""
	case k >= 0x100 && k < 0xfe00 && keysymChar(k) != 0:
		return "" // legacy keysyms of characters (EuroSign, Cyrillic_a ...)
	}
	return refusedWhy(k)
}

// refusedWhy describes a keysym the allowlist does not take.
func refusedWhy(k Keysym) string {
	switch {
	case k == 0xfed5:
		return "Terminate_Server kills the X server and every application in it"
	case k >= 0xfed0 && k <= 0xfed4:
		return "it switches virtual screens"
	case k >= 0xfe70 && k <= 0xfe7f:
		return "it switches XKB accessibility controls (StickyKeys, SlowKeys, MouseKeys ...) on or off"
	case k >= 0xfee0 && k <= 0xfeff:
		return "it moves or clicks the pointer through XKB MouseKeys, outside the click tools' rules; use mouse_move and the click tools instead"
	case k >= keysymISOFirst && k < 0xfe20:
		return "it latches or locks modifiers or switches the keyboard layout group"
	case k >= keysymXF86VTBase && k <= keysymXF86VTLast:
		return "it switches to another virtual terminal"
	case k >= 0x1008fe20 && k <= 0x1008fe25:
		return "it acts on the X server itself (grabs, video modes or debugging logs)"
	case k == keysymVoid || k == 0:
		return "it is not a key"
	}
	if name, ok := keysyms().canonical[k]; ok && len(name) > 4 && name[:4] == "XF86" {
		return "it is a system, launcher or hardware key that acts outside the focused application"
	}
	return "it is not a character or an ordinary editing, navigation, function, keypad or media key"
}

// keysymChar is the character a legacy keysym types, 0 if none.
var keysymChar = func() func(Keysym) rune {
	chars := sync.OnceValue(func() map[Keysym]rune {
		m := make(map[Keysym]rune)
		for _, e := range keysymTable {
			if e.char != 0 {
				m[e.sym] = e.char
			}
		}
		return m
	})
	return func(k Keysym) rune { return chars()[k] }
}()
