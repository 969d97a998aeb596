package bridge

import (
	"context"
	"fmt"
)

// CapabilityWindowsEpoch says the helper answers windows_epoch.
const CapabilityWindowsEpoch = "windows_epoch"

// WindowsEpoch names the state of the window table: two equal values
// mean no event that could change what Windows answers (a window mapped,
// moved, restacked or changed, the focus or the active window) reached
// the helper in between. Values of different streams are never equal.
type WindowsEpoch struct {
	Stream string `json:"stream"`
	Epoch  uint64 `json:"epoch"`
}

// WindowsEpoch asks the helper for the windows epoch; a helper without
// the capability is an error, so that callers list the windows afresh.
func (c *Client) WindowsEpoch(ctx context.Context) (WindowsEpoch, error) {
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
