package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/deskhand/deskhand/bridge"
)

// windowRoles are the roles of a top-level window's own element: set_value
// with a window state applies to these, and to element 0, the window of
// the state.
var windowRoles = []string{"window", "frame", "dialog", "alert", "file chooser"}

// windowOp is a window state set_value asks the window manager for.
type windowOp struct {
	xid   uint32
	title string
	state string
}

// windowStateWord returns the window state a set_value string names, ""
// when it names none. Seed 002 names normal, maximized and minimized;
// fullscreen is the fourth state EWMH window managers keep.
func windowStateWord(s string) string {
	w := strings.ToLower(strings.TrimSpace(s))
	if slices.Contains(bridge.WindowStates, w) {
		return w
	}
	return ""
}

// isWindowElement reports whether the element is the state's window.
func isWindowElement(t *target, id int) bool {
	return id == 0 || slices.Contains(windowRoles, t.fresh.Role)
}

// planWindowState is set_value with a window state on the window element:
// the window manager changes it, as a taskbar would, through the X window
// the state was taken of.
func planWindowState(t *target, desc, state string) (*valueOp, error) {
	if t.state.xid == 0 {
		return nil, fmt.Errorf("%s has no desktop window deskhand could match it to, so its state cannot be set: use the window's own title-bar buttons", desc)
	}
	return &valueOp{
		window: &windowOp{xid: t.state.xid, title: t.state.window.Title, state: state},
		say:    fmt.Sprintf("%s window %q", map[string]string{"normal": "Restored to normal", "maximized": "Maximized", "minimized": "Minimized", "fullscreen": "Made full screen"}[state], t.state.window.Title),
	}, nil
}

// runWindowState asks for the state and says what the window is now.
func (s *Server) runWindowState(ctx context.Context, pid, id int, w *windowOp, say string) (*outcome, error) {
	res, err := s.exec.SetWindowState(ctx, pid, w.xid, w.state)
	if err != nil {
		var be *bridge.Error
		if errors.As(err, &be) && (be.Name == "method_not_found" || be.Name == bridge.ErrNameUnsupported) {
			return nil, errors.New("this desktop's helper cannot set window states: use the window's own title-bar buttons")
		}
		if errors.As(err, &be) {
			return nil, fmt.Errorf("setting window %d %s: %s", w.xid, w.state, be.Message)
		}
		return nil, fmt.Errorf("setting window %d %s: %w", w.xid, w.state, err)
	}
	data := map[string]any{"element_id": id, "path": "window_manager", "value_kind": "string", "window_id": w.xid, "window_state": res.State, "net_wm_state": res.NetWMState}
	if !res.Changed {
		return &outcome{text: fmt.Sprintf("Window %q (window id %d) is already %s; nothing was done.", w.title, w.xid, res.State), data: data}, nil
	}
	return &outcome{
		text: fmt.Sprintf("%s (window id %d) through the window manager: the pointer did not move and nothing was typed. Call get_app_state to see the result.", say, w.xid),
		data: data,
	}, nil
}
