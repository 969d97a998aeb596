// Package catalog classifies applications by their platform identity
// (Linux desktop-entry ids, WM_CLASS, executable names; macOS bundle ids)
// into a category, the highest access tier the user can grant them, a
// policy denial, and a sensitivity label for the consent dialog.
//
// The data lives in apps.json, embedded into the binary and reviewed like
// code: adding or moving an app is a one-line diff there, not a code change.
// Besides apps, it lists families of programs that host apps (script
// interpreters and shells, runtimes such as java): a window whose
// executable is one of them takes that family's tier and warning, so a
// Python or Tk REPL is a shell whatever it calls itself. And an app is
// its family, the package or bundle its executable ships in (family.go):
// a program that ships with a terminal is part of that terminal.
package catalog

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/deskhand/deskhand/bridge/wire"
)

// Tier is how much an approved app may be used. Tiers are ordered:
// TierNone < TierRead < TierClick < TierFull.
type Tier int

// The tiers.
const (
	// TierNone: not approved; the app's windows are hidden or masked.
	TierNone Tier = iota
	// TierRead: visible in screenshots only.
	TierRead
	// TierClick: plus plain left click and scroll; no typing, keys,
	// right/middle click, modifier clicks or drag.
	TierClick
	// TierFull: every action.
	TierFull
)

// String returns "none", "read", "click" or "full".
func (t Tier) String() string {
	switch t {
	case TierNone:
		return "none"
	case TierRead:
		return "read"
	case TierClick:
		return "click"
	case TierFull:
		return "full"
	}
	return fmt.Sprintf("tier(%d)", int(t))
}

// ParseTier parses "read", "click" or "full" (any case). "none" parses to
// TierNone.
func ParseTier(s string) (Tier, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none":
		return TierNone, nil
	case "read":
		return TierRead, nil
	case "click":
		return TierClick, nil
	case "full":
		return TierFull, nil
	}
	return TierNone, fmt.Errorf("unknown tier %q: use read, click or full", s)
}

// MarshalText writes the tier's name.
func (t Tier) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText parses a tier name.
func (t *Tier) UnmarshalText(b []byte) error {
	v, err := ParseTier(string(b))
	if err != nil {
		return err
	}
	*t = v
	return nil
}

// Sensitivity labels for the consent dialog's warnings.
const (
	SensitiveShell          = "shell"
	SensitiveFileManager    = "file_manager"
	SensitiveSystemSettings = "system_settings"
)

// Identity is what the platform tells us about an app. Fields that are
// unknown are empty.
type Identity struct {
	DesktopID string `json:"desktop_id,omitempty"` // desktop entry id without ".desktop" (Linux)
	Instance  string `json:"instance,omitempty"`   // WM_CLASS instance (Linux)
	Class     string `json:"class,omitempty"`      // WM_CLASS class (Linux)
	Exe       string `json:"exe,omitempty"`        // executable base name
	BundleID  string `json:"bundle_id,omitempty"`  // macOS bundle id
	AUMID     string `json:"aumid,omitempty"`      // App User Model ID of a packaged app (Windows)
	Name      string `json:"name,omitempty"`       // display name
	// Path is the executable's full path: it finds the app's family (the
	// package or bundle it ships in), and the dialog shows it for an
	// app nothing knows.
	Path string `json:"path,omitempty"`
}

// IdentityOf takes the identity of a helper's app description. Exe is
// reduced to its base name, after a slash or a backslash whatever system
// this runs on (a Windows path may reach a test on Linux, and the cut
// can only make the name one the catalog knows); Path keeps it whole.
func IdentityOf(app wire.App) Identity {
	exe, path := app.Exe, ""
	if exe != "" {
		exe = filepath.Base(exe)
		exe = exe[strings.LastIndexByte(exe, '\\')+1:]
	}
	if filepath.IsAbs(app.Exe) {
		path = app.Exe
	}
	return Identity{
		DesktopID: app.DesktopID,
		Instance:  app.Instance,
		Class:     app.Class,
		Exe:       exe,
		BundleID:  app.BundleID,
		AUMID:     app.AUMID,
		Name:      app.Name,
		Path:      path,
	}
}

// Entry is the catalog's verdict on an app.
type Entry struct {
	// Name is the catalog entry's display name ("Firefox"); "" when the
	// app is not in the catalog.
	Name string
	// Category is "browser", "terminal", "ide", "trading", "media",
	// "reading", "file_manager", "system_settings", ...; "" when unknown.
	Category string
	// DefaultTier is the highest tier the user can grant: TierRead for
	// browsers and trading apps, TierClick for terminals and IDEs,
	// TierFull otherwise.
	DefaultTier Tier
	// PolicyDenied apps cannot be approved at all and never reach the
	// consent dialog.
	PolicyDenied bool
	// Sensitive is "", SensitiveShell, SensitiveFileManager or
	// SensitiveSystemSettings: the consent dialog warns about it.
	Sensitive string
	// Generic marks a family of programs that host many apps (script
	// interpreters and shells, runtimes such as java or wine), matched by
	// the executable: it sets the tier and the warning, but does not
	// identify an app, so two windows it classifies are the same app only
	// when their other identifiers say so.
	Generic bool
	// Family is set when the verdict is not the app's own but its
	// family's (see Catalog.Classify): where the family is ("Debian
	// package gnome-terminal"). Name is then the family's catalogued app.
	Family string
}

// Classify looks an app up in the embedded catalog. Apps the catalog does
// not know get TierFull and no category.
func Classify(id Identity) Entry {
	return defaultCatalog().Classify(id)
}

// Find looks up an app the way a person or a model names it: by a
// desktop-entry id, WM_CLASS, executable name or bundle id, else by its
// catalog name. It returns the entry and an identity that classifies back
// to it, or false when the catalog does not know the name.
func Find(query string) (Entry, Identity, bool) {
	return defaultCatalog().Find(query)
}
