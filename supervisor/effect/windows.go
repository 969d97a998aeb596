package effect

import "github.com/deskhand/deskhand/bridge"

// Windows is what changed among the top-level windows.
type Windows struct {
	// Focus is the window that took the focus, nil when it did not move.
	Focus    *bridge.Window
	Opened   []bridge.Window
	Closed   []bridge.Window
	Retitled []Retitle
}

// Retitle is a window whose title changed.
type Retitle struct {
	Window bridge.Window
	From   string
}

// Empty says nothing changed.
func (w Windows) Empty() bool {
	return w.Focus == nil && len(w.Opened) == 0 && len(w.Closed) == 0 && len(w.Retitled) == 0
}

// DiffWindows compares two window lists, taken before and after an action.
// The titles are as the lists give them (masked by the caller).
func DiffWindows(before, after *bridge.WindowList) Windows {
	var d Windows
	if before == nil || after == nil {
		return d
	}
	// A window is its id and its process: the X server hands a closed
	// window's id to the next client that connects.
	type key struct {
		id  uint32
		pid int
	}
	old := map[key]bridge.Window{}
	for _, w := range before.Windows {
		old[key{w.ID, w.App.PID}] = w
	}
	now := map[key]bool{}
	for _, w := range after.Windows {
		now[key{w.ID, w.App.PID}] = true
		prev, ok := old[key{w.ID, w.App.PID}]
		switch {
		case !ok:
			d.Opened = append(d.Opened, w)
		case prev.Title != w.Title:
			d.Retitled = append(d.Retitled, Retitle{Window: w, From: prev.Title})
		}
		if after.Focused != nil && *after.Focused == w.ID && (before.Focused == nil || *before.Focused != w.ID) {
			d.Focus = &w
		}
	}
	for _, w := range before.Windows {
		if !now[key{w.ID, w.App.PID}] {
			d.Closed = append(d.Closed, w)
		}
	}
	return d
}
