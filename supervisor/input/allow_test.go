package input

import (
	"errors"
	"strings"
	"testing"
)

// refusedSpellings are key names that must not get past ParseCombo, in
// every spelling a model might try: names, other cases, hex, inside
// combinations.
var refusedSpellings = []string{
	"Pointer_EnableKeys", "pointer_enablekeys", "0xfe79+shift", "dead_grave+0xfe70", "0xfef9", "0XFEF9", "shift+Pointer_EnableKeys",
	"Pointer_Button1", "Pointer_Button2", "pointer_button2", "0xfeea", "Pointer_Button3", "Pointer_Button4", "Pointer_Button5",
	"Pointer_Button_Dflt", "Pointer_DblClick1", "Pointer_Drag1", "Pointer_Drag_Dflt", "Pointer_Left", "Pointer_DownRight",
	"Pointer_Accelerate", "Pointer_DfltBtnNext", "Pointer_DfltBtnPrev",
	"StickyKeys_Enable", "stickykeys_enable", "0xfe75", "ctrl+StickyKeys_Enable", "SlowKeys_Enable", "BounceKeys_Enable",
	"MouseKeys_Enable", "MouseKeys_Accel_Enable", "AccessX_Enable", "AccessX_Feedback_Enable", "RepeatKeys_Enable",
	"Overlay1_Enable", "AudibleBell_Enable",
	"ISO_Next_Group", "ISO_Next_Group_Lock", "ISO_Group_Latch", "ISO_Group_Lock", "ISO_Lock", "ISO_Level3_Lock",
	"ISO_Level3_Latch", "ISO_Level2_Latch", "ISO_First_Group", "ISO_Prev_Group_Lock", "0xfe08",
	"Terminate_Server", "terminate_server", "0xfed5", "ctrl+alt+Terminate_Server",
	"First_Virtual_Screen", "Next_Virtual_Screen",
	"XF86Switch_VT_1", "XF86Switch_VT_12", "xf86switch_vt_3", "0x1008fe01", "0x1008FE07",
	"XF86Ungrab", "XF86ClearGrab", "XF86LogGrabInfo", "XF86LogWindowTree", "XF86Next_VMode", "XF86Prev_VMode",
	"0x1008fe20", "0x1008fe21",
	"XF86Copy", "XF86Paste", "XF86Cut", "XF86WLAN", "XF86Display", "XF86TouchpadToggle", "XF86RFKill", "XF86Battery",
	"VoidSymbol", "0xffffff", "0x1", "0x1234", "0x10000000", "0x1000001",
}

// allowedSpellings are ordinary keys that must keep working.
var allowedSpellings = []string{
	"a", "A", "z", "1", "/", "+", "ctrl++", "space", "é", "ß", "€", "日", "🙂", "U20AC", "U1F642", "0x61", "0x20ac", "0x10020ac",
	"EuroSign", "Cyrillic_a", "Greek_alpha", "Arabic_alef", "hebrew_aleph", "kana_A", "Thai_kokai", "Hangul_A",
	"dead_acute", "dead_circumflex", "Multi_key",
	"Return", "enter", "Tab", "ISO_Left_Tab", "shift+Tab", "BackSpace", "Delete", "Escape", "Insert",
	"Home", "End", "Page_Up", "Prior", "Next", "pagedown", "Up", "Down", "Left", "Right", "Menu", "Print", "Pause",
	"Num_Lock", "Caps_Lock", "Scroll_Lock", "Sys_Req", "Break", "Undo", "Redo", "Find", "Help",
	"F1", "F12", "F24", "F35", "f13",
	"KP_0", "KP_5", "KP_Enter", "KP_Add", "KP_Divide", "KP_Home", "KP_Begin", "KP_Decimal", "KP_F1",
	"ctrl", "Control_L", "Control_R", "Shift_L", "Shift_R", "Alt_L", "Alt_R", "Meta_L", "Meta_R", "Super_L", "Super_R",
	"Hyper_L", "Hyper_R", "super", "altgr", "ISO_Level3_Shift", "ISO_Level5_Shift", "Mode_switch", "Shift_Lock",
	"ctrl+alt+t", "ctrl+shift+Escape", "alt+F4", "super+l", "ctrl+alt+F1", "ctrl+alt+BackSpace",
	"XF86AudioMute", "XF86AudioRaiseVolume", "XF86AudioLowerVolume", "XF86AudioPlay", "XF86AudioPause", "XF86AudioNext",
	"XF86AudioPrev", "XF86AudioStop", "XF86AudioMicMute", "XF86MonBrightnessUp", "XF86MonBrightnessDown",
	"XF86KbdBrightnessUp", "XF86Back", "XF86Forward", "XF86Reload", "XF86ZoomIn",
	"volumeup", "mute", "playpause", "0x1008ff12",
	// allowed here, refused as system shortcuts by package keyblock
	"XF86PowerOff", "XF86Sleep", "XF86LogOff", "XF86Launch1", "XF86LaunchA", "XF86Explorer", "XF86Terminal",
	"Kanji", "Henkan", "Muhenkan", "Hiragana_Katakana", "Hangul", "Hangul_Hanja",
}

func TestParseComboRefusesKeysymsWithSideEffects(t *testing.T) {
	for _, s := range refusedSpellings {
		c, err := ParseCombo(s)
		var na *KeyNotAllowedError
		if !errors.As(err, &na) {
			t.Errorf("ParseCombo(%q) = %v, %v; want a KeyNotAllowedError", s, c, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "not allowed") || !strings.Contains(msg, s[:min(len(s), 4)]) && !strings.Contains(strings.ToLower(msg), strings.ToLower(s[:min(len(s), 4)])) {
			t.Errorf("ParseCombo(%q) error %q does not name the key and say it is not allowed", s, msg)
		}
		if na.Why == "" {
			t.Errorf("ParseCombo(%q) error says no reason", s)
		}
	}
}

func TestParseComboAllowsOrdinaryKeys(t *testing.T) {
	for _, s := range allowedSpellings {
		if _, err := ParseCombo(s); err != nil {
			t.Errorf("ParseCombo(%q) = %v, want it allowed", s, err)
		}
	}
}

func TestRefusalReasons(t *testing.T) {
	tests := []struct {
		key  string
		want string
	}{
		{"Pointer_Button2", "clicks the pointer"},
		{"0xfeea", "clicks the pointer"},
		{"StickyKeys_Enable", "accessibility controls"},
		{"Terminate_Server", "kills the X server"},
		{"XF86Switch_VT_2", "virtual terminal"},
		{"XF86Ungrab", "X server itself"},
		{"ISO_Next_Group", "layout group"},
		{"XF86WLAN", "system, launcher or hardware"},
	}
	for _, tt := range tests {
		_, err := ParseCombo(tt.key)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseCombo(%q) = %v, want an error saying %q", tt.key, err, tt.want)
		}
	}
}

// TestEveryTypedKeysymAllowed: type can only send keysyms of characters,
// so every keysym textKeysyms gives for any character is on the list.
func TestEveryTypedKeysymAllowed(t *testing.T) {
	runes := []rune{'\n', '\t', ' ', '~', 0xa0, 0xff}
	for r := range keysyms().byRune {
		runes = append(runes, r)
	}
	for r := rune(0x100); r < 0x3000; r += 7 {
		runes = append(runes, r)
	}
	runes = append(runes, 0x1f642, 0x10ffff-2, 0xe000)
	for _, r := range runes {
		syms, err := textKeysyms(r)
		if err != nil {
			continue
		}
		for _, k := range syms {
			if err := CheckKeysym(k); err != nil {
				t.Errorf("textKeysyms(%U) gives %s, which the allowlist refuses: %v", r, k, err)
			}
		}
	}
}

func TestAllowlistedXF86Exist(t *testing.T) {
	if got := len(allowedXF86Syms()); got != len(allowedXF86) {
		t.Errorf("allowlisted XF86 keysyms resolve to %d values, want %d", got, len(allowedXF86))
	}
}
