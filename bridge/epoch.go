package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
)

// CapabilityWindowsEpoch says the helper answers windows_epoch.
const CapabilityWindowsEpoch = "windows_epoch"

// CapabilityWindowsChanged says the helper sends the windows_changed
// notification to a client that asks for it in the handshake (this
// package always does).
const CapabilityWindowsChanged = "windows_changed"

// NotificationWindowsChanged is the notification that carries the windows
// epoch each time it moves on; its params are a WindowsEpoch.
const NotificationWindowsChanged = "windows_changed"

// WindowsEpoch names the state of the window table: two equal values
// mean no event that could change what Windows answers (a window mapped,
// moved, restacked or changed, the focus or the active window) reached
// the helper in between. Values of different streams are never equal.
type WindowsEpoch struct {
	Stream string `json:"stream"`
	Epoch  uint64 `json:"epoch"`
}

// WindowsEpoch returns the windows epoch. From a helper that pushes it
// (CapabilityWindowsChanged) it is the newest one the helper sent, read
// without a round trip; otherwise the helper is asked. A helper with
// neither capability is an error, so that callers list the windows
// afresh.
//
// A pushed epoch is as fresh as the helper's last notification: an X
// event that has not reached the helper, or whose notification is still
// in the pipe, is not in it yet (helpers/PROTOCOL.md, windows_changed).
// Every change the helper saw before answering a call is in it by the
// time the call returns.
func (c *Client) WindowsEpoch(ctx context.Context) (WindowsEpoch, error) {
	if ep, ok := c.pushedWindowsEpoch(); ok {
		return ep, nil
	}
	if info := c.HandshakeInfo(); !info.Has(CapabilityWindowsEpoch) {
		return WindowsEpoch{}, fmt.Errorf("helper has no %q capability", CapabilityWindowsEpoch)
	}
	var res WindowsEpoch
	if err := c.Call(ctx, "windows_epoch", struct{}{}, &res); err != nil {
		return WindowsEpoch{}, err
	}
	if res.Stream == "" {
		return WindowsEpoch{}, fmt.Errorf("%w: its windows_epoch result has no stream", ErrProtocol)
	}
	return res, nil
}

// pushedWindowsEpoch is the running helper's newest windows_changed, when
// it announced the notification, is still connected and has sent one.
// A helper known to be gone (reaped, or its stdout closed) or restarting
// has none: the caller then asks, which starts the new helper, whose
// epochs are of a new stream. (One that died a moment ago and is not
// known to be gone yet is the same window as an event in flight.)
func (c *Client) pushedWindowsEpoch() (WindowsEpoch, bool) {
	c.mu.Lock()
	p, pushes := c.proc, c.info.Has(CapabilityWindowsChanged)
	c.mu.Unlock()
	if p == nil || !pushes || p.hasExited() {
		return WindowsEpoch{}, false
	}
	select {
	case <-p.conn.DisconnectNotify():
		return WindowsEpoch{}, false
	default:
	}
	return p.windows.load()
}

// pushedEpoch holds one helper process's newest windows_changed.
type pushedEpoch struct {
	mu  sync.Mutex
	ep  WindowsEpoch
	set bool
}

// take records a notification's params; ones that do not decode make the
// epoch unknown, so that callers ask (and list) until the next good one.
func (e *pushedEpoch) take(params *json.RawMessage, log *slog.Logger) {
	var ep WindowsEpoch
	ok := params != nil && json.Unmarshal(*params, &ep) == nil && ep.Stream != ""
	if !ok {
		log.Warn("helper sent a windows_changed without a stream and epoch; asking it instead until the next one")
	}
	e.mu.Lock()
	e.ep, e.set = ep, ok
	e.mu.Unlock()
}

func (e *pushedEpoch) load() (WindowsEpoch, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ep, e.set
}
