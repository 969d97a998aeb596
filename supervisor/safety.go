package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/desktop"
	"github.com/deskhand/deskhand/supervisor/executor"
	"github.com/deskhand/deskhand/supervisor/gates"
	"github.com/deskhand/deskhand/supervisor/lock"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// SafetyOptions configure the gates, the lock and turn cleanup (serve's
// --idle-timeout and --hide-unapproved).
type SafetyOptions struct {
	// IdleTimeout gives the computer back after this long without an
	// action; 0 never.
	IdleTimeout time.Duration
	// HideUnapproved minimises the windows of apps the session has not
	// approved while deskhand acts.
	HideUnapproved bool
	// Indicator shows on the screen, while a turn lasts, that deskhand
	// is in control and that Escape stops it.
	Indicator bool
}

// safetyConfig is what newSafety builds from.
type safetyConfig struct {
	SafetyOptions
	// journalDir is where the turn journal is kept (serve's state
	// directory); "" keeps none.
	journalDir string
}

// safety is the safety layer of one server: the cross-session lock, the
// turn controller with the platform's Escape watcher, and the gates.
type safety struct {
	// revoker is the user's Escape on this display: it withdraws the
	// approvals of every consent session the gates were made for, the
	// sessionless one and each HTTP session's, now and later.
	revoker consent.Revoker
	// mark tells the other deskhands on this display of the Escape.
	mark  *escapeMark
	lock  *lock.Lock
	turns *cleanup.Controller
	// ownKey tells the Escape watcher of deskhand's own key presses;
	// stopEscape stops it. Both nil when Escape is not watched.
	ownKey     func(code uint8)
	stopEscape func()
	plat       desktop.Platform
	helper     *bridge.Client
	gates      *gates.Gates
	log        *slog.Logger
	// gateOpts made gates; forSession makes more from them.
	gateOpts gates.Options
	// journal records what turns hide and stash; nil when none is kept.
	journal    *cleanup.Journal
	repairOpts cleanup.Options
}

// newSafety builds the safety layer for a server on plat's display. The
// lock is the platform's, kept where every deskhand on the display meets
// (never in --state-dir).
func newSafety(f *safetyConfig, plat desktop.Platform, helper *bridge.Client, exec *executor.Executor, sess *consent.Session, logger *slog.Logger) (*safety, error) {
	s := &safety{log: logger, plat: plat, helper: helper}
	s.revoker.Join(sess)
	xdisplay := plat.Display()
	s.lock = plat.Lock(lock.Options{Display: xdisplay})
	// Other deskhands on the display hear of the user's Escape through a
	// mark in the runtime directory, keyed by the display.
	s.mark = newEscapeMark(lock.Path(lock.Dir(), xdisplay))
	logger.Debug("computer-use lock", "path", s.lock.Path())
	idle := f.IdleTimeout
	if idle <= 0 {
		idle = -1
	}
	var turnBegins func()
	if f.journalDir != "" {
		s.journal = cleanup.NewJournal(f.journalDir, xdisplay)
		s.repairOpts = RepairOptions(helper, xdisplay, logger.With("component", "journal"))
		turnBegins = s.repairAtTurn
		logger.Debug("turn journal", "path", s.journal.Path())
	}
	s.turns = cleanup.New(cleanup.Options{
		Release:    exec.ReleaseAll,
		Restore:    restoreExisting(helper),
		Selections: helper,
		// The helper exits with deskhand; where the clipboard needs an
		// owner, the platform keeps what is put back at exit.
		KeepClipboard: func(ctx context.Context, st cleanup.Stash) error {
			return plat.KeepClipboard(ctx, helper.Path(), st)
		},
		Unlock: s.lock.Release,
		Notify: plat.Notify,
		// The user's Escape ends more than the turn: nothing more may
		// happen, in any session, until the user approves again. The
		// turn's session is not enough: the others would take the
		// computer at their next call.
		Revoke: func(string) {
			if err := s.mark.record(); err != nil {
				logger.Warn("telling the other deskhands on this display of the user's Escape", "err", err)
			}
			s.revoker.Revoke()
		},
		Indicate:    indicator(f.Indicator, helper, logger),
		IdleTimeout: idle,
		Journal:     s.journal,
		TurnBegins:  turnBegins,
		Logger:      logger.With("component", "turns"),
	})
	own, stop, err := plat.WatchEscape(func() { s.turns.Interrupt() })
	if err != nil {
		logger.Warn("Escape on the keyboard will not stop deskhand", "err", err)
	} else {
		s.ownKey, s.stopEscape = own, stop
	}
	s.gateOpts = gates.Options{
		Desktop:               helper,
		Consent:               sess,
		Lock:                  s.lock,
		Turns:                 s.turns,
		Display:               plat.DisplayGate(helper),
		KeepUnapprovedVisible: !f.HideUnapproved,
		ResolveApp:            plat.ResolveApp,
		NoStacking:            plat.NoStacking(),
		Drawn:                 plat.Drawn(),
		Logger:                logger.With("component", "gates"),
	}
	s.gates, err = gates.New(s.gateOpts)
	if err != nil {
		s.close(cleanup.ReasonExit)
		return nil, err
	}
	return s, nil
}

// indicator is the turns' Indicate: the helper's badge where it lists
// the capability, else nothing (said once, when a turn first begins).
func indicator(on bool, helper *bridge.Client, logger *slog.Logger) func(context.Context, bool) error {
	if !on {
		return nil
	}
	var told sync.Once
	return func(ctx context.Context, visible bool) error {
		if !helper.HandshakeInfo().Has(bridge.CapabilityIndicator) {
			told.Do(func() {
				logger.Warn("the helper cannot show that deskhand is in control on this desktop (no indicator capability)")
			})
			return nil
		}
		return helper.Indicator(ctx, visible)
	}
}

// options fills in the server options the safety layer owns.
func (s *safety) options(o *mcpserver.Options, sess *consent.Session) {
	s.optionsWith(s.gates, o, sess)
}

// forSession returns gates for another consent session (one per HTTP
// session) that share the lock, the turn and the Escape watcher, which
// withdraws sess's approvals too.
func (s *safety) forSession(sess *consent.Session) (*gates.Gates, error) {
	s.hear()
	s.revoker.Join(sess)
	opts := s.gateOpts
	opts.Consent = sess
	return gates.New(opts)
}

// hear withdraws every approval when another deskhand on this display
// recorded the user's Escape since this one last looked: before each
// action, and before a new session starts.
func (s *safety) hear() {
	if s.mark.heard() {
		s.log.Info("another deskhand on this display saw the user's Escape; withdrawing every approval")
		s.revoker.Revoke()
	}
}

// optionsWith is options with gates g of consent session sess.
func (s *safety) optionsWith(g *gates.Gates, o *mcpserver.Options, sess *consent.Session) {
	if capture := s.plat.SessionCapture(s.helper, sess); capture != nil {
		o.Executor = sessionCapture{Executor: o.Executor, capture: capture}
	}
	o.Executor = g.Wrap(o.Executor)
	access := mcpserver.AccessGate(sess)
	o.Gates = g.Chain(mcpserver.GateFunc{GateName: access.Name(), Func: func(ctx context.Context, a *mcpserver.Action) error {
		s.hear()
		return access.Check(ctx, a)
	}})
	o.ActionContext = s.turns.ActionContext
}

// close ends the turn (giving the desktop back) and stops the watcher. It
// runs before the helper and the input are closed.
func (s *safety) close(reason cleanup.Reason) {
	if s.turns != nil {
		s.turns.End(reason)
		s.turns.Close()
	}
	if s.stopEscape != nil {
		s.stopEscape()
	}
	if s.lock != nil {
		if err := s.lock.ReleaseAll(); err != nil {
			s.log.Warn("releasing the computer-use lock", "err", err)
		}
	}
}

// sessionCapture takes an executor's screenshots through the platform's
// capture for a consent session, those that come with an accessibility
// tree included. It wraps only what it changes: the gates around it
// forward every method explicitly.
type sessionCapture struct {
	mcpserver.Executor
	capture desktop.Capture
}

func (e sessionCapture) Capture(ctx context.Context, req bridge.CaptureRequest) (*bridge.Capture, error) {
	return e.capture(ctx, req)
}

func (e sessionCapture) A11yTree(ctx context.Context, req bridge.A11yTreeRequest) (*bridge.A11yTree, error) {
	want := req.Capture
	req.Capture = nil
	tree, err := e.Executor.A11yTree(ctx, req)
	if err != nil || want == nil {
		return tree, err
	}
	tree.Capture, tree.CaptureErr = e.capture(ctx, *want)
	return tree, nil
}

// escapeMark is a file beside the lock where the user's Escape is
// recorded, so that every deskhand on the display withdraws its
// approvals, not only the one whose turn it ended: another one would
// otherwise take the computer at its next call.
type escapeMark struct {
	path string
	mu   sync.Mutex
	// seen is the mark last read or written; Escapes from before this
	// server started do not count.
	seen string
}

func newEscapeMark(lockPath string) *escapeMark {
	m := &escapeMark{path: strings.TrimSuffix(lockPath, ".lock") + ".escape"}
	m.seen = m.read()
	return m
}

func (m *escapeMark) read() string {
	data, _ := os.ReadFile(m.path)
	return string(data)
}

// record writes a new mark, making its directory (the user's runtime
// directory's deskhand/, private to the user) when no file lock did.
func (m *escapeMark) record() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := os.MkdirAll(filepath.Dir(m.path), 0o700); err != nil {
		return fmt.Errorf("writing the Escape mark: %w", err)
	}
	mark := lock.NewSessionID() + "\n"
	tmp := fmt.Sprintf("%s.%d", m.path, os.Getpid())
	if err := os.WriteFile(tmp, []byte(mark), 0o600); err != nil {
		return fmt.Errorf("writing the Escape mark: %w", err)
	}
	if err := os.Rename(tmp, m.path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing the Escape mark: %w", err)
	}
	m.seen = mark
	return nil
}

// heard reports whether another deskhand recorded an Escape since this
// one last looked.
func (m *escapeMark) heard() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	cur := m.read()
	if cur == m.seen {
		return false
	}
	m.seen = cur
	return true
}
