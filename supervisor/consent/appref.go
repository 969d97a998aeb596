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
//
// A generic catalog entry (a script interpreter, a shell, a runtime such
// as java) is a family, not an app: a window it classifies matches only a
// ref of the same family that also has the window's desktop id or
// WM_CLASS, and its executable never identifies anything. So a grant for
// one Tk REPL covers neither other Python windows nor a Python window
// that copies a granted app's WM_CLASS.
func (r AppRef) Matches(app bridge.App) bool {
	return r.matchesIdentity(catalog.IdentityOf(app))
}

func (r AppRef) matchesIdentity(id catalog.Identity) bool {
	re, ie := catalog.Classify(r.Identity), catalog.Classify(id)
	switch {
	case ie.Name != "":
		if re.Name != ie.Name {
			return false
		}
		if !ie.Generic {
			return true
		}
	case !r.Literal && re.Name != "" && !re.Generic:
		return false
	}
	if r.Literal {
		return eqID(r.Name, id.BundleID) || eqID(r.Name, id.AUMID) || eqID(r.Name, trimDesktop(id.DesktopID)) ||
			eqID(r.Name, id.Class) || eqID(r.Name, id.Instance) || eqID(r.Name, id.Exe)
	}
	g := r.Identity
	switch {
	case eqID(g.BundleID, id.BundleID), eqID(g.AUMID, id.AUMID):
		return true
	case eqID(trimDesktop(g.DesktopID), trimDesktop(id.DesktopID)):
		return true
	case g.Class != "":
		return eqID(g.Class, id.Class) && (g.Instance == "" || eqID(g.Instance, id.Instance))
	case g.Instance != "":
		return eqID(g.Instance, id.Instance)
	case g.BundleID == "" && g.AUMID == "":
		return eqID(g.Exe, id.Exe) && !hostsApps(g.Exe)
	}
	return false
}

// hostsApps reports whether exe runs other programs (an interpreter, a
// shell, a runtime or a launcher): the catalog's generic entries. Such an
// executable never identifies an app.
func hostsApps(exe string) bool {
	return exe != "" && catalog.Classify(catalog.Identity{Exe: exe}).Generic
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
	return eqID(q, id.BundleID) || eqID(q, id.AUMID) || eqID(trimDesktop(q), trimDesktop(id.DesktopID)) ||
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

// refOf makes the ref of a running or installed app. Its executable
// stays in the identity even when it is an interpreter or a launcher
// (see hostsApps): it does not identify the app, but it sets the app's
// tier and warning.
func refOf(app bridge.App) AppRef {
	id := catalog.IdentityOf(app)
	id.DesktopID = trimDesktop(id.DesktopID)
	if e := catalog.Classify(id); e.Name != "" && !e.Generic {
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
