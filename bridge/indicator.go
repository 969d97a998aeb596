package bridge

import "context"

// CapabilityIndicator is the handshake capability of a helper that can
// show, while deskhand is in control, a sign of it on the screen that
// stays out of captures and lets clicks through (the indicator method).
const CapabilityIndicator = "indicator"

// Indicator shows (visible) or takes down the on-screen sign that
// deskhand is in control; showing it when shown, or taking it down when
// none is up, changes nothing.
func (c *Client) Indicator(ctx context.Context, visible bool) error {
	return c.Call(ctx, "indicator", map[string]bool{"visible": visible}, nil)
}
