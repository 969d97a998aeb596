package consent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
)

// AppSource finds the apps a request names: those with windows now, and
// those installed (Linux: desktop entries). Errors are logged and the
// request goes on with what the catalog knows.
type AppSource interface {
	RunningApps(ctx context.Context) ([]bridge.App, error)
	InstalledApps(ctx context.Context) ([]bridge.App, error)
}

// Options configure a Manager.
type Options struct {
	// ConfigDir holds the pre-approval file and the remembered denials;
	// "" means DefaultConfigDir.
	ConfigDir string
	// PolicyPaths are the managed policy files; nil means PolicyPaths().
	PolicyPaths []string
	// Allow and Grant are the --allow and --grant values, added to the
	// pre-approval file's.
	Allow []string
	Grant []string
	// Apps resolves names against running and installed apps; nil
	// resolves through the catalog only.
	Apps AppSource
	// Logger receives the manager's records; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Manager decides request_access: it owns the session's grants, the
// pre-approvals, the managed policy and the remembered denials.
type Manager struct {
	session   *Session
	allow     []Allow
	preFlags  Flags
	policy    Policy
	denials   *Denials
	configDir string
	apps      AppSource
	log       *slog.Logger
	now       func() time.Time

	// mu serializes request decisions.
	mu sync.Mutex
	// pending are the requests waiting for the user, by ID.
	pending map[string]*Pending
}

// New loads the pre-approval file and the managed policy and checks the
// --allow and --grant values. A broken file is an error that names it.
func New(opts Options) (*Manager, error) {
	m := &Manager{session: NewSession(), apps: opts.Apps, log: opts.Logger, now: opts.Now, configDir: opts.ConfigDir}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.configDir == "" {
		dir, err := DefaultConfigDir()
		if err != nil {
			return nil, err
		}
		m.configDir = dir
	}
	paths := opts.PolicyPaths
	if paths == nil {
		paths = PolicyPaths()
	}
	policy, err := LoadPolicy(paths)
	if err != nil {
		return nil, err
	}
	// A rule naming a path, a link or a desktop file denies the app
	// behind it, as a request by that spelling would name it.
	policy.Deny = expandSpellings(policy.Deny)
	m.policy = policy
	m.session.setDenied(policy.deniesIdentity)
	m.denials = NewDenials(filepath.Join(m.configDir, DenialsFile))

	pre, err := LoadPreapproval(m.PreapprovalPath())
	if err != nil {
		return nil, err
	}
	for _, s := range append(slices.Clone(pre.Allow), opts.Allow...) {
		a, err := ParseAllow(s)
		if err != nil {
			return nil, fmt.Errorf("--allow: %w", err)
		}
		m.allow = append(m.allow, a)
	}
	for _, s := range append(slices.Clone(pre.Grant), opts.Grant...) {
		name, err := ParseFlag(s)
		if err != nil {
			return nil, fmt.Errorf("--grant: %w", err)
		}
		m.preFlags.set(name, true)
	}
	return m, nil
}

// Session is this server session's grants.
func (m *Manager) Session() *Session { return m.session }

// Denials is the store of remembered denials.
func (m *Manager) Denials() *Denials { return m.denials }

// PreapprovalPath is the pre-approval file.
func (m *Manager) PreapprovalPath() string { return filepath.Join(m.configDir, PreapprovalFile) }

// Preapproved returns the pre-approved apps and flags.
func (m *Manager) Preapproved() ([]Allow, Flags) { return slices.Clone(m.allow), m.preFlags }

// Request is one request_access call.
type Request struct {
	// Apps are names or ids: "Firefox", "org.gnome.Calculator", "xterm",
	// "com.apple.Safari".
	Apps []string
	// Reason is why the model wants them, shown to the user.
	Reason string
	// Flags are grant flag names (see ParseFlag).
	Flags []string
}

// Refusal kinds.
const (
	RefusedCatalog    = "catalog_policy" // the catalog denies the app (media, reading)
	RefusedPolicy     = "managed_policy" // the managed policy denies it
	RefusedRemembered = "user_denied"    // the user declined it before
	RefusedDeclined   = "declined"       // the user declined it now
	RefusedCancelled  = "cancelled"      // the user dismissed the dialog
	RefusedNotAsked   = "not_approved"   // the client cannot ask and it is not pre-approved
	RefusedUnanswered = "unanswered"     // the dialog came back without a choice for it
	RefusedNotAnApp   = "not_an_app"     // it names an interpreter, shell or runtime, which hosts many apps
)

// RefusedStopped is the refusal kind after the user's Escape when the
// client cannot show the dialog to approve again.
const RefusedStopped = "stopped_by_user"

// Refusal is an app or flag that was not granted, and why.
type Refusal struct {
	// Requested is the app or flag as the request named it.
	Requested string `json:"requested"`
	// Name is the app's resolved name ("" for flags).
	Name string `json:"name,omitempty"`
	Kind string `json:"kind"`
	// Why is the explanation for the model.
	Why string `json:"why"`
}

// Outcome is what request_access decided.
type Outcome struct {
	Granted        []Grant   `json:"granted"`
	AlreadyGranted []Grant   `json:"already_granted"`
	Refused        []Refusal `json:"refused"`
	FlagsGranted   []string  `json:"flags_granted"`
	FlagsRefused   []Refusal `json:"flags_refused"`
	// Asked is set when the user was shown a dialog; Answer is their
	// action ("accept", "decline" or "cancel").
	Asked  bool   `json:"asked"`
	Answer string `json:"answer,omitempty"`
	// CannotAsk is set when the client cannot elicit and something was
	// left unapproved; HowToPreapprove tells the user what to do.
	CannotAsk       bool   `json:"cannot_ask,omitempty"`
	HowToPreapprove string `json:"how_to_preapprove,omitempty"`
	// Flags are the session's grant flags after the request.
	Flags Flags `json:"flags"`
}

// candidate is a requested app on its way through the checks.
type candidate struct {
	query string
	ref   AppRef
	entry catalog.Entry
}

// RequestAccess decides a request: apps the catalog or the managed policy
// deny, and apps the user declined before, are refused without asking;
// pre-approved apps and flags are granted; the rest are put to the user
// through ask, when the client can be asked (ask non-nil), and refused
// with instructions to pre-approve when it cannot. Grants are added to the
// session. Errors are failures to ask or to remember a denial.
func (m *Manager) RequestAccess(ctx context.Context, req Request, ask Asker) (*Outcome, error) {
	out, p, err := m.Begin(ctx, req, ask != nil)
	if err != nil || p == nil {
		return out, err
	}
	ans, err := ask(ctx, p.Dialog)
	if err != nil {
		return nil, fmt.Errorf("asking the user for access: %w", err)
	}
	return m.Finish(p, ans)
}

// Pending is a request waiting for the user's answer to its Dialog.
type Pending struct {
	// ID names the pending request for Resume: an unguessable token the
	// MCP layer hands the client as its request state.
	ID string
	// Dialog is what to show the user.
	Dialog *Dialog
	out    *Outcome
	items  []dialogItem
	reason string
	now    time.Time
	// epoch is the session's revocation count when the dialog was made:
	// an answer to a dialog shown before the user's Escape is void.
	epoch int
}

// Begin runs a request's checks. When the user must be asked and canAsk
// is set, it returns a Pending whose Dialog the caller shows, then passes
// the answer to Finish; otherwise it returns the Outcome, with the session
// already updated.
//
// After the user's Escape (Session.Revoke) the session is stopped: what was
// granted is gone and pre-approvals grant nothing by themselves, so every
// app and flag goes to the dialog, and the user's approval there resumes
// the session. A client that cannot show the dialog gets nothing back:
// the pre-approval is what the user allowed before pressing Escape, and the
// only later act of the user's that deskhand can see without a dialog is
// starting the server again: a new session of the same server starts
// stopped too (see Revoker).
func (m *Manager) Begin(ctx context.Context, req Request, canAsk bool) (*Outcome, *Pending, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	stopped, epoch := m.session.state()
	out := &Outcome{Granted: []Grant{}, AlreadyGranted: []Grant{}, Refused: []Refusal{}, FlagsGranted: []string{}, FlagsRefused: []Refusal{}}

	var apps []string
	for _, a := range req.Apps {
		if a = strings.TrimSpace(a); a != "" && !slices.ContainsFunc(apps, func(x string) bool { return strings.EqualFold(x, a) }) {
			apps = append(apps, a)
		}
	}
	var flags []string
	for _, f := range req.Flags {
		name, err := ParseFlag(f)
		if err != nil {
			return nil, nil, err
		}
		if !slices.Contains(flags, name) {
			flags = append(flags, name)
		}
	}
	if len(apps) == 0 && len(flags) == 0 {
		return nil, nil, errNoApps
	}
	running, installed := m.knownApps(ctx, apps)
	now := m.now()

	var toAsk []candidate
	for _, q := range apps {
		c := candidate{query: q, ref: resolve(q, running, installed)}
		c.entry = c.ref.Entry()
		if g, ok := m.grantFor(c.ref); ok {
			out.AlreadyGranted = append(out.AlreadyGranted, g)
			continue
		}
		if r, refused := m.precheck(c); refused {
			out.Refused = append(out.Refused, r)
			continue
		}
		if a, ok := m.preapproved(c.ref); ok && !stopped {
			out.Granted = append(out.Granted, m.grant(c, a.Tier, SourcePreapproved, now))
			continue
		}
		// Two names for one app are asked about once.
		if slices.ContainsFunc(toAsk, func(x candidate) bool { return x.ref.Same(c.ref) }) {
			continue
		}
		toAsk = append(toAsk, c)
	}

	have := m.session.Flags()
	var flagsToAsk []string
	for _, f := range flags {
		switch {
		case have.Has(f):
			// Already granted: nothing to do.
		case m.policy.DeniesFlag(f):
			out.FlagsRefused = append(out.FlagsRefused, Refusal{Requested: f, Kind: RefusedPolicy,
				Why: "the managed policy of this computer does not allow " + f + policySuffix(m.policy)})
		case m.preFlags.Has(f) && !stopped:
			out.FlagsGranted = append(out.FlagsGranted, f)
		default:
			flagsToAsk = append(flagsToAsk, f)
		}
	}

	if len(toAsk) > 0 || len(flagsToAsk) > 0 {
		if canAsk {
			d, items := buildDialog(req.Reason, toAsk, flagsToAsk)
			if stopped {
				d.Message = "You pressed Escape to stop deskhand, which withdrew every approval. " +
					"Approve again only if you want it to carry on.\n\n" + d.Message
			}
			p := &Pending{ID: newToken(), Dialog: d, out: out, items: items, reason: req.Reason, now: now, epoch: epoch}
			m.keep(p)
			return nil, p, nil
		}
		if stopped {
			refuseStopped(out, toAsk, flagsToAsk)
		} else {
			m.refuseUnasked(out, toAsk, flagsToAsk)
		}
	}
	return m.finish(out), nil, nil
}

// Finish applies the user's answer to a pending request and returns its
// outcome; the session is updated. Declined apps are remembered; an error
// means they could not be (and nothing was granted).
func (m *Manager) Finish(p *Pending, ans Answer) (*Outcome, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.pending[p.ID]; !ok {
		return nil, errors.New("this approval was already answered or has expired; call request_access again")
	}
	delete(m.pending, p.ID)
	if _, epoch := m.session.state(); epoch != p.epoch {
		return nil, errors.New("the user pressed Escape after this approval dialog was shown, which withdrew every approval; call request_access again to ask anew")
	}
	if err := m.applyAnswer(p, ans); err != nil {
		return nil, err
	}
	return m.finish(p.out), nil
}

// Pending returns the pending request id names, if it is still waiting.
func (m *Manager) Pending(id string) (*Pending, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.pending[id]
	return p, ok
}

// pendingTTL bounds how long a dialog may wait for its answer, and
// maxPending how many may wait at once.
const (
	pendingTTL = 30 * time.Minute
	maxPending = 16
)

// keep stores p for Finish, dropping expired and excess requests.
func (m *Manager) keep(p *Pending) {
	if m.pending == nil {
		m.pending = map[string]*Pending{}
	}
	for id, old := range m.pending {
		if p.now.Sub(old.now) > pendingTTL {
			delete(m.pending, id)
		}
	}
	for len(m.pending) >= maxPending {
		var oldest *Pending
		for _, old := range m.pending {
			if oldest == nil || old.now.Before(oldest.now) {
				oldest = old
			}
		}
		delete(m.pending, oldest.ID)
	}
	m.pending[p.ID] = p
}

func newToken() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic("consent: crypto/rand: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// finish adds an outcome's grants to the session. A stopped session
// grants only through the dialog, so any grant here is the user's new
// approval and resumes it.
func (m *Manager) finish(out *Outcome) *Outcome {
	m.session.Add(out.Granted, FlagsOf(out.FlagsGranted))
	if len(out.Granted)+len(out.FlagsGranted) > 0 {
		m.session.resume()
	}
	out.Flags = m.session.Flags()
	for _, g := range out.Granted {
		m.log.Info("granted", "app", g.Name, "tier", g.Tier.String(), "source", g.Source)
	}
	for _, r := range out.Refused {
		m.log.Info("refused", "app", r.Requested, "kind", r.Kind)
	}
	return out
}

// knownApps lists running and installed apps, only when some requested
// name is not in the catalog.
func (m *Manager) knownApps(ctx context.Context, apps []string) (running, installed []bridge.App) {
	if m.apps == nil {
		return nil, nil
	}
	need := false
	for _, q := range apps {
		if _, _, ok := catalog.Find(q); !ok {
			need = true
		}
	}
	if !need {
		return nil, nil
	}
	var err error
	if running, err = m.apps.RunningApps(ctx); err != nil {
		m.log.Warn("listing running apps to resolve request_access names", "err", err)
	}
	if installed, err = m.apps.InstalledApps(ctx); err != nil {
		m.log.Warn("listing installed apps to resolve request_access names", "err", err)
	}
	return running, installed
}

// resolve turns a requested name into an app reference: the catalog's
// app, else a running app, else an installed one, else the program a
// path or a command names, else a literal name.
//
// Every spelling of one app resolves to the same reference, so that a
// declined app stays declined however it is asked for: a path, a symlink
// or a command on $PATH is reduced to the program it runs, symlinks
// resolved ("/usr/bin/xterm", a link to it, x-terminal-emulator), and a
// desktop file to its id ("xterm.desktop", in any case).
func resolve(q string, running, installed []bridge.App) AppRef {
	names := spellings(q)
	for _, name := range names {
		if e, id, ok := catalog.Find(name); ok {
			return AppRef{Name: e.Name, Identity: id}
		}
	}
	exe := program(q)
	for _, list := range [][]bridge.App{running, installed} {
		for _, app := range list {
			ref := refOf(app)
			if strings.EqualFold(app.Name, q) || slices.ContainsFunc(names, ref.Mentions) || exe != "" && program(app.Exe) == exe {
				return ref
			}
		}
	}
	if exe != "" {
		if base := filepath.Base(exe); !hostsApps(base) {
			return AppRef{Name: DisplayName(base), Identity: catalog.Identity{Exe: base, Path: exe}}
		}
	}
	name := DisplayName(trimDesktopFold(q))
	return AppRef{Name: name, Identity: catalog.Identity{Name: name}, Literal: true}
}

// spellings are the names q may stand for, most telling first: the
// base name of the program it runs when it is a path or a command (a
// link's own name says nothing about what it runs), q itself, and a
// path's base name; each also without a ".desktop" suffix, in any case.
func spellings(q string) []string {
	var out []string
	add := func(s string) {
		for _, v := range []string{s, trimDesktopFold(s)} {
			if v != "" && v != "." && v != "/" && !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	if p := program(q); p != "" {
		add(filepath.Base(p))
	}
	add(q)
	if strings.ContainsRune(q, '/') {
		add(filepath.Base(q))
	}
	return out
}

// expandSpellings returns names with the other spellings of each added.
func expandSpellings(names []string) []string {
	var out []string
	for _, n := range names {
		for _, s := range spellings(strings.TrimSpace(n)) {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

func trimDesktopFold(s string) string {
	const suffix = ".desktop"
	if len(s) > len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix) {
		return s[:len(s)-len(suffix)]
	}
	return s
}

// program returns the file q runs, symlinks resolved: q itself when it
// is a path, else the command q on $PATH; "" when there is none.
func program(q string) string {
	if q == "" || strings.ContainsAny(q, "\x00\n") {
		return ""
	}
	path := q
	if !strings.ContainsRune(q, '/') {
		p, err := exec.LookPath(q)
		if err != nil {
			return ""
		}
		path = p
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	if abs, err := filepath.Abs(real); err == nil {
		real = abs
	}
	if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	return real
}

func (m *Manager) grantFor(ref AppRef) (Grant, bool) {
	for _, g := range m.session.Apps() {
		if g.Same(ref) {
			return g, true
		}
	}
	return Grant{}, false
}

// precheck refuses what no dialog may grant: catalog and managed-policy
// denials, and apps the user declined before.
func (m *Manager) precheck(c candidate) (Refusal, bool) {
	r := Refusal{Requested: DisplayName(c.query), Name: c.ref.Name}
	if id := c.ref.Identity; c.entry.Generic && id == (catalog.Identity{Name: id.Name}) {
		r.Kind = RefusedNotAnApp
		r.Why = fmt.Sprintf("%s names a program that many apps run in (%s), not one app; ask for the app by its window's WM_CLASS or its desktop-entry id instead. Whatever app it is, it gets the click tier, since it can run commands", DisplayName(c.query), c.entry.Name)
		return r, true
	}
	if c.entry.PolicyDenied {
		r.Kind = RefusedCatalog
		r.Why = fmt.Sprintf("%s is a %s app; deskhand never operates media and reading apps, and the user cannot approve them", c.ref.Name, c.entry.Category)
		return r, true
	}
	if rule, denied := m.policy.Denies(c.ref); denied {
		r.Kind = RefusedPolicy
		r.Why = fmt.Sprintf("the managed policy of this computer denies %s (rule %q in %s); the user cannot override it%s",
			c.ref.Name, rule, strings.Join(m.policy.Sources, ", "), policySuffix(m.policy))
		return r, true
	}
	den, found, err := m.denials.Find(c.ref)
	if err != nil {
		// Unreadable denials: refuse rather than ask again.
		r.Kind = RefusedRemembered
		r.Why = fmt.Sprintf("the remembered denials cannot be read (%v), so %s is refused; the user should fix or delete %s", err, c.ref.Name, m.denials.Path())
		return r, true
	}
	if found {
		r.Kind = RefusedRemembered
		r.Why = fmt.Sprintf("the user declined %s on %s; do not ask for it again. It stays refused until the user runs `deskhand grants forget %s`",
			c.ref.Name, den.DeniedAt.Local().Format("2006-01-02 15:04"), shellWord(DisplayName(den.Name)))
		return r, true
	}
	return r, false
}

func policySuffix(p Policy) string {
	if p.Message == "" {
		return ""
	}
	return ". " + p.Message
}

// preapproved returns the pre-approval that covers ref.
func (m *Manager) preapproved(ref AppRef) (Allow, bool) {
	for _, a := range m.allow {
		// "--allow python3" would cover every app written in Python.
		if e, _, ok := catalog.Find(a.App); ok && e.Generic {
			m.log.Warn("ignoring a pre-approval of an interpreter or runtime; pre-approve the app by its desktop id or WM_CLASS", "app", a.App)
			continue
		}
		if ref.Mentions(a.App) {
			return a, true
		}
		if ref.Literal && strings.EqualFold(ref.Name, a.App) {
			return a, true
		}
	}
	return Allow{}, false
}

// grant makes the grant for c: the catalog's tier, or an explicit
// pre-approved tier (which may exceed it unless the policy says no).
func (m *Manager) grant(c candidate, explicit catalog.Tier, source string, now time.Time) Grant {
	tier := c.entry.DefaultTier
	if explicit != catalog.TierNone {
		switch {
		case explicit <= tier:
			tier = explicit
		case m.policy.CatalogTiersOnly:
			m.log.Warn("the managed policy keeps apps at their catalog tier", "app", c.ref.Name, "asked", explicit.String(), "granted", tier.String())
		default:
			m.log.Warn("pre-approval raises an app above its catalog tier", "app", c.ref.Name, "catalog", tier.String(), "granted", explicit.String())
			tier = explicit
		}
	}
	return Grant{AppRef: c.ref, Tier: tier, Category: c.entry.Category, Source: source, GrantedAt: now}
}

// refuseUnasked refuses what needed the user when the client cannot ask,
// with instructions the model can pass on word for word.
func (m *Manager) refuseUnasked(out *Outcome, apps []candidate, flags []string) {
	out.CannotAsk = true
	var allow []string
	for _, c := range apps {
		allow = append(allow, shellWord(preapprovalName(c)))
	}
	var b strings.Builder
	b.WriteString("This MCP client cannot show deskhand's approval dialog (it does not support MCP elicitation), and ")
	b.WriteString("nothing here is pre-approved. To approve, the user can either add ")
	var flagArgs []string
	for _, a := range allow {
		flagArgs = append(flagArgs, "--allow "+a)
	}
	for _, f := range flags {
		flagArgs = append(flagArgs, "--grant "+f)
	}
	fmt.Fprintf(&b, "`%s` to the deskhand command in the MCP client's configuration", strings.Join(flagArgs, " "))
	cmd := "deskhand grants allow " + strings.Join(allow, " ")
	if len(flags) > 0 {
		cmd += " --grant " + strings.Join(flags, ",")
	}
	fmt.Fprintf(&b, ", or run `%s` in a terminal (it writes %s); then restart the MCP server. ", strings.TrimSpace(cmd), m.PreapprovalPath())
	b.WriteString("Append =read, =click or =full to an app to choose its tier.")
	out.HowToPreapprove = b.String()
	for _, c := range apps {
		out.Refused = append(out.Refused, Refusal{Requested: DisplayName(c.query), Name: c.ref.Name, Kind: RefusedNotAsked,
			Why: fmt.Sprintf("%s is not pre-approved and the user cannot be asked from this client", c.ref.Name)})
	}
	for _, f := range flags {
		out.FlagsRefused = append(out.FlagsRefused, Refusal{Requested: f, Kind: RefusedNotAsked,
			Why: f + " is not pre-approved and the user cannot be asked from this client"})
	}
}

// refuseStopped refuses what a stopped session asked for when the client
// cannot show the dialog.
func refuseStopped(out *Outcome, apps []candidate, flags []string) {
	out.CannotAsk = true
	out.HowToPreapprove = "The user pressed Escape to stop deskhand, which withdrew every approval, and this MCP client cannot show deskhand's approval dialog, " +
		"so the pre-approvals do not count again until the deskhand server restarts, in this session or any new one. If the user wants deskhand to carry on, they restart the deskhand MCP server " +
		"(for a server on stdio, by reconnecting it in the MCP client; over HTTP, by restarting deskhand serve --http); until then every action is refused."
	for _, c := range apps {
		out.Refused = append(out.Refused, Refusal{Requested: c.query, Name: c.ref.Name, Kind: RefusedStopped,
			Why: "the user pressed Escape to stop deskhand, and this client cannot ask them to approve " + c.ref.Name + " again"})
	}
	for _, f := range flags {
		out.FlagsRefused = append(out.FlagsRefused, Refusal{Requested: f, Kind: RefusedStopped,
			Why: "the user pressed Escape to stop deskhand, and this client cannot ask them to grant " + f + " again"})
	}
}

// preapprovalName is the most precise name to pre-approve c by.
func preapprovalName(c candidate) string {
	if c.ref.Literal {
		return c.ref.Name
	}
	if c.entry.Name != "" {
		return DisplayName(c.query)
	}
	id := c.ref.Identity
	return DisplayName(firstNonEmpty(id.DesktopID, id.BundleID, id.Instance, id.Exe, c.query))
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.=/+:,@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
