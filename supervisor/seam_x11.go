//go:build !darwin

package supervisor

import (
	"context"
	"log/slog"
	"os"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/desktop/x11"
)

// clipboardKeeper keeps the clipboard text put back on display after
// deskhand exits, as the platform's KeepClipboard does, for the turn
// journal's repair outside serve (doctor --repair).
func clipboardKeeper(helper *bridge.Client, display string) func(context.Context, cleanup.Stash) error {
	return func(ctx context.Context, s cleanup.Stash) error { return x11.Keep(ctx, helper.Path(), display, s) }
}

// openPlatform opens the X11 desktop: the user's DISPLAY, or a private
// Xvfb desktop (see x11.PlanDisplay). A Wayland platform would be chosen
// here, by WAYLAND_DISPLAY, once one exists; until then a Wayland session
// runs on its XWayland display, which the display gate refuses.
func openPlatform(ctx context.Context, virtualDisplay string, logger *slog.Logger) (desktopPlatform, error) {
	return x11.Open(ctx, x11.Options{VirtualDisplay: virtualDisplay, Env: os.Environ(), Logger: logger})
}
