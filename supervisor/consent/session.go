// Package consent holds what the user has allowed deskhand to use: the
// per-app tiers and grant flags of one server session, the pre-approval
// file and flags, the user's remembered denials, the managed policy file,
// and the elicitation flow that asks the user.
package consent

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
)

// Flags are the grants beyond app tiers.
type Flags struct {
	ClipboardRead   bool `json:"clipboardRead"`
	ClipboardWrite  bool `json:"clipboardWrite"`
	SystemKeyCombos bool `json:"systemKeyCombos"`
}

// Grant sources.
const (
	SourceUser        = "user"        // approved in the consent dialog
	SourcePreapproved = "preapproved" // pre-approval file or --allow flag
)

// Grant is one approved app.
type Grant struct {
	// Name is the app's display name (the catalog's name when known).
	Name string `json:"name"`
	// Identity identifies the app's windows; see Matches.
	Identity catalog.Identity `json:"identity"`
	// Tier is the granted tier, never above the catalog's DefaultTier.
	Tier catalog.Tier `json:"tier"`
	// Category is the catalog category, "" for apps the catalog does
	// not know.
	Category string `json:"category,omitempty"`
	// Source is SourceUser or SourcePreapproved.
	Source    string    `json:"source"`
	GrantedAt time.Time `json:"granted_at"`
}

// Matches reports whether app is the app this grant is for: the same
// catalog entry, or an equal desktop-entry id, bundle id, WM_CLASS class,
// WM_CLASS instance or executable name. Display names alone never match,
// because any window can carry any title.
func (g Grant) Matches(app bridge.App) bool {
	return identityMatches(g.Identity, catalog.IdentityOf(app))
}

func identityMatches(g, id catalog.Identity) bool {
	if ge := catalog.Classify(g); ge.Name != "" {
		if ie := catalog.Classify(id); ie.Name != "" {
			return ge.Name == ie.Name
		}
	}
	eq := func(a, b string) bool { return a != "" && strings.EqualFold(a, b) }
	return eq(g.BundleID, id.BundleID) ||
		eq(strings.TrimSuffix(g.DesktopID, ".desktop"), strings.TrimSuffix(id.DesktopID, ".desktop")) ||
		eq(g.Class, id.Class) ||
		eq(g.Instance, id.Instance) ||
		eq(g.Exe, id.Exe)
}

// Session is the grants of one server session. It is safe for concurrent
// use. The zero value has no grants.
type Session struct {
	mu     sync.Mutex
	grants []Grant
	flags  Flags
}

// NewSession returns a session with no grants.
func NewSession() *Session { return &Session{} }

// Tier is the tier app is approved for in this session, TierNone when it is
// not approved or the catalog denies it by policy.
func (s *Session) Tier(app bridge.App) catalog.Tier {
	entry := catalog.Classify(catalog.IdentityOf(app))
	if entry.PolicyDenied {
		return catalog.TierNone
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	best := catalog.TierNone
	for _, g := range s.grants {
		if g.Matches(app) && g.Tier > best {
			best = g.Tier
		}
	}
	return min(best, entry.DefaultTier)
}

// Flags returns the grant flags of this session.
func (s *Session) Flags() Flags {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flags
}

// Granted reports whether any app has been approved in this session.
func (s *Session) Granted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.grants) > 0
}

// Apps returns a copy of the approved apps, in the order they were granted.
func (s *Session) Apps() []Grant {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.grants)
}

// Add records grants and flags. A grant for an app that is already
// approved replaces it when its tier is higher. Flags are OR-ed in:
// a session's flags only grow.
func (s *Session) Add(grants []Grant, flags Flags) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range grants {
		if g.GrantedAt.IsZero() {
			g.GrantedAt = time.Now()
		}
		replaced := false
		for i, old := range s.grants {
			if identityMatches(old.Identity, g.Identity) {
				if g.Tier > old.Tier {
					s.grants[i] = g
				}
				replaced = true
				break
			}
		}
		if !replaced {
			s.grants = append(s.grants, g)
		}
	}
	s.flags.ClipboardRead = s.flags.ClipboardRead || flags.ClipboardRead
	s.flags.ClipboardWrite = s.flags.ClipboardWrite || flags.ClipboardWrite
	s.flags.SystemKeyCombos = s.flags.SystemKeyCombos || flags.SystemKeyCombos
}
