package input

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseCombo(t *testing.T) {
	const (
		ctrl  = keysymControlL
		shift = keysymShiftL
		alt   = keysymAltL
		super = keysymSuperL
	)
	tests := []struct {
		in   string
		want []Keysym
	}{
		{"ctrl+shift+t", []Keysym{ctrl, shift, 't'}},
		{"Return", []Keysym{keysymReturn}},
		{"return", []Keysym{keysymReturn}},
		{"RETURN", []Keysym{keysymReturn}},
		{"enter", []Keysym{keysymReturn}},
		{"super", []Keysym{super}},
		{"cmd+c", []Keysym{super, 'c'}},
		{"meta", []Keysym{super}},
		{"win", []Keysym{super}},
		{"alt+F4", []Keysym{alt, 0xffc1}},
		{"alt+f4", []Keysym{alt, 0xffc1}},
		{"ctrl+a", []Keysym{ctrl, 'a'}},
		{"ctrl+A", []Keysym{ctrl, 'A'}},
		{"Control+Alt+Delete", []Keysym{ctrl, alt, 0xffff}},
		{"control_l", []Keysym{ctrl}},
		{"Ctrl_R", []Keysym{0xffe4}},
		{"shift_r", []Keysym{0xffe2}},
		{"esc", []Keysym{0xff1b}},
		{"Escape", []Keysym{0xff1b}},
		{"pageup", []Keysym{0xff55}},
		{"Page_Up", []Keysym{0xff55}},
		{"prior", []Keysym{0xff55}},
		{"pagedown", []Keysym{0xff56}},
		{"next", []Keysym{0xff56}},
		{"del", []Keysym{0xffff}},
		{"BackSpace", []Keysym{0xff08}},
		{"backspace", []Keysym{0xff08}},
		{"tab", []Keysym{keysymTab}},
		{"shift+Tab", []Keysym{shift, keysymTab}},
		{"space", []Keysym{' '}},
		{"up", []Keysym{0xff52}},
		{"Left", []Keysym{0xff51}},
		{"home", []Keysym{0xff50}},
		{"End", []Keysym{0xff57}},
		{"insert", []Keysym{0xff63}},
		{"f1", []Keysym{0xffbe}},
		{"F12", []Keysym{0xffc9}},
		{"f24", []Keysym{0xffd5}},
		{"F35", []Keysym{0xffe0}},
		{"f25", []Keysym{0xffd6}},
		{"KP_Enter", []Keysym{0xff8d}},
		{"kp_enter", []Keysym{0xff8d}},
		{"XF86AudioMute", []Keysym{0x1008ff12}},
		{"xf86audioraisevolume", []Keysym{0x1008ff13}},
		{"volumeup", []Keysym{0x1008ff13}},
		{"a", []Keysym{'a'}},
		{"A", []Keysym{'A'}},
		{"1", []Keysym{'1'}},
		{"/", []Keysym{'/'}},
		{"slash", []Keysym{'/'}},
		{"ctrl+/", []Keysym{ctrl, '/'}},
		{"ctrl++", []Keysym{ctrl, '+'}},
		{"+", []Keysym{'+'}},
		{"plus", []Keysym{'+'}},
		{"é", []Keysym{0xe9}},
		{"eacute", []Keysym{0xe9}},
		{"€", []Keysym{0x20ac}},
		{"🙂", []Keysym{0x0101f642}},
		{"U20AC", []Keysym{0x010020ac}},
		{"U1F642", []Keysym{0x0101f642}},
		{"u00e9", []Keysym{0xe9}},
		{"0x1008ff14", []Keysym{0x1008ff14}},
		{" ctrl + c ", []Keysym{ctrl, 'c'}},
		{"ISO_Level3_Shift", []Keysym{keysymLevel3}},
		{"altgr+q", []Keysym{keysymLevel3, 'q'}},
		{"Print", []Keysym{0xff61}},
		{"capslock", []Keysym{0xffe5}},
	}
	for _, tt := range tests {
		got, err := ParseCombo(tt.in)
		if err != nil {
			t.Errorf("ParseCombo(%q) error: %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got.Keys); diff != "" {
			t.Errorf("ParseCombo(%q) keys (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseComboErrors(t *testing.T) {
	tests := []struct {
		in   string
		want []string // substrings of the error
	}{
		{"ctrl+foo", []string{`unknown key "foo" in "ctrl+foo"; use X keysym names such as Return, Tab, ctrl, alt, shift, super, F1`}},
		{"retrun", []string{`unknown key "retrun"`, "did you mean Return?"}},
		{"ctrl+shfit+t", []string{`unknown key "shfit"`, "did you mean", "shift"}},
		{"AACUTE", []string{`ambiguous key "AACUTE" in "AACUTE"`, "Aacute or aacute"}},
		{"", []string{"empty key combination"}},
		{"   ", []string{"empty key combination"}},
		{"ctrl+", []string{`empty key name in "ctrl+"`}},
		{"+a", []string{`empty key name in "+a"`}},
		{"ctrl++a", []string{`empty key name in "ctrl++a"`}},
		{"f36", []string{`unknown key "f36"`}},
		{"UD800", []string{`unknown key "UD800"`}},
		{"\x07", []string{`unknown key "\a"`}},
	}
	for _, tt := range tests {
		_, err := ParseCombo(tt.in)
		if err == nil {
			t.Errorf("ParseCombo(%q) succeeded, want an error", tt.in)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("ParseCombo(%q) error = %q, want it to contain %q", tt.in, err, w)
			}
		}
	}
}

func TestParseKeys(t *testing.T) {
	got, err := ParseKeys("ctrl+a  ctrl+c\tReturn")
	if err != nil {
		t.Fatal(err)
	}
	want := []Combo{
		{Keys: []Keysym{keysymControlL, 'a'}},
		{Keys: []Keysym{keysymControlL, 'c'}},
		{Keys: []Keysym{keysymReturn}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseKeys (-want +got):\n%s", diff)
	}
	if _, err := ParseKeys("ctrl+a nosuch"); err == nil || !strings.Contains(err.Error(), `unknown key "nosuch"`) {
		t.Errorf("ParseKeys with an unknown key = %v", err)
	}
	if _, err := ParseKeys(" "); err == nil {
		t.Error("ParseKeys(\" \") succeeded")
	}
}

func TestKeysymString(t *testing.T) {
	tests := []struct {
		k    Keysym
		want string
	}{
		{keysymReturn, "Return"},
		{'a', "a"},
		{0xff55, "Prior"},
		{0x20ac, "EuroSign"},
		{0x0101f642, "U1F642"},
		{0x1008ff12, "XF86AudioMute"},
		{0x12345678, "0x12345678"},
	}
	for _, tt := range tests {
		if got := tt.k.String(); got != tt.want {
			t.Errorf("Keysym(%#x).String() = %q, want %q", uint32(tt.k), got, tt.want)
		}
	}
	c, _ := ParseCombo("ctrl+shift+t")
	if got := c.String(); got != "Control_L+Shift_L+t" {
		t.Errorf("Combo.String() = %q", got)
	}
}

func TestTextKeysyms(t *testing.T) {
	tests := []struct {
		r    rune
		want []Keysym
	}{
		{'a', []Keysym{'a'}},
		{' ', []Keysym{' '}},
		{'~', []Keysym{'~'}},
		{'é', []Keysym{0xe9}},
		{'ß', []Keysym{0xdf}},
		{0xa0, []Keysym{0xa0}}, // no-break space
		{'€', []Keysym{0x20ac, 0x010020ac}},
		{'日', []Keysym{0x010065e5}},
		{'🙂', []Keysym{0x0101f642}},
		{'\n', []Keysym{keysymReturn}},
		{'\r', []Keysym{keysymReturn}},
		{'\t', []Keysym{keysymTab}},
	}
	for _, tt := range tests {
		got, err := textKeysyms(tt.r)
		if err != nil {
			t.Errorf("textKeysyms(%q) error: %v", tt.r, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("textKeysyms(%q) (-want +got):\n%s", tt.r, diff)
		}
	}
	for _, r := range []rune{0, 0x07, 0x1b, 0x7f, 0x85} {
		if _, err := textKeysyms(r); err == nil {
			t.Errorf("textKeysyms(%U) succeeded, want an error", r)
		}
	}
}

func TestPlanText(t *testing.T) {
	items, err := PlanText("a\r\nb\rc\n")
	if err != nil {
		t.Fatal(err)
	}
	var got []rune
	for _, it := range items {
		got = append(got, it.Char)
	}
	if want := []rune{'a', '\r', 'b', '\r', 'c', '\n'}; !cmp.Equal(want, got) {
		t.Errorf("planText runes = %q, want %q (\\r\\n is one line break)", got, want)
	}
	if _, err := PlanText("ok\xffbad"); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Errorf("PlanText(invalid UTF-8) = %v", err)
	}
	if _, err := PlanText("ab\x1bc"); err == nil || !strings.Contains(err.Error(), "character 3") {
		t.Errorf("PlanText(escape char) = %v, want it to name character 3", err)
	}
}
