package freedesktop

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	"github.com/deskhand/deskhand/bridge"
)

// Apps is a desktop's launcher, which exists only once serve has the
// capture helper (it reads the desktop entries) while ResolveApp may be
// asked before: the one plumbing of the X11 and Wayland desktops. The zero
// value is ready to use.
type Apps struct {
	mu       sync.Mutex
	launcher *Launcher
}

// Launcher makes the desktop's launcher with opts, which ResolveApp then
// uses too.
func (a *Apps) Launcher(opts LauncherOptions) *Launcher {
	l := NewLauncher(opts)
	a.mu.Lock()
	a.launcher = l
	a.mu.Unlock()
	return l
}

// ResolveApp finds an app's identity from its desktop entry, in the
// capture helper's index (the one the helper names windows from), once
// Launcher has been called.
func (a *Apps) ResolveApp(name string) (bridge.App, error) {
	a.mu.Lock()
	l := a.launcher
	a.mu.Unlock()
	if l == nil {
		return bridge.App{}, errors.New("resolving an app: the capture helper is not set up yet")
	}
	return l.ResolveApp(name)
}

// InstalledApps lists the apps of the installed desktop entries, read by
// helper.
func InstalledApps(ctx context.Context, helper AppIndex) ([]bridge.App, error) {
	entries, err := LoadEntries(ctx, helper)
	if err != nil {
		return nil, err
	}
	var apps []bridge.App
	for _, e := range entries {
		app := bridge.App{Name: e.Name, DesktopID: e.ID, Class: e.StartupWMClass}
		if argv, err := e.Command(); err == nil && len(argv) > 0 {
			app.Exe = filepath.Base(argv[0])
		}
		apps = append(apps, app)
	}
	return apps, nil
}
