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

func TestMacSystemShortcut(t *testing.T) {
	system := map[string]string{
		"cmd+tab":              "switch to another app",
		"super+Tab":            "switch to another app",
		"cmd+q":                "quit the frontmost app",
		"cmd+space":            "open Spotlight",
		"ctrl+cmd+q":           "lock the screen",
		"cmd+ctrl+q":           "lock the screen",
		"shift+cmd+q":          "log out",
		"cmd+opt+esc":          "open Force Quit Applications",
		"Super_L+Alt_L+Escape": "open Force Quit Applications",
		"cmd+shift+3":          "take a screenshot of the screen",
		"cmd+shift+5":          "open the screenshot and screen recording toolbar",
		"ctrl+Up":              "open Mission Control",
		"ctrl+opt+cmd+power":   "quit every app and shut down",
		"cmd+h":                "hide the frontmost app",
	}
	for in, effect := range system {
		c, err := ParseCombo(in)
		if err != nil {
			t.Fatalf("ParseCombo(%q): %v", in, err)
		}
		s, ok := MacSystemShortcut(c)
		if !ok || s.Effect != effect {
			t.Errorf("MacSystemShortcut(%q) = %q, %v, want %q", in, s.Effect, ok, effect)
		}
	}
	// App shortcuts and near misses are not system shortcuts: modifiers must
	// match exactly.
	for _, in := range []string{"cmd+c", "cmd+v", "cmd+w", "cmd+t", "cmd+shift+t", "ctrl+c", "cmd+opt+shift+ctrl+q", "q", "Return", "cmd+3", "shift+3"} {
		c, err := ParseCombo(in)
		if err != nil {
			t.Fatalf("ParseCombo(%q): %v", in, err)
		}
		if s, ok := MacSystemShortcut(c); ok {
			t.Errorf("MacSystemShortcut(%q) = %q, want none", in, s.Effect)
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

func TestFirstMacSystemShortcut(t *testing.T) {
	s, ok, err := FirstMacSystemShortcut("cmd+a cmd+c  cmd+tab cmd+v")
	if err != nil || !ok || s.Combo != (Combo{Command, "tab"}) {
		t.Errorf("FirstMacSystemShortcut(...cmd+tab...) = %v, %v, %v, want cmd+tab", s, ok, err)
	}
	if s, ok, err := FirstMacSystemShortcut("cmd+a cmd+c"); err != nil || ok {
		t.Errorf("FirstMacSystemShortcut(cmd+a cmd+c) = %v, %v, %v, want none", s, ok, err)
	}
	if _, _, err := FirstMacSystemShortcut("cmd+a q+cmd"); err == nil {
		t.Error("FirstMacSystemShortcut(q+cmd) = nil error, want one: an unreadable combination must not pass")
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

func TestMacAppKey(t *testing.T) {
	tests := []struct {
		bundleID, exe, want string
		wantErr             bool
	}{
		{"com.apple.Terminal", "/System/Applications/Utilities/Terminal.app/Contents/MacOS/Terminal", "com.apple.terminal", false},
		{"", "/opt/homebrew/bin/python3.12", "exe:/opt/homebrew/bin/python3.12", false},
		{"", "/usr/local/bin/../bin/tool", "exe:/usr/local/bin/tool", false},
		{"", "python3", "", true},
		{"", "", "", true},
		{"not a bundle id", "/bin/x", "", true},
	}
	for _, tt := range tests {
		got, err := MacAppKey(tt.bundleID, tt.exe)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("MacAppKey(%q, %q) = %q, %v, want %q (error %v)", tt.bundleID, tt.exe, got, err, tt.want, tt.wantErr)
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
		k, ok := MacKeyForKeysym(tt.keysym)
		if !ok || k.Code != tt.code || k.Modifier != tt.mod {
			t.Errorf("MacKeyForKeysym(%#x) = %+v, %v, want code %#x modifier %v", tt.keysym, k, ok, tt.code, tt.mod)
		}
	}
	if k, ok := MacKeyForKeysym('a'); ok {
		t.Errorf("MacKeyForKeysym('a') = %+v: characters depend on the layout and must not be listed", k)
	}
}

func TestMacANSIKey(t *testing.T) {
	for r, want := range map[rune]uint16{'a': 0x00, 'A': 0x00, 'c': 0x08, 'v': 0x09, 'q': 0x0c, 'z': 0x06, '3': 0x14, '`': 0x32, '/': 0x2c} {
		if got, ok := MacANSIKey(r); !ok || got != want {
			t.Errorf("MacANSIKey(%q) = %#x, %v, want %#x", r, got, ok, want)
		}
	}
	for _, r := range []rune{'é', '€', ' ', '!'} {
		if got, ok := MacANSIKey(r); ok {
			t.Errorf("MacANSIKey(%q) = %#x, want none", r, got)
		}
	}
	// No two characters share a key.
	keys := map[uint16]rune{}
	for r, code := range macANSI {
		if other, dup := keys[code]; dup {
			t.Errorf("%q and %q both map to %#x", r, other, code)
		}
		keys[code] = r
	}
}
