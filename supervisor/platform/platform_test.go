package platform

import (
	"strings"
	"testing"
)

func TestParseCombo(t *testing.T) {
	tests := []struct {
		in   string
		want Combo
	}{
		{"cmd+q", Combo{Command, "q"}},
		{"super+Q", Combo{Command, "q"}},
		{"Super_L+Tab", Combo{Command, "tab"}},
		{"shift+cmd+3", Combo{Command | Shift, "3"}},
		{"ctrl+alt+Delete", Combo{Control | Option, "delete"}},
		{"Control_R+Up", Combo{Control, "up"}},
		{"⌘+space", Combo{Command, "space"}},
		{"cmd+option+Escape", Combo{Command | Option, "escape"}},
		{"cmd+opt+esc", Combo{Command | Option, "escape"}},
		{"Return", Combo{0, "return"}},
		{"enter", Combo{0, "return"}},
		{"BackSpace", Combo{0, "delete"}},
		{"fn+F11", Combo{Function, "f11"}},
		{"cmd++", Combo{Command, "+"}},
		{"shift", Combo{0, "shift"}},
		{"ctrl+shift", Combo{Control, "shift"}},
	}
	for _, tt := range tests {
		got, err := ParseCombo(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseCombo(%q) = %v, %v, want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "cmd+", "+q", "cmd++q", "q+cmd", "a+b"} {
		if got, err := ParseCombo(bad); err == nil {
			t.Errorf("ParseCombo(%q) = %v, want an error", bad, got)
		}
	}
}

func TestComboString(t *testing.T) {
	c := Combo{Command | Shift | Control | Option | Function, "3"}
	if got, want := c.String(), "ctrl+opt+shift+cmd+fn+3"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	// Every listed shortcut parses back from its own string.
	for _, s := range MacSystemShortcuts {
		back, err := ParseCombo(s.Combo.String())
		if err != nil || back != s.Combo {
			t.Errorf("ParseCombo(%q) = %v, %v, want %v", s.Combo.String(), back, err, s.Combo)
		}
	}
}

func TestMacSystemShortcutsAreUnique(t *testing.T) {
	seen := map[Combo]string{}
	for _, s := range MacSystemShortcuts {
		if s.Effect == "" {
			t.Errorf("%v has no effect text", s.Combo)
		}
		if s.Combo.Key != CanonicalKey(s.Combo.Key) {
			t.Errorf("%v: key %q is not canonical (%q)", s.Combo, s.Combo.Key, CanonicalKey(s.Combo.Key))
		}
		if prev, dup := seen[s.Combo]; dup {
			t.Errorf("%v is listed twice (%q and %q)", s.Combo, prev, s.Effect)
		}
		seen[s.Combo] = s.Effect
	}
}

func TestParseBundleID(t *testing.T) {
	for _, good := range []string{"com.apple.Safari", "org.mozilla.firefox", "com.microsoft.VSCode", "io.github.deskhand.helper", "com.googlecode.iterm2", "Finder", "com.company-name.app2"} {
		if got, err := ParseBundleID(good); err != nil || string(got) != good {
			t.Errorf("ParseBundleID(%q) = %q, %v, want it back", good, got, err)
		}
	}
	for _, bad := range []string{"", ".com.apple", "com.apple.", "com..apple", "com.apple.Safari ", "com/apple", "com.äpple", strings.Repeat("a", 256)} {
		if got, err := ParseBundleID(bad); err == nil {
			t.Errorf("ParseBundleID(%q) = %q, want an error", bad, got)
		}
	}
}

func TestBundleIDEqualAndKey(t *testing.T) {
	a, b := BundleID("com.apple.Safari"), BundleID("COM.APPLE.safari")
	if !a.Equal(b) || a.Key() != b.Key() {
		t.Errorf("%q and %q should be the same app (keys %q, %q)", a, b, a.Key(), b.Key())
	}
	if a.Equal("com.apple.SafariTechnologyPreview") {
		t.Errorf("%q should differ from the Technology Preview", a)
	}
}

func TestMacKeys(t *testing.T) {
	seen := map[uint32]bool{}
	for _, k := range MacKeys {
		if seen[k.Keysym] {
			t.Errorf("keysym %#x is listed twice", k.Keysym)
		}
		seen[k.Keysym] = true
		if k.Code > 0x7f {
			t.Errorf("keysym %#x: virtual key %#x is out of range", k.Keysym, k.Code)
		}
	}
	tests := []struct {
		keysym uint32
		code   uint16
		mod    Modifier
	}{
		{0xff0d, 0x24, 0},       // Return
		{0xff08, 0x33, 0},       // BackSpace is the Mac delete key
		{0xffff, 0x75, 0},       // Delete is forward delete
		{0xff52, 0x7e, 0},       // Up
		{0xffbe, 0x7a, 0},       // F1
		{0xffeb, 0x37, Command}, // Super_L
		{0xffe9, 0x3a, Option},  // Alt_L
		{0xffe3, 0x3b, Control}, // Control_L
		{0xffe1, 0x38, Shift},   // Shift_L
	}
	for _, tt := range tests {
		k, ok := MacKeyForKeysym(tt.keysym)
		if !ok || k.Code != tt.code || k.Modifier != tt.mod {
			t.Errorf("MacKeyForKeysym(%#x) = %+v, %v, want code %#x modifier %v", tt.keysym, k, ok, tt.code, tt.mod)
		}
	}
	if k, ok := MacKeyForKeysym('a'); ok {
		t.Errorf("MacKeyForKeysym('a') = %+v: characters depend on the layout and must not be listed", k)
	}
}
