// Package macos is deskhand's desktop platform for macOS. It never starts
// a virtual display: deskhand works on the logged-in user's screen, through
// the Swift helper (helpers/macos) and its extensions of the protocol
// (helpers/PROTOCOL.md, helpers/macos/README.md):
//
//   - the display gate asks the helper's permissions method before each
//     action and refuses, naming the System Settings pane to open, while
//     Screen Recording or Accessibility is not granted;
//   - captures use include_apps: only the approved apps' windows are
//     composited, so an unapproved app never reaches the pixels, not even a
//     window it opened after the last window list;
//   - the gates' hiding goes through the helper's hide, which hides the
//     whole app (Cmd-H);
//   - apps are launched by bundle id (open -b), a name being resolved to
//     its bundle id by Launch Services (osascript's "id of application");
//   - the end-of-turn notification is a Notification Center banner
//     (osascript's "display notification");
//   - the pasteboard keeps text after the helper exits, so the clipboard
//     needs no keeper;
//   - the user's Escape is watched by the helper (watch_escape, a
//     listen-only keyboard event tap that needs Input Monitoring), which
//     leaves out deskhand's own presses by the marker on every event
//     deskhand posts, and notifies the supervisor (escape_pressed).
//
// The package is platform-neutral Go: every system command goes through
// Options.Run, so its logic is tested on Linux against a fake helper that
// speaks the macOS protocol.
package macos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/desktop"
	"github.com/deskhand/deskhand/supervisor/desktop/keycodes"
	"github.com/deskhand/deskhand/supervisor/input"
	"github.com/deskhand/deskhand/supervisor/lock"
	"github.com/deskhand/deskhand/supervisor/platform"
)

// DisplayName names the macOS desktop for the lock and the state file:
// one logged-in session has one window server, whatever its screens.
const DisplayName = "macos-console"

// The System Settings panes the display gate names, as URLs that `open`
// (or a click in most terminals) takes the user straight to.
const (
	ScreenRecordingPane = "x-apple.systempreferences:com.apple.preference.security?Privacy_ScreenCapture"
	AccessibilityPane   = "x-apple.systempreferences:com.apple.preference.security?Privacy_Accessibility"
)

// DefaultLaunchTimeout bounds how long OpenApplication waits for a window.
const DefaultLaunchTimeout = 15 * time.Second

// InputMonitoringPane is the System Settings pane whose grant the Escape
// watch's keyboard event tap needs.
const InputMonitoringPane = "x-apple.systempreferences:com.apple.preference.security?Privacy_ListenEvent"

// DefaultWatchTimeout bounds starting the Escape watch.
const DefaultWatchTimeout = 10 * time.Second

// EscapeHelper is what the Escape watch asks the macOS helper;
// *bridge.Client satisfies it.
type EscapeHelper interface {
	WatchEscape(ctx context.Context, onEscape func()) (stop func(), err error)
}

// Helper is what this package asks the macOS helper; *bridge.Client
// satisfies it.
type Helper interface {
	Permissions(ctx context.Context, require ...string) (*bridge.MacPermissions, error)
	CaptureApps(ctx context.Context, req bridge.CaptureRequest, bundleIDs []string) (*bridge.Capture, error)
	Windows(ctx context.Context, includeHidden bool) (*bridge.WindowList, error)
}

// Options configure Open.
type Options struct {
	// VirtualDisplay is serve's --virtual-display: auto (or "") and off
	// both mean the user's screen; a size is refused, since macOS has no
	// private virtual desktop for deskhand to start.
	VirtualDisplay string
	// Run runs a system command (open, osascript) and returns its
	// standard output; nil runs it with os/exec. Tests replace it.
	Run func(ctx context.Context, name string, args ...string) ([]byte, error)
	// LaunchTimeout bounds the wait for a launched app's window; 0 means
	// DefaultLaunchTimeout.
	LaunchTimeout time.Duration
	// Logger receives the records; nil discards them.
	Logger *slog.Logger
}

// Desktop is one server's macOS desktop.
type Desktop struct {
	run     func(ctx context.Context, name string, args ...string) ([]byte, error)
	timeout time.Duration
	log     *slog.Logger
	// shortcuts reads the keyboard layout from the helper, which exists
	// only after the input is opened; it gets the helper with the gates.
	shortcuts *Shortcuts

	mu sync.Mutex
	// escape is the helper the Escape watch asks, set with the launcher
	// or the gates (serve sets both up before it starts the watch).
	escape EscapeHelper
}

// Open checks the display plan. It starts nothing: there is no virtual
// display on macOS.
func Open(_ context.Context, opts Options) (*Desktop, error) {
	switch strings.ToLower(strings.TrimSpace(opts.VirtualDisplay)) {
	case "", "auto", "off", "none", "no", "false":
	default:
		return nil, fmt.Errorf("--virtual-display %s: macOS has no private virtual desktop for deskhand to start; it works on your own screen, so use --virtual-display auto (the default)", opts.VirtualDisplay)
	}
	d := &Desktop{run: opts.Run, timeout: opts.LaunchTimeout, log: opts.Logger, shortcuts: NewShortcuts()}
	if d.run == nil {
		d.run = func(ctx context.Context, name string, args ...string) ([]byte, error) {
			return exec.CommandContext(ctx, name, args...).Output()
		}
	}
	if d.timeout <= 0 {
		d.timeout = DefaultLaunchTimeout
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	return d, nil
}

// Display is DisplayName.
func (d *Desktop) Display() string { return DisplayName }

// Lock is a file in the user's lock.Dir: one user's deskhands share the
// console.
func (d *Desktop) Lock(opts lock.Options) *lock.Lock {
	return lock.New(lock.Path(lock.Dir(), DisplayName), opts)
}

// Private is false: deskhand on macOS works on the user's own screen.
func (d *Desktop) Private() bool { return false }

// HelperEnv is empty: the helper finds the window server by itself.
func (d *Desktop) HelperEnv() []string { return nil }

// DisplayGate is gate 2 on macOS: the helper answers permissions, and
// both Screen Recording and Accessibility are granted.
func (d *Desktop) DisplayGate(helper *bridge.Client) func(ctx context.Context) error {
	d.shortcuts.SetHelper(helper)
	d.setEscapeHelper(helper)
	return func(ctx context.Context) error { return CheckPermissions(ctx, helper) }
}

// CheckPermissions is the display gate (and doctor's report) over any
// Helper: nil when both permissions are granted, else a refusal that
// names the pane to open.
func CheckPermissions(ctx context.Context, h Helper) error {
	p, err := h.Permissions(ctx)
	if err != nil {
		return fmt.Errorf("the macOS helper cannot tell whether deskhand may record the screen and send input (%w). "+
			"Ask the user to run deskhand in their logged-in desktop session (not over ssh) and to run `deskhand doctor`", err)
	}
	var missing []string
	if !p.ScreenRecording {
		missing = append(missing, "Screen Recording is not granted, so nothing can be seen: ask the user to open System Settings > Privacy & Security > Screen Recording ("+
			ScreenRecordingPane+"), switch on the app that runs deskhand (the terminal or MCP client app), and restart deskhand")
	}
	if !p.Accessibility {
		missing = append(missing, "Accessibility is not granted, so no input can be sent: ask the user to open System Settings > Privacy & Security > Accessibility ("+
			AccessibilityPane+"), switch on the app that runs deskhand, and restart deskhand")
	}
	if len(missing) > 0 {
		return errors.New(strings.Join(missing, "; "))
	}
	return nil
}

// CheckInputMonitoring is doctor's report on the Escape watch's permission:
// nil when the helper says Input Monitoring is granted, else what is
// missing, the pane that grants it and what works without it. The display
// gate never asks for it: an action needs only Screen Recording and
// Accessibility, and only the user's Escape stopping a turn needs this.
func CheckInputMonitoring(ctx context.Context, h Helper) error {
	p, err := h.Permissions(ctx)
	if err != nil {
		return fmt.Errorf("the macOS helper cannot tell whether Input Monitoring is granted (%w), so the user's Escape may not stop a turn; everything else works without it", err)
	}
	if p.InputMonitoring == nil {
		return errors.New("this macOS helper is too old to report Input Monitoring, which the user's Escape needs to stop a turn (everything else works without it): update deskhand")
	}
	if !*p.InputMonitoring {
		return errors.New("Input Monitoring is not granted, so the user's Escape may not stop a turn (the keyboard watch needs it, or an Accessibility grant on macOS versions that still accept that); " +
			"everything else works without it, and the user can still stop deskhand by closing the MCP client. To grant it, open System Settings > Privacy & Security > Input Monitoring (" +
			InputMonitoringPane + "), switch on the app that runs deskhand (the terminal or MCP client app), and restart deskhand")
	}
	return nil
}

// OpenInput opens the input package: Quartz events on macOS, shortcuts
// sent as the active layout's keys (Shortcuts). The key presses are not
// reported: the Escape watch tells deskhand's own presses apart by the
// marker each event carries, not by announcements.
func (d *Desktop) OpenInput(func(code uint8)) (*input.Input, error) {
	in, err := openInput(keycodes.Options{Logger: d.log.With("component", "input")}, d.shortcuts)
	if err != nil {
		return nil, fmt.Errorf("opening Quartz input: %w", err)
	}
	return in, nil
}

func (d *Desktop) setEscapeHelper(h EscapeHelper) {
	d.mu.Lock()
	d.escape = h
	d.mu.Unlock()
}

// WatchEscape starts the helper's Escape watch: onEscape runs for each
// Escape the user presses. The helper drops deskhand's own Escapes at the
// keyboard tap, by the marker every posted event carries and by the
// posting process, so own ignores what it is told: an announcement here,
// unlike X11's, would wait for a report that never comes and swallow the
// user's next Escape instead.
func (d *Desktop) WatchEscape(onEscape func()) (own func(code uint8), stop func(), err error) {
	d.mu.Lock()
	h := d.escape
	d.mu.Unlock()
	if h == nil {
		return nil, nil, errors.New("watching the keyboard for the user's Escape: the macOS helper is not set up yet")
	}
	return WatchEscape(context.Background(), h, onEscape)
}

// WatchEscape is Desktop.WatchEscape over any EscapeHelper.
func WatchEscape(ctx context.Context, h EscapeHelper, onEscape func()) (own func(code uint8), stop func(), err error) {
	ctx, cancel := context.WithTimeout(ctx, DefaultWatchTimeout)
	defer cancel()
	stop, err = h.WatchEscape(ctx, onEscape)
	var herr *bridge.Error
	switch {
	case errors.As(err, &herr) && herr.Code == bridge.CodePermissionDenied:
		return nil, nil, fmt.Errorf("macOS refused the keyboard watch, so the user's Escape cannot stop deskhand: Input Monitoring is not granted. "+
			"Ask the user to open System Settings > Privacy & Security > Input Monitoring (%s), switch on the app that runs deskhand "+
			"(the terminal or MCP client app), and restart deskhand; until then they stop deskhand by closing the MCP client (%w)", InputMonitoringPane, err)
	case err != nil:
		return nil, nil, fmt.Errorf("starting the macOS helper's Escape watch: %w", err)
	}
	return func(uint8) {}, stop, nil
}

// KeepClipboard does nothing: the general pasteboard keeps what the
// helper wrote after the helper exits.
func (d *Desktop) KeepClipboard(context.Context, string, cleanup.Stash) error { return nil }

// Notify shows a Notification Center banner. The texts go to osascript as
// arguments, never into the script.
func (d *Desktop) Notify(ctx context.Context, summary, body string) error {
	_, err := d.run(ctx, "/usr/bin/osascript", "-e", "on run argv", "-e",
		"display notification (item 2 of argv) with title (item 1 of argv)", "-e", "end run", summary, body)
	if err != nil {
		return fmt.Errorf("showing the notification: %w", err)
	}
	return nil
}

// ResolveApp finds the bundle id of the app name names: a bundle id as it
// is, else the app Launch Services knows by that name.
func (d *Desktop) ResolveApp(name string) (bridge.App, error) {
	return d.resolve(context.Background(), name)
}

func (d *Desktop) resolve(ctx context.Context, name string) (bridge.App, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return bridge.App{}, errors.New("no app named: give its name (TextEdit) or bundle id (com.apple.TextEdit)")
	}
	if strings.Count(name, ".") >= 1 && !strings.ContainsAny(name, " /") {
		if id, err := platform.ParseBundleID(name); err == nil {
			return bridge.App{Name: name, BundleID: string(id)}, nil
		}
	}
	out, err := d.run(ctx, "/usr/bin/osascript", "-e", "on run argv", "-e", "id of application (item 1 of argv)", "-e", "end run", name)
	if err != nil {
		return bridge.App{}, fmt.Errorf("no installed app is called %q (%v); call list_apps or give its bundle id", name, err)
	}
	id, err := platform.ParseBundleID(strings.TrimSpace(string(out)))
	if err != nil {
		return bridge.App{}, fmt.Errorf("the app called %q has no usable bundle id: %w", name, err)
	}
	return bridge.App{Name: name, BundleID: string(id)}, nil
}

// InstalledApps is nil: apps are bundles, found running or by name.
func (d *Desktop) InstalledApps(context.Context, *bridge.Client) ([]bridge.App, error) {
	return nil, nil
}

// Launcher launches apps by bundle id and waits, through helper, for a
// new window of theirs.
func (d *Desktop) Launcher(helper *bridge.Client) desktop.Launcher {
	d.shortcuts.SetHelper(helper)
	d.setEscapeHelper(helper)
	return &launcher{d: d, helper: helper}
}

// NewLauncher is Launcher over any Helper.
func (d *Desktop) NewLauncher(h Helper) desktop.Launcher { return &launcher{d: d, helper: h} }

type launcher struct {
	d      *Desktop
	helper Helper
}

func (l *launcher) OpenApplication(ctx context.Context, name string) (*desktop.LaunchedApp, error) {
	app, err := l.d.resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	before, err := l.helper.Windows(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("listing windows before launching %s: %w", app.BundleID, err)
	}
	known := map[uint32]bool{}
	for _, w := range before.Windows {
		known[w.ID] = true
	}
	argv := []string{"/usr/bin/open", "-b", app.BundleID}
	if _, err := l.d.run(ctx, argv[0], argv[1:]...); err != nil {
		return nil, fmt.Errorf("launching %s (%s): %w", app.BundleID, strings.Join(argv, " "), err)
	}
	l.d.log.Info("launched application", "bundle_id", app.BundleID)
	deadline := time.NewTimer(l.d.timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if list, err := l.helper.Windows(ctx, false); err == nil {
			for i := range list.Windows {
				w := &list.Windows[i]
				if !known[w.ID] && !w.Hidden && !w.Minimized && strings.EqualFold(w.App.BundleID, app.BundleID) {
					return &desktop.LaunchedApp{Name: w.App.Name, Exec: argv, PID: w.App.PID, Window: w}, nil
				}
			}
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return nil, fmt.Errorf("launched %s, but no new window of it appeared within %s; take a screenshot to see whether it shows up later", app.BundleID, l.d.timeout)
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s's window: %w", app.BundleID, ctx.Err())
		}
	}
}

// SessionCapture takes captures that include only the apps sess has
// approved (include_apps), so the compositor leaves every other app out;
// the gates' own masking comes on top.
func (d *Desktop) SessionCapture(helper *bridge.Client, sess *consent.Session) desktop.Capture {
	return ApprovedCapture(helper, sess)
}

// ApprovedCapture is SessionCapture over any Helper.
func ApprovedCapture(h Helper, sess *consent.Session) desktop.Capture {
	return func(ctx context.Context, req bridge.CaptureRequest) (*bridge.Capture, error) {
		ids, err := approvedBundleIDs(ctx, h, sess)
		if err != nil {
			return nil, err
		}
		return h.CaptureApps(ctx, req, ids)
	}
}

// approvedBundleIDs are the bundle ids of the approved apps: those the
// grants name, and those of the running apps' windows the session
// approves (a grant by catalog entry or name has no bundle id of its own).
func approvedBundleIDs(ctx context.Context, h Helper, sess *consent.Session) ([]string, error) {
	var ids []string
	add := func(id string) {
		if id != "" && !slices.ContainsFunc(ids, func(s string) bool { return strings.EqualFold(s, id) }) {
			ids = append(ids, id)
		}
	}
	for _, g := range sess.Apps() {
		add(g.Identity.BundleID)
	}
	list, err := h.Windows(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("listing the windows to find the approved apps: %w", err)
	}
	for _, w := range list.Windows {
		if w.App.BundleID != "" && sess.Tier(w.App) > catalog.TierNone {
			add(w.App.BundleID)
		}
	}
	return ids, nil
}

// NoStacking is nil: the helper lists windows in stacking order, top
// first.
func (d *Desktop) NoStacking() error { return nil }

// Drawn is nil: the helper compares pixels for the staleness gate.
func (d *Desktop) Drawn() desktop.Drawn { return nil }

// Close does nothing: Open started nothing.
func (d *Desktop) Close() {}
