package macos

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/supervisor/keyblock"
	"github.com/deskhand/deskhand/supervisor/platform"
)

// layoutHelper answers key_layout with a fixed layout, as the Swift helper
// does (the JSON goes through the same decoding).
type layoutHelper struct {
	layout string
	err    error
	calls  int
}

func (h *layoutHelper) Call(_ context.Context, method string, _, result any) error {
	h.calls++
	if method != "key_layout" {
		return errors.New("unexpected method " + method)
	}
	if h.err != nil {
		return h.err
	}
	return json.Unmarshal([]byte(h.layout), result)
}

// What key_layout answers for part of the French (AZERTY) and US layouts.
const (
	frenchJSON = `{"source": "com.apple.keylayout.French", "name": "French", "keys": [
		{"code": 0, "base": "q", "shift": "Q", "command": "q", "command_shift": "Q"},
		{"code": 12, "base": "a", "shift": "A", "command": "a", "command_shift": "A"},
		{"code": 20, "base": "\"", "shift": "3", "command": "\"", "command_shift": "3"},
		{"code": 21, "base": "'", "shift": "4", "command": "'", "command_shift": "4"},
		{"code": 4, "base": "h", "shift": "H", "command": "h", "command_shift": "H"}]}`
	usJSON = `{"source": "com.apple.keylayout.US", "name": "U.S.", "keys": [
		{"code": 0, "base": "a", "shift": "A", "command": "a", "command_shift": "A"},
		{"code": 12, "base": "q", "shift": "Q", "command": "q", "command_shift": "Q"},
		{"code": 20, "base": "3", "shift": "#", "command": "3", "command_shift": "#"}]}`
	russianJSON = `{"source": "com.apple.keylayout.Russian", "name": "Russian", "keys": [
		{"code": 8, "base": "с", "shift": "С", "command": "c", "command_shift": "C"}]}`
)

func shortcutsOver(layout string) (*Shortcuts, *layoutHelper) {
	h := &layoutHelper{layout: layout}
	s := NewShortcuts()
	s.SetHelper(h)
	return s, h
}

func TestShortcutsSendTheLayoutsKey(t *testing.T) {
	tests := []struct {
		layout string
		mods   platform.Modifier
		r      rune
		want   uint16
	}{
		// US: the ANSI positions.
		{usJSON, platform.Command, 'a', 0x00},
		{usJSON, platform.Command, 'q', 0x0c},
		// AZERTY: Cmd-A is the key in the US Q position; sending the US
		// "A" key (0x00) would be Cmd-Q, quit.
		{frenchJSON, platform.Command, 'a', 0x0c},
		{frenchJSON, platform.Command, 'q', 0x00},
		// Asked directly, a blocked system shortcut got past the gates
		// with the grant, so it is sent: the key whose shifted character
		// is 3.
		{frenchJSON, platform.Command | platform.Shift, '3', 0x14},
		{frenchJSON, platform.Command, 'h', 0x04},
		// Russian: Command's layer is QWERTY.
		{russianJSON, platform.Command, 'c', 0x08},
	}
	for _, tt := range tests {
		s, h := shortcutsOver(tt.layout)
		got, err := s.ShortcutKey(tt.mods, tt.r)
		if err != nil || got != tt.want {
			t.Errorf("ShortcutKey(%v, %q) on %.40s = %#x, %v, want %#x", tt.mods, tt.r, tt.layout, got, err, tt.want)
		}
		if h.calls != 1 {
			t.Errorf("ShortcutKey read the layout %d times, want once per press (it can change at any time)", h.calls)
		}
	}
}

// TestShortcutsRefuseAnotherSystemShortcut mounts the attack: on AZERTY the
// key whose base character is " types 3 with Shift, so Shift-Cmd-" is the
// press macOS takes as Shift-Cmd-3 (a screenshot, a system shortcut). The
// gates check the chord as asked, which is not on the blocklist; the press
// must be refused where it is resolved.
func TestShortcutsRefuseAnotherSystemShortcut(t *testing.T) {
	if err := keyblock.MacOS().CheckCombo(`super+shift+quotedbl`); err != nil {
		t.Fatalf("the premise does not hold: the gates' blocklist refuses Shift-Cmd-\" itself: %v", err)
	}
	s, _ := shortcutsOver(frenchJSON)
	code, err := s.ShortcutKey(platform.Command|platform.Shift, '"')
	if err == nil {
		t.Fatalf("ShortcutKey(shift+cmd, '\"') on AZERTY = %#x, want a refusal: that press is Shift-Cmd-3", code)
	}
	for _, want := range []string{"French", "shift+cmd+3", "screenshot", "systemKeyCombos"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not mention %q", err, want)
		}
	}
	// The same press under its US position: Shift-Cmd-' on AZERTY is the
	// key in the US "4" position, which the system matches by key code
	// (a selection screenshot), whatever the layout types.
	if code, err := s.ShortcutKey(platform.Command|platform.Shift, '\''); err == nil {
		t.Errorf("ShortcutKey(shift+cmd, '\\'') on AZERTY = %#x, want a refusal: that press is Shift-Cmd-4", code)
	}
}

func TestShortcutsFailClosed(t *testing.T) {
	s := NewShortcuts()
	if _, err := s.ShortcutKey(platform.Command, 'a'); err == nil || !strings.Contains(err.Error(), "not running") {
		t.Errorf("ShortcutKey without a helper = %v, want an error saying the helper is not running", err)
	}
	s, h := shortcutsOver("")
	h.err = errors.New("method_not_found: unknown method \"key_layout\"")
	if _, err := s.ShortcutKey(platform.Command, 'a'); err == nil || !strings.Contains(err.Error(), "keyboard layout") {
		t.Errorf("ShortcutKey with a helper that cannot read the layout = %v, want an error naming the layout", err)
	}
	s, _ = shortcutsOver(russianJSON)
	if _, err := s.ShortcutKey(platform.Control, 'c'); err == nil || !strings.Contains(err.Error(), "Russian") {
		t.Errorf("ShortcutKey(ctrl, 'c') on Russian = %v, want a refusal naming the layout", err)
	}
}

// TestDesktopSendsShortcutsThroughTheHelpersLayout: the desktop's input
// resolves shortcuts with the layout the helper it was given reads, over
// the real bridge client and the protocol's JSON.
func TestDesktopSendsShortcutsThroughTheHelpersLayout(t *testing.T) {
	d, err := Open(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.shortcuts.ShortcutKey(platform.Command, 'a'); err == nil {
		t.Fatal("ShortcutKey before the helper is known succeeded; it must refuse, not guess the US key")
	}
	d.DisplayGate(fakeClient(t, fakePermsEnv+"=screen_recording,accessibility"))
	code, err := d.shortcuts.ShortcutKey(platform.Command, 'a')
	if err != nil || code != 0x0c {
		t.Fatalf("Cmd-A on the helper's French layout = %#x, %v, want 0xc (the US Q position)", code, err)
	}
	if _, err := d.shortcuts.ShortcutKey(platform.Command|platform.Shift, '"'); err == nil {
		t.Fatal("Shift-Cmd-\" on the helper's French layout was sent; it is Shift-Cmd-3, a screenshot")
	}
}
