package bridge

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
)

// CapA11yExpect is the capability of a helper whose a11y_act honours
// expect (helpers/PROTOCOL.md, "a11y_act").
const CapA11yExpect = "a11y.expect"

// The words a stale_element refusal of a changed element carries around
// the change, in the helper's message and in checkExpect's.
const (
	changedOpen  = " has changed ("
	changedClose = "); nothing was done"
)

// Changed says how node differs from what was expected (its role, name or
// bounds, first difference only), "" when it does not. Unknown places
// (none, empty, or the far-negative corners GTK gives what it does not
// show) compare equal to each other, as in the helper.
func (e A11yExpect) Changed(node A11yNode) string {
	was, now := KnownBounds(e.Bounds), KnownBounds(node.Bounds)
	switch {
	case node.Role != e.Role:
		return fmt.Sprintf("its role was %q, now %q", e.Role, node.Role)
	case node.Name != e.Name:
		return fmt.Sprintf("its name was %q, now %q", e.Name, node.Name)
	case (was == nil) != (now == nil) || (was != nil && *was != *now):
		return fmt.Sprintf("it was at %s, now at %s", fmtA11yRect(was), fmtA11yRect(now))
	}
	return ""
}

// KnownBounds drops the places toolkits give elements they do not show
// (GTK: math.MinInt32 corners for the contents of closed popovers) and
// empty ones.
func KnownBounds(r *A11yRect) *A11yRect {
	if r == nil || r.X <= math.MinInt32/2 || r.Y <= math.MinInt32/2 || r.Width <= 0 || r.Height <= 0 {
		return nil
	}
	return r
}

func fmtA11yRect(r *A11yRect) string {
	if r == nil {
		return "an unknown place"
	}
	return fmt.Sprintf("%dx%d+%d+%d", r.Width, r.Height, r.X, r.Y)
}

// StaleChange reads a stale_element refusal of a11y_act with Expect: why
// the element changed and true, or "" and false when err is not one (the
// element is gone, or another error).
func StaleChange(err error) (string, bool) {
	var be *Error
	if !errors.As(err, &be) || be.Name != ErrNameStaleElement {
		return "", false
	}
	i := strings.Index(be.Message, changedOpen)
	j := strings.LastIndex(be.Message, changedClose)
	if i < 0 || j < i {
		return "", false
	}
	return be.Message[i+len(changedOpen) : j], true
}

// checkExpect is Expect for a helper that does not check it itself.
func (c *Client) checkExpect(ctx context.Context, req A11yActRequest) error {
	node, err := c.A11yElement(ctx, req.PID, req.Ref)
	if err != nil {
		return err
	}
	if why := req.Expect.Changed(*node); why != "" {
		return &Error{
			Code:    -32013, // stale_element
			Name:    ErrNameStaleElement,
			Message: "element " + req.Ref + changedOpen + why + changedClose,
			Hint:    "Read the tree again (a11y_tree) and use a ref from it.",
		}
	}
	return nil
}
