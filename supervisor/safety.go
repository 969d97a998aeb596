package supervisor

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/consent"
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
	lock  *lock.Lock
	turns *cleanup.Controller
	// ownKey tells the Escape watcher of deskhand's own key presses;
	// stopEscape stops it. Both nil when Escape is not watched.
	ownKey     func(code uint8)
	stopEscape func()
	plat       desktopPlatform
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
// lock lives in the user's runtime directory, keyed by the display, not in
// --state-dir: every deskhand on the display must find the same one.
func newSafety(f *safetyConfig, plat desktopPlatform, helper *bridge.Client, exec *executor.Executor, sess *consent.Session, logger *slog.Logger) (*safety, error) {
	s := &safety{log: logger, plat: plat, helper: helper}
	xdisplay := plat.Display()
	s.lock = lock.New(lock.Path(lock.Dir(), xdisplay), lock.Options{Display: xdisplay})
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
		// happen until the user approves again.
		Revoke:      func(string) { sess.Revoke() },
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
		Logger:                logger.With("component", "gates"),
	}
	if ns, ok := plat.(interface{ NoStacking() error }); ok {
		s.gateOpts.NoStacking = ns.NoStacking()
	}
	if d, ok := plat.(interface{ Drawn() gates.Drawn }); ok {
		s.gateOpts.Drawn = d.Drawn()
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
// session) that share the lock, the turn and the Escape watcher.
func (s *safety) forSession(sess *consent.Session) (*gates.Gates, error) {
	opts := s.gateOpts
	opts.Consent = sess
	return gates.New(opts)
}

// optionsWith is options with gates g of consent session sess.
func (s *safety) optionsWith(g *gates.Gates, o *mcpserver.Options, sess *consent.Session) {
	o.Executor = g.Wrap(s.plat.WrapExecutor(o.Executor, s.helper, sess))
	o.Gates = g.Chain(mcpserver.AccessGate(sess))
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
