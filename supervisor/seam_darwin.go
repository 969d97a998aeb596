package supervisor

import (
	"context"
	"log/slog"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/desktop"
	"github.com/deskhand/deskhand/supervisor/desktop/macos"
)

// clipboardKeeper: the macOS pasteboard needs no keeper.
func clipboardKeeper(*bridge.Client, string) func(context.Context, cleanup.Stash) error {
	return func(context.Context, cleanup.Stash) error { return nil }
}

// openPlatform opens the macOS desktop: the user's screen, never a
// virtual one.
func openPlatform(ctx context.Context, virtualDisplay string, logger *slog.Logger) (desktop.Platform, error) {
	return macos.Open(ctx, macos.Options{VirtualDisplay: virtualDisplay, Logger: logger})
}
