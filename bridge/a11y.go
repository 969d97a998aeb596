package bridge

import (
	"context"
	"encoding/json"
	"fmt"
)

// The accessibility methods (helpers/PROTOCOL.md, "Accessibility"): the
// helper reads the toolkits' accessibility trees (AT-SPI on Linux, AX on
// macOS) and acts on their elements through the accessibility API alone,
// without synthetic input.

// Error names the accessibility methods add to the protocol's.
const (
	ErrNameA11yUnavailable = "a11y_unavailable"
	ErrNameStaleElement    = "stale_element"
	ErrNameUnsupported     = "unsupported"
)

// A11yRect is a rectangle of the accessibility methods, in the global
// logical space. It decodes both {x,y,w,h} and {x,y,width,height}.
type A11yRect Rect

// UnmarshalJSON accepts either spelling of the size.
func (r *A11yRect) UnmarshalJSON(b []byte) error {
	var v struct {
		X      int  `json:"x"`
		Y      int  `json:"y"`
		W      *int `json:"w"`
		H      *int `json:"h"`
		Width  *int `json:"width"`
		Height *int `json:"height"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*r = A11yRect{X: v.X, Y: v.Y}
	if v.W != nil {
		r.Width = *v.W
	}
	if v.H != nil {
		r.Height = *v.H
	}
	if v.Width != nil {
		r.Width = *v.Width
	}
	if v.Height != nil {
		r.Height = *v.Height
	}
	return nil
}

// Rect returns r as a Rect.
func (r A11yRect) Rect() Rect { return Rect(r) }

// A11yWindow is an app's top-level accessible window.
type A11yWindow struct {
	Ref   string `json:"ref"`
	Title string `json:"title"`
	// Window is the X window id, 0 when the toolkit does not say.
	Window uint32    `json:"window,omitempty"`
	Bounds *A11yRect `json:"bounds,omitempty"`
}

// A11yApp is one application on the accessibility bus.
type A11yApp struct {
	PID     int          `json:"pid"`
	Name    string       `json:"name"`
	Toolkit string       `json:"toolkit,omitempty"`
	Bus     string       `json:"bus,omitempty"`
	Windows []A11yWindow `json:"windows"`
}

// A11yApps is the answer to a11y_apps. Available is false, with the
// Reason, when there is no accessibility bus.
type A11yApps struct {
	Available bool      `json:"available"`
	Reason    string    `json:"reason,omitempty"`
	Apps      []A11yApp `json:"apps"`
}

// A11yRange is the Value interface of a node.
type A11yRange struct {
	Min     float64  `json:"min"`
	Max     float64  `json:"max"`
	Current float64  `json:"current"`
	Step    *float64 `json:"step,omitempty"`
}

// A11yNode is one element of an accessibility tree.
type A11yNode struct {
	// Ref is opaque and stable for the life of the element.
	Ref string `json:"ref"`
	// Parent is the index of the parent in the tree's nodes, -1 for the
	// window.
	Parent      int        `json:"parent"`
	Depth       int        `json:"depth"`
	Role        string     `json:"role"`
	Name        string     `json:"name"`
	Description string     `json:"description,omitempty"`
	Value       *string    `json:"value,omitempty"`
	Range       *A11yRange `json:"range,omitempty"`
	States      []string   `json:"states"`
	Bounds      *A11yRect  `json:"bounds,omitempty"`
	Actions     []string   `json:"actions"`
	Interfaces  []string   `json:"interfaces"`
}

// A11yTreeRequest asks for one window's tree; zero budgets take the
// helper's defaults (2000 nodes, depth 60, 2000 ms).
type A11yTreeRequest struct {
	PID        int    `json:"pid"`
	Window     uint32 `json:"window,omitempty"`
	Title      string `json:"title,omitempty"`
	MaxNodes   int    `json:"max_nodes,omitempty"`
	MaxDepth   int    `json:"max_depth,omitempty"`
	DeadlineMS int    `json:"deadline_ms,omitempty"`
	// Capture asks for a capture with the tree, exactly as Capture would
	// take it (masks included). A helper with CapabilityA11yCapture takes
	// it while it walks the tree; with another, the client sends a capture
	// request after the tree.
	Capture *CaptureRequest `json:"capture,omitempty"`
}

// CapabilityA11yCapture says a11y_tree takes a capture alongside the walk.
const CapabilityA11yCapture = "a11y.capture"

// A11yTree is the answer to a11y_tree: the nodes in depth-first
// pre-order. Truncated is "nodes", "depth" or "time" when a budget cut the
// tree, "" otherwise.
type A11yTree struct {
	Window    A11yWindow `json:"window"`
	Nodes     []A11yNode `json:"nodes"`
	Truncated string     `json:"truncated,omitempty"`
	ElapsedMS int        `json:"elapsed_ms"`
	// Via is "p2p" when the app's own socket served the read, "bus" when
	// the accessibility bus did, "" when the helper does not say.
	Via string `json:"via,omitempty"`
	// Capture is the capture asked for with the tree, nil when none was
	// or when it failed; CaptureErr then says why.
	Capture    *Capture `json:"-"`
	CaptureErr error    `json:"-"`
}

// A11yActRequest is one a11y_act call. Op names what to do and Args holds
// that op's own parameters ("action", "text", "value": PROTOCOL.md lists
// them per op), sent beside pid, ref and op, so a new op needs no change
// here.
//
// With Expect the helper reads the element afresh first and refuses with
// stale_element, doing nothing, when its role, name or bounds differ: the
// staleness check and the action in one request.
type A11yActRequest struct {
	PID    int
	Ref    string
	Op     string
	Args   map[string]any
	Expect *A11yExpect
}

// MarshalJSON flattens Args into the request object.
func (r A11yActRequest) MarshalJSON() ([]byte, error) {
	m := make(map[string]any, len(r.Args)+4)
	for k, v := range r.Args {
		m[k] = v
	}
	m["pid"], m["ref"], m["op"] = r.PID, r.Ref, r.Op
	if r.Expect != nil {
		m["expect"] = r.Expect
	}
	return json.Marshal(m)
}

// A11yExpect is what the caller saw of an element: Bounds nil (sent as
// null) when it had no known place.
type A11yExpect struct {
	Role   string    `json:"role"`
	Name   string    `json:"name"`
	Bounds *A11yRect `json:"bounds"`
}

// A11yApps lists the applications on the accessibility bus.
func (c *Client) A11yApps(ctx context.Context) (*A11yApps, error) {
	var res A11yApps
	if err := c.Call(ctx, "a11y_apps", struct{}{}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// A11yTree reads one window's accessibility tree.
func (c *Client) A11yTree(ctx context.Context, req A11yTreeRequest) (*A11yTree, error) {
	want := req.Capture
	if want != nil && !c.HandshakeInfo().Has(CapabilityA11yCapture) {
		req.Capture = nil
	}
	var res liftedResult
	if err := c.Call(ctx, "a11y_tree", req, &res); err != nil {
		return nil, err
	}
	var wire struct {
		A11yTree
		Capture      json.RawMessage `json:"capture"`
		CaptureError string          `json:"capture_error"`
	}
	if err := json.Unmarshal(res.raw, &wire); err != nil {
		return nil, fmt.Errorf("%w: its a11y_tree result does not decode: %v", ErrProtocol, err)
	}
	tree := wire.A11yTree
	switch {
	case want == nil:
	case req.Capture == nil:
		tree.Capture, tree.CaptureErr = c.Capture(ctx, *want)
	case len(wire.Capture) > 0:
		tree.Capture, tree.CaptureErr = decodeCaptureFrom(wire.Capture, res.blobs)
	case wire.CaptureError != "":
		tree.CaptureErr = fmt.Errorf("capturing alongside the tree: %s", wire.CaptureError)
	default:
		tree.CaptureErr = fmt.Errorf("%w: its a11y_tree result has no capture, though one was asked for", ErrProtocol)
	}
	return &tree, nil
}

// A11yElement reads one element afresh; a *Error named stale_element
// when the ref no longer resolves.
func (c *Client) A11yElement(ctx context.Context, pid int, ref string) (*A11yNode, error) {
	var res struct {
		Node A11yNode `json:"node"`
	}
	params := struct {
		PID int    `json:"pid"`
		Ref string `json:"ref"`
	}{pid, ref}
	if err := c.Call(ctx, "a11y_element", params, &res); err != nil {
		return nil, err
	}
	return &res.Node, nil
}

// A11yAct acts on an element through the accessibility API.
//
// A request with Expect goes to the helper as one request when it
// announces "a11y.expect"; to one that does not (it would ignore the
// member and act unchecked), the element is read and compared here first.
func (c *Client) A11yAct(ctx context.Context, req A11yActRequest) error {
	if req.Expect != nil && !c.HandshakeInfo().Has(CapA11yExpect) {
		if err := c.checkExpect(ctx, req); err != nil {
			return err
		}
		req.Expect = nil
	}
	var res struct {
		OK bool `json:"ok"`
	}
	return c.Call(ctx, "a11y_act", req, &res)
}
