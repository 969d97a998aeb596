// Package executor is the real executor behind deskhand's MCP tools: the
// capture helper (package bridge) for displays, pixels, windows and the
// clipboard; the in-process input package for the pointer and keyboard;
// and the platform's launcher for applications. *Executor satisfies
// mcpserver.Executor.
package executor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/input"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// Launcher starts applications the platform's way (desktop entries on
// Linux, bundle ids on macOS) and waits for a window of theirs.
type Launcher interface {
	OpenApplication(ctx context.Context, app string) (*mcpserver.LaunchedApp, error)
}

// Options configure New.
type Options struct {
	// Helper is the capture helper client. Required.
	Helper *bridge.Client
	// Input sends pointer and keyboard input. Required.
	Input *input.Input
	// Launcher opens applications. Required.
	Launcher Launcher
	// Logger receives debug records; nil discards them.
	Logger *slog.Logger
}

// Executor performs the MCP tools' actions on a real desktop.
type Executor struct {
	helper *bridge.Client
	in     *input.Input
	launch Launcher
	log    *slog.Logger
}

var _ mcpserver.Executor = (*Executor)(nil)

// New returns an Executor over the helper and the input.
func New(opts Options) (*Executor, error) {
	if opts.Helper == nil || opts.Input == nil || opts.Launcher == nil {
		return nil, errors.New("executor: Options.Helper, Input and Launcher are required")
	}
	e := &Executor{helper: opts.Helper, in: opts.Input, launch: opts.Launcher, log: opts.Logger}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	return e, nil
}

// Displays lists the monitors.
func (e *Executor) Displays(ctx context.Context) ([]bridge.Display, error) {
	return e.helper.Displays(ctx)
}

// Capture takes a screenshot.
func (e *Executor) Capture(ctx context.Context, req bridge.CaptureRequest) (*bridge.Capture, error) {
	return e.helper.Capture(ctx, req)
}

// CursorPosition reports where the pointer is.
func (e *Executor) CursorPosition(ctx context.Context) (geometry.Point, error) {
	p, err := e.in.Position(ctx)
	return geometry.Point{X: p.X, Y: p.Y}, err
}

// MoveMouse puts the pointer at to.
func (e *Executor) MoveMouse(ctx context.Context, to geometry.Point) error {
	return e.in.Move(ctx, to.X, to.Y)
}

func button(b mcpserver.Button) (input.Button, error) {
	return input.ParseButton(string(b))
}

// Click moves to at and clicks.
func (e *Executor) Click(ctx context.Context, at geometry.Point, b mcpserver.Button, count int, modifiers string) error {
	btn, err := button(b)
	if err != nil {
		return err
	}
	var mods []string
	if modifiers != "" {
		mods = []string{modifiers}
	}
	return e.in.ClickAt(ctx, at.X, at.Y, btn, count, mods)
}

// MouseDown presses b where the pointer is and keeps it pressed.
func (e *Executor) MouseDown(ctx context.Context, b mcpserver.Button) error {
	btn, err := button(b)
	if err != nil {
		return err
	}
	return e.in.Down(ctx, btn)
}

// MouseUp releases b.
func (e *Executor) MouseUp(ctx context.Context, b mcpserver.Button) error {
	btn, err := button(b)
	if err != nil {
		return err
	}
	return e.in.Up(ctx, btn)
}

// Drag drags with the left button from from to to, holding modifiers.
func (e *Executor) Drag(ctx context.Context, from, to geometry.Point, modifiers string) error {
	return e.in.Drag(ctx, input.Point{X: from.X, Y: from.Y}, input.Point{X: to.X, Y: to.Y}, modList(modifiers)...)
}

// Scroll turns the wheel at at, holding modifiers.
func (e *Executor) Scroll(ctx context.Context, at geometry.Point, direction string, amount int, modifiers string) error {
	return e.in.Scroll(ctx, at.X, at.Y, direction, amount, modList(modifiers)...)
}

func modList(modifiers string) []string {
	if modifiers == "" {
		return nil
	}
	return []string{modifiers}
}

// Type types text exactly.
func (e *Executor) Type(ctx context.Context, text string) error {
	return e.in.Type(ctx, text)
}

// Key presses key combinations.
func (e *Executor) Key(ctx context.Context, keys string) error {
	return e.in.Key(ctx, keys)
}

// HoldKey holds a combination for d.
func (e *Executor) HoldKey(ctx context.Context, combo string, d time.Duration) error {
	return e.in.HoldKey(ctx, combo, d)
}

// ReleaseAll releases every button and key the input package holds.
func (e *Executor) ReleaseAll(ctx context.Context) error {
	return e.in.ReleaseAll(ctx)
}

// ReadClipboard returns the clipboard's text.
func (e *Executor) ReadClipboard(ctx context.Context) (string, error) {
	text, err := e.helper.ReadClipboard(ctx)
	if err != nil {
		return "", fmt.Errorf("reading the clipboard: %w", err)
	}
	return text, nil
}

// OpenApplication launches app and waits for its window.
func (e *Executor) OpenApplication(ctx context.Context, app string) (*mcpserver.LaunchedApp, error) {
	return e.launch.OpenApplication(ctx, app)
}

// WriteClipboard puts text on the clipboard.
func (e *Executor) WriteClipboard(ctx context.Context, text string) error {
	if err := e.helper.WriteClipboard(ctx, text); err != nil {
		return fmt.Errorf("writing the clipboard: %w", err)
	}
	return nil
}

// TeachShow shows the helper's teaching overlay.
func (e *Executor) TeachShow(ctx context.Context, req bridge.TeachShowRequest) (*bridge.TeachShown, error) {
	return e.helper.TeachShow(ctx, req)
}

// TeachPoll reads the overlay's state.
func (e *Executor) TeachPoll(ctx context.Context) (*bridge.TeachState, error) {
	return e.helper.TeachPoll(ctx)
}

// TeachHide takes the overlay down.
func (e *Executor) TeachHide(ctx context.Context) error {
	return e.helper.TeachHide(ctx)
}

// Windows lists the top-level windows.
func (e *Executor) Windows(ctx context.Context, includeHidden bool) (*bridge.WindowList, error) {
	return e.helper.Windows(ctx, includeHidden)
}

// A11yApps lists the apps on the accessibility bus.
func (e *Executor) A11yApps(ctx context.Context) (*bridge.A11yApps, error) {
	return e.helper.A11yApps(ctx)
}

// A11yTree reads a window's accessibility tree.
func (e *Executor) A11yTree(ctx context.Context, req bridge.A11yTreeRequest) (*bridge.A11yTree, error) {
	return e.helper.A11yTree(ctx, req)
}

// A11yElement reads one element afresh.
func (e *Executor) A11yElement(ctx context.Context, pid int, ref string) (*bridge.A11yNode, error) {
	return e.helper.A11yElement(ctx, pid, ref)
}

// A11yAct acts on an element through the accessibility API.
func (e *Executor) A11yAct(ctx context.Context, req bridge.A11yActRequest) error {
	return e.helper.A11yAct(ctx, req)
}

// SetWindowState asks the window manager to change a window's state; pid
// is for the gates, the helper needs only the window.
func (e *Executor) SetWindowState(ctx context.Context, _ int, window uint32, state string) (*bridge.WindowStateResult, error) {
	return e.helper.WindowState(ctx, window, state)
}
