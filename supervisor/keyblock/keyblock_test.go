package keyblock

import (
	"errors"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/supervisor/platform"
)

// blockedSpellings lists, for each rule the issue names, spellings a
// model could use; each must be refused.
var linuxBlocked = map[string][]string{
	"Ctrl+Alt+Delete": {
		"ctrl+alt+Delete", "CTRL+ALT+DELETE", "alt+ctrl+del", "Delete+Alt_R+Control_R",
		"Control_L+Alt_L+KP_Delete", "control+alt+0xffff", "ctrl+alt+shift+Delete", "ctrl+alt+KP_Decimal",
		"Ctrl_R+Meta_L+Delete",
	},
	"Ctrl+Alt+Backspace": {"ctrl+alt+BackSpace", "ctrl+alt+backspace", "Alt_R+Control_R+BackSpace", "CONTROL+ALT+BACKSPACE"},
	"Terminate_Server":   {"Terminate_Server", "terminate_server", "0xfed5", "shift+Terminate_Server"},
	"Ctrl+Alt+F1":        {"ctrl+alt+F1", "ctrl+alt+f1", "alt+ctrl+KP_F1", "Control_R+Alt_R+F1"},
	"Ctrl+Alt+F7":        {"ctrl+alt+F7", "ALT+CTRL+f7", "ctrl+alt+0xffc4"},
	"Ctrl+Alt+F12":       {"ctrl+alt+F12", "alt+control+f12"},
	"XF86Switch_VT_3":    {"XF86Switch_VT_3", "xf86switch_vt_3", "0x1008fe03"},
	"Ctrl+Alt+T":         {"ctrl+alt+t", "ctrl+alt+T", "Alt+Control+t", "Control_R+Alt_R+U0074", "ctrl+alt+0x1000074", "ctrl+alt+shift+t"},
	"Alt+F2":             {"alt+F2", "ALT+f2", "Alt_R+F2", "Meta_L+F2", "option+F2"},
	"Alt+F4":             {"alt+F4", "alt+f4", "F4+alt", "Alt_R+F4", "shift+alt+F4"},
	"Alt+Tab":            {"alt+Tab", "alt+tab", "Tab+Alt_L", "Alt_R+Tab", "alt+shift+Tab", "alt+ISO_Left_Tab", "alt+KP_Tab", "ctrl+alt+tab"},
	"Super":              {"super", "Super_L", "Super_R", "SUPER", "win", "cmd", "meta", "windows", "Hyper_L", "super+shift", "Super_L+Super_R"},
	"Super+L":            {"super+l", "super+L", "Super_R+l", "win+l", "cmd+L", "l+super"},
	"Alt+SysRq":          {"alt+Sys_Req", "alt+Print", "alt+print+b", "Alt_R+Sys_Req+o", "alt+printscreen", "alt+sys_req+r"},
}

var macBlocked = map[string][]string{
	"Cmd+Q":          {"cmd+q", "Cmd+Q", "super+q", "command+Q", "Super_R+q", "q+cmd"},
	"Shift+Cmd+Q":    {"shift+cmd+q", "cmd+shift+Q", "Shift_R+Super_L+q"},
	"Option+Cmd+Esc": {"option+cmd+Escape", "alt+cmd+esc", "cmd+option+escape", "Alt_R+Super_L+Escape"},
	"Cmd+Tab":        {"cmd+Tab", "command+tab", "Super_L+KP_Tab", "ctrl+cmd+tab"},
	"Cmd+Space":      {"cmd+space", "cmd+Space", "Super_R+space", "cmd+KP_Space", "command+U0020"},
	"Ctrl+Cmd+Q":     {"ctrl+cmd+q", "cmd+ctrl+Q", "Control_R+Super_R+q"},
}

// allowed are everyday combinations that must pass.
var linuxAllowed = []string{
	"ctrl+c", "ctrl+v", "ctrl+shift+t", "ctrl+t", "alt+f", "shift+Tab", "Tab", "Delete", "BackSpace",
	"ctrl+BackSpace", "Print", "F4", "F2", "ctrl+F4", "ctrl+alt+a", "Escape", "Return", "ctrl+l", "shift",
	"ctrl", "alt", "ctrl+shift", "l", "super_is_not_a_key_here",
}

var macAllowed = []string{"cmd+c", "cmd+v", "cmd+w", "cmd+t", "q", "Tab", "ctrl+q", "alt+q", "Escape", "space"}

func TestLinuxBlocked(t *testing.T) {
	l := Linux()
	for name, spellings := range linuxBlocked {
		for _, s := range spellings {
			err := l.CheckKeys(s)
			var be *BlockedError
			if !errors.As(err, &be) {
				t.Errorf("Linux().CheckKeys(%q) = %v, want it blocked as %s", s, err, name)
				continue
			}
			if be.Rule.Name != name {
				t.Errorf("Linux().CheckKeys(%q) blocked as %s, want %s", s, be.Rule.Name, name)
			}
			if !strings.Contains(err.Error(), "systemKeyCombos") {
				t.Errorf("error for %q does not say how to get the grant: %v", s, err)
			}
		}
	}
}

func TestMacBlocked(t *testing.T) {
	l := MacOS()
	for name, spellings := range macBlocked {
		for _, s := range spellings {
			err := l.CheckCombo(s)
			var be *BlockedError
			if !errors.As(err, &be) {
				t.Errorf("MacOS().CheckCombo(%q) = %v, want it blocked as %s", s, err, name)
				continue
			}
			if be.Rule.Name != name {
				t.Errorf("MacOS().CheckCombo(%q) blocked as %s, want %s", s, be.Rule.Name, name)
			}
		}
	}
}

func TestAllowed(t *testing.T) {
	for _, s := range linuxAllowed {
		if _, err := ParseChord(s); err != nil {
			// Not a key name: it must pass through to the tool's own
			// argument check rather than be called a shortcut.
			if got := Linux().CheckKeys(s); got != nil {
				t.Errorf("Linux().CheckKeys(%q) on an unparsable combination = %v, want nil", s, got)
			}
			continue
		}
		if err := Linux().CheckKeys(s); err != nil {
			t.Errorf("Linux().CheckKeys(%q) = %v, want nil", s, err)
		}
	}
	for _, s := range macAllowed {
		if err := MacOS().CheckKeys(s); err != nil {
			t.Errorf("MacOS().CheckKeys(%q) = %v, want nil", s, err)
		}
	}
}

func TestSequences(t *testing.T) {
	l := Linux()
	for _, tc := range []struct {
		keys    string
		blocked bool
	}{
		{"ctrl+a ctrl+c", false},
		{"ctrl+a alt+Tab", true},
		{"Return  super+l  Return", true},
		{"\tctrl+alt+F3\n", true},
	} {
		if got := l.CheckKeys(tc.keys) != nil; got != tc.blocked {
			t.Errorf("CheckKeys(%q) blocked = %v, want %v", tc.keys, got, tc.blocked)
		}
	}
}

func TestChordString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Delete+Alt_R+Control_R", "ctrl+alt+Delete"},
		{"shift+CTRL+T", "ctrl+shift+t"},
		{"alt+KP_Delete", "alt+Delete"},
		{"cmd+option+esc", "alt+super+Escape"},
		{"Meta_L", "alt+super"},
		{"ctrl+a+b+a", "ctrl+a+b"},
	} {
		c, err := ParseChord(tc.in)
		if err != nil {
			t.Fatalf("ParseChord(%q): %v", tc.in, err)
		}
		if got := c.String(); got != tc.want {
			t.Errorf("ParseChord(%q).String() = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestForPlatform(t *testing.T) {
	if got := ForPlatform("darwin").Platform(); got != "darwin" {
		t.Errorf("ForPlatform(darwin).Platform() = %q", got)
	}
	if got := ForPlatform("linux").Platform(); got != "linux" {
		t.Errorf("ForPlatform(linux).Platform() = %q", got)
	}
	// Every F-key from 1 to 12 is covered with ctrl+alt.
	for i := 1; i <= 12; i++ {
		s := "ctrl+alt+F" + string(rune('0'+i/10)) + string(rune('0'+i%10))
		if i < 10 {
			s = "ctrl+alt+F" + string(rune('0'+i))
		}
		if Linux().CheckCombo(s) == nil {
			t.Errorf("Linux().CheckCombo(%q) = nil, want blocked", s)
		}
	}
}

// TestMacPlatformList: every macOS system shortcut the platform package
// lists (other than fn ones, which no key tool can send) is blocked in its
// own spelling, and only with exactly its modifiers.
func TestMacPlatformList(t *testing.T) {
	l := MacOS()
	n := 0
	for _, sc := range platform.MacSystemShortcuts {
		if sc.Combo.Mods&platform.Function != 0 {
			continue
		}
		n++
		if _, ok := macRule(sc); !ok {
			t.Errorf("macRule(%v) did not convert", sc.Combo)
			continue
		}
		spelled := sc.Combo.String()
		spelled = strings.NewReplacer("opt+", "alt+", "cmd+", "super+").Replace(spelled)
		if err := l.CheckCombo(spelled); err == nil {
			if _, perr := ParseChord(spelled); perr == nil {
				t.Errorf("MacOS().CheckCombo(%q) = nil, want blocked (%s)", spelled, sc.Effect)
			}
		}
	}
	if n < 40 {
		t.Errorf("only %d platform shortcuts without fn; the list shrank?", n)
	}
	// Exact rules: ctrl+Up is Mission Control, ctrl+shift+Up selects text.
	if l.CheckCombo("ctrl+Up") == nil {
		t.Errorf("ctrl+Up not blocked on macOS")
	}
	if err := l.CheckCombo("ctrl+shift+Up"); err != nil {
		t.Errorf("ctrl+shift+Up blocked on macOS: %v", err)
	}
	if err := Linux().CheckCombo("ctrl+Up"); err != nil {
		t.Errorf("ctrl+Up blocked on Linux: %v", err)
	}
}
