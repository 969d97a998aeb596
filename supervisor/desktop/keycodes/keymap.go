package keycodes

import "math/bits"

// This file holds the keyboard-mapping logic that needs no X server: given a
// snapshot of the XKB keymap (key types, each key's symbols in the current
// group, which keys set which modifiers), find the keycode and modifiers that
// produce a keysym, and the spare keycodes that may be borrowed for a keysym
// the layout lacks.

type keycode uint8

// modMask is a set of the eight X core modifiers.
type modMask uint8

const (
	modShift   modMask = 1 << 0
	modLock    modMask = 1 << 1
	modControl modMask = 1 << 2
	mod1       modMask = 1 << 3 // usually Alt
	mod2       modMask = 1 << 4 // usually NumLock
	mod3       modMask = 1 << 5
	mod4       modMask = 1 << 6 // usually Super
	mod5       modMask = 1 << 7 // usually ISO_Level3_Shift (AltGr)
)

// keyType is an XKB key type: which modifiers it looks at and which
// combination of them selects which shift level.
type keyType struct {
	mask    modMask
	entries []typeEntry // active map entries only
}

type typeEntry struct {
	mods  modMask
	level int
}

// level is the shift level XKB selects for a key of this type when mods are
// in effect; combinations the type does not list select level 1 (index 0).
func (t keyType) level(mods modMask) int {
	m := mods & t.mask
	for _, e := range t.entries {
		if e.mods == m {
			return e.level
		}
	}
	return 0
}

// keyInfo is one keycode of the snapshot.
type keyInfo struct {
	code keycode
	// typ indexes keyboard.types; -1 when the key has no symbols at all.
	typ int
	// syms holds the key's symbols by shift level in the effective group.
	syms []Keysym
	// setMods are the real modifiers the key sets while held (its XKB
	// SetMods action at level 1); 0 for keys that are not modifiers or
	// that latch or lock instead.
	setMods modMask
	// acts holds the type of the key's XKB action by shift level (see
	// xkbAction*); nil when unknown.
	acts []uint8
}

// keyboard is a snapshot of the server's keymap, as the backend reads it.
type keyboard struct {
	types []keyType
	keys  []keyInfo
}

// stroke is how to produce a keysym: hold mods (each through the key that
// sets it), then press code.
type stroke struct {
	code keycode
	mods modMask
}

// keymap answers "which key types this keysym" for one snapshot and one
// set of ambient modifiers (those in effect that deskhand does not control,
// such as a locked NumLock).
type keymap struct {
	best    map[Keysym]stroke
	modKeys [8]keycode // a key that sets modifier bit i, 0 if none
	spare   []keycode  // keycodes with no symbols, free to borrow
}

// lowestSpare is the first keycode considered spare. Keycode 8 is the
// lowest legal keycode and some toolkits treat it specially, so it is left
// alone.
const lowestSpare = 9

func newKeymap(kb keyboard, ambient modMask) *keymap {
	km := &keymap{best: make(map[Keysym]stroke)}

	// A modifier can be held for a stroke when some key sets exactly that
	// modifier. Lock is never held: it toggles.
	for _, k := range kb.keys {
		if k.typ < 0 || bits.OnesCount8(uint8(k.setMods)) != 1 || k.setMods == modLock {
			continue
		}
		bit := bits.TrailingZeros8(uint8(k.setMods))
		if km.modKeys[bit] == 0 {
			km.modKeys[bit] = k.code
		}
	}
	var pressable modMask
	for bit, code := range km.modKeys {
		if code != 0 {
			pressable |= 1 << bit
		}
	}

	for _, k := range kb.keys {
		if k.typ < 0 || k.typ >= len(kb.types) {
			if k.typ < 0 && k.setMods == 0 && k.code >= lowestSpare {
				km.spare = append(km.spare, k.code)
			}
			continue
		}
		t := kb.types[k.typ]
		choices := pressable & t.mask &^ ambient
		// Every subset of the modifiers this key's type looks at, fewest
		// first, so each level is reached with the least held.
		for _, held := range subsetsByCount(choices) {
			lvl := t.level(ambient | held)
			if lvl >= len(k.syms) {
				continue
			}
			sym := k.syms[lvl]
			if sym == 0 || sym == keysymVoid {
				continue
			}
			km.consider(sym, stroke{code: k.code, mods: held})
		}
	}
	return km
}

// consider keeps s for sym when it needs fewer modifiers than what is
// known, or as many on a lower keycode.
func (km *keymap) consider(sym Keysym, s stroke) {
	have, ok := km.best[sym]
	if ok {
		hb, sb := bits.OnesCount8(uint8(have.mods)), bits.OnesCount8(uint8(s.mods))
		if hb < sb || (hb == sb && have.code <= s.code) {
			return
		}
	}
	km.best[sym] = s
}

// subsetsByCount lists every subset of m, smallest first.
func subsetsByCount(m modMask) []modMask {
	out := []modMask{0}
	for n := 1; n <= bits.OnesCount8(uint8(m)); n++ {
		for s := m; s != 0; s = (s - 1) & m {
			if bits.OnesCount8(uint8(s)) == n {
				out = append(out, s)
			}
		}
	}
	return out
}

// lookup finds the first of syms the keymap can type, and how.
func (km *keymap) lookup(syms ...Keysym) (stroke, Keysym, bool) {
	for _, s := range syms {
		if st, ok := km.best[s]; ok {
			return st, s, true
		}
	}
	return stroke{}, 0, false
}

// modKeycodes lists, lowest modifier bit first, the keys to hold for mods.
func (km *keymap) modKeycodes(mods modMask) []keycode {
	var out []keycode
	for bit := 0; bit < 8; bit++ {
		if mods&(1<<bit) != 0 && km.modKeys[bit] != 0 {
			out = append(out, km.modKeys[bit])
		}
	}
	return out
}
