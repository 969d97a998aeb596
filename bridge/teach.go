package bridge

import (
	"context"
	"fmt"
)

// CapabilityTeach is the handshake capability of a helper that can show
// the teaching overlay (teach_show, teach_poll, teach_hide).
const CapabilityTeach = "teach"

// The choices a user makes on the teaching overlay.
const (
	TeachNext = "next"
	TeachExit = "exit"
)

// TeachShowRequest asks the helper to show the teaching overlay: a
// tooltip with the step's explanation, a preview of what Next does, and
// Next and Exit buttons.
type TeachShowRequest struct {
	Explanation string `json:"explanation"`
	NextPreview string `json:"next_preview"`
	// Anchor is the point the tooltip is placed next to (global logical
	// coordinates); nil lets the helper choose.
	Anchor *Point `json:"anchor,omitempty"`
	// Step and Total number the step ("2 of 5"); 0 leaves them out.
	Step  int `json:"step,omitempty"`
	Total int `json:"total,omitempty"`
}

// TeachShown is where the overlay and its buttons are on the screen.
type TeachShown struct {
	Bounds Rect `json:"bounds"`
	Next   Rect `json:"next"`
	Exit   Rect `json:"exit"`
}

// TeachState is the answer to teach_poll. Choice is "" until a real user
// clicked a button (or pressed Escape on the overlay), then TeachNext or
// TeachExit until the next teach_show or teach_hide.
type TeachState struct {
	Visible bool   `json:"visible"`
	Choice  string `json:"choice"`
}

// TeachShow shows the overlay, replacing one shown before and resetting
// the choice.
func (c *Client) TeachShow(ctx context.Context, req TeachShowRequest) (*TeachShown, error) {
	var res TeachShown
	if err := c.Call(ctx, "teach_show", req, &res); err != nil {
		return nil, err
	}
	if res.Bounds.Width <= 0 || res.Bounds.Height <= 0 {
		return nil, fmt.Errorf("%w: its teach_show result has empty bounds %+v", ErrProtocol, res.Bounds)
	}
	return &res, nil
}

// TeachPoll reports whether the overlay is up and what the user chose.
func (c *Client) TeachPoll(ctx context.Context) (*TeachState, error) {
	var res struct {
		Visible bool    `json:"visible"`
		Choice  *string `json:"choice"`
	}
	if err := c.Call(ctx, "teach_poll", nil, &res); err != nil {
		return nil, err
	}
	st := &TeachState{Visible: res.Visible}
	if res.Choice != nil {
		switch *res.Choice {
		case TeachNext, TeachExit:
			st.Choice = *res.Choice
		default:
			return nil, fmt.Errorf("%w: its teach_poll result has choice %q, want null, %q or %q", ErrProtocol, *res.Choice, TeachNext, TeachExit)
		}
	}
	return st, nil
}

// TeachHide takes the overlay down; it is not an error when none is up.
func (c *Client) TeachHide(ctx context.Context) error {
	return c.Call(ctx, "teach_hide", nil, nil)
}
