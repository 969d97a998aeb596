package freedesktop

import (
	"errors"
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
