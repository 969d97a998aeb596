//go:build unix

package wayland

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/desktop"
	"github.com/deskhand/deskhand/supervisor/desktop/freedesktop"
	"github.com/deskhand/deskhand/supervisor/desktop/sway"
	"github.com/deskhand/deskhand/supervisor/input"
	"github.com/deskhand/deskhand/supervisor/lock"
)

// Desktop is a native Wayland session on a wlroots compositor, the
// user's or a private headless sway (package sway), which the capture
// helper's wayland-wlr backend drives, input included; or the user's KDE
// Plasma session, through the helper's kde-kwin backend; or the user's
// GNOME session, which the helper's gnome-mutter backend reaches and
// where every action is refused.
type Desktop struct {
	display string
	env     []string
	log     *slog.Logger
	timeout time.Duration
	// gnome is set on a GNOME session: mutter tells no client its windows,
	// so the display gate refuses every action (ErrGNOMENoWindows).
	gnome bool
	// kde is set on a KDE Plasma session: KWin tells deskhand its windows
	// with their geometry and stacking order once the helper is
	// authorized (GateKDE), so every gate is live.
	kde bool
	// private is deskhand's own headless sway, nil on the user's session.
	private *sway.Compositor

	mu     sync.Mutex
	helper *bridge.Client // the serving helper, once serve has one
	apps   freedesktop.Apps
}

// Options configure Open.
type Options struct {
	// VirtualDisplay is serve's --virtual-display.
	VirtualDisplay string
	// Env is the environment deskhand runs in.
	Env []string
	// CallTimeout bounds each input call to the helper.
	CallTimeout time.Duration
	// Logger receives the records; nil discards them.
	Logger *slog.Logger
}

// Open opens the Wayland desktop --virtual-display asks for here
// (PlanDisplay): the user's native session, or a private headless sway.
// With neither, d is nil and x11Flag is the --virtual-display value for
// the X11 desktop.
func Open(ctx context.Context, opts Options) (d *Desktop, x11Flag string, err error) {
	env, logger := opts.Env, opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	plan, err := PlanDisplay(opts.VirtualDisplay, env, sway.CheckTools)
	if err != nil {
		return nil, "", err
	}
	d = &Desktop{display: plan.Session, env: env, log: logger, timeout: opts.CallTimeout}
	switch {
	case plan.Session != "" && IsGNOME(env):
		logger.Warn("this is a GNOME session, where deskhand refuses every screenshot and input action; run it with --virtual-display WIDTHxHEIGHT for a private desktop",
			"display", plan.Session, "why", ErrGNOMENoWindows)
		d.gnome = true
	case plan.Session != "" && IsKDE(env):
		logger.Info("driving the KDE Plasma session through the capture helper's kde-kwin backend", "display", plan.Session)
		d.kde = true
	case plan.Session != "":
		logger.Info("driving the native Wayland session through the capture helper", "display", plan.Session)
	case plan.Sway:
		comp, err := sway.Start(ctx, sway.Options{Width: plan.Width, Height: plan.Height, Env: env, Logger: logger.With("component", "sway")})
		if err != nil {
			return nil, "", err
		}
		d.display, d.env, d.private = comp.Display(), comp.Env(env), comp
	default:
		if plan.Note != "" {
			logger.Info("--virtual-display starts " + plan.Note)
		}
		return nil, plan.X11, nil
	}
	return d, "", nil
}

func (p *Desktop) Display() string { return p.display }

// Lock is a file beside the compositor's socket (Lock).
func (p *Desktop) Lock(opts lock.Options) *lock.Lock {
	return Lock(p.env, p.display, opts)
}

// Private is true on deskhand's own headless sway, false on the user's
// session.
func (p *Desktop) Private() bool { return p.private != nil }

func (p *Desktop) HelperEnv() []string {
	if p.gnome {
		return GNOMEHelperEnv(p.env)
	}
	if p.kde {
		return KDEHelperEnv(p.env)
	}
	return HelperEnv(p.env)
}

func (p *Desktop) setHelper(helper *bridge.Client) {
	p.mu.Lock()
	p.helper = helper
	p.mu.Unlock()
}

// DisplayGate asks the helper, before each action, whether the compositor
// answers and offers every wlroots protocol deskhand needs. On GNOME it
// refuses every action (Support.GateGNOME): each screenshot is masked and
// each input action checks the app it lands on, and both need the window
// list mutter does not give. On KDE it asks for KWin's window list,
// stacking order, screenshots and input (Support.GateKDE).
func (p *Desktop) DisplayGate(helper *bridge.Client) func(ctx context.Context) error {
	p.setHelper(helper)
	return func(ctx context.Context) error {
		s, err := Probe(ctx, helper)
		if err != nil {
			return err
		}
		if p.gnome {
			return s.GateGNOME()
		}
		if p.kde {
			return s.GateKDE(helper.Path())
		}
		return s.Gate()
	}
}

// OpenInput sends through the serving helper's input methods. serve
// opens the input before the helper, so the helper is looked up at each
// call; keyPress is not called, since there are no keycodes to announce.
func (p *Desktop) OpenInput(func(code uint8)) (*input.Input, error) {
	be, err := NewInput(InputOptions{
		CallTimeout: p.timeout,
		Call: func(ctx context.Context, method string, params, result any) error {
			p.mu.Lock()
			h := p.helper
			p.mu.Unlock()
			if h == nil {
				return errors.New("the capture helper is not set up yet")
			}
			return h.Call(ctx, method, params, result)
		},
	})
	if err != nil {
		return nil, err
	}
	return input.New(be), nil
}

// WatchEscape logs that there is no Escape watcher on Wayland and watches
// nothing: the compositor gives no client the keys pressed in other apps.
func (p *Desktop) WatchEscape(func()) (own func(code uint8), stop func(), err error) {
	p.log.Warn("Escape on the keyboard will not stop deskhand on Wayland", "err", ErrNoEscapeWatcher)
	return func(uint8) {}, func() {}, nil
}

// KeepClipboard hands the text put back at exit to a keeper process (the
// helper's keep mode), since a data-control source dies with the helper.
func (p *Desktop) KeepClipboard(ctx context.Context, helper string, s cleanup.Stash) error {
	return Keep(ctx, helper, p.env, s)
}

func (p *Desktop) Notify(ctx context.Context, summary, body string) error {
	return (&freedesktop.Notifier{}).Notify(ctx, summary, body)
}

func (p *Desktop) ResolveApp(name string) (bridge.App, error) { return p.apps.ResolveApp(name) }

// InstalledApps lists the apps of the installed desktop entries.
func (p *Desktop) InstalledApps(ctx context.Context, helper *bridge.Client) ([]bridge.App, error) {
	return freedesktop.InstalledApps(ctx, helper)
}

// Launcher launches apps from their desktop entries into the Wayland
// session (the environment names WAYLAND_DISPLAY and no DISPLAY).
func (p *Desktop) Launcher(helper *bridge.Client) desktop.Launcher {
	p.setHelper(helper)
	return p.apps.Launcher(freedesktop.LauncherOptions{Helper: helper, Env: p.env, Logger: p.log.With("component", "launch")})
}

// SessionCapture is nil: the gates' masking is all a capture needs.
func (p *Desktop) SessionCapture(*bridge.Client, *consent.Session) desktop.Capture { return nil }

// Drawn is nil: the helper compares pixels for the staleness gate.
func (p *Desktop) Drawn() desktop.Drawn { return nil }

// NoStacking is the gates' refusal where a point lies in more than one
// window: Wayland does not say which of them is on top. KWin does: its
// kde-kwin window list is top first, and the display gate refuses every
// action unless the helper is that backend with window_at, which needs
// the stacking order (GateKDE).
func (p *Desktop) NoStacking() error {
	if p.kde {
		return nil
	}
	return ErrNoWindowAt
}

// Close stops the private sway, if deskhand started one; the apps in it
// exit as their Wayland connection ends.
func (p *Desktop) Close() {
	if p.private != nil {
		if err := p.private.Close(); err != nil {
			p.log.Warn("stopping the private sway desktop", "err", err)
		}
	}
}
