// Package consent holds what the user has allowed deskhand to use: the
// per-app tiers and grant flags of one server session, the pre-approval
// file and flags, the user's remembered denials, the managed policy file,
// and the elicitation flow that asks the user.
package consent

import (
	"slices"
	"sync"
	"time"
	"weak"

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
	AppRef
	// Tier is the granted tier: the catalog's tier for the app, or the
	// tier a pre-approval named explicitly.
	Tier catalog.Tier `json:"tier"`
	// Category is the catalog category, "" for apps the catalog does
	// not know.
	Category string `json:"category,omitempty"`
	// Source is SourceUser or SourcePreapproved.
	Source    string    `json:"source"`
	GrantedAt time.Time `json:"granted_at"`
}

// Session is the grants of one server session. It is safe for concurrent
// use. The zero value has no grants.
type Session struct {
	mu     sync.Mutex
	grants []Grant
	flags  Flags
	// denied reports apps the managed policy denies; nil denies none.
	denied func(catalog.Identity) bool
	// stopped is set by the user's Escape: the grants are gone, and
	// request_access grants nothing again without asking the user.
	stopped bool
	// revoked counts the Revoke calls.
	revoked int
	// tiers remembers Tier's answers: a tier is a function of the app's
	// identity, the grants and the policy, and the gates ask it for every
	// window on the screen before every action, each answer costing a
	// catalog lookup per grant. Whatever changes the grants or the policy
	// forgets them.
	tiers map[catalog.Identity]catalog.Tier
}

// maxTiers bounds the remembered tiers; past it they are forgotten and
// remembered afresh. A desktop shows a few dozen apps.
const maxTiers = 512

// NewSession returns a session with no grants.
func NewSession() *Session { return &Session{} }

// Tier is the tier app is approved for in this session: TierNone when it
// is not approved, or when the catalog or the managed policy denies it.
func (s *Session) Tier(app bridge.App) catalog.Tier {
	id := catalog.IdentityOf(app)
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tiers[id]; ok {
		return t
	}
	t := s.tier(id)
	if s.tiers == nil || len(s.tiers) >= maxTiers {
		s.tiers = map[catalog.Identity]catalog.Tier{}
	}
	s.tiers[id] = t
	return t
}

// tier works out Tier's answer; s.mu is held.
func (s *Session) tier(id catalog.Identity) catalog.Tier {
	if catalog.Classify(id).PolicyDenied {
		return catalog.TierNone
	}
	if s.denied != nil && s.denied(id) {
		return catalog.TierNone
	}
	best := catalog.TierNone
	for _, g := range s.grants {
		if g.matchesIdentity(id) && g.Tier > best {
			best = g.Tier
		}
	}
	return best
}

// setDenied sets the managed policy's denial test.
func (s *Session) setDenied(denied func(catalog.Identity) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.denied = denied
	clear(s.tiers)
}

// Grant returns the grant that covers app, if any: the one with the
// highest tier.
func (s *Session) Grant(app bridge.App) (Grant, bool) {
	id := catalog.IdentityOf(app)
	s.mu.Lock()
	defer s.mu.Unlock()
	var best Grant
	found := false
	for _, g := range s.grants {
		if g.matchesIdentity(id) && (!found || g.Tier > best.Tier) {
			best, found = g, true
		}
	}
	return best, found
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
	clear(s.tiers)
	for _, g := range grants {
		if g.GrantedAt.IsZero() {
			g.GrantedAt = time.Now()
		}
		replaced := false
		for i, old := range s.grants {
			if old.Same(g.AppRef) {
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

// Revoke withdraws every grant and flag because the user pressed Escape to
// take back control. Until the user approves something again in the
// consent dialog, the session is stopped: pre-approvals no longer grant
// anything on their own (see Manager.Begin).
func (s *Session) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.grants, s.flags, s.stopped = nil, Flags{}, true
	s.revoked++
	clear(s.tiers)
}

// Stopped reports whether the user's Escape revoked the grants and has not
// been followed by a new approval.
func (s *Session) Stopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

// Revocations counts the user's Escapes that revoked the grants: what was
// approved under an earlier count was withdrawn since.
func (s *Session) Revocations() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revoked
}

// state returns whether the session is stopped and how often it was
// revoked.
func (s *Session) state() (stopped bool, revoked int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped, s.revoked
}

func (s *Session) resume() {
	s.mu.Lock()
	s.stopped = false
	s.mu.Unlock()
}

// Revoker is the user's Escape on one display: it withdraws the grants
// of every session that joined it, whichever transport or handler made
// the session, and a session that joins after an Escape starts stopped,
// so that it too needs the dialog, until the server restarts. The zero
// value is ready to use.
type Revoker struct {
	mu sync.Mutex
	// sessions are weak so that the sessions of ended HTTP clients go.
	sessions []weak.Pointer[Session]
	revoked  bool
}

// Join makes Revoke withdraw s's grants too; after a Revoke, it
// withdraws them at once.
func (r *Revoker) Join(s *Session) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.revoked {
		s.Revoke()
	}
	r.sessions = slices.DeleteFunc(r.sessions, func(p weak.Pointer[Session]) bool { return p.Value() == nil })
	r.sessions = append(r.sessions, weak.Make(s))
}

// Revoke withdraws the grants of every session that joined, and of every
// one that joins later (see Session.Revoke).
func (r *Revoker) Revoke() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.revoked = true
	for _, p := range r.sessions {
		if s := p.Value(); s != nil {
			s.Revoke()
		}
	}
}
