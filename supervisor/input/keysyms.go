package input

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

//go:generate go run gen_keysyms.go -o keysyms_table.go

// Keysym is an X keysym: the symbol a key produces (XK_Return is 0xff0d,
// XK_a is 0x61, a Unicode character U+XXXX above Latin-1 is
// 0x01000000|XXXX).
type Keysym uint32

// Keysyms the package itself needs by value.
const (
	keysymReturn    Keysym = 0xff0d
	keysymTab       Keysym = 0xff09
	keysymShiftL    Keysym = 0xffe1
	keysymControlL  Keysym = 0xffe3
	keysymAltL      Keysym = 0xffe9
	keysymSuperL    Keysym = 0xffeb
	keysymLevel3    Keysym = 0xfe03 // ISO_Level3_Shift (AltGr)
	keysymVoid      Keysym = 0xffffff
	unicodeKeysym   Keysym = 0x01000000
	unicodeKeysymHi Keysym = 0x0110ffff
)

type keysymEntry struct {
	name string
	sym  Keysym
	char rune
}

type keysymIndex struct {
	exact map[string]Keysym
	// lower maps a lower-cased name to every distinct keysym whose name
	// lower-cases to it, so "return" finds Return but "aacute" is ambiguous.
	lower map[string][]keysymName
	// canonical is the first name of each value, as XKeysymToString gives.
	canonical map[Keysym]string
	// byRune lists the legacy (non-Unicode-range) keysyms that type a
	// character above Latin-1, e.g. EuroSign for U+20AC.
	byRune map[rune][]Keysym
}

type keysymName struct {
	name string
	sym  Keysym
}

var keysyms = sync.OnceValue(func() *keysymIndex {
	ix := &keysymIndex{
		exact:     make(map[string]Keysym, len(keysymTable)),
		lower:     make(map[string][]keysymName, len(keysymTable)),
		canonical: make(map[Keysym]string, len(keysymTable)),
		byRune:    make(map[rune][]Keysym),
	}
	for _, e := range keysymTable {
		ix.exact[e.name] = e.sym
		if _, ok := ix.canonical[e.sym]; !ok {
			ix.canonical[e.sym] = e.name
		}
		l := strings.ToLower(e.name)
		dup := false
		for _, have := range ix.lower[l] {
			if have.sym == e.sym {
				dup = true
				break
			}
		}
		if !dup {
			ix.lower[l] = append(ix.lower[l], keysymName{e.name, e.sym})
		}
		if e.char > 0xff && e.sym < unicodeKeysym {
			ix.byRune[e.char] = append(ix.byRune[e.char], e.sym)
		}
	}
	return ix
})

// String returns the keysym's X name ("Return", "a", "EuroSign"), the
// U+XXXX form XStringToKeysym accepts for Unicode keysyms ("U1F642"), or
// its hexadecimal value.
func (k Keysym) String() string {
	if name, ok := keysyms().canonical[k]; ok {
		return name
	}
	if k >= unicodeKeysym+0x100 && k <= unicodeKeysymHi {
		return fmt.Sprintf("U%04X", uint32(k-unicodeKeysym))
	}
	return fmt.Sprintf("0x%x", uint32(k))
}

// unicodeFormKeysym parses the numeric spellings XStringToKeysym accepts:
// "U20AC" for a Unicode character, "0x1008ff14" for a raw value. ("U+20AC"
// cannot work inside a combination, where + joins keys.)
func unicodeFormKeysym(s string) (Keysym, bool) {
	switch {
	case len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X"):
		v, err := strconv.ParseUint(s[2:], 16, 32)
		if err != nil || v == 0 || v > 0x1fffffff {
			return 0, false
		}
		return Keysym(v), true
	case len(s) > 1 && (s[0] == 'U' || s[0] == 'u'):
		hex := s[1:]
		if len(hex) == 0 || len(hex) > 6 {
			return 0, false
		}
		v, err := strconv.ParseUint(hex, 16, 32)
		if err != nil {
			return 0, false
		}
		r := rune(v)
		if !utf8.ValidRune(r) || r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return 0, false
		}
		return runeKeysym(r), true
	}
	return 0, false
}

// runeKeysym is the keysym that stands for character r: its own value for
// Latin-1, else 0x01000000|r (the keysymdef.h rule for Unicode). Control
// characters have no character keysym; callers map \n and \t themselves.
func runeKeysym(r rune) Keysym {
	if (r >= 0x20 && r <= 0x7e) || (r >= 0xa0 && r <= 0xff) {
		return Keysym(r)
	}
	return unicodeKeysym | Keysym(r)
}

// textKeysyms returns, for one character of text to type, the keysyms that
// produce it, best first: the Latin-1 or legacy keysyms a layout would
// carry (EuroSign for €), then the Unicode keysym. The last one is the one
// to bind to a spare key when the layout has none of them.
func textKeysyms(r rune) ([]Keysym, error) {
	switch {
	case r == '\n' || r == '\r':
		return []Keysym{keysymReturn}, nil
	case r == '\t':
		return []Keysym{keysymTab}, nil
	case r == utf8.RuneError:
		return nil, fmt.Errorf("the text is not valid UTF-8")
	case r < 0x20 || (r >= 0x7f && r < 0xa0):
		return nil, fmt.Errorf("control character %U cannot be typed; send it as a key (for example BackSpace or Escape) instead", r)
	}
	if r <= 0xff {
		return []Keysym{Keysym(r)}, nil
	}
	legacy := keysyms().byRune[r]
	out := make([]Keysym, 0, len(legacy)+1)
	out = append(out, legacy...)
	return append(out, unicodeKeysym|Keysym(r)), nil
}
