//go:build unix

// Package x11 is deskhand's desktop platform for Linux X11: it chooses the
// display (the user's, named by DISPLAY, or a private Xvfb and openbox
// desktop it starts, package vdisplay), checks before each action that the
// X server answers with the extensions deskhand needs (the display gate,
// which doctor's display report shares), watches the keyboard for the
// user's Escape (XInput 2 raw events), keeps the clipboard after deskhand
// exits (a keeper process owning the X selections), and opens the input
// package on the display. Notifications and app launch are the
// freedesktop.org ones (package freedesktop), which a Wayland platform
// will share.
//
// Everything that names an X11 type, atom or library lives here, in
// package keycodes (the X11 input backend) and in the Rust helper; the
// shared safety packages do not (see the supervisor's seam test).
package x11

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/desktop"
	"github.com/deskhand/deskhand/supervisor/desktop/freedesktop"
	"github.com/deskhand/deskhand/supervisor/desktop/keycodes"
	"github.com/deskhand/deskhand/supervisor/desktop/x11/vdisplay"
	"github.com/deskhand/deskhand/supervisor/input"
	"github.com/deskhand/deskhand/supervisor/lock"
)

// DefaultVirtualWidth and DefaultVirtualHeight are the size of the private
// desktop --virtual-display auto starts when DISPLAY is unset.
const (
	DefaultVirtualWidth  = 1920
	DefaultVirtualHeight = 1080
)

// Plan is the display a server works on, as PlanDisplay chose it.
type Plan struct {
	// Virtual: start a private desktop of Width x Height; else use
	// Display.
	Virtual       bool
	Width, Height int
	Display       string
}

// PlanDisplay decides from --virtual-display (flag) and $DISPLAY whether
// to start a private desktop, and its size.
func PlanDisplay(flag, display string) (Plan, error) {
	switch strings.ToLower(strings.TrimSpace(flag)) {
	case "auto", "":
		if display != "" {
			return Plan{Display: display}, nil
		}
		return Plan{Virtual: true, Width: DefaultVirtualWidth, Height: DefaultVirtualHeight}, nil
	case "off", "none", "no", "false":
		if display == "" {
			return Plan{}, errors.New("no display: DISPLAY is unset and --virtual-display is off; run inside an X session, set DISPLAY, or pass --virtual-display 1920x1080")
		}
		return Plan{Display: display}, nil
	}
	w, h, err := vdisplay.ParseSize(flag)
	if err != nil {
		return Plan{}, fmt.Errorf("--virtual-display: %w, or auto, off, sway:WIDTHxHEIGHT or xvfb:WIDTHxHEIGHT", err)
	}
	return Plan{Virtual: true, Width: w, Height: h}, nil
}

// Options configure Open.
type Options struct {
	// VirtualDisplay is serve's --virtual-display: auto, off or
	// WIDTHxHEIGHT (see PlanDisplay).
	VirtualDisplay string
	// Env is the environment deskhand runs in (KEY=value); DISPLAY and
	// WAYLAND_DISPLAY are read from it, and apps are launched with it.
	Env []string
	// Logger receives the records; nil discards them.
	Logger *slog.Logger
}

// Desktop is one server's X11 desktop.
type Desktop struct {
	display string
	env     []string
	virtual *vdisplay.Display
	check   *DisplayCheck
	log     *slog.Logger

	apps freedesktop.Apps
}

// Open chooses the display and, when the plan says so, starts the private
// desktop, which Close stops.
func Open(ctx context.Context, opts Options) (*Desktop, error) {
	d := &Desktop{env: opts.Env, log: opts.Logger}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	plan, err := PlanDisplay(opts.VirtualDisplay, getenv(opts.Env, "DISPLAY"))
	if err != nil {
		return nil, err
	}
	d.display = plan.Display
	if plan.Virtual {
		vd, err := vdisplay.Start(ctx, vdisplay.Options{Width: plan.Width, Height: plan.Height, Logger: d.log})
		if err != nil {
			return nil, err
		}
		d.virtual, d.display, d.env = vd, vd.Name(), vd.Env(d.env)
	} else if getenv(opts.Env, "WAYLAND_DISPLAY") != "" {
		d.log.Warn("a Wayland session is running: deskhand drives X11 (XWayland) windows only; native Wayland windows are not seen or controlled",
			"display", d.display)
	}
	d.check = NewDisplayCheck(d.display)
	return d, nil
}

func getenv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// Display is the X display's name (":1").
func (d *Desktop) Display() string { return d.display }

// Lock is the computer-use lock kept on the X server (see Lock).
func (d *Desktop) Lock(opts lock.Options) *lock.Lock { return Lock(d.display, opts) }

// Private is true when the display is a virtual desktop Open started.
func (d *Desktop) Private() bool { return d.virtual != nil }

// HelperEnv is what the capture helper needs to find the display.
// The backend is named outright: in a Wayland session the helper would
// otherwise pick Wayland wherever DISPLAY ends up empty.
func (d *Desktop) HelperEnv() []string {
	return []string{"DISPLAY=" + d.display, "DESKHAND_HELPER_BACKEND=x11"}
}

// DisplayGate is gate 2: the X display answers, has XTEST and is not
// XWayland.
func (d *Desktop) DisplayGate(*bridge.Client) func(ctx context.Context) error { return d.check.Check }

// Drawn is the display gate's record of where the screen was drawn
// (DAMAGE), which the staleness gate asks before the helper.
func (d *Desktop) Drawn() desktop.Drawn { return d.check }

// NoStacking is nil: X11 gives the stacking order.
func (d *Desktop) NoStacking() error { return nil }

// OpenInput opens XTEST input on the display; keyPress hears of each key
// press before it is sent, by keycode.
func (d *Desktop) OpenInput(keyPress func(code uint8)) (*input.Input, error) {
	be, err := keycodes.New(keycodes.Options{Display: d.display, Logger: d.log.With("component", "input"), KeyPress: keyPress})
	if err != nil {
		return nil, fmt.Errorf("opening display %s for input: %w", d.display, err)
	}
	return input.New(be), nil
}

// WatchEscape starts the Escape watcher: onEscape runs for each Escape
// the user presses. own is the input's keyPress, which tells deskhand's
// own presses from the user's.
func (d *Desktop) WatchEscape(onEscape func()) (own func(code uint8), stop func(), err error) {
	w, err := Watch(WatcherOptions{Display: d.display, OnEscape: onEscape, Logger: d.log.With("component", "escape")})
	if err != nil {
		return nil, nil, err
	}
	return w.Own, w.Close, nil
}

// KeepClipboard hands the clipboard and PRIMARY text of s to a keeper,
// the capture helper at helper in its keep mode: an X selection lives
// only as long as its owner, and the serving helper exits with deskhand.
func (d *Desktop) KeepClipboard(ctx context.Context, helper string, s cleanup.Stash) error {
	return Keep(ctx, helper, d.display, s)
}

// Notify shows a freedesktop.org desktop notification.
func (d *Desktop) Notify(ctx context.Context, summary, body string) error {
	return (&freedesktop.Notifier{}).Notify(ctx, summary, body)
}

// ResolveApp finds an app's identity from its desktop entry, in the
// capture helper's index (the one the helper names windows from), once
// Launcher has been given the helper.
func (d *Desktop) ResolveApp(name string) (bridge.App, error) { return d.apps.ResolveApp(name) }

// InstalledApps lists the apps of the installed desktop entries.
func (d *Desktop) InstalledApps(ctx context.Context, helper *bridge.Client) ([]bridge.App, error) {
	return freedesktop.InstalledApps(ctx, helper)
}

// Launcher launches apps from their desktop entries, read by helper, on
// this display; ResolveApp uses the same helper.
func (d *Desktop) Launcher(helper *bridge.Client) desktop.Launcher {
	return d.apps.Launcher(freedesktop.LauncherOptions{Helper: helper, Env: d.env, Logger: d.log.With("component", "launch")})
}

// SessionCapture is nil: on X11 the gates' masking is all a capture
// needs.
func (d *Desktop) SessionCapture(*bridge.Client, *consent.Session) desktop.Capture { return nil }

// Close stops the private desktop, if one was started, and the display
// check's connection.
func (d *Desktop) Close() {
	d.check.Close()
	if d.virtual != nil {
		d.virtual.Close()
	}
}
