package catalog

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
)

//go:embed apps.json
var appsJSON []byte

// file is the shape of apps.json.
type file struct {
	// About says what the file is, for its readers.
	About string `json:"about"`
	// Categories maps a category name to its policy.
	Categories map[string]categoryPolicy `json:"categories"`
	// Apps lists known apps; each matches on any of its identifiers.
	Apps []appRecord `json:"apps"`
}

type categoryPolicy struct {
	Tier      Tier   `json:"tier"`
	Denied    bool   `json:"denied"`
	Sensitive string `json:"sensitive"`
	// Generic categories hold families of programs (interpreters,
	// runtimes) that host many apps; see Entry.Generic.
	Generic bool `json:"generic"`
}

// appRecord is one app. Identifiers match case-insensitively; a trailing
// "*" matches any suffix ("jetbrains-*").
type appRecord struct {
	Name        string   `json:"name"`
	Category    string   `json:"category"`
	Sensitive   string   `json:"sensitive,omitempty"` // overrides the category's
	DesktopID   []string `json:"desktop_id,omitempty"`
	WindowClass []string `json:"wm_class,omitempty"` // the window class (Linux: WM_CLASS instance or class)
	Exe         []string `json:"exe,omitempty"`
	BundleID    []string `json:"bundle_id,omitempty"`
	AUMID       []string `json:"aumid,omitempty"` // App User Model ID (Windows packaged apps)
	// Names are extra spellings the model may use in request_access.
	Names []string `json:"names,omitempty"`
}

// Catalog is a parsed app catalog.
type Catalog struct {
	categories map[string]categoryPolicy
	apps       []appRecord
	// index maps a kind of identifier and its lower-case value to the
	// app that lists it; prefixes hold the wildcard entries.
	index    map[idKind]map[string]int
	prefixes map[idKind][]prefixEntry
}

type idKind int

const (
	kindBundle idKind = iota
	kindDesktop
	kindWindowClass
	kindExe
	kindAUMID
	kindName
)

type prefixEntry struct {
	prefix string // lower case
	app    int
}

func (a *appRecord) ids(k idKind) []string {
	switch k {
	case kindBundle:
		return a.BundleID
	case kindDesktop:
		return a.DesktopID
	case kindWindowClass:
		return a.WindowClass
	case kindExe:
		return a.Exe
	case kindAUMID:
		return a.AUMID
	}
	return append([]string{a.Name}, a.Names...)
}

var (
	defaultOnce sync.Once
	defaultCat  *Catalog
)

func defaultCatalog() *Catalog {
	defaultOnce.Do(func() {
		c, err := Parse(appsJSON)
		if err != nil {
			// apps.json is embedded and tested; a broken one is a build bug.
			panic("catalog: embedded apps.json: " + err.Error())
		}
		defaultCat = c
	})
	return defaultCat
}

// Parse reads a catalog in the apps.json format and checks it.
func Parse(data []byte) (*Catalog, error) {
	var f file
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("parsing catalog: %w", err)
	}
	for name, p := range f.Categories {
		if !validSensitive(p.Sensitive) {
			return nil, fmt.Errorf("category %q: unknown sensitive label %q", name, p.Sensitive)
		}
		if !p.Denied && p.Tier == TierNone {
			return nil, fmt.Errorf("category %q: needs a tier or denied", name)
		}
	}
	seen := map[string]string{}
	for i, a := range f.Apps {
		for _, n := range append([]string{a.Name}, a.Names...) {
			key := "name:" + strings.ToLower(n)
			if other, dup := seen[key]; dup && other != a.Name {
				return nil, fmt.Errorf("app %q: name %q already belongs to %q", a.Name, n, other)
			}
			seen[key] = a.Name
		}
		if a.Name == "" {
			return nil, fmt.Errorf("app #%d: no name", i)
		}
		if _, ok := f.Categories[a.Category]; !ok {
			return nil, fmt.Errorf("app %q: unknown category %q", a.Name, a.Category)
		}
		if !validSensitive(a.Sensitive) {
			return nil, fmt.Errorf("app %q: unknown sensitive label %q", a.Name, a.Sensitive)
		}
		if len(a.DesktopID)+len(a.WindowClass)+len(a.Exe)+len(a.BundleID)+len(a.AUMID) == 0 {
			return nil, fmt.Errorf("app %q: no identifier", a.Name)
		}
		for kind, ids := range map[string][]string{"desktop_id": a.DesktopID, "wm_class": a.WindowClass, "exe": a.Exe, "bundle_id": a.BundleID, "aumid": a.AUMID} {
			for _, id := range ids {
				key := kind + ":" + strings.ToLower(id)
				if other, dup := seen[key]; dup && other != a.Name {
					return nil, fmt.Errorf("app %q: %s %q already belongs to %q", a.Name, kind, id, other)
				}
				seen[key] = a.Name
			}
		}
	}
	c := &Catalog{categories: f.Categories, apps: f.Apps, index: map[idKind]map[string]int{}, prefixes: map[idKind][]prefixEntry{}}
	for k := kindBundle; k <= kindName; k++ {
		c.index[k] = map[string]int{}
		for i := range c.apps {
			for _, id := range c.apps[i].ids(k) {
				lower := key(k, id)
				if p, ok := strings.CutSuffix(lower, "*"); ok {
					c.prefixes[k] = append(c.prefixes[k], prefixEntry{p, i})
				} else if _, dup := c.index[k][lower]; !dup {
					c.index[k][lower] = i
				}
			}
		}
	}
	return c, nil
}

// key is how an identifier of kind k is looked up: in lower case, and an
// executable without Windows' ".exe", so that one entry ("code", "chrome",
// "pwsh") covers an app's executable on every system.
func key(k idKind, id string) string {
	lower := strings.ToLower(id)
	if k == kindExe {
		lower = strings.TrimSuffix(lower, ".exe")
	}
	return lower
}

func validSensitive(s string) bool {
	switch s {
	case "", SensitiveShell, SensitiveFileManager, SensitiveSystemSettings:
		return true
	}
	return false
}

// Classify looks an app up. Identifiers are tried from the most to the
// least specific: bundle id, desktop-entry id, WM_CLASS class, WM_CLASS
// instance, executable name. The display name is tried only when the
// identity has none of those (a name the model typed): a window's
// human name can be anything, and a generic one ("Music", "Atlas") must
// not pull an unrelated app into a category.
//
// The executable also has a say of its own: when it alone classifies
// more restrictively than the first identifier that matched, its entry
// wins. A window sets its own WM_CLASS, and the desktop entry is found
// from it, so a Python REPL calling itself org.gnome.Nautilus is still
// an interpreter; the executable it cannot choose.
//
// Last, the app's family (the package or bundle its executable ships in;
// see family.go) has its say the same way: an app takes its family's
// strictest verdict when that restricts more, and an app the catalog
// does not know takes its family's catalogued app outright, so that
// gnome-terminal-preferences is part of GNOME Terminal: the same app for
// grants, at the same tier, with the same warning.
func (c *Catalog) Classify(id Identity) Entry {
	a := c.lookup(id)
	if id.Exe != "" {
		if byExe := c.lookup(Identity{Exe: id.Exe}); byExe != nil && byExe != a && (a == nil || c.entry(byExe).restricts(c.entry(a))) {
			a = byExe
		}
	}
	e := Entry{DefaultTier: TierFull}
	if a != nil {
		e = c.entry(a)
	}
	if fam, ok := c.familyEntry(id.Path); ok && (a == nil && !fam.Generic || fam.restricts(e)) {
		return fam
	}
	return e
}

// restricts reports whether e allows less than o: a policy denial, a
// lower tier, or the same tier with a warning o lacks.
func (e Entry) restricts(o Entry) bool {
	switch {
	case e.PolicyDenied != o.PolicyDenied:
		return e.PolicyDenied
	case e.DefaultTier != o.DefaultTier:
		return e.DefaultTier < o.DefaultTier
	}
	return e.Sensitive != "" && o.Sensitive == ""
}

func (c *Catalog) entry(a *appRecord) Entry {
	p := c.categories[a.Category]
	e := Entry{Name: a.Name, Category: a.Category, DefaultTier: p.Tier, PolicyDenied: p.Denied, Sensitive: p.Sensitive, Generic: p.Generic}
	if a.Sensitive != "" {
		e.Sensitive = a.Sensitive
	}
	if e.PolicyDenied {
		e.DefaultTier = TierNone
	}
	return e
}

func (c *Catalog) lookup(id Identity) *appRecord {
	type probe struct {
		value string
		kind  idKind
	}
	desktop := strings.TrimSuffix(id.DesktopID, ".desktop")
	probes := []probe{{id.BundleID, kindBundle}, {id.AUMID, kindAUMID}, {desktop, kindDesktop}, {id.Class, kindWindowClass}, {id.Instance, kindWindowClass}, {id.Exe, kindExe}}
	if id.BundleID == "" && id.AUMID == "" && desktop == "" && id.Class == "" && id.Instance == "" && id.Exe == "" {
		probes = append(probes, probe{id.Name, kindName})
	}
	for _, p := range probes {
		if p.value == "" {
			continue
		}
		lower := key(p.kind, p.value)
		best := -1
		if i, ok := c.index[p.kind][lower]; ok {
			best = i
		}
		for _, pe := range c.prefixes[p.kind] {
			if strings.HasPrefix(lower, pe.prefix) && (best < 0 || pe.app < best) {
				best = pe.app
			}
		}
		if best >= 0 {
			return &c.apps[best]
		}
	}
	return nil
}

// Find looks an app up by any identifier or name; see the package Find.
func (c *Catalog) Find(query string) (Entry, Identity, bool) {
	q := strings.TrimSpace(query)
	if q == "" {
		return Entry{}, Identity{}, false
	}
	a := c.lookup(Identity{BundleID: q, AUMID: q, DesktopID: q, Class: q, Exe: q})
	if a == nil {
		a = c.lookup(Identity{Name: q})
	}
	if a == nil {
		return Entry{}, Identity{}, false
	}
	return c.entry(a), Identity{Name: a.Name}, true
}
