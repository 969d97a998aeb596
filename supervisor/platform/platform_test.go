package platform

import (
	"slices"
	"strings"
	"testing"
)

func TestComboString(t *testing.T) {
	c := Combo{Command | Shift | Control | Option | Function, "3"}
	if got, want := c.String(), "ctrl+opt+shift+cmd+fn+3"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
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
		if !slices.Contains(MacKeys, MacKey{Keysym: tt.keysym, Code: tt.code, Modifier: tt.mod}) {
			t.Errorf("MacKeys lacks keysym %#x as code %#x modifier %v", tt.keysym, tt.code, tt.mod)
		}
	}
	for _, k := range MacKeys {
		if k.Keysym == 'a' {
			t.Errorf("MacKeys lists %+v: characters depend on the layout and must not be listed", k)
		}
	}
}
