package input

import (
	"context"
	"fmt"
)

// A Guard holds a caller's rules for the whole of a keyboard operation
// (Type, Key, HoldKey), not just its start: keys go to whatever window has
// the focus when the X server processes them, and the focus can move
// while a long text is typed (a Return closes a dialog and the window
// behind it takes the focus) or while a key is held.
//
// With a Guard in the context (WithGuard), an operation sends its keys in
// runs: Type at most TypeRun characters and never past a line break, Key
// one combination, HoldKey its press. Before each run it calls Check, and
// then, with the X server grabbed so that no other client can move the
// focus in between, it checks that the focused window or one of its
// ancestors is among the windows Check allowed and sends the run. After
// a line break (or a combination), the next run waits until the focused
// application has read the keys, so that a dialog the keys closed is gone
// before the check. While HoldKey holds its keys it re-reads the focus
// every holdPoll and lets go the moment it leaves the allowed windows.
type Guard struct {
	// Check re-checks the caller's rules against the live desktop and
	// returns the windows that may receive keys now (X: window ids; a
	// focused descendant of one counts too). An error stops the
	// operation; it should say what changed.
	Check func(ctx context.Context) (allowed []uint32, err error)
}

type guardKey struct{}

// WithGuard returns a context whose keyboard operations g guards.
func WithGuard(ctx context.Context, g *Guard) context.Context {
	return context.WithValue(ctx, guardKey{}, g)
}

// GuardOf is the Guard in ctx, nil when there is none.
func GuardOf(ctx context.Context) *Guard {
	g, _ := ctx.Value(guardKey{}).(*Guard)
	if g == nil || g.Check == nil {
		return nil
	}
	return g
}

// FocusError reports keys withheld because the keyboard focus was on a
// window the Guard did not allow.
type FocusError struct {
	// Focus is the focused window and its ancestors, innermost first;
	// empty when no window had the focus.
	Focus []uint32
}

func (e *FocusError) Error() string {
	if len(e.Focus) == 0 {
		return "no window has the keyboard focus any more"
	}
	return fmt.Sprintf("the keyboard focus moved to window %#x, which is not a window of an app allowed to receive keys", e.Focus[0])
}

// Cause is why ctx ended, for errors that report it; nil while it runs.
func Cause(ctx context.Context) error {
	if ctx.Err() == nil {
		return nil
	}
	return context.Cause(ctx)
}
