package bridge

import "context"

// The window states WindowState sets (PROTOCOL.md "window_state").
const (
	WindowNormal     = "normal"
	WindowMaximized  = "maximized"
	WindowMinimized  = "minimized"
	WindowFullscreen = "fullscreen"
)

// WindowStates lists the states WindowState takes.
var WindowStates = []string{WindowNormal, WindowMaximized, WindowMinimized, WindowFullscreen}

// WindowStateResult is the answer to window_state: the state the window
// is now in, read back from the window itself.
type WindowStateResult struct {
	Window uint32 `json:"window"`
	State  string `json:"state"`
	// Changed is false when the window already was in that state.
	Changed bool `json:"changed"`
	// NetWMState is the window's _NET_WM_STATE afterwards, lower-case and
	// without the prefix ("maximized_vert", "fullscreen", "hidden"…).
	NetWMState []string `json:"net_wm_state"`
}

// WindowState asks the window manager to put a top-level window into a
// state (one of WindowStates) and waits until it shows it there. Unknown
// windows are an *Error named "no_such_window"; popups and a desktop
// without a window manager, "unsupported".
func (c *Client) WindowState(ctx context.Context, window uint32, state string) (*WindowStateResult, error) {
	params := struct {
		Window uint32 `json:"window"`
		State  string `json:"state"`
	}{window, state}
	var res WindowStateResult
	if err := c.Call(ctx, "window_state", params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
