package bridge

import (
	"context"
	"encoding/json"
	"log/slog"
	"slices"

	"github.com/sourcegraph/jsonrpc2"
)

// watchBuffer is how many notifications of one watch wait for delivery;
// beyond that they are dropped (and logged) rather than stall the reading
// of the helper's responses.
const watchBuffer = 64

// watch is one Watch: the method that starts it on a helper, and where
// its notifications go.
type watch struct {
	start        string
	params       json.RawMessage
	notification string
	deliver      chan json.RawMessage
	done         chan struct{}
	armed        *process // the helper it was last started on
}

// Watch starts a watch on the helper (the macOS helper's watch_escape): it
// calls start with params, and from then on calls on with the params of
// each notification named notification the helper sends, one at a time,
// in the order they came, on a goroutine of its own. A restarted helper
// knows of no watch, so the client calls start again on every helper it
// starts after this one, before any other call; a failure then is logged,
// and the watch stays silent until the helper after. stop ends the calls
// to on; the helper's own watch lasts until it exits.
func (c *Client) Watch(ctx context.Context, start string, params any, notification string, on func(params json.RawMessage)) (stop func(), err error) {
	body, err := encodeParams(start, params)
	if err != nil {
		return nil, err
	}
	w := &watch{start: start, params: body, notification: notification,
		deliver: make(chan json.RawMessage, watchBuffer), done: make(chan struct{})}
	if err := c.acquire(ctx); err != nil {
		return nil, err
	}
	defer c.release()
	p, err := c.ensure(ctx)
	if err != nil {
		return nil, err
	}
	// Listed before the start goes out: a notification may follow the
	// start's answer at once.
	c.mu.Lock()
	c.watches = append(c.watches, w)
	c.mu.Unlock()
	err, dead := c.roundTrip(ctx, p, start, body, nil, c.opts.CallTimeout)
	if dead {
		c.retire(p, err)
	}
	if err != nil {
		c.unwatch(w)
		return nil, err
	}
	c.mu.Lock()
	w.armed = p
	c.mu.Unlock()
	go func() {
		for {
			select {
			case params := <-w.deliver:
				on(params)
			case <-w.done:
				return
			}
		}
	}()
	return func() { c.unwatch(w) }, nil
}

func (c *Client) unwatch(w *watch) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i := slices.Index(c.watches, w); i >= 0 {
		c.watches = slices.Delete(c.watches, i, i+1)
		close(w.done)
	}
}

// rearm starts every watch again on p, a freshly started helper. The
// caller holds slot.
func (c *Client) rearm(ctx context.Context, p *process) {
	c.mu.Lock()
	watches := slices.Clone(c.watches)
	c.mu.Unlock()
	for _, w := range watches {
		if w.armed == p {
			continue
		}
		err, dead := c.roundTrip(ctx, p, w.start, w.params, nil, c.opts.CallTimeout)
		if err != nil {
			c.log.Warn("the restarted helper did not start a watch again; it stays silent until the next restart",
				"method", w.start, "error", err)
		} else {
			c.mu.Lock()
			w.armed = p
			c.mu.Unlock()
			c.log.Info("started a watch again on the restarted helper", "method", w.start, "pid", p.pid)
		}
		if dead {
			c.retire(p, err)
			return
		}
	}
}

// notified hands a notification from the helper to the watches of its
// name, without waiting for them: it runs on the connection's reading
// goroutine, which must go on to read the responses.
func (c *Client) notified(method string, params *json.RawMessage) bool {
	var raw json.RawMessage
	if params != nil {
		raw = *params
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	found := false
	for _, w := range c.watches {
		if w.notification != method {
			continue
		}
		found = true
		select {
		case w.deliver <- raw:
		default:
			c.log.Warn("dropped a helper notification: its watch is still busy with earlier ones", "method", method)
		}
	}
	return found
}

// helperMessages handles what the helper sends that is not a response:
// notifications go to the watches; requests, which the protocol does not
// have, are refused. It runs on the connection's read loop, so a
// windows_changed is taken before any response the helper sent after it
// is delivered.
type helperMessages struct {
	log     *slog.Logger
	notify  func(method string, params *json.RawMessage) bool
	windows *pushedEpoch
}

func (h helperMessages) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if req.Notif && req.Method == NotificationWindowsChanged && h.windows != nil {
		h.windows.take(req.Params, h.log)
		return
	}
	if req.Notif && h.notify != nil && h.notify(req.Method, req.Params) {
		return
	}
	if req.Notif {
		h.log.Warn("helper sent a notification nothing watches", "method", req.Method)
		return
	}
	h.log.Warn("helper sent a request; the protocol has none", "method", req.Method)
	_ = conn.ReplyWithError(ctx, req.ID, &jsonrpc2.Error{Code: CodeMethodNotFound, Message: "the supervisor serves no methods"})
}
