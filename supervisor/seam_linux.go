package supervisor

import (
	"context"
	"log/slog"
	"os"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/desktop"
	"github.com/deskhand/deskhand/supervisor/desktop/wayland"
	"github.com/deskhand/deskhand/supervisor/desktop/x11"
)

// clipboardKeeper keeps the clipboard text put back on display after
// deskhand exits, as the platform's KeepClipboard does, for the turn
// journal's repair outside serve (doctor --repair).
func clipboardKeeper(helper *bridge.Client, display string) func(context.Context, cleanup.Stash) error {
	if wl, ok := wayland.Session(os.Environ()); ok && wl == display {
		return func(ctx context.Context, s cleanup.Stash) error {
			return wayland.Keep(ctx, helper.Path(), os.Environ(), s)
		}
	}
	return func(ctx context.Context, s cleanup.Stash) error { return x11.Keep(ctx, helper.Path(), display, s) }
}

// openPlatform opens the native Wayland session when WAYLAND_DISPLAY is
// set and DISPLAY is not, or a private headless sway, as
// wayland.PlanDisplay decides (the display gate then checks for the
// compositor's protocols), else the X11 desktop: the user's DISPLAY, or a
// private Xvfb desktop (see x11.PlanDisplay).
func openPlatform(ctx context.Context, virtualDisplay string, logger *slog.Logger) (desktop.Platform, error) {
	wl, x11Flag, err := wayland.Open(ctx, wayland.Options{VirtualDisplay: virtualDisplay, Env: os.Environ(), CallTimeout: helperCallTimeout, Logger: logger})
	if err != nil {
		return nil, err
	}
	if wl != nil {
		return wl, nil
	}
	return x11.Open(ctx, x11.Options{VirtualDisplay: x11Flag, Env: os.Environ(), Logger: logger})
}
