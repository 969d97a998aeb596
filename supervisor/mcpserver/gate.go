package mcpserver

import (
	"context"

	"github.com/deskhand/deskhand/supervisor/geometry"
)

// A Gate decides whether an action may run. The server checks its gates,
// in order, before every action: each tool call, each action inside a
// computer_batch, the showing of each teaching step and each action the
// step runs when the user clicks Next. The first gate that returns an
// error stops the action;
// the model sees "<gate name>: <error>" as an error result, so the error
// should say what the model (or the user) can do about it.
type Gate interface {
	Name() string
	Check(ctx context.Context, a *Action) error
}

// Action describes one action about to run, with the model's coordinates
// already converted to the global logical space.
type Action struct {
	// Tool is the tool name, such as "left_click" or "screenshot".
	Tool string
	// Session is the MCP session id ("" on stdio).
	Session string
	// Target is where a pointer action lands; nil for others (and for a
	// click, scroll or button press at the current pointer position, where
	// it holds that position).
	Target *geometry.Point
	// From is where a drag starts.
	From *geometry.Point
	// Region is the rectangle zoom shows.
	Region *geometry.Rect
	// Keys is the key combination of key and hold_key, or the modifier
	// keys held during a click.
	Keys string
	// Text is the text to type or to put on the clipboard.
	Text string
	// App is the application open_application launches; the gates may
	// replace the model's name with the exact id of the app they resolved
	// and approved, which is then what is launched.
	App string
	// Display is the display switch_display selects.
	Display *uint32
	// Batch is the action's place in a computer_batch, nil outside one.
	Batch *BatchPosition

	// PID is the app an element tool (get_app_state, click, set_value …)
	// reads or acts on; 0 for the coordinate tools.
	PID int
	// Background marks an element action the accessibility API performs
	// itself, sending no pointer or key events and moving no focus.
	Background bool
	// Button and Count are an element click's button and click count (0
	// hovers).
	Button Button
	Count  int
	// Op is what an element action does: the accessibility action's name
	// for perform_action, the kind of value for set_value.
	Op string
}

// BatchPosition places an action in a computer_batch.
type BatchPosition struct {
	Index int // 0-based
	Count int
}

// GateFunc adapts a function to a Gate.
type GateFunc struct {
	GateName string
	Func     func(ctx context.Context, a *Action) error
	// Whole says the verdict does not depend on the action, only on the
	// desktop (the kill switch, the display check); see WholeGate.
	Whole bool
}

// Name returns GateName.
func (g GateFunc) Name() string { return g.GateName }

// RefusesWhole returns Whole.
func (g GateFunc) RefusesWhole() bool { return g.Whole }

// WholeGate is a gate whose verdict does not depend on the action: it
// refuses every action or none (the kill switch; a display that cannot be
// used, such as a GNOME session whose windows deskhand cannot see). The
// server also asks such gates, leading the chain, before it refuses an
// action it cannot even read for want of a screenshot, so that the model
// hears the reason no action can run rather than to take a screenshot
// that would be refused as well.
type WholeGate interface {
	Gate
	RefusesWhole() bool
}

// Check calls Func.
func (g GateFunc) Check(ctx context.Context, a *Action) error { return g.Func(ctx, a) }
