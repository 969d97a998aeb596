package platform

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// usLayout and frenchLayout are parts of what key_layout answers for the
// US and French (AZERTY) layouts on macOS 14.
var (
	usLayout = &KeyLayout{Source: "com.apple.keylayout.US", Name: "U.S.", Keys: []LayoutKey{
		{0x00, "a", "A", "a", "A"}, {0x0c, "q", "Q", "q", "Q"}, {0x02, "d", "D", "d", "D"},
		{0x14, "3", "#", "3", "#"}, {0x1c, "8", "*", "8", "*"}, {0x08, "c", "C", "c", "C"},
		{0x2f, ".", ">", ".", ">"}, {0x54, "2", "2", "2", "2"}, {0x13, "2", "@", "2", "@"},
		{0x55, "3", "3", "3", "3"},
	}}
	frenchLayout = &KeyLayout{Source: "com.apple.keylayout.French", Name: "French", Keys: []LayoutKey{
		{0x00, "q", "Q", "q", "Q"}, {0x0c, "a", "A", "a", "A"}, {0x02, "d", "D", "d", "D"},
		{0x12, "&", "1", "&", "1"}, {0x13, "é", "2", "é", "2"}, {0x14, "\"", "3", "\"", "3"},
		{0x1c, "!", "8", "!", "8"}, {0x08, "c", "C", "c", "C"}, {0x2b, ";", ".", ";", "."},
	}}
	// russianLayout types Cyrillic, with a QWERTY Command layer.
	russianLayout = &KeyLayout{Source: "com.apple.keylayout.Russian", Name: "Russian", Keys: []LayoutKey{
		{0x08, "с", "С", "c", "C"}, {0x00, "ф", "Ф", "a", "A"},
	}}
)

func TestKeyLayoutShortcut(t *testing.T) {
	tests := []struct {
		layout *KeyLayout
		mods   Modifier
		r      rune
		code   uint16
		means  []Combo
	}{
		{usLayout, Command, 'a', 0x00, []Combo{{Command, "a"}}},
		{usLayout, Command | Shift, '3', 0x14, []Combo{{Command | Shift, "3"}, {Command | Shift, "#"}}},
		// The main row's 2 and 3, not the keypad's (which types 3 with
		// Shift too).
		{usLayout, Command, '2', 0x13, []Combo{{Command, "2"}}},
		{usLayout, Command | Shift, '3', 0x14, []Combo{{Command | Shift, "3"}, {Command | Shift, "#"}}},
		// Only the keypad has it: the keypad key.
		{&KeyLayout{Keys: []LayoutKey{{0x43, "*", "*", "*", "*"}}}, Command, '*', 0x43, []Combo{{Command, "*"}}},
		// AZERTY: Cmd-A is the key in the US Q position, and means Cmd-A
		// only (Command-Q matches by character, not by key).
		{frenchLayout, Command, 'a', 0x0c, []Combo{{Command, "a"}}},
		{frenchLayout, Command, 'q', 0x00, []Combo{{Command, "q"}}},
		// Shift-Command-3 is the key whose shifted character is 3.
		{frenchLayout, Command | Shift, '3', 0x14, []Combo{{Command | Shift, "3"}, {Command | Shift, "\""}}},
		// Asking for the key's base character sends the same press, which
		// is the screenshot shortcut: Means says so.
		{frenchLayout, Command | Shift, '"', 0x14, []Combo{{Command | Shift, "\""}, {Command | Shift, "3"}}},
		// Control-Option-Command-. is the key that types "." with Shift on
		// AZERTY; its US position is "," which is the other contrast key.
		{frenchLayout, Control | Option | Command, ';', 0x2b, []Combo{{Control | Option | Command, ";"}, {Control | Option | Command, "comma"}}},
		{russianLayout, Command, 'c', 0x08, []Combo{{Command, "c"}}},
	}
	for _, tt := range tests {
		got, err := tt.layout.Shortcut(tt.mods, tt.r)
		if err != nil {
			t.Errorf("%s.Shortcut(%v, %q): %v", tt.layout.Name, tt.mods, tt.r, err)
			continue
		}
		if got.Code != tt.code {
			t.Errorf("%s.Shortcut(%v, %q).Code = %#x, want %#x", tt.layout.Name, tt.mods, tt.r, got.Code, tt.code)
		}
		if diff := cmp.Diff(tt.means, got.Means); diff != "" {
			t.Errorf("%s.Shortcut(%v, %q).Means (-want +got):\n%s", tt.layout.Name, tt.mods, tt.r, diff)
		}
	}
}

func TestKeyLayoutShortcutMissingKey(t *testing.T) {
	// The Russian layout's base layer has no "c": Control-C cannot be sent
	// as asked, and is refused rather than sent as the US key.
	_, err := russianLayout.Shortcut(Control, 'c')
	if err == nil || !strings.Contains(err.Error(), `"Russian"`) || !strings.Contains(err.Error(), "Input Sources") {
		t.Errorf("Shortcut(ctrl, 'c') on Russian = %v, want an error naming the layout and what to do", err)
	}
}

func TestMacKeyCodeShortcut(t *testing.T) {
	for _, c := range []Combo{{Command | Shift, "3"}, {Shift | Command, "4"}, {Control | Option | Command, "."}, {Command | Option, "d"}} {
		if !MacKeyCodeShortcut(c) {
			t.Errorf("MacKeyCodeShortcut(%v) = false, want true", c)
		}
	}
	for _, c := range []Combo{{Command, "q"}, {Command, "h"}, {Command, "a"}, {Command, "3"}} {
		if MacKeyCodeShortcut(c) {
			t.Errorf("MacKeyCodeShortcut(%v) = true, want false", c)
		}
	}
}
