package keyblock

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// linuxShortcutsJSON is the Linux blocklist, kept as data so that a change
// to it is a reviewed diff of one file, as the app catalog is. gen writes
// it from the desktops' Debian packages and linux_shortcuts_hand.json.
//
//go:generate go run ./gen
//go:embed linux_shortcuts.json
var linuxShortcutsJSON []byte

type shortcutFile struct {
	About     string          `json:"about"`
	Shortcuts []shortcutEntry `json:"shortcuts"`
}

type shortcutEntry struct {
	Name string   `json:"name"`
	Why  string   `json:"why"`
	Keys []string `json:"keys"`
	// Sources name where the shortcut comes from (see gen); not used here.
	Sources []string `json:"sources"`
}

// windowsShortcutsJSON is the Windows blocklist, written by hand from
// Microsoft's list of Windows keyboard shortcuts.
//
//go:embed windows_shortcuts.json
var windowsShortcutsJSON []byte

var windowsRules = sync.OnceValue(func() []Rule {
	rules, err := parseShortcuts(windowsShortcutsJSON)
	if err != nil {
		panic("keyblock: embedded windows_shortcuts.json: " + err.Error())
	}
	return rules
})

var linuxRules = sync.OnceValue(func() []Rule {
	rules, err := parseShortcuts(linuxShortcutsJSON)
	if err != nil {
		// The file is embedded and tested; a broken one is a build bug.
		panic("keyblock: embedded linux_shortcuts.json: " + err.Error())
	}
	return rules
})

// parseShortcuts reads a blocklist file: one rule per chord.
func parseShortcuts(data []byte) ([]Rule, error) {
	var f shortcutFile
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("decoding: %w", err)
	}
	var rules []Rule
	seen := map[string]string{}
	for i, e := range f.Shortcuts {
		if e.Why == "" || len(e.Keys) == 0 {
			return nil, fmt.Errorf("shortcut %d (%v): needs why and keys", i+1, e.Keys)
		}
		for _, k := range e.Keys {
			ch, err := ParseChord(k)
			if err != nil {
				return nil, fmt.Errorf("shortcut %q: %w", k, err)
			}
			if len(ch.Keys) > 1 {
				return nil, fmt.Errorf("shortcut %q: name one key besides the modifiers", k)
			}
			if prev, dup := seen[ch.String()]; dup {
				return nil, fmt.Errorf("shortcut %q is listed twice (also as %q)", k, prev)
			}
			seen[ch.String()] = k
			r := Rule{Mods: ch.Mods, Name: e.Name, Why: e.Why}
			if len(ch.Keys) == 1 {
				r.Key = ch.Keys[0]
			}
			if r.Name == "" {
				r.Name = displayName(ch)
			}
			rules = append(rules, r)
		}
	}
	return rules, nil
}

// displayName writes a chord the way shortcuts are usually written:
// "Ctrl+Alt+T", "Super+Return", "Alt+F7".
func displayName(c Chord) string {
	var parts []string
	for _, n := range modNames {
		if c.Mods&n.mod != 0 {
			parts = append(parts, strings.ToUpper(n.name[:1])+n.name[1:])
		}
	}
	for _, k := range c.Keys {
		name := k.String()
		if k == symSysReq {
			name = "Print" // the key's label; Sys_Req is its Alt level
		}
		r, size := utf8.DecodeRuneInString(name)
		name = string(unicode.ToUpper(r)) + name[size:]
		parts = append(parts, name)
	}
	return strings.Join(parts, "+")
}
