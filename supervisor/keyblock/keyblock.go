// Package keyblock is the system-shortcut blocklist: key combinations that
// leave the application (switch apps or virtual terminals, lock the screen,
// log out, kill the X server, open a run dialog) and so are refused unless
// the user granted systemKeyCombos.
//
// Matching is on the normalised chord, not on the text the model sent: a
// chord is a set of modifiers (ctrl, alt, shift, super) and a set of other
// keys, with left and right modifiers folded together, letters folded to
// lower case, keypad and Unicode spellings folded to the key they stand
// for, and the order of the keys ignored. "ctrl+alt+Delete",
// "Delete+Alt_R+Control_R", "CTRL+ALT+KP_Delete" and "ctrl+alt+0xffff" are
// one chord. An upper-case letter, which the key tools send with Shift,
// is checked with and without it. A rule matches a chord that holds at
// least the rule's modifiers and the rule's key, so extra modifiers do
// not slip past either (alt+shift+Tab is still alt+Tab).
//
// The Linux list is data: linux_shortcuts.json, embedded and reviewed like
// the app catalog, and generated (go generate, package gen) from the
// default key bindings in the desktops' Debian packages and the reviewed
// additions and exceptions of linux_shortcuts_hand.json. Keys that act on
// the X server itself (Terminate_Server, XF86Switch_VT_*, the MouseKeys
// and AccessX keysyms) are not on it:
// package input refuses to send them at all, grant or not, and CheckCombo
// passes that refusal on.
package keyblock

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime"
	"slices"
	"strings"

	"github.com/deskhand/deskhand/supervisor/input"
	"github.com/deskhand/deskhand/supervisor/platform"
)

// Mod is a set of modifiers.
type Mod uint8

// The modifiers a chord distinguishes. Super is the Windows key on Linux
// and Command on macOS; Alt is Option on macOS.
const (
	Ctrl Mod = 1 << iota
	Alt
	Shift
	Super
)

// String writes the modifiers in canonical order, joined with "+".
func (m Mod) String() string {
	var parts []string
	for _, n := range modNames {
		if m&n.mod != 0 {
			parts = append(parts, n.name)
		}
	}
	return strings.Join(parts, "+")
}

var modNames = []struct {
	mod  Mod
	name string
}{{Ctrl, "ctrl"}, {Alt, "alt"}, {Shift, "shift"}, {Super, "super"}}

// Keysyms the blocklist needs by value (X11 keysymdef.h and XF86keysym.h).
const (
	symTab          input.Keysym = 0xff09
	symISOLeftTab   input.Keysym = 0xfe20
	symKPTab        input.Keysym = 0xff89
	symBackSpace    input.Keysym = 0xff08
	symDelete       input.Keysym = 0xffff
	symKPDelete     input.Keysym = 0xff9f
	symKPDecimal    input.Keysym = 0xffae
	symReturn       input.Keysym = 0xff0d
	symKPEnter      input.Keysym = 0xff8d
	symSpace        input.Keysym = 0x20
	symHome         input.Keysym = 0xff50 // Home, Left, Up, Right, Down, Prior, Next, End, Begin
	symKPHome       input.Keysym = 0xff95 // KP_Home … KP_Begin in the same order
	symKPBegin      input.Keysym = 0xff9d
	symInsert       input.Keysym = 0xff63
	symKPInsert     input.Keysym = 0xff9e
	symKPMultiply   input.Keysym = 0xffaa
	symKPAdd        input.Keysym = 0xffab
	symKPSeparator  input.Keysym = 0xffac
	symKPSubtract   input.Keysym = 0xffad
	symKPDivide     input.Keysym = 0xffaf
	symKP0          input.Keysym = 0xffb0
	symKPEqual      input.Keysym = 0xffbd
	symKPSpace      input.Keysym = 0xff80
	symEscape       input.Keysym = 0xff1b
	symPrint        input.Keysym = 0xff61
	symSysReq       input.Keysym = 0xff15
	symF1           input.Keysym = 0xffbe // F1 … F35 are consecutive
	symKPF1         input.Keysym = 0xff91 // KP_F1 … KP_F4
	symXF86PowerOff input.Keysym = 0x1008ff2a
	unicodeBase     input.Keysym = 0x01000000
)

func letter(r rune) input.Keysym { return input.Keysym(r) }

// modOf says which modifier a keysym is, and whether it is one at all.
// Meta counts as both Alt and Super: X keymaps put it on the Alt key
// (Mod1), while people (and deskhand's own "meta" alias) mean the Super or
// Command key by it; counting both can only block more. Hyper shares Mod4
// with Super in the standard keymaps. AltGr and the lock keys are
// modifiers that no rule uses: they belong to the chord but add nothing.
func modOf(k input.Keysym) (Mod, bool) {
	switch k {
	case 0xffe1, 0xffe2: // Shift_L, Shift_R
		return Shift, true
	case 0xffe3, 0xffe4: // Control_L, Control_R
		return Ctrl, true
	case 0xffe9, 0xffea: // Alt_L, Alt_R
		return Alt, true
	case 0xffe7, 0xffe8: // Meta_L, Meta_R
		return Alt | Super, true
	case 0xffeb, 0xffec, 0xffed, 0xffee: // Super_L, Super_R, Hyper_L, Hyper_R
		return Super, true
	case 0xfe03, 0xfe11, 0xff7e: // ISO_Level3_Shift, ISO_Level5_Shift, Mode_switch
		return 0, true
	case 0xffe5, 0xffe6, 0xff7f: // Caps_Lock, Shift_Lock, Num_Lock
		return 0, true
	}
	return 0, false
}

// canonicalKey folds spellings of one key together: upper-case letters to
// lower case, Unicode keysyms of Latin-1 characters to their Latin-1
// keysyms, keypad keys to the main keys they duplicate, Print to Sys_Req
// (one physical key: Alt+Print is SysRq), KP_F1–KP_F4 to F1–F4.
func canonicalKey(k input.Keysym) input.Keysym {
	if k >= unicodeBase+0x20 && k <= unicodeBase+0xff && !(k >= unicodeBase+0x7f && k < unicodeBase+0xa0) {
		k -= unicodeBase
	}
	switch {
	case k >= 'A' && k <= 'Z':
		return k + 0x20
	case k >= 0xc0 && k <= 0xde && k != 0xd7: // Latin-1 capitals (not ×)
		return k + 0x20
	case k >= symKPF1 && k <= symKPF1+3:
		return symF1 + (k - symKPF1)
	case k >= symKPHome && k <= symKPBegin: // KP_Home … KP_Begin, in Home … Begin order
		return symHome + (k - symKPHome)
	case k >= symKP0 && k <= symKP0+9:
		return '0' + (k - symKP0)
	}
	switch k {
	case symISOLeftTab, symKPTab:
		return symTab
	case symKPDelete, symKPDecimal:
		return symDelete
	case symKPEnter:
		return symReturn
	case symKPSpace:
		return symSpace
	case symKPInsert:
		return symInsert
	case symKPMultiply:
		return '*'
	case symKPAdd:
		return '+'
	case symKPSubtract:
		return '-'
	case symKPDivide:
		return '/'
	case symKPEqual:
		return '='
	case symKPSeparator:
		return ','
	case symPrint:
		return symSysReq
	}
	return k
}

// impliesShift reports whether the key tools may press Shift to send k:
// upper-case letters (as keysyms or their Unicode spellings; on X11
// "ctrl+T" is ctrl+shift+t) and ISO_Left_Tab, which is Shift+Tab.
func impliesShift(k input.Keysym) bool {
	if k >= unicodeBase+0x20 && k <= unicodeBase+0xff {
		k -= unicodeBase
	}
	return k >= 'A' && k <= 'Z' || k >= 0xc0 && k <= 0xde && k != 0xd7 || k == symISOLeftTab
}

// Chord is a normalised key combination: modifiers and other keys, each
// key once, sorted.
type Chord struct {
	Mods Mod
	// Keys are the canonical keysyms of the keys that are not modifiers.
	Keys []input.Keysym
}

// ChordOf normalises a parsed combination.
func ChordOf(c input.Combo) Chord {
	var ch Chord
	for _, k := range c.Keys {
		if m, ok := modOf(k); ok {
			ch.Mods |= m
			continue
		}
		k = canonicalKey(k)
		if !slices.Contains(ch.Keys, k) {
			ch.Keys = append(ch.Keys, k)
		}
	}
	slices.Sort(ch.Keys)
	return ch
}

// ParseChord parses one combination the way the key tools do
// (input.ParseCombo) and normalises it.
func ParseChord(s string) (Chord, error) {
	c, err := input.ParseCombo(s)
	if err != nil {
		return Chord{}, err
	}
	return ChordOf(c), nil
}

// String writes the chord canonically: modifiers first in the order ctrl,
// alt, shift, super, then the keys by their X names.
func (c Chord) String() string {
	parts := []string{}
	if m := c.Mods.String(); m != "" {
		parts = append(parts, m)
	}
	for _, k := range c.Keys {
		parts = append(parts, k.String())
	}
	return strings.Join(parts, "+")
}

// Rule is one blocked shortcut.
type Rule struct {
	// Mods must all be held.
	Mods Mod
	// Key must be among the chord's keys; 0 means a chord of modifiers
	// only (Super alone).
	Key input.Keysym
	// Name is how the shortcut is usually written, e.g. "Ctrl+Alt+Delete".
	Name string
	// Why says what the shortcut does.
	Why string
	// Exact rules match only a chord with exactly Mods, for shortcuts
	// whose key with more modifiers is an everyday app shortcut (macOS
	// Ctrl+Left switches Spaces; Ctrl+Shift+Left selects a word).
	Exact bool
}

// Matches reports whether the rule blocks the chord.
func (r Rule) Matches(c Chord) bool {
	if c.Mods&r.Mods != r.Mods || (r.Exact && c.Mods != r.Mods) {
		return false
	}
	if r.Key == 0 {
		return len(c.Keys) == 0 && r.Mods != 0
	}
	return slices.Contains(c.Keys, r.Key)
}

// List is a blocklist.
type List struct {
	platform string
	rules    []Rule
}

// Platform names the platform the list is for ("linux", "darwin").
func (l *List) Platform() string { return l.platform }

// Rules returns a copy of the rules.
func (l *List) Rules() []Rule { return slices.Clone(l.rules) }

// Match returns the rule that blocks c; when several do, the most
// specific one (the most modifiers), so that Shift+Cmd+Q is reported as
// itself rather than as Cmd+Q.
func (l *List) Match(c Chord) (Rule, bool) {
	var best Rule
	found := false
	for _, r := range l.rules {
		if r.Matches(c) && (!found || bits.OnesCount8(uint8(r.Mods)) > bits.OnesCount8(uint8(best.Mods))) {
			best, found = r, true
		}
	}
	return best, found
}

// BlockedError is returned for a blocked combination.
type BlockedError struct {
	// Input is the combination as the model wrote it.
	Input string
	Chord Chord
	Rule  Rule
}

func (e *BlockedError) Error() string {
	return fmt.Sprintf("%s is the system shortcut %s (%s). System shortcuts are blocked unless the user grants systemKeyCombos: "+
		"call request_access with systemKeyCombos if this task really needs it, or ask the user to press it",
		e.Input, e.Rule.Name, e.Rule.Why)
}

// CheckCombo checks one combination, as hold_key and the modifiers of a
// click take it. A combination that does not parse is not this package's
// business: the tool's own argument check reports it. A key the key tools
// never send (input.KeyNotAllowedError) is refused here too, so that the
// gate fails closed whatever runs after it.
func (l *List) CheckCombo(s string) error {
	c, err := input.ParseCombo(s)
	var na *input.KeyNotAllowedError
	if errors.As(err, &na) {
		return err
	}
	if err != nil {
		return nil
	}
	ch := ChordOf(c)
	err = l.check(s, ch)
	if err == nil && slices.ContainsFunc(c.Keys, impliesShift) {
		ch.Mods |= Shift
		err = l.check(s, ch)
	}
	return err
}

// CheckKeys checks a whitespace-separated sequence of combinations, as
// the key tool takes it.
func (l *List) CheckKeys(s string) error {
	for _, f := range strings.Fields(s) {
		if err := l.CheckCombo(f); err != nil {
			return err
		}
	}
	return nil
}

func (l *List) check(in string, c Chord) error {
	if r, ok := l.Match(c); ok {
		return &BlockedError{Input: strings.TrimSpace(in), Chord: c, Rule: r}
	}
	return nil
}

func rule(mods Mod, key input.Keysym, name, why string) Rule {
	return Rule{Mods: mods, Key: key, Name: name, Why: why}
}

// Linux is the blocklist for X11 desktops (GNOME, KDE, Xfce, Cinnamon,
// MATE, openbox, i3 and the X server itself), read from the reviewed data
// file linux_shortcuts.json.
func Linux() *List {
	return &List{platform: "linux", rules: slices.Clone(linuxRules())}
}

// MacOS is the blocklist for macOS, where Cmd is Super and Option is Alt:
// the shortcuts of the closed computer-use server (blocked with any extra
// modifiers too), then every system shortcut of platform.MacSystemShortcuts
// with exactly its modifiers.
func MacOS() *List {
	rules := []Rule{
		rule(Super, letter('q'), "Cmd+Q", "quits the application"),
		rule(Shift|Super, letter('q'), "Shift+Cmd+Q", "logs out"),
		rule(Ctrl|Super, letter('q'), "Ctrl+Cmd+Q", "locks the screen"),
		rule(Alt|Super, symEscape, "Option+Cmd+Esc", "opens the Force Quit dialog"),
		rule(Super, symTab, "Cmd+Tab", "switches applications"),
		rule(Super, symSpace, "Cmd+Space", "opens Spotlight"),
	}
	for _, sc := range platform.MacSystemShortcuts {
		if r, ok := macRule(sc); ok {
			rules = append(rules, r)
		}
	}
	return &List{platform: "darwin", rules: rules}
}

// macKeys maps platform's canonical Mac key names that are not X keysym
// names to keysyms. (On a Mac keyboard "delete" is BackSpace.)
var macKeys = map[string]input.Keysym{
	"delete":         symBackSpace,
	"forward_delete": symDelete,
	"power":          symXF86PowerOff,
	"eject":          0x1008ff2c, // XF86Eject
	"period":         '.',
	"comma":          ',',
	"page_up":        0xff55,
	"page_down":      0xff56,
}

// macRule converts one of platform's shortcuts. Shortcuts with fn have no
// keysym for fn and cannot be sent through the key tools; they are left
// out.
func macRule(sc platform.Shortcut) (Rule, bool) {
	c := sc.Combo
	if c.Mods&platform.Function != 0 {
		return Rule{}, false
	}
	var mods Mod
	for _, m := range []struct {
		from platform.Modifier
		to   Mod
	}{{platform.Command, Super}, {platform.Option, Alt}, {platform.Control, Ctrl}, {platform.Shift, Shift}} {
		if c.Mods&m.from != 0 {
			mods |= m.to
		}
	}
	key, ok := macKeys[c.Key]
	if !ok {
		ch, err := ParseChord(c.Key)
		if err != nil || len(ch.Keys) != 1 {
			return Rule{}, false
		}
		key = ch.Keys[0]
	}
	return Rule{Mods: mods, Key: canonicalKey(key), Name: c.String(), Why: sc.Effect, Exact: true}, true
}

// Windows is the blocklist for Windows, where Super is the Windows key,
// read from the reviewed data file windows_shortcuts.json.
func Windows() *List {
	return &List{platform: "windows", rules: slices.Clone(windowsRules())}
}

// ForPlatform returns the list for a GOOS value: MacOS for "darwin",
// Windows for "windows", Linux for everything else.
func ForPlatform(goos string) *List {
	switch goos {
	case "darwin":
		return MacOS()
	case "windows":
		return Windows()
	}
	return Linux()
}

// Default is the list for the platform deskhand runs on.
func Default() *List { return ForPlatform(runtime.GOOS) }
