package macos

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/deskhand/deskhand/supervisor/keyblock"
	"github.com/deskhand/deskhand/supervisor/platform"
)

// layoutTimeout bounds one key_layout call, made on the input thread at a
// shortcut's press.
const layoutTimeout = 2 * time.Second

// LayoutReader is what Shortcuts asks the helper; *bridge.Client
// satisfies it.
type LayoutReader interface {
	Call(ctx context.Context, method string, params, result any) error
}

// Shortcuts sends shortcut characters as the keys of the active keyboard
// layout and holds the shortcut gate to the chord actually sent (the
// input's QuartzShortcuts). The gates check the chord the model asked for;
// here, at the press, the layout is read afresh from the helper, the key
// that types the character is found, and the press is refused when it
// would mean a system shortcut the asked chord is not. So on AZERTY
// Cmd-A is Cmd-A (not the US "A" key, which is Q there), and asking for
// Shift-Cmd-" (the key whose shifted character is 3) does not take a
// screenshot behind a gate that read a harmless chord.
type Shortcuts struct {
	helper atomic.Pointer[LayoutReader]
	list   *keyblock.List
}

// NewShortcuts returns Shortcuts with no helper yet (SetHelper) over the
// macOS system-shortcut list.
func NewShortcuts() *Shortcuts { return &Shortcuts{list: keyblock.MacOS()} }

// SetHelper sets the helper to read the layout from.
func (s *Shortcuts) SetHelper(h LayoutReader) { s.helper.Store(&h) }

// Layout reads the active keyboard layout.
func (s *Shortcuts) Layout(ctx context.Context) (*platform.KeyLayout, error) {
	h := s.helper.Load()
	if h == nil {
		return nil, errors.New("the macOS helper is not running yet, so the keyboard layout is unknown; retry the shortcut")
	}
	var layout platform.KeyLayout
	if err := (*h).Call(ctx, "key_layout", struct{}{}, &layout); err != nil {
		return nil, fmt.Errorf("reading the keyboard layout from the helper (needed to send a shortcut as the key the layout has): %w", err)
	}
	return &layout, nil
}

// ShortcutKey is the input's QuartzShortcuts.
func (s *Shortcuts) ShortcutKey(mods platform.Modifier, r rune) (uint16, error) {
	ctx, cancel := context.WithTimeout(context.Background(), layoutTimeout)
	defer cancel()
	layout, err := s.Layout(ctx)
	if err != nil {
		return 0, err
	}
	key, err := layout.Shortcut(mods, r)
	if err != nil {
		return 0, err
	}
	if err := s.CheckSent(layout, key); err != nil {
		return 0, err
	}
	return key.Code, nil
}

// CheckSent refuses a press that means a system shortcut the asked chord
// (key.Means[0], which the gates checked) is not. A blocked asked chord got
// past the gates only with the systemKeyCombos grant, which covers what
// the press means too.
func (s *Shortcuts) CheckSent(layout *platform.KeyLayout, key platform.ShortcutKey) error {
	if len(key.Means) == 0 {
		return errors.New("a shortcut press with no chord to check")
	}
	asked := key.Means[0]
	if _, blocked := s.match(asked); blocked {
		return nil
	}
	for _, c := range key.Means[1:] {
		if r, blocked := s.match(c); blocked {
			return fmt.Errorf("on the keyboard layout %q, %s is the same key press as %s, which macOS takes as the system shortcut %s (%s); "+
				"deskhand does not send it under another name. Ask for %s itself: it needs the user's systemKeyCombos grant",
				layout.Name, asked, c, r.Name, r.Why, c)
		}
	}
	return nil
}

// match reports the blocklist rule c falls under.
func (s *Shortcuts) match(c platform.Combo) (keyblock.Rule, bool) {
	chord, err := keyblock.ParseChord(chordString(c))
	if err != nil {
		// A key the blocklist cannot read is no key of its rules.
		return keyblock.Rule{}, false
	}
	return s.list.Match(chord)
}

// chordString writes c in the key tools' syntax ("super+shift+3").
func chordString(c platform.Combo) string {
	var parts []string
	for _, m := range []struct {
		mod  platform.Modifier
		name string
	}{{platform.Control, "ctrl"}, {platform.Option, "alt"}, {platform.Shift, "shift"}, {platform.Command, "super"}} {
		if c.Mods&m.mod != 0 {
			parts = append(parts, m.name)
		}
	}
	return strings.Join(append(parts, c.Key), "+")
}
