package input

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Combo is a key combination such as ctrl+shift+t: keys pressed in order
// and released in reverse.
type Combo struct {
	Keys []Keysym
}

// String writes the combination with X keysym names, e.g.
// "Control_L+Shift_L+t".
func (c Combo) String() string {
	names := make([]string, len(c.Keys))
	for i, k := range c.Keys {
		names[i] = k.String()
	}
	return strings.Join(names, "+")
}

// keyAliases are the names models and people use for keys beyond the X
// keysym vocabulary (xdotool accepts most of them too). Keys are lower case;
// lookup is case-insensitive.
var keyAliases = map[string]Keysym{
	"ctrl": keysymControlL, "control": keysymControlL,
	"alt": keysymAltL, "option": keysymAltL,
	"shift": keysymShiftL,
	"super": keysymSuperL, "cmd": keysymSuperL, "command": keysymSuperL,
	"meta": keysymSuperL, "win": keysymSuperL, "windows": keysymSuperL,
	"altgr":  keysymLevel3,
	"enter":  keysymReturn,
	"return": keysymReturn,
	"esc":    0xff1b, "escape": 0xff1b,
	"pageup": 0xff55, "page_up": 0xff55, "pgup": 0xff55, "prior": 0xff55,
	"pagedown": 0xff56, "page_down": 0xff56, "pgdn": 0xff56, "next": 0xff56,
	"del": 0xffff, "delete": 0xffff,
	"backspace": 0xff08,
	"tab":       keysymTab,
	"space":     0x20,
	"up":        0xff52, "down": 0xff54, "left": 0xff51, "right": 0xff53,
	"home": 0xff50, "end": 0xff57,
	"insert": 0xff63, "ins": 0xff63,
	"capslock": 0xffe5, "numlock": 0xff7f, "scrolllock": 0xff14,
	"printscreen": 0xff61, "print": 0xff61, "prtsc": 0xff61,
	"menu": 0xff67, "pause": 0xff13,
	"ctrl_l": keysymControlL, "ctrl_r": 0xffe4,
	"volumeup": 0x1008ff13, "volumedown": 0x1008ff11,
	"volumemute": 0x1008ff12, "mute": 0x1008ff12,
	"playpause": 0x1008ff14,
}

func init() {
	// f1 … f24 (the keysyms F1 … F35 are consecutive from 0xffbe).
	for i := 1; i <= 24; i++ {
		keyAliases[fmt.Sprintf("f%d", i)] = Keysym(0xffbe + i - 1)
	}
}

// ParseCombo parses an xdotool-style key combination: key names joined by
// "+", such as "ctrl+shift+t", "Return", "super", "alt+F4" or "ctrl+a".
//
// A key name is an X keysym name as XStringToKeysym knows it ("Return",
// "BackSpace", "KP_Enter", "XF86AudioMute", "U20AC"), matched exactly, then
// case-insensitively when that picks a single keysym; one of the aliases
// ctrl/control, alt, shift, super/cmd/meta/win, enter/return, esc/escape,
// pageup/page_up/prior, pagedown/next, del/delete, backspace, tab, space,
// up/down/left/right, home/end, insert, f1…f24 (any case); or a single
// character ("a", "A", "1", "/", "é"). A trailing "++" names the plus key
// ("ctrl++"). An upper-case letter is the shifted key, as in xdotool: "ctrl+T"
// presses ctrl+shift+t.
//
// A key outside the allowlist (see [CheckKeysym]) is a *KeyNotAllowedError
// however it is spelled.
func ParseCombo(s string) (Combo, error) {
	whole := strings.TrimSpace(s)
	if whole == "" {
		return Combo{}, fmt.Errorf("empty key combination; name a key such as Return, ctrl+c or alt+F4")
	}
	var tokens []string
	switch {
	case whole == "+":
		tokens = []string{"+"}
	case strings.HasSuffix(whole, "++"):
		tokens = append(strings.Split(whole[:len(whole)-2], "+"), "+")
	default:
		tokens = strings.Split(whole, "+")
	}
	c := Combo{Keys: make([]Keysym, 0, len(tokens))}
	for _, tok := range tokens {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			return Combo{}, fmt.Errorf("empty key name in %q; join key names with +, as in ctrl+shift+t", s)
		}
		k, err := parseKeyName(tok)
		var amb ambiguousKeyError
		switch {
		case errors.As(err, &amb):
			return Combo{}, fmt.Errorf("ambiguous key %q in %q: it could be %s; write it with that exact case", tok, s, strings.Join(amb.names, " or "))
		case err != nil:
			return Combo{}, fmt.Errorf("%w in %q; use X keysym names such as Return, Tab, ctrl, alt, shift, super, F1%s", err, s, suggestion(tok))
		}
		// Every spelling, hexadecimal ones included, resolves to a keysym
		// first and is checked as that keysym.
		if err := CheckKeysym(k); err != nil {
			var na *KeyNotAllowedError
			if errors.As(err, &na) {
				na.Name = tok
			}
			return Combo{}, fmt.Errorf("%w (in %q)", err, s)
		}
		c.Keys = append(c.Keys, k)
	}
	return c, nil
}

// ParseKeys parses a whitespace-separated sequence of combinations, the way
// `xdotool key` takes them: "ctrl+a ctrl+c".
func ParseKeys(s string) ([]Combo, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, fmt.Errorf("empty key combination; name a key such as Return, ctrl+c or alt+F4")
	}
	out := make([]Combo, 0, len(fields))
	for _, f := range fields {
		c, err := ParseCombo(f)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

type unknownKeyError struct{ name string }

func (e unknownKeyError) Error() string { return fmt.Sprintf("unknown key %q", e.name) }

type ambiguousKeyError struct {
	name  string
	names []string
}

func (e ambiguousKeyError) Error() string {
	return fmt.Sprintf("ambiguous key %q: it could be %s", e.name, strings.Join(e.names, " or "))
}

// parseKeyName resolves one key name; see ParseCombo.
func parseKeyName(tok string) (Keysym, error) {
	ix := keysyms()
	if k, ok := ix.exact[tok]; ok {
		return k, nil
	}
	lower := strings.ToLower(tok)
	if k, ok := keyAliases[lower]; ok {
		return k, nil
	}
	if cands := ix.lower[lower]; len(cands) == 1 {
		return cands[0].sym, nil
	} else if len(cands) > 1 {
		names := make([]string, len(cands))
		for i, c := range cands {
			names[i] = c.name
		}
		return 0, ambiguousKeyError{tok, names}
	}
	if k, ok := unicodeFormKeysym(tok); ok {
		return k, nil
	}
	if r, size := utf8.DecodeRuneInString(tok); size == len(tok) && r != utf8.RuneError {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return 0, unknownKeyError{tok}
		}
		if syms, _ := textKeysyms(r); len(syms) > 0 {
			return syms[0], nil
		}
	}
	return 0, unknownKeyError{tok}
}

// suggestion names up to three known keys within a small edit distance of
// an unknown name, for the error message.
func suggestion(tok string) string {
	lower := strings.ToLower(tok)
	if utf8.RuneCountInString(lower) < 3 {
		return ""
	}
	limit := 1
	if len(lower) >= 6 {
		limit = 2
	}
	type cand struct {
		name string
		dist int
	}
	var cands []cand
	seen := map[string]bool{}
	consider := func(name string) {
		l := strings.ToLower(name)
		if seen[l] || abs(len(l)-len(lower)) > limit {
			return
		}
		if d := editDistance(lower, l, limit); d <= limit {
			seen[l] = true
			cands = append(cands, cand{name, d})
		}
	}
	// Keysym names first, so that "Return" is offered rather than the
	// alias "return".
	for _, e := range keysymTable {
		consider(e.name)
	}
	for alias := range keyAliases {
		consider(alias)
	}
	if len(cands) == 0 {
		return ""
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].dist != cands[j].dist {
			return cands[i].dist < cands[j].dist
		}
		return cands[i].name < cands[j].name
	})
	if len(cands) > 3 {
		cands = cands[:3]
	}
	names := make([]string, len(cands))
	for i, c := range cands {
		names[i] = c.name
	}
	return "; did you mean " + strings.Join(names, " or ") + "?"
}

// editDistance is the optimal-string-alignment distance of a and b (edits
// and swaps of neighbours each count 1), or limit+1 once it is certain to
// exceed limit.
func editDistance(a, b string, limit int) int {
	rows := [3][]int{make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)}
	prev2, prev, cur := rows[0], rows[1], rows[2]
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		best := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			best = min(best, cur[j])
		}
		if best > limit {
			return limit + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
