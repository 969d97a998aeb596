package bridge

import "context"

// ScreenChanges is the answer to screen_changes.
type ScreenChanges struct {
	// Changed bounds the pixels that differ since the previous call, one
	// rectangle per area the X server drew in that changed.
	Changed []Rect `json:"changed"`
	// First marks a call with nothing to compare with: the first one, or
	// the first after the screen was resized.
	First bool `json:"first"`
}

// ScreenChanges asks which parts of the screen look different since the
// previous call. Helpers that cannot tell answer method_not_found or
// unsupported.
func (c *Client) ScreenChanges(ctx context.Context) (*ScreenChanges, error) {
	var res ScreenChanges
	if err := c.Call(ctx, "screen_changes", map[string]any{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
