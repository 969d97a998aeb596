package bridge

import "context"

// PatchBaseline is the answer to patch_baseline.
type PatchBaseline struct {
	// DifferingPixels counts the pixels that changed since the stored
	// pixels were read (the capture, or the previous patch_baseline).
	DifferingPixels int    `json:"differing_pixels"`
	CaptureID       uint64 `json:"capture_id"`
}

// PatchBaseline reads the last capture's area from the screen again and
// makes it what PatchCheck compares against; tolerance is the largest
// per-channel difference counted as equal. It fails with no_capture
// before any capture.
func (c *Client) PatchBaseline(ctx context.Context, tolerance int) (*PatchBaseline, error) {
	var res PatchBaseline
	params := map[string]int{}
	if tolerance > 0 {
		params["tolerance"] = tolerance
	}
	if err := c.Call(ctx, "patch_baseline", params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
