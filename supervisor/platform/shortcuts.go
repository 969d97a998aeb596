// Package platform holds per-platform facts the safety layer needs that are
// plain data or pure functions, so they are tested on any machine: the
// macOS system shortcuts (key combinations that act on the system rather
// than the frontmost app, which need the systemKeyCombos grant) and macOS
// app identity by bundle id.
package platform

import "strings"

// Modifier is one modifier key of a combination.
type Modifier uint8

// The modifiers, named as on a Mac keyboard. X11 names map onto them:
// super and meta are Command, alt is Option.
const (
	Command Modifier = 1 << iota
	Option
	Control
	Shift
	Function // the fn / globe key
)

var modifierNames = []struct {
	mod  Modifier
	name string
}{{Control, "ctrl"}, {Option, "opt"}, {Shift, "shift"}, {Command, "cmd"}, {Function, "fn"}}

// Combo is a key combination: modifiers held, then one key pressed. Key is
// a canonical key name (see CanonicalKey).
type Combo struct {
	Mods Modifier
	Key  string
}

// String writes the combination as "ctrl+opt+shift+cmd+fn+key", modifiers in
// the order macOS menus show them.
func (c Combo) String() string {
	var parts []string
	for _, m := range modifierNames {
		if c.Mods&m.mod != 0 {
			parts = append(parts, m.name)
		}
	}
	return strings.Join(append(parts, c.Key), "+")
}

// Shortcut is a system shortcut and what it does.
type Shortcut struct {
	Combo Combo
	// Effect says what macOS does, for messages to the model and the user.
	Effect string
}

// MacSystemShortcuts are the key combinations macOS itself handles, whatever
// app is frontmost, by default (System Settings > Keyboard > Keyboard
// Shortcuts, and the power and session keys): sending one acts on the whole
// machine, other apps or the user's session, so the safety layer requires
// the systemKeyCombos grant for them. App shortcuts (Cmd-C, Cmd-W) are not
// here; the frontmost app's tier governs those.
var MacSystemShortcuts = []Shortcut{
	// Switching apps and windows across the system.
	{combo(Command, "tab"), "switch to another app"},
	{combo(Command|Shift, "tab"), "switch to another app (backwards)"},
	{combo(Command, "q"), "quit the frontmost app"},
	{combo(Command|Option, "q"), "quit the frontmost app and close its windows"},
	{combo(Command, "h"), "hide the frontmost app"},
	{combo(Command|Option, "h"), "hide every other app"},
	{combo(Command|Option, "d"), "show or hide the Dock"},
	{combo(Command, "f3"), "show the desktop"},
	{combo(Function, "f11"), "show the desktop"},
	{combo(Control, "up"), "open Mission Control"},
	{combo(Control, "down"), "show the frontmost app's windows (App Exposé)"},
	{combo(Control, "left"), "switch to the Space on the left"},
	{combo(Control, "right"), "switch to the Space on the right"},
	{combo(Function|Control, "f"), "fill the screen with the window"},
	{combo(Function|Control, "left"), "tile the window to the left"},
	{combo(Function|Control, "right"), "tile the window to the right"},
	{combo(Function|Control, "up"), "tile the window to the top"},
	{combo(Function|Control, "down"), "tile the window to the bottom"},
	{combo(Function|Control, "c"), "centre the window"},
	{combo(Function|Control, "r"), "return the window to its previous size"},
	{combo(Function, "a"), "focus the Dock"},
	{combo(Function, "c"), "open Control Center"},
	{combo(Function, "n"), "open Notification Center"},
	{combo(Function, "q"), "start a Quick Note"},
	{combo(Function, "h"), "show the desktop"},
	{combo(Control, "f2"), "move focus to the menu bar"},
	{combo(Control, "f3"), "move focus to the Dock"},

	// Search, input sources and assistants.
	{combo(Command, "space"), "open Spotlight"},
	{combo(Command|Option, "space"), "open a Finder search window"},
	{combo(Control, "space"), "switch the input source"},
	{combo(Control|Option, "space"), "switch to the next input source"},

	// Screenshots and screen recording.
	{combo(Command|Shift, "3"), "take a screenshot of the screen"},
	{combo(Command|Shift, "4"), "take a screenshot of a selection"},
	{combo(Command|Shift, "5"), "open the screenshot and screen recording toolbar"},
	{combo(Command|Shift, "6"), "take a screenshot of the Touch Bar"},
	{combo(Control|Command|Shift, "3"), "copy a screenshot of the screen"},
	{combo(Control|Command|Shift, "4"), "copy a screenshot of a selection"},

	// Force quit, session, lock and power.
	{combo(Command|Option, "escape"), "open Force Quit Applications"},
	{combo(Command|Option|Shift, "escape"), "force quit the frontmost app"},
	{combo(Control|Command, "q"), "lock the screen"},
	{combo(Command|Shift, "q"), "log out"},
	{combo(Command|Option|Shift, "q"), "log out at once, without confirming"},
	{combo(Control, "power"), "show the restart, sleep and shut down dialog"},
	{combo(Control, "eject"), "show the restart, sleep and shut down dialog"},
	{combo(Control|Command, "power"), "restart at once"},
	{combo(Control|Command, "eject"), "quit every app and restart"},
	{combo(Control|Option|Command, "power"), "quit every app and shut down"},
	{combo(Control|Option|Command, "eject"), "quit every app and shut down"},
	{combo(Option|Command, "power"), "put the Mac to sleep"},
	{combo(Option|Command, "eject"), "put the Mac to sleep"},
	{combo(Control|Shift, "power"), "put the displays to sleep"},
	{combo(Control|Shift, "eject"), "put the displays to sleep"},

	// Accessibility features that take over the screen or the input.
	{combo(Command, "f5"), "turn VoiceOver on or off"},
	{combo(Command|Function, "f5"), "turn VoiceOver on or off"},
	{combo(Command|Option, "f5"), "open the Accessibility Shortcuts panel"},
	{combo(Command|Option, "8"), "turn zoom on or off"},
	{combo(Control|Option|Command, "8"), "invert the screen's colours"},
	{combo(Control|Option|Command, "period"), "increase the contrast"},
	{combo(Control|Option|Command, "comma"), "decrease the contrast"},
}

func combo(mods Modifier, key string) Combo { return Combo{Mods: mods, Key: key} }

// keyAliases maps other names of a key to its canonical name.
var keyAliases = map[string]string{
	"enter": "return", "kp_enter": "return",
	"esc":       "escape",
	"backspace": "delete", "back_space": "delete",
	"forwarddelete": "forward_delete", "del": "forward_delete",
	"spacebar": "space", " ": "space",
	"prior": "page_up", "pageup": "page_up", "pgup": "page_up",
	"next": "page_down", "pagedown": "page_down", "pgdn": "page_down",
	"arrowup": "up", "arrowdown": "down", "arrowleft": "left", "arrowright": "right",
	".": "period", ",": "comma", "`": "grave", "~": "grave", "-": "minus", "=": "equal",
	"poweroff": "power", "xf86poweroff": "power", "xf86eject": "eject", "media_eject": "eject",
}

// CanonicalKey is the canonical name of a key: lower case, X keysym and
// xdotool spellings folded together ("Return" and "enter" are "return",
// "BackSpace" is "delete" as on a Mac keyboard, "Prior" is "page_up").
func CanonicalKey(name string) string {
	key := strings.ToLower(strings.TrimSpace(name))
	if alias, ok := keyAliases[key]; ok {
		return alias
	}
	return key
}
