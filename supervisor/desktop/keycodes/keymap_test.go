package keycodes

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Key types as an XKB server describes them (masks are real modifiers).
var (
	typeOneLevel   = keyType{}
	typeTwoLevel   = keyType{mask: modShift, entries: []typeEntry{{modShift, 1}}}
	typeAlphabetic = keyType{mask: modShift | modLock, entries: []typeEntry{{modShift, 1}, {modLock, 1}}}
	typeFourLevel  = keyType{mask: modShift | mod5, entries: []typeEntry{{modShift, 1}, {mod5, 2}, {modShift | mod5, 3}}}
	// KEYPAD: NumLock or Shift selects the digit, both together the
	// function again.
	typeKeypad = keyType{mask: modShift | mod2, entries: []typeEntry{{modShift, 1}, {mod2, 1}}}
)

// testKeyboard is a small German-like keymap: types in the order of the
// vars above.
func testKeyboard() keyboard {
	return keyboard{
		types: []keyType{typeOneLevel, typeTwoLevel, typeAlphabetic, typeFourLevel, typeKeypad},
		keys: []keyInfo{
			{code: 8, typ: -1}, // empty, but keycode 8 is never borrowed
			{code: 10, typ: 3, syms: []Keysym{'1', '!', 0xb9, 0xa1}},                // 1 ! ¹ ¡
			{code: 20, typ: 3, syms: []Keysym{0xdf, '?', '\\', 0xbf}},               // ß ? \ ¿
			{code: 24, typ: 3, syms: []Keysym{'q', 'Q', '@', 0x7d9}},                // q Q @ Greek_OMEGA
			{code: 26, typ: 3, syms: []Keysym{'e', 'E', 0x20ac, 0x20ac}},            // e E € €
			{code: 37, typ: 0, syms: []Keysym{keysymControlL}, setMods: modControl}, //
			{code: 38, typ: 2, syms: []Keysym{'a', 'A'}},                            //
			{code: 50, typ: 0, syms: []Keysym{keysymShiftL}, setMods: modShift},     //
			{code: 59, typ: 1, syms: []Keysym{',', ';'}},                            //
			{code: 62, typ: 0, syms: []Keysym{0xffe2}, setMods: modShift},           // Shift_R
			{code: 66, typ: 0, syms: []Keysym{0xffe5}},                              // Caps_Lock locks, does not set
			{code: 87, typ: 4, syms: []Keysym{0xff9c, 0xffb1}},                      // KP_End KP_1
			{code: 92, typ: 0, syms: []Keysym{keysymLevel3}, setMods: mod5},         // ISO_Level3_Shift
			{code: 93, typ: -1}, // spare
			{code: 94, typ: 1, syms: []Keysym{'<', '>', '|'}}, //
			{code: 97, typ: -1}, // spare
			{code: 133, typ: 0, syms: []Keysym{keysymSuperL}, setMods: mod4}, //
			{code: 203, typ: 0, syms: []Keysym{0xff7e}},                      // Mode_switch: a group action
			{code: 204, typ: 0, syms: []Keysym{0}},                           // NoSymbol only: not a spare, not a key
		},
	}
}

func TestTypeLevel(t *testing.T) {
	tests := []struct {
		typ  keyType
		mods modMask
		want int
	}{
		{typeOneLevel, modShift, 0},
		{typeTwoLevel, 0, 0},
		{typeTwoLevel, modShift, 1},
		{typeTwoLevel, modShift | mod2, 1}, // NumLock is not in the mask
		{typeAlphabetic, modLock, 1},
		{typeAlphabetic, modShift | modLock, 0},
		{typeFourLevel, mod5, 2},
		{typeFourLevel, modShift | mod5, 3},
		{typeFourLevel, modControl | mod5, 2},
		{typeKeypad, mod2, 1},
		{typeKeypad, modShift | mod2, 0},
	}
	for _, tt := range tests {
		if got := tt.typ.level(tt.mods); got != tt.want {
			t.Errorf("%+v.level(%#x) = %d, want %d", tt.typ, uint8(tt.mods), got, tt.want)
		}
	}
}

func TestKeymapLookup(t *testing.T) {
	tests := []struct {
		name    string
		ambient modMask
		sym     Keysym
		want    stroke
		ok      bool
	}{
		{"plain letter", 0, 'a', stroke{38, 0}, true},
		{"capital letter needs Shift", 0, 'A', stroke{38, modShift}, true},
		{"AltGr level", 0, '@', stroke{24, mod5}, true},
		{"Shift+AltGr level", 0, 0x7d9, stroke{24, modShift | mod5}, true},
		{"ß on its own key", 0, 0xdf, stroke{20, 0}, true},
		{"fewest modifiers wins", 0, '<', stroke{94, 0}, true},
		{"same symbol on both levels: unshifted", 0, 0x20ac, stroke{26, mod5}, true},
		{"modifier keysym", 0, keysymShiftL, stroke{50, 0}, true},
		{"missing character", 0, 0xe9, stroke{}, false},
		{"keypad function without NumLock", 0, 0xff9c, stroke{87, 0}, true},
		{"keypad digit needs NumLock, which cannot be held", 0, 0xffb1, stroke{87, modShift}, true},
		{"keypad digit with NumLock locked", mod2, 0xffb1, stroke{87, 0}, true},
		{"keypad function with NumLock locked needs Shift", mod2, 0xff9c, stroke{87, modShift}, true},
		{"with Shift held, a is unreachable", modShift, 'a', stroke{}, false},
		{"with Shift held, A needs nothing", modShift, 'A', stroke{38, 0}, true},
		{"Lock is ignored for two-level keys", modLock, ',', stroke{59, 0}, true},
		{"NoSymbol is no key", 0, 0, stroke{}, false},
	}
	for _, tt := range tests {
		km := newKeymap(testKeyboard(), tt.ambient)
		got, sym, ok := km.lookup(tt.sym)
		if ok != tt.ok || got != tt.want || (ok && sym != tt.sym) {
			t.Errorf("%s: lookup(%v) with ambient %#x = %+v, %v, %v; want %+v, %v", tt.name, tt.sym, uint8(tt.ambient), got, sym, ok, tt.want, tt.ok)
		}
	}
}

func TestKeymapLookupFirstAvailable(t *testing.T) {
	km := newKeymap(testKeyboard(), 0)
	// € is both the legacy EuroSign and the Unicode keysym; the layout
	// carries the legacy one.
	st, sym, ok := km.lookup(0x20ac, 0x010020ac)
	if !ok || sym != 0x20ac || st != (stroke{26, mod5}) {
		t.Errorf("lookup(EuroSign, U20AC) = %+v, %v, %v", st, sym, ok)
	}
	if _, _, ok := km.lookup(0x010065e5); ok {
		t.Error("lookup(U65E5) found a key in a layout without CJK")
	}
}

func TestKeymapModifiersAndSpares(t *testing.T) {
	km := newKeymap(testKeyboard(), 0)
	want := [8]keycode{0: 50, 2: 37, 6: 133, 7: 92}
	if km.modKeys != want {
		t.Errorf("modKeys = %v, want %v (lowest key that sets each modifier; Caps Lock and Mode_switch set none)", km.modKeys, want)
	}
	if got := km.modKeycodes(modShift | mod5); !cmp.Equal(got, []keycode{50, 92}) {
		t.Errorf("modKeycodes(Shift|Mod5) = %v, want [50 92]", got)
	}
	if got := km.modKeycodes(mod1); len(got) != 0 {
		t.Errorf("modKeycodes(Mod1) = %v, want none (no key sets Mod1)", got)
	}
	if !cmp.Equal(km.spare, []keycode{93, 97}) {
		t.Errorf("spare = %v, want [93 97]", km.spare)
	}
}

func TestSubsetsByCount(t *testing.T) {
	got := subsetsByCount(modShift | mod5 | modControl)
	want := []modMask{0, modShift, modControl, mod5, modShift | modControl, modShift | mod5, modControl | mod5, modShift | modControl | mod5}
	if len(got) != len(want) {
		t.Fatalf("subsetsByCount = %v, want %v", got, want)
	}
	seen := map[modMask]bool{}
	for i, s := range got {
		if seen[s] {
			t.Errorf("subset %#x listed twice", uint8(s))
		}
		seen[s] = true
		if i > 0 && popcount(s) < popcount(got[i-1]) {
			t.Errorf("subsetsByCount not ordered by size: %v", got)
		}
	}
}

func popcount(m modMask) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

// Modifier keysyms of testKeyboard.
const (
	keysymShiftL   Keysym = 0xffe1
	keysymControlL Keysym = 0xffe3
	keysymSuperL   Keysym = 0xffeb
	keysymLevel3   Keysym = 0xfe03 // ISO_Level3_Shift (AltGr)
)
