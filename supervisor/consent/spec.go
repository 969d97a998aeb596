package consent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/deskhand/deskhand/supervisor/catalog"
)

// Flag names, as request_access, --grant and the files spell them.
const (
	FlagClipboardRead   = "clipboardRead"
	FlagClipboardWrite  = "clipboardWrite"
	FlagSystemKeyCombos = "systemKeyCombos"
)

// FlagNames lists the grant flags in the order dialogs show them.
var FlagNames = []string{FlagClipboardRead, FlagClipboardWrite, FlagSystemKeyCombos}

// ParseFlag returns the canonical name of a grant flag. Case, dashes and
// underscores do not matter: "clipboard-read" is clipboardRead.
func ParseFlag(s string) (string, error) {
	key := strings.NewReplacer("-", "", "_", "", " ", "").Replace(strings.ToLower(strings.TrimSpace(s)))
	for _, f := range FlagNames {
		if strings.ToLower(f) == key {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown grant flag %q: use %s", s, strings.Join(FlagNames, ", "))
}

// FlagsOf turns canonical flag names into Flags.
func FlagsOf(names []string) Flags {
	var f Flags
	for _, n := range names {
		f.set(n, true)
	}
	return f
}

func (f *Flags) set(name string, v bool) {
	switch name {
	case FlagClipboardRead:
		f.ClipboardRead = v
	case FlagClipboardWrite:
		f.ClipboardWrite = v
	case FlagSystemKeyCombos:
		f.SystemKeyCombos = v
	}
}

// Has reports whether the named flag is set.
func (f Flags) Has(name string) bool {
	switch name {
	case FlagClipboardRead:
		return f.ClipboardRead
	case FlagClipboardWrite:
		return f.ClipboardWrite
	case FlagSystemKeyCombos:
		return f.SystemKeyCombos
	}
	return false
}

// Names lists the flags that are set.
func (f Flags) Names() []string {
	var out []string
	for _, n := range FlagNames {
		if f.Has(n) {
			out = append(out, n)
		}
	}
	return out
}

// flagMeaning says, for the dialog and the model, what a flag allows.
var flagMeaning = map[string]string{
	FlagClipboardRead:   "read the clipboard (whatever you copied, including passwords)",
	FlagClipboardWrite:  "put text on the clipboard",
	FlagSystemKeyCombos: "press system shortcuts such as Alt+Tab, Alt+F4, Ctrl+Alt+Delete, Super or Cmd+Q",
}

// flagEffect says, for the model, what a granted flag unlocks.
var flagEffect = map[string]string{
	FlagClipboardRead:   "read_clipboard works",
	FlagClipboardWrite:  "write_clipboard works",
	FlagSystemKeyCombos: "system shortcuts (alt+tab, alt+F4, super, ctrl+alt+… ) are allowed in key, hold_key and modifier clicks",
}

// Allow is one pre-approved app: an --allow value or a line of the
// pre-approval file, "APP" or "APP=TIER".
type Allow struct {
	App string
	// Tier is the tier asked for; TierNone means the catalog's tier for
	// the app. An explicit tier above the catalog's is honoured (the
	// user typed it), unless the managed policy forbids raising tiers.
	Tier catalog.Tier
}

// ParseAllow parses "APP" or "APP=TIER".
func ParseAllow(s string) (Allow, error) {
	app, tier, hasTier := strings.Cut(strings.TrimSpace(s), "=")
	app = strings.TrimSpace(app)
	if app == "" {
		return Allow{}, fmt.Errorf("pre-approval %q names no app: use APP or APP=TIER, such as xterm or firefox=read", s)
	}
	a := Allow{App: app}
	if hasTier {
		t, err := catalog.ParseTier(tier)
		if err != nil {
			return Allow{}, fmt.Errorf("pre-approval %q: %w", s, err)
		}
		if t == catalog.TierNone {
			return Allow{}, fmt.Errorf("pre-approval %q: tier none approves nothing; leave the app out instead", s)
		}
		a.Tier = t
	}
	return a, nil
}

// String is the APP[=TIER] form.
func (a Allow) String() string {
	if a.Tier == catalog.TierNone {
		return a.App
	}
	return a.App + "=" + a.Tier.String()
}

// errNoApps is returned for a request that names nothing.
var errNoApps = errors.New("request_access needs at least one app or grant flag: give apps by name or id, such as [\"xterm\", \"firefox\"]")
