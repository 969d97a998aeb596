package gates

import (
	"context"
	"fmt"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/consent"
)

// SetWindowState changes the state of one window through the window
// manager (set_value with "maximized" and the like). The chain has held
// the action's pid to the full tier; the window the call names must also
// be one of that pid's, so that a state recorded for one app cannot
// resize or minimize another's window, and the tier is checked again on
// the window's own identity, which is what the grants are keyed by.
func (e *guarded) SetWindowState(ctx context.Context, pid int, window uint32, state string) (*bridge.WindowStateResult, error) {
	list, err := e.g.listWindows(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("finding the app of window %d: %w", window, err)
	}
	var owner *bridge.Window
	for i := range list.Windows {
		if list.Windows[i].ID == window {
			owner = &list.Windows[i]
			break
		}
	}
	if owner == nil {
		return nil, fmt.Errorf("window %d is not on the desktop any more: call get_app_state again", window)
	}
	if owner.App.PID != pid {
		return nil, fmt.Errorf("window %d belongs to %s, not to pid %d, so its state is not changed: call get_app_state for the app whose window it is", window, appName(owner.App), pid)
	}
	if tier := e.g.opts.Consent.Tier(owner.App); tier < catalog.TierFull {
		return nil, fmt.Errorf("pid %d is %s. %s", pid, appName(owner.App), consent.TierRefusal(owner.App, tier, catalog.TierFull, "changing a window's state"))
	}
	e.g.beforeInput(ctx)
	out, err := e.inner.SetWindowState(ctx, pid, window, state)
	return out, e.after(ctx, err)
}
