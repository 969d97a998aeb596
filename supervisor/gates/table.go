package gates

import (
	"context"
	"fmt"

	"github.com/deskhand/deskhand/bridge"
)

// A window listing costs the helper a dozen requests per window; the
// gates need one before nearly every action, and the watcher of a long
// action one every watchInterval. So the gates keep the last listing and
// reuse it while the helper's windows epoch (bridge.WindowsEpoch) is
// unchanged: the helper moves it on at every X event that could change
// the answer (a window mapped, moved, restacked or changed, the focus or
// the active window). The epoch is read before the listing it is stored
// with, so an event during the listing makes the next call list again.
// A helper that pushes the epoch (windows_changed) makes reading it free:
// the bridge answers from the newest notification, and asks the helper
// only when it has none (no push, a helper gone or restarting). Any
// doubt lists afresh: a Desktop without the epoch, an error reading it,
// a new stream (a new helper or X connection), the gates' own hiding.

// epocher is the part of the Desktop that tells whether the window table
// may have changed; *bridge.Client satisfies it.
type epocher interface {
	WindowsEpoch(ctx context.Context) (bridge.WindowsEpoch, error)
}

// table is one cached listing.
type table struct {
	epoch bridge.WindowsEpoch
	list  *bridge.WindowList
}

// listWindows returns the window list, reusing the cached one while the
// epoch says nothing changed since it was read. The list is shared:
// callers must not change it.
func (g *Gates) listWindows(ctx context.Context, includeHidden bool) (*bridge.WindowList, error) {
	ep, epOK := g.windowsEpoch(ctx)
	if epOK {
		g.mu.Lock()
		t := g.tables[includeHidden]
		g.mu.Unlock()
		if t != nil && t.epoch == ep {
			g.log.Debug("window table", "reused", true, "hidden", includeHidden)
			return t.list, nil
		}
	}
	list, err := g.opts.Desktop.Windows(ctx, includeHidden)
	if err != nil {
		return nil, fmt.Errorf("listing the windows: %w", err)
	}
	g.log.Debug("window table", "reused", false, "hidden", includeHidden)
	g.mu.Lock()
	if epOK {
		g.tables[includeHidden] = &table{epoch: ep, list: list}
	} else {
		delete(g.tables, includeHidden)
	}
	g.mu.Unlock()
	return list, nil
}

func (g *Gates) windowsEpoch(ctx context.Context) (bridge.WindowsEpoch, bool) {
	d, ok := g.opts.Desktop.(epocher)
	if !ok || g.opts.NoWindowCache {
		return bridge.WindowsEpoch{}, false
	}
	ep, err := d.WindowsEpoch(ctx)
	if err != nil {
		g.log.Debug("listing the windows afresh: no windows epoch", "err", err)
		return bridge.WindowsEpoch{}, false
	}
	return ep, true
}

// dropTables forgets the cached listings, after the gates changed the
// windows themselves.
func (g *Gates) dropTables() {
	g.mu.Lock()
	clear(g.tables)
	g.mu.Unlock()
}
