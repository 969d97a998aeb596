package consent

import (
	"strings"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
)

// AppRef names an app in grants, denials and requests.
type AppRef struct {
	// Name is the app's human name: the catalog's name when the catalog
	// knows it, else what the platform or the request called it, made
	// safe to show by DisplayName.
	Name string `json:"name"`
	// Identity is what the app's windows must match; see Matches.
	Identity catalog.Identity `json:"identity"`
	// Literal marks a name that matched no known, running or installed
	// app: it matches a window when any of the window's identifiers
	// (desktop-entry id, WM_CLASS class or instance, executable, bundle
	// id) equals Name.
	Literal bool `json:"literal,omitempty"`
}

// Matches reports whether app is the app r names.
//
// An app the catalog knows matches only refs to the same catalog entry,
// so a grant for "xterm" covers every xterm window and nothing else.
// Otherwise the strongest identifier r has decides: bundle id, then
// desktop-entry id, then WM_CLASS (class, and instance when r has one),
// then the executable name when r has nothing better. Display names never
// match, because any window can call itself anything.
func (r AppRef) Matches(app bridge.App) bool {
	return r.matchesIdentity(catalog.IdentityOf(app))
}

func (r AppRef) matchesIdentity(id catalog.Identity) bool {
	re, ie := catalog.Classify(r.Identity), catalog.Classify(id)
	if !r.Literal && re.Name != "" || ie.Name != "" {
		return re.Name != "" && re.Name == ie.Name
	}
	if r.Literal {
		return eqID(r.Name, id.BundleID) || eqID(r.Name, trimDesktop(id.DesktopID)) ||
			eqID(r.Name, id.Class) || eqID(r.Name, id.Instance) || eqID(r.Name, id.Exe)
	}
	g := r.Identity
	switch {
	case eqID(g.BundleID, id.BundleID):
		return true
	case eqID(trimDesktop(g.DesktopID), trimDesktop(id.DesktopID)):
		return true
	case g.Class != "":
		return eqID(g.Class, id.Class) && (g.Instance == "" || eqID(g.Instance, id.Instance))
	case g.Instance != "":
		return eqID(g.Instance, id.Instance)
	case g.BundleID == "":
		return eqID(g.Exe, id.Exe)
	}
	return false
}

// Same reports whether r and o name the same app.
func (r AppRef) Same(o AppRef) bool {
	switch {
	case r.Literal && o.Literal:
		return strings.EqualFold(r.Name, o.Name)
	case r.Literal:
		return r.matchesIdentity(o.Identity)
	case o.Literal:
		return o.matchesIdentity(r.Identity)
	}
	return r.matchesIdentity(o.Identity) || o.matchesIdentity(r.Identity)
}

// Mentions reports whether q, as a person would type it, names r: its
// name, one of its identifiers, or (via the catalog) the same catalog app.
func (r AppRef) Mentions(q string) bool {
	q = strings.TrimSpace(q)
	if q == "" {
		return false
	}
	if strings.EqualFold(q, r.Name) {
		return true
	}
	if e, _, ok := catalog.Find(q); ok {
		return catalog.Classify(r.Identity).Name == e.Name
	}
	id := r.Identity
	return eqID(q, id.BundleID) || eqID(trimDesktop(q), trimDesktop(id.DesktopID)) ||
		eqID(q, id.Class) || eqID(q, id.Instance) || eqID(q, id.Exe) || strings.EqualFold(q, id.Name)
}

// Entry is the catalog's verdict on r.
func (r AppRef) Entry() catalog.Entry {
	if r.Literal {
		return catalog.Entry{DefaultTier: catalog.TierFull}
	}
	return catalog.Classify(r.Identity)
}

func eqID(a, b string) bool { return a != "" && strings.EqualFold(a, b) }

func trimDesktop(s string) string { return strings.TrimSuffix(s, ".desktop") }

// launchers are programs that run other programs: an app known only by
// one of these as its executable would match every app they run.
var launchers = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "env": true, "exec": true,
	"python": true, "python2": true, "python3": true, "perl": true, "ruby": true, "node": true, "nodejs": true,
	"java": true, "mono": true, "dotnet": true, "wine": true, "wine64": true, "electron": true,
	"flatpak": true, "snap": true, "gtk-launch": true, "xdg-open": true, "gio": true, "kioclient": true, "kioclient5": true,
}

// refOf makes the ref of a running or installed app.
func refOf(app bridge.App) AppRef {
	id := catalog.IdentityOf(app)
	id.DesktopID = trimDesktop(id.DesktopID)
	if launchers[strings.ToLower(id.Exe)] || strings.HasPrefix(strings.ToLower(id.Exe), "python3.") {
		id.Exe = ""
	}
	if e := catalog.Classify(id); e.Name != "" {
		return AppRef{Name: e.Name, Identity: id}
	}
	name := app.Name
	if name == "" {
		name = firstNonEmpty(id.DesktopID, id.Class, id.Instance, id.Exe, id.BundleID)
	}
	// A window or a desktop entry names itself: it could put a line
	// break or a bidi override in the dialog.
	return AppRef{Name: DisplayName(name), Identity: id}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
