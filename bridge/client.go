// Package bridge runs the capture helper (helpers/PROTOCOL.md) as a child
// process and calls it over JSON-RPC 2.0 on its stdin and stdout.
//
// A Client starts the helper on first use, handshakes, and keeps it
// running. It turns every way a helper can fail into an error that says
// what happened and what comes next: a helper that exits fails the pending
// call with ErrHelperExited (quoting its exit status and last log line), one
// that does not answer in time is killed with its whole process group
// (ErrHelperHung), one that writes anything but protocol frames on stdout is
// killed too (ErrProtocol). The next call starts a fresh helper after an
// exponential backoff, until too many failures within a window trip the
// crash-loop cap (ErrCrashLoop). Errors the helper answers with are *Error
// values carrying the protocol's stable code and a hint.
//
// The helper's stderr log lines are passed to the Client's slog logger at
// the level their first word names. The notifications it sends (the macOS
// helper's escape_pressed) go to the watches started with Watch, which
// the Client starts again on every restarted helper.
package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// protocolVersions are the helper protocol versions this package speaks,
// offered in the handshake.
var protocolVersions = []int{1}

// ProtocolVersions returns the helper protocol versions this package
// speaks, for matching a helper's announced versions before running it.
func ProtocolVersions() []int { return slices.Clone(protocolVersions) }

// Defaults for the zero values of Options.
const (
	DefaultHandshakeTimeout = 5 * time.Second
	DefaultCallTimeout      = 10 * time.Second
	DefaultBackoffBase      = 100 * time.Millisecond
	DefaultBackoffMax       = 5 * time.Second
	DefaultMaxRestarts      = 5
	DefaultRestartWindow    = time.Minute
	DefaultClientName       = "deskhand"
)

// Options configure a Client. Zero fields take the defaults above.
type Options struct {
	// Path is the helper executable.
	Path string
	// Exe, when set, is Path opened, as it was checked: the helper is
	// started from this descriptor, not by name, so a file put at Path
	// after the check never runs. The caller keeps it open until the
	// start and closes it.
	Exe *os.File
	// Locate, when set, finds the helper executable before each start
	// (and so before each restart) and replaces Path and Exe. A
	// supervisor uses it to install the helper on first use, and to
	// re-check an installed helper's hash every time it is launched.
	Locate func(ctx context.Context) (path string, exe *os.File, err error)
	// Args are its command-line arguments.
	Args []string
	// Env holds KEY=value entries added to the supervisor's own
	// environment for the helper (later entries win), such as DISPLAY.
	Env []string
	// Logger receives the client's events and the helper's stderr lines;
	// nil discards them.
	Logger *slog.Logger

	// HandshakeTimeout bounds a start: spawning the helper and its
	// answer to the handshake.
	HandshakeTimeout time.Duration
	// CallTimeout bounds one call from the moment it is sent; a helper
	// that takes longer is killed as hung. A context deadline that comes
	// sooner takes its place.
	CallTimeout time.Duration

	// BackoffBase is the wait before the first restart after a failure;
	// each further consecutive failure doubles it, up to BackoffMax.
	BackoffBase time.Duration
	BackoffMax  time.Duration
	// MaxRestarts restarts within RestartWindow are allowed; a restart
	// beyond that fails with ErrCrashLoop until the window has moved on.
	MaxRestarts   int
	RestartWindow time.Duration

	// MaxMessageBytes caps the body of a response from the helper;
	// 0 means DefaultMaxResponseBytes.
	MaxMessageBytes int64

	// ClientName is sent in the handshake as the client's name; the
	// default is "deskhand".
	ClientName string

	// notify receives the helper's notifications (Client.notified).
	notify func(method string, params *json.RawMessage) bool
}

func (o Options) withDefaults() Options {
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.BackoffBase <= 0 {
		o.BackoffBase = DefaultBackoffBase
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = DefaultBackoffMax
	}
	if o.BackoffMax < o.BackoffBase {
		o.BackoffMax = o.BackoffBase
	}
	if o.MaxRestarts <= 0 {
		o.MaxRestarts = DefaultMaxRestarts
	}
	if o.RestartWindow <= 0 {
		o.RestartWindow = DefaultRestartWindow
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxResponseBytes
	}
	if o.ClientName == "" {
		o.ClientName = DefaultClientName
	}
	return o
}

// HandshakeInfo is the helper's answer to the handshake.
type HandshakeInfo struct {
	ProtocolVersion int            `json:"protocol_version"`
	HelperVersion   string         `json:"helper_version"`
	Platform        string         `json:"platform"`
	Capabilities    []string       `json:"capabilities"`
	Display         string         `json:"display,omitempty"`
	Extensions      map[string]any `json:"extensions,omitempty"`
}

// Has reports whether the helper announced capability (for example
// "capture.png" or "hide").
func (h HandshakeInfo) Has(capability string) bool {
	return slices.Contains(h.Capabilities, capability)
}

// Client runs one helper at a time and calls it. Its methods are safe for
// concurrent use; calls are sent one at a time, as the helper answers them
// in order anyway, so CallTimeout measures only the helper's own time.
type Client struct {
	opts Options
	log  *slog.Logger

	// slot is held by the one goroutine that may start the helper and
	// send a call.
	slot      chan struct{}
	closing   chan struct{} // closed by Close
	closeOnce sync.Once

	mu       sync.Mutex
	closed   bool
	proc     *process // the handshaken helper, or nil
	starting *process // a helper being handshaken, or nil
	info     HandshakeInfo

	failures      int         // consecutive failures; 0 once a helper answers a call
	lastFailure   error       // the latest failure, quoted by ErrCrashLoop
	lastFailureAt time.Time   // when it happened, for the backoff
	restarts      []time.Time // recent restart times, for the crash-loop cap
	watches       []*watch    // started again on every new helper
}

// New returns a Client for the helper opts describe. It starts nothing;
// the helper starts on the first call or on Start.
func New(opts Options) *Client {
	opts = opts.withDefaults()
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		opts:    opts,
		log:     logger,
		slot:    make(chan struct{}, 1),
		closing: make(chan struct{}),
	}
	c.opts.notify = c.notified
	return c
}

// Start starts and handshakes the helper unless it is already running.
// Calls start it on demand, so Start only moves the cost (and any error)
// earlier.
func (c *Client) Start(ctx context.Context) error {
	if err := c.acquire(ctx); err != nil {
		return err
	}
	defer c.release()
	_, err := c.ensure(ctx)
	return err
}

// Path is the helper binary the client runs (found by Options.Locate
// once it has started), or "" before that.
func (c *Client) Path() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.opts.Path
}

// PID returns the process id of the running helper, or 0 when none runs.
func (c *Client) PID() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc == nil || c.proc.hasExited() {
		return 0
	}
	return c.proc.pid
}

// HandshakeInfo returns the latest successful handshake's result (it
// outlives the helper that gave it), or the zero value before the first.
func (c *Client) HandshakeInfo() HandshakeInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	info := c.info
	info.Capabilities = slices.Clone(info.Capabilities)
	return info
}

// Call sends method with params to the helper and decodes the result into
// result (a pointer; nil discards it). params nil sends {}. It starts or
// restarts the helper as needed. Errors the helper answers with are
// *Error; failures of the helper itself wrap ErrHelperExited,
// ErrHelperHung, ErrProtocol, ErrIncompatible or ErrCrashLoop; after Close,
// ErrClosed. A call whose context is cancelled (not timed out) returns at
// once and leaves the helper running.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	body, err := encodeParams(method, params)
	if err != nil {
		return err
	}
	if err := c.acquire(ctx); err != nil {
		return err
	}
	defer c.release()
	p, err := c.ensure(ctx)
	if err != nil {
		return err
	}
	err, dead := c.roundTrip(ctx, p, method, body, result, c.opts.CallTimeout)
	if dead {
		c.retire(p, err)
	}
	return err
}

// Close stops the helper: it closes the helper's stdin and waits up to a
// second, then SIGTERMs the process group and waits another second, then
// SIGKILLs it. Calls in flight fail with ErrClosed, and so does every call
// after. Close is idempotent and returns once no helper process remains.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		close(c.closing)
		procs := []*process{c.proc, c.starting}
		c.proc, c.starting = nil, nil
		c.mu.Unlock()

		for _, p := range procs {
			if p != nil {
				p.shutdown(fmt.Errorf("stopping the helper: %w", ErrClosed))
			}
		}
		// Wait out a call or start in flight; it fails fast now that its
		// helper is gone, and no start begins after closed is set.
		c.slot <- struct{}{}
	})
	return nil
}

func (c *Client) acquire(ctx context.Context) error {
	select {
	case <-c.closing:
		return ErrClosed
	default:
	}
	select {
	case c.slot <- struct{}{}:
		return nil
	case <-c.closing:
		return ErrClosed
	case <-ctx.Done():
		return fmt.Errorf("waiting for the previous helper call to finish: %w", ctx.Err())
	}
}

func (c *Client) release() { <-c.slot }

// ensure returns the running helper, starting one (after the backoff, and
// within the crash-loop cap) when there is none. The caller holds slot.
func (c *Client) ensure(ctx context.Context) (*process, error) {
	c.mu.Lock()
	p := c.proc
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if p != nil {
		select {
		case <-p.conn.DisconnectNotify():
			// It died or broke while idle: account for it, start anew.
			c.retire(p, p.failure(""))
		default:
			return p, nil
		}
	}

	c.mu.Lock()
	delay, err := c.restartGate(time.Now())
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if delay > 0 {
		c.log.Info("waiting before restarting the helper", "delay", delay)
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.closing:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting %v to restart the helper: %w", delay, ctx.Err())
		}
	}
	p, err = c.start(ctx)
	if err == nil {
		c.rearm(ctx, p)
	}
	return p, err
}

// restartGate says how long to wait before the next start, or refuses it
// with ErrCrashLoop. c.mu is held.
func (c *Client) restartGate(now time.Time) (time.Duration, error) {
	if c.failures == 0 {
		return 0, nil
	}
	c.restarts = slices.DeleteFunc(c.restarts, func(t time.Time) bool {
		return now.Sub(t) >= c.opts.RestartWindow
	})
	if len(c.restarts) >= c.opts.MaxRestarts {
		retry := c.restarts[0].Add(c.opts.RestartWindow)
		return 0, fmt.Errorf("%w: restarted %d times within %v and failed again (latest: %v); "+
			"not restarting it before %s. Read the helper's log lines above, fix the cause "+
			"(display, permissions or the helper binary), then retry or restart deskhand",
			ErrCrashLoop, len(c.restarts), c.opts.RestartWindow, withoutRestartNote(c.lastFailure), retry.Format(time.TimeOnly))
	}
	return backoffDelay(c.failures, c.opts.BackoffBase, c.opts.BackoffMax) - now.Sub(c.lastFailureAt), nil
}

// withoutRestartNote drops the promise of a restart from a failure's
// message, for quoting it where no restart follows.
func withoutRestartNote(err error) string {
	if err == nil {
		return "none recorded"
	}
	before, after, found := strings.Cut(err.Error(), restartNote)
	if !found {
		return err.Error()
	}
	return before + after
}

// backoffDelay is the wait before restarting after failures consecutive
// failures: base, doubling per failure, capped at max; 0 before any.
func backoffDelay(failures int, base, max time.Duration) time.Duration {
	if failures <= 0 {
		return 0
	}
	d := base
	for i := 1; i < failures; i++ {
		if d >= max/2 {
			return max
		}
		d *= 2
	}
	return min(d, max)
}

// start spawns and handshakes a helper. The caller holds slot.
func (c *Client) start(ctx context.Context) (*process, error) {
	if c.opts.Locate != nil {
		path, exe, err := c.opts.Locate(ctx)
		c.mu.Lock()
		if err != nil {
			err = fmt.Errorf("finding the capture helper: %w", err)
			c.noteFailure(err)
			c.mu.Unlock()
			return nil, err
		}
		c.opts.Path, c.opts.Exe = path, exe
		c.mu.Unlock()
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, ErrClosed
	}
	if c.failures > 0 {
		c.restarts = append(c.restarts, time.Now())
	}
	// Spawned under c.mu so that Close either sees it or prevents it.
	p, err := spawn(&c.opts, c.log)
	if err != nil {
		c.noteFailure(err)
		c.mu.Unlock()
		return nil, err
	}
	c.starting = p
	c.mu.Unlock()

	info, err := c.handshake(ctx, p)
	if err != nil {
		p.kill(err)
		p.waitExited(killWait)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	c.starting = nil
	switch {
	case c.closed:
		if err == nil {
			p.kill(ErrClosed)
			p.waitExited(killWait)
		}
		return nil, fmt.Errorf("starting helper: %w", ErrClosed)
	case errors.Is(err, context.Canceled):
		// The caller gave up; that says nothing about the helper.
		return nil, err
	case err != nil:
		c.noteFailure(err)
		return nil, err
	}
	c.proc, c.info = p, info
	c.log.Info("helper ready", "pid", p.pid, "helper_version", info.HelperVersion,
		"platform", info.Platform, "protocol_version", info.ProtocolVersion)
	return p, nil
}

// handshake offers protocolVersions and checks the helper's choice.
func (c *Client) handshake(ctx context.Context, p *process) (HandshakeInfo, error) {
	params, err := encodeParams("handshake", map[string]any{
		"protocol_versions": protocolVersions,
		"client":            c.opts.ClientName,
		"notifications":     []string{NotificationWindowsChanged},
	})
	if err != nil {
		return HandshakeInfo{}, err
	}
	var info HandshakeInfo
	err, _ = c.roundTrip(ctx, p, "handshake", params, &info, c.opts.HandshakeTimeout)
	var herr *Error
	switch {
	case errors.As(err, &herr) && herr.Code == CodeIncompatibleProtocol:
		return HandshakeInfo{}, fmt.Errorf("%w: deskhand offers versions %v and the helper %s refused them (%w); "+
			"install the helper from the same deskhand release", ErrIncompatible, protocolVersions, c.opts.Path, herr)
	case err != nil:
		return HandshakeInfo{}, fmt.Errorf("handshaking with helper %s: %w", c.opts.Path, err)
	case !slices.Contains(protocolVersions, info.ProtocolVersion):
		return HandshakeInfo{}, fmt.Errorf("%w: the helper %s (version %q) chose protocol version %d, but deskhand offered %v; "+
			"install the helper from the same deskhand release", ErrIncompatible, c.opts.Path, info.HelperVersion, info.ProtocolVersion, protocolVersions)
	}
	return info, nil
}

// roundTrip sends one request to p and waits for its answer within
// timeout (or ctx's sooner deadline). dead reports that p is gone, killed
// here if it was still running, and err then says why.
func (c *Client) roundTrip(ctx context.Context, p *process, method string, params json.RawMessage, result any, timeout time.Duration) (err error, dead bool) {
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sent := time.Now()
	hung := func() error {
		return fmt.Errorf("%w: no answer to %s within %v (%w); killed pid %d"+restartNote+"%s",
			ErrHelperHung, method, time.Since(sent).Round(time.Millisecond), context.DeadlineExceeded, p.pid, p.tail.phrase())
	}
	// Kill at the deadline even while blocked writing to a helper that
	// stopped reading: that unblocks the write.
	stop := context.AfterFunc(callCtx, func() {
		if errors.Is(callCtx.Err(), context.DeadlineExceeded) {
			p.kill(hung())
		}
	})
	defer stop()

	var raw json.RawMessage
	w, err := p.conn.DispatchCall(callCtx, method, params, jsonrpc2.PickID(jsonrpc2.ID{Num: p.nextID.Add(1)}))
	if err == nil {
		err = w.Wait(callCtx, &raw)
	}
	var rpcErr *jsonrpc2.Error
	switch {
	case err == nil:
		if method != "handshake" {
			c.noteHealthy()
		}
		if result == nil {
			return nil, false
		}
		if out, ok := result.(*liftedResult); ok {
			out.raw, out.blobs = raw, p.stream.blobs.claim(raw)
			return nil, false
		}
		raw = p.stream.blobs.restore(raw)
		if out, ok := result.(*json.RawMessage); ok {
			*out = raw
			return nil, false
		}
		if err := json.Unmarshal(raw, result); err != nil {
			return fmt.Errorf("%w: its %s result does not decode: %v", ErrProtocol, method, err), false
		}
		return nil, false
	case errors.As(err, &rpcErr):
		if method != "handshake" {
			c.noteHealthy()
		}
		return helperError(rpcErr), false
	case errors.Is(err, ErrTooLarge):
		return fmt.Errorf("sending %s: %w", method, err), false
	case errors.Is(callCtx.Err(), context.Canceled) && p.killReason() == nil:
		// The caller gave up; the helper will answer into the void.
		return fmt.Errorf("calling %s: %w", method, callCtx.Err()), false
	case errors.Is(callCtx.Err(), context.DeadlineExceeded):
		p.kill(hung())
	}
	return p.failure(method), true
}

// encodeParams marshals params ({} for nil) and refuses bodies the helper
// would reject as over its request cap.
func encodeParams(method string, params any) (json.RawMessage, error) {
	if params == nil {
		return json.RawMessage(`{}`), nil
	}
	body, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encoding %s params: %w", method, err)
	}
	// Leave room for the envelope (jsonrpc, id, method).
	if limit := MaxRequestBytes - 128 - len(method); len(body) > limit {
		return nil, fmt.Errorf("encoding %s params: %d bytes, over the helper's %d-byte request cap: %w",
			method, len(body), limit, ErrTooLarge)
	}
	return body, nil
}

// retire forgets p after it died with err, counting the failure, unless
// the client is closing.
func (c *Client) retire(p *process, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.proc != p {
		return
	}
	c.proc = nil
	if c.closed {
		return
	}
	c.noteFailure(err)
}

// noteFailure records a failed or lost helper. c.mu is held.
func (c *Client) noteFailure(err error) {
	c.failures++
	c.lastFailure = err
	c.lastFailureAt = time.Now()
	c.log.Warn("capture helper failed", "error", err, "consecutive_failures", c.failures)
}

// noteHealthy resets the backoff once a helper answers a call other than
// the handshake, so a helper that handshakes and then crashes on every
// call still backs off further each time.
func (c *Client) noteHealthy() {
	c.mu.Lock()
	c.failures = 0
	c.mu.Unlock()
}
