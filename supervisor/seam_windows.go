package supervisor

import (
	"context"
	"log/slog"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/desktop"
	"github.com/deskhand/deskhand/supervisor/desktop/windows"
	"github.com/deskhand/deskhand/supervisor/input"
)

// clipboardKeeper: Windows keeps clipboard text after its owner exits.
func clipboardKeeper(*bridge.Client, string) func(context.Context, cleanup.Stash) error {
	return func(context.Context, cleanup.Stash) error { return nil }
}

// openPlatform opens the Windows session deskhand runs in.
func openPlatform(ctx context.Context, virtualDisplay string, logger *slog.Logger) (desktop.Platform, error) {
	d, err := windows.Open(ctx, windows.Options{VirtualDisplay: virtualDisplay, Logger: logger})
	if err != nil {
		return nil, err
	}
	return windowsPlatform{d}, nil
}

// windowsPlatform adds the input to windows.Desktop: SendInput, made
// into whole gestures by windows.Backend.
type windowsPlatform struct{ *windows.Desktop }

func (p windowsPlatform) OpenInput(func(code uint8)) (*input.Input, error) {
	return input.New(windows.NewBackend(windows.NewInput())), nil
}

var _ desktop.Platform = windowsPlatform{}
