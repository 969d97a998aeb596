package mcpserver

import (
	"context"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/desktop"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// Executor is what the tools act through: the screen, the pointer, the
// keyboard, the clipboard, the applications and their windows, the
// accessibility tree and the teaching overlay, each a small interface
// below. Points are in the global logical coordinate space (X11: root
// window pixels); the MCP layer has already converted the model's
// coordinates. Package executor provides the real one; tests use a fake.
//
// The safety layer (package gates) forwards every method explicitly, so a
// new method is a compile error there until someone decides how it is
// gated. Every other wrapper embeds the Executor it wraps and overrides
// only what it changes.
type Executor interface {
	Screen
	Pointer
	Keyboard
	Clipboard
	Apps
	Accessibility
	Teaching
}

// Screen is what the screenshot tools read.
type Screen interface {
	Displays(ctx context.Context) ([]bridge.Display, error)
	Capture(ctx context.Context, req bridge.CaptureRequest) (*bridge.Capture, error)
}

// Pointer moves the pointer and presses its buttons. Every method that
// presses a button releases it before returning, except MouseDown.
type Pointer interface {
	CursorPosition(ctx context.Context) (geometry.Point, error)
	MoveMouse(ctx context.Context, to geometry.Point) error
	// Click moves to at and clicks button count times (1–3), holding the
	// modifier keys (key names joined with "+", such as "ctrl+shift";
	// empty for none) for the whole click.
	Click(ctx context.Context, at geometry.Point, button Button, count int, modifiers string) error
	MouseDown(ctx context.Context, button Button) error
	MouseUp(ctx context.Context, button Button) error
	// Drag drags with the left button from from to to, holding the
	// modifier keys (as for Click) for the whole drag.
	Drag(ctx context.Context, from, to geometry.Point, modifiers string) error
	// Scroll moves to at and turns the wheel amount clicks in direction
	// ("up", "down", "left" or "right"), holding the modifier keys (as for
	// Click) meanwhile.
	Scroll(ctx context.Context, at geometry.Point, direction string, amount int, modifiers string) error
}

// Keyboard types and presses keys, releasing each key before returning
// (HoldKey when its duration ends).
type Keyboard interface {
	Type(ctx context.Context, text string) error
	// Key presses xdotool-style key combinations separated by spaces.
	Key(ctx context.Context, keys string) error
	HoldKey(ctx context.Context, combo string, d time.Duration) error
	// ReleaseAll releases every mouse button and key still held.
	ReleaseAll(ctx context.Context) error
}

// Clipboard reads and writes the clipboard's text.
type Clipboard interface {
	ReadClipboard(ctx context.Context) (string, error)
	WriteClipboard(ctx context.Context, text string) error
}

// Apps launches applications and lists and arranges their windows.
type Apps interface {
	// OpenApplication launches an installed application, named by its
	// desktop-entry id or its name, and waits until its window maps.
	OpenApplication(ctx context.Context, app string) (*LaunchedApp, error)
	// Windows lists the top-level windows, top of the stack first.
	Windows(ctx context.Context, includeHidden bool) (*bridge.WindowList, error)
	// SetWindowState asks the window manager to put pid's top-level
	// window into a state (bridge.WindowStates): no input, no pointer.
	SetWindowState(ctx context.Context, pid int, window uint32, state string) (*bridge.WindowStateResult, error)
}

// Accessibility reads the accessibility tree (bridge.Client.A11yApps …)
// and acts on an element through the accessibility API alone, with no
// pointer or key events and no focus change (but op "focus").
type Accessibility interface {
	A11yApps(ctx context.Context) (*bridge.A11yApps, error)
	A11yTree(ctx context.Context, req bridge.A11yTreeRequest) (*bridge.A11yTree, error)
	A11yElement(ctx context.Context, pid int, ref string) (*bridge.A11yNode, error)
	A11yAct(ctx context.Context, req bridge.A11yActRequest) error
}

// Teaching drives the teaching overlay (teach.go): deskhand's own
// tooltip, which only the user's real clicks answer. TeachShow replaces
// any overlay shown before.
type Teaching interface {
	TeachShow(ctx context.Context, req bridge.TeachShowRequest) (*bridge.TeachShown, error)
	TeachPoll(ctx context.Context) (*bridge.TeachState, error)
	TeachHide(ctx context.Context) error
}

// Button is a mouse button.
type Button string

// The mouse buttons.
const (
	ButtonLeft   Button = "left"
	ButtonRight  Button = "right"
	ButtonMiddle Button = "middle"
)

// LaunchedApp reports an application OpenApplication started.
type LaunchedApp = desktop.LaunchedApp
