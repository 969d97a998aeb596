package platform

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// KeyLayout is the active macOS keyboard layout as the Swift helper reads
// it (key_layout, helpers/PROTOCOL.md): for each virtual key code, what it
// types with no modifier, Shift, Command and Command-Shift.
//
// macOS matches a shortcut by key: app menus by the character the layout
// gives the key (Command has its own layer, QWERTY on non-Latin layouts and
// on "Dvorak - QWERTY ⌘"), and the system's own hotkeys (screenshots,
// Spotlight, Mission Control) by the key code, whose US character is what
// the shortcut lists name. So a shortcut is sent as the key that types its
// character on the active layout, and checked by every chord that key can
// mean (Shortcut).
type KeyLayout struct {
	// Source is the input source id ("com.apple.keylayout.French").
	Source string `json:"source"`
	// Name is its localized name ("French").
	Name string      `json:"name"`
	Keys []LayoutKey `json:"keys"`
}

// LayoutKey is one key of a KeyLayout; a layer is "" where the key types
// nothing (or a control character).
type LayoutKey struct {
	Code         uint16 `json:"code"`
	Base         string `json:"base"`
	Shift        string `json:"shift"`
	Command      string `json:"command"`
	CommandShift string `json:"command_shift"`
}

// ShortcutKey is how a shortcut's character is sent on a layout.
type ShortcutKey struct {
	// Code is the virtual key code to press with the modifiers.
	Code uint16
	// Means lists every chord macOS can take the press for, the asked
	// one first: by the characters the layout gives the key with and
	// without Shift (how app menus match), and by the key's US character
	// when that is a system hotkey macOS matches by key code. A gate that
	// passes the asked chord must pass each of these too, or the system
	// gets a chord nobody checked.
	Means []Combo
}

// keypadCodes are the keypad's keys, tried last: a shortcut means the
// main block's key ('1' is the row key, not keypad 1).
var keypadCodes = map[uint16]bool{
	0x41: true, 0x43: true, 0x45: true, 0x47: true, 0x4b: true, 0x4c: true, 0x4e: true, 0x51: true,
	0x52: true, 0x53: true, 0x54: true, 0x55: true, 0x56: true, 0x57: true, 0x58: true, 0x59: true,
	0x5b: true, 0x5c: true,
}

// layers are the characters of the key with mods: the Command layer when
// Command is held, and with Shift and without it.
func (k LayoutKey) layers(mods Modifier) (shifted, unshifted string) {
	if mods&Command != 0 {
		return k.CommandShift, k.Command
	}
	return k.Shift, k.Base
}

// Shortcut finds the key that sends character r with mods on this layout,
// and the chords that press means. With Shift held, the key that types r
// with Shift is preferred (on AZERTY Shift+Command+3 is the key whose
// shifted character is 3), then the one that types r without it (the US
// reading of Shift+Command+3); letters match either case. It fails when the
// layout has no such key, rather than sending some other key.
func (l *KeyLayout) Shortcut(mods Modifier, r rune) (ShortcutKey, error) {
	want := string(r)
	same := func(layer string) bool {
		return layer == want || (unicode.IsLetter(r) && strings.EqualFold(layer, want))
	}
	keys := slices.Clone(l.Keys)
	slices.SortStableFunc(keys, func(a, b LayoutKey) int { return int(a.Code) - int(b.Code) })
	var tries []func(LayoutKey) bool
	if mods&Shift != 0 {
		tries = append(tries, func(k LayoutKey) bool { s, _ := k.layers(mods); return same(s) })
	}
	tries = append(tries, func(k LayoutKey) bool { _, u := k.layers(mods); return same(u) })
	// The main block first, through every try, then the keypad: keypad 3
	// types 3 with Shift too, but Shift-Command-3 means the row key.
	for _, keypad := range []bool{false, true} {
		for _, try := range tries {
			for _, k := range keys {
				if keypadCodes[k.Code] == keypad && try(k) {
					return ShortcutKey{Code: k.Code, Means: l.means(k, mods, r)}, nil
				}
			}
		}
	}
	return ShortcutKey{}, fmt.Errorf("the keyboard layout %s has no key that types %q with %s, so the shortcut cannot be sent as asked; "+
		"ask the user to switch to a layout that has it (System Settings > Keyboard > Input Sources), or type the text with the type tool",
		l.describe(), want, Combo{Mods: mods, Key: "key"}.modifiersString())
}

// means lists the chords a press of k with mods can stand for.
func (l *KeyLayout) means(k LayoutKey, mods Modifier, asked rune) []Combo {
	var out []Combo
	add := func(s string) {
		r, size := utf8.DecodeRuneInString(s)
		if s == "" || size != len(s) {
			return
		}
		c := Combo{Mods: mods, Key: CanonicalKey(string(unicode.ToLower(r)))}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	add(string(asked))
	shifted, unshifted := k.layers(mods)
	if mods&Shift != 0 {
		add(shifted)
	}
	add(unshifted)
	if us, ok := macANSIChar(k.Code); ok {
		c := Combo{Mods: mods, Key: CanonicalKey(string(us))}
		if MacKeyCodeShortcut(c) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// macKeyCodeShortcuts are the system shortcuts on layout-dependent keys
// that macOS matches by key code, not by character: the symbolic hotkeys
// (com.apple.symbolichotkeys) store a virtual key code, so on any layout
// Shift-Command-3 is the key in the US "3" position. App-menu shortcuts
// (Command-Q, Command-H) match by character and are not here.
var macKeyCodeShortcuts = []Combo{
	combo(Command|Shift, "3"), combo(Command|Shift, "4"), combo(Command|Shift, "5"), combo(Command|Shift, "6"),
	combo(Control|Command|Shift, "3"), combo(Control|Command|Shift, "4"),
	combo(Command|Option, "d"), combo(Command|Option, "8"), combo(Control|Option|Command, "8"),
	combo(Control|Option|Command, "period"), combo(Control|Option|Command, "comma"),
}

// MacKeyCodeShortcut reports whether macOS matches the system shortcut c
// by the key's position (its US character) rather than by what the active
// layout types.
func MacKeyCodeShortcut(c Combo) bool {
	c.Key = CanonicalKey(c.Key)
	return slices.Contains(macKeyCodeShortcuts, c)
}

func (l *KeyLayout) describe() string {
	switch {
	case l.Name != "" && l.Source != "":
		return fmt.Sprintf("%q (%s)", l.Name, l.Source)
	case l.Name != "":
		return fmt.Sprintf("%q", l.Name)
	case l.Source != "":
		return l.Source
	}
	return "in use"
}

// modifiersString writes only the modifiers, "cmd+shift" ("no modifier"
// for none).
func (c Combo) modifiersString() string {
	s := strings.TrimSuffix(c.String(), "+"+c.Key)
	if s == c.Key {
		return "no modifier"
	}
	return s
}

// macANSIChar is the character the key with a virtual key code types on
// the US layout.
func macANSIChar(code uint16) (rune, bool) {
	for r, c := range macANSI {
		if c == code {
			return r, true
		}
	}
	return 0, false
}
