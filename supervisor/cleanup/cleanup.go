// Package cleanup ends deskhand's turns at the computer. A turn starts
// with a session's first ordinary action (when it takes the cross-session
// lock) and ends when the client disconnects, after an idle period, when
// the user presses Escape on their own keyboard, or when deskhand exits.
// The user's Escape also withdraws the session's approvals (Options.Revoke),
// so that nothing more happens until the user approves again; an idle
// period or a disconnect only ends the turn.
//
// Ending a turn gives the desktop back the way the user left it: held
// buttons and keys are released, windows hidden during the turn come back
// (within a five-second ceiling), the clipboard, PRIMARY selection and
// cut buffer stashed by the clipboard guard are put back (see ClipGuard),
// an action still running is stopped (a batch reports what completed and
// what did not run), the lock is released, and a desktop notification
// says that deskhand has stopped.
//
// What a turn hides and stashes is written to a turn journal first (see
// Journal), so that a deskhand killed mid-turn does not lose it: the next
// deskhand on the display, or `deskhand doctor --repair`, gives it back.
//
// The platform watches the keyboard for the user's Escape and calls
// Interrupt (X11: supervisor/desktop/x11's Watcher, which tells the user's
// keys from deskhand's own), and keeps the clipboard after exit where its
// clipboard needs an owner (Options.KeepClipboard).
package cleanup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Defaults for the zero values of Options.
const (
	DefaultIdleTimeout    = 5 * time.Minute
	DefaultRestoreTimeout = 5 * time.Second
	DefaultNotifyTimeout  = 3 * time.Second
)

// Summary is the notification's title.
const Summary = "deskhand has stopped using the computer"

// Reason says why a turn ended.
type Reason int

// The reasons a turn ends.
const (
	ReasonDisconnect Reason = iota + 1
	ReasonIdle
	ReasonEscape
	ReasonExit
)

func (r Reason) String() string {
	switch r {
	case ReasonDisconnect:
		return "disconnect"
	case ReasonIdle:
		return "idle"
	case ReasonEscape:
		return "escape"
	case ReasonExit:
		return "exit"
	}
	return fmt.Sprintf("reason(%d)", int(r))
}

// Errors an action stopped by the end of its turn fails with (as the
// cause of its context).
var (
	// ErrInterrupted: the user pressed Escape.
	ErrInterrupted = errors.New("the user pressed Escape to take back control, so deskhand stopped, released the computer and withdrew this session's approvals. " +
		"Stop here and ask the user how to continue; do not carry on or retry on your own. Every action is refused until you call request_access again " +
		"and the user approves the apps again")
	// ErrTurnEnded: the turn ended for another reason (the client went
	// away, deskhand is exiting, or it was idle too long).
	ErrTurnEnded = errors.New("deskhand's turn at the computer ended and the computer was released; take a new screenshot before acting again")
)

// Options configure a Controller. The functions are called while a turn
// ends; each may be nil.
type Options struct {
	// Release lets go of every mouse button and key deskhand holds.
	Release func(ctx context.Context) error
	// Restore shows the windows hidden during the turn again and returns
	// the ones it restored.
	Restore func(ctx context.Context, windows []uint32) ([]uint32, error)
	// Selections reads and writes the clipboard and PRIMARY, to put the
	// clipboard guard's stash back.
	Selections SelectionStore
	// KeepClipboard puts the stashed text back when deskhand is about to
	// exit (ReasonExit, ReasonDisconnect), in a way that outlives it (see
	// Keep); only the clips with Had set are given. nil uses Selections
	// then too.
	KeepClipboard func(ctx context.Context, s Stash) error
	// Unlock releases the cross-session lock held by session.
	Unlock func(session string) error
	// Notify shows a desktop notification.
	Notify func(ctx context.Context, summary, body string) error
	// Revoke withdraws the session's approvals. Interrupt calls it
	// before the turn's cleanup begins, so that no action can start
	// after the user's Escape; the other ends of a turn do not.
	Revoke func(session string)
	// IdleTimeout ends a turn after this long without an action; 0 means
	// DefaultIdleTimeout, a negative value never.
	IdleTimeout time.Duration
	// RestoreTimeout bounds the restore of hidden windows; 0 means
	// DefaultRestoreTimeout.
	RestoreTimeout time.Duration
	// Journal records what turns hide and stash, so that a deskhand
	// started after this one crashed can give it back (see Journal); nil
	// keeps nothing.
	Journal *Journal
	// Indicate shows (true) or takes down (false) the on-screen sign
	// that deskhand is in control: it is shown when a turn begins and
	// taken down first thing when it ends.
	Indicate func(ctx context.Context, on bool) error
	// TurnBegins is called when a turn is about to begin (the lock is
	// taken by then): the safety layer gives back what a crashed
	// deskhand's turn left behind before the new turn touches anything.
	TurnBegins func()
	// Logger receives the records; nil discards them.
	Logger *slog.Logger
}

// Controller tracks the current turn and ends it. It is safe for
// concurrent use.
type Controller struct {
	opts Options
	log  *slog.Logger

	// ending is held while a turn is being cleaned up, so the next turn
	// begins only once the desktop has been given back.
	ending sync.Mutex

	// clipMu is held while the clipboard guard works on the selections
	// (Clipboard) and while a turn's end puts them back.
	clipMu sync.Mutex

	mu       sync.Mutex
	turn     *turn
	closed   bool
	inflight map[int]context.CancelCauseFunc // tool calls running or waiting
	nextCall int
}

// turn is one session's time at the computer.
type turn struct {
	session string
	started time.Time
	hidden  []uint32
	// clip is the clipboard guard's state, guarded by clipMu.
	clip ClipGuard

	idle    *time.Timer
	idleGen int
}

// New returns a Controller with no turn.
func New(opts Options) *Controller {
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.RestoreTimeout <= 0 {
		opts.RestoreTimeout = DefaultRestoreTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Controller{opts: opts, log: log, inflight: map[int]context.CancelCauseFunc{}}
}

// IdleTimeout returns the idle period, negative when there is none.
func (c *Controller) IdleTimeout() time.Duration { return c.opts.IdleTimeout }

// Begin makes session's turn the current one, if no turn is current; it
// waits for a turn that is ending to finish first. It reports whether a
// new turn began. It fails when another session's turn is current (the
// lock normally prevents that) or the controller is closed.
func (c *Controller) Begin(session string) (bool, error) {
	c.ending.Lock()
	defer c.ending.Unlock()
	if c.opts.TurnBegins != nil {
		// Under ending, only Begin makes a turn: none appears meanwhile.
		c.mu.Lock()
		fresh := c.turn == nil && !c.closed
		c.mu.Unlock()
		if fresh {
			c.opts.TurnBegins()
		}
	}
	began, err := c.begin(session)
	if began {
		// Under ending still: the turn's end takes the sign down after.
		c.indicate(c.log, true)
	}
	return began, err
}

func (c *Controller) begin(session string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false, ErrTurnEnded
	}
	if c.turn != nil {
		if c.turn.session != session {
			return false, fmt.Errorf("another session (%s) is using the computer", c.turn.session)
		}
		c.armIdleLocked()
		return false, nil
	}
	c.turn = &turn{session: session, started: time.Now()}
	c.armIdleLocked()
	c.log.Info("turn began", "session", session)
	return true, nil
}

// indicate shows or takes down the sign of control, if there is one; a
// failure is logged, since the turn itself goes on either way.
func (c *Controller) indicate(log *slog.Logger, on bool) {
	if c.opts.Indicate == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.opts.Indicate(ctx, on); err != nil {
		log.Warn("the on-screen sign that deskhand is in control", "on", on, "err", err)
	}
}

// Active returns the session whose turn is current.
func (c *Controller) Active() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.turn == nil {
		return "", false
	}
	return c.turn.session, true
}

// Touch restarts the idle period of the current turn.
func (c *Controller) Touch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.turn != nil {
		c.armIdleLocked()
	}
}

func (c *Controller) armIdleLocked() {
	t := c.turn
	if c.opts.IdleTimeout < 0 {
		return
	}
	if t.idle != nil {
		t.idle.Stop()
	}
	t.idleGen++
	gen := t.idleGen
	t.idle = time.AfterFunc(c.opts.IdleTimeout, func() { c.idleFired(t, gen) })
}

func (c *Controller) idleFired(t *turn, gen int) {
	c.mu.Lock()
	if c.turn != t || t.idleGen != gen {
		c.mu.Unlock()
		return
	}
	if len(c.inflight) > 0 {
		// A long action (a batch, a wait) is no idleness: look again
		// one period after it ends (ActionContext's release re-arms).
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.log.Info("no action for the idle period; ending the turn", "idle", c.opts.IdleTimeout)
	c.endTurn(t, ReasonIdle)
}

// AddHidden records windows hidden during the current turn, to be shown
// again when it ends.
func (c *Controller) AddHidden(ids []uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.turn == nil {
		return
	}
	for _, id := range ids {
		if !slices.Contains(c.turn.hidden, id) {
			c.turn.hidden = append(c.turn.hidden, id)
		}
	}
}

// Hidden returns the windows hidden during the current turn.
func (c *Controller) Hidden() []uint32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.turn == nil {
		return nil
	}
	return slices.Clone(c.turn.hidden)
}

// ActionContext derives the context one tool call runs under: ending the
// turn cancels it, with ErrInterrupted or ErrTurnEnded as the cause (a
// call still waiting for its turn to act is cancelled too). The returned
// function must be called when the call is over; it restarts the idle
// period.
func (c *Controller) ActionContext(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		cancel(ErrTurnEnded)
		return ctx, func() {}
	}
	c.nextCall++
	id := c.nextCall
	c.inflight[id] = cancel
	return ctx, func() {
		c.mu.Lock()
		delete(c.inflight, id)
		if c.turn != nil {
			c.armIdleLocked()
		}
		c.mu.Unlock()
		cancel(context.Canceled)
	}
}

// Interrupt is the user's Escape: it withdraws the session's approvals
// (Options.Revoke) and ends the current turn, if any, in the background,
// and reports whether there was one. An Escape while no turn is current
// (deskhand has not acted since its last turn ended) is the user's own
// business and changes nothing.
func (c *Controller) Interrupt() bool {
	c.mu.Lock()
	t := c.turn
	c.mu.Unlock()
	if t == nil {
		return false
	}
	c.log.Info("the user pressed Escape; withdrawing the approvals and ending the turn", "session", t.session)
	if c.opts.Revoke != nil {
		c.opts.Revoke(t.session)
	}
	go c.endTurn(t, ReasonEscape)
	return true
}

// End ends the current turn, if any, and returns once the desktop has been
// given back. It reports whether a turn ended.
func (c *Controller) End(reason Reason) bool {
	c.mu.Lock()
	t := c.turn
	c.mu.Unlock()
	if t == nil {
		return false
	}
	return c.endTurn(t, reason)
}

// Close ends the current turn with ReasonExit, cancels every call still
// running, and makes later turns fail.
func (c *Controller) Close() {
	c.End(ReasonExit)
	c.ending.Lock()
	defer c.ending.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, cancel := range c.inflight {
		cancel(ErrTurnEnded)
	}
}

func (c *Controller) endTurn(t *turn, reason Reason) bool {
	c.ending.Lock()
	defer c.ending.Unlock()
	c.mu.Lock()
	if c.turn != t {
		c.mu.Unlock()
		return false
	}
	c.turn = nil
	if t.idle != nil {
		t.idle.Stop()
	}
	cause := ErrTurnEnded
	if reason == ReasonEscape {
		cause = ErrInterrupted
	}
	stopped := len(c.inflight)
	for _, cancel := range c.inflight {
		cancel(cause)
	}
	c.mu.Unlock()

	start := time.Now()
	log := c.log.With("session", t.session, "reason", reason.String())
	c.indicate(log, false)
	if c.opts.Release != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if err := c.opts.Release(ctx); err != nil {
			log.Warn("releasing held buttons and keys", "err", err)
		}
		cancel()
	}
	restored := 0
	if len(t.hidden) > 0 && c.opts.Restore != nil {
		ctx, cancel := context.WithTimeout(context.Background(), c.opts.RestoreTimeout)
		got, err := c.opts.Restore(ctx, t.hidden)
		cancel()
		restored = len(got)
		if err != nil {
			log.Warn("showing the hidden windows again", "windows", t.hidden, "restored", got, "err", err)
		}
	}
	c.clipMu.Lock()
	if clip := t.clip; clip.Held {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := c.putBack(ctx, clip, reason == ReasonExit || reason == ReasonDisconnect); err != nil {
			log.Warn("restoring the clipboard", "err", err)
		}
		cancel()
	}
	t.clip = ClipGuard{}
	c.clipMu.Unlock()
	c.clearJournal(log)
	if c.opts.Unlock != nil {
		if err := c.opts.Unlock(t.session); err != nil {
			log.Warn("releasing the computer-use lock", "err", err)
		}
	}
	if c.opts.Notify != nil {
		ctx, cancel := context.WithTimeout(context.Background(), DefaultNotifyTimeout)
		if err := c.opts.Notify(ctx, Summary, c.body(reason, restored)); err != nil {
			log.Debug("no desktop notification", "err", err)
		}
		cancel()
	}
	log.Info("turn ended", "stopped_calls", stopped, "restored_windows", restored, "took", time.Since(start).Round(time.Millisecond))
	return true
}

func (c *Controller) body(reason Reason, restored int) string {
	var s string
	switch reason {
	case ReasonEscape:
		s = "You pressed Escape, so it stopped and gave the computer back. It does nothing more until you approve it again."
	case ReasonIdle:
		s = fmt.Sprintf("It had nothing to do for %s, so it gave the computer back.", c.opts.IdleTimeout.Round(time.Second))
	case ReasonDisconnect:
		s = "The AI client disconnected."
	default:
		s = "deskhand is exiting."
	}
	if restored == 1 {
		s += " The window it hid is shown again."
	} else if restored > 1 {
		s += fmt.Sprintf(" The %d windows it hid are shown again.", restored)
	}
	return s
}
