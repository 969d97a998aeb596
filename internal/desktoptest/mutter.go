//go:build mutter && unix

package desktoptest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// MutterOptions configure a headless mutter desktop.
type MutterOptions struct {
	Width, Height int // the virtual monitor's mode; default 1280x720
}

// Mutter is a headless GNOME compositor: mutter --headless with one
// virtual monitor, Wayland only, on a private session bus, with the
// PipeWire daemon and session manager its ScreenCast streams need.
//
// Everything runs as WaylandUser in a private XDG_RUNTIME_DIR, as a login
// session would have (mutter does not need root, and sharing the account
// with the sway harness keeps one unprivileged user). The session bus
// activates nothing (no service directories), so every name on it belongs
// to a process the harness started; it admits other users, so the helper
// and gdbus, run as root by the tests, can call mutter as the session's own
// tools would.
type Mutter struct {
	*userSession
	mutter *proc
}

// mutterTools are the programs the harness needs.
var mutterTools = []string{"mutter", "dbus-daemon", "gdbus", "pipewire", "wireplumber", "useradd"}

// StartMutter starts headless mutter for the test, with teardown in
// t.Cleanup. A missing tool skips the test, failing it under CI.
func StartMutter(t testing.TB, opts MutterOptions) *Mutter {
	t.Helper()
	Require(t, mutterTools...)
	m, err := LaunchMutter(opts)
	if err != nil {
		t.Fatalf("starting headless mutter: %v", err)
	}
	t.Cleanup(func() {
		if err := m.Close(); err != nil {
			t.Errorf("tearing down headless mutter: %v", err)
		}
	})
	return m
}

// LaunchMutter starts headless mutter without a test; the caller must
// Close.
func LaunchMutter(opts MutterOptions) (*Mutter, error) {
	if err := lookTools(mutterTools...); err != nil {
		return nil, fmt.Errorf("%w (on Debian: apt-get install mutter pipewire wireplumber dbus libglib2.0-bin)", err)
	}
	if opts.Width == 0 {
		opts.Width, opts.Height = 1280, 720
	}
	s, err := newUserSession("mutter")
	if err != nil {
		return nil, err
	}
	s.display = "wayland-deskhand"
	s.userVars = []string{"XDG_CURRENT_DESKTOP=GNOME"}
	s.clientVars = []string{"XDG_CURRENT_DESKTOP=GNOME", "XDG_SESSION_TYPE=wayland"}
	m := &Mutter{userSession: s}
	if err := m.start(opts); err != nil {
		_ = m.Close()
		return nil, err
	}
	return m, nil
}

func (m *Mutter) start(opts MutterOptions) error {
	if err := m.startBus(); err != nil {
		return err
	}
	pw, err := m.startDaemon("pipewire", nil)
	if err != nil {
		return err
	}
	if err := m.waitFor(30*time.Second, pw, "the PipeWire socket", func() bool {
		_, err := os.Stat(filepath.Join(m.dir, "pipewire-0"))
		return err == nil
	}); err != nil {
		return err
	}
	// wireplumber links the helper's stream to mutter's node; nothing
	// else here would.
	if _, err := m.startDaemon("wireplumber", nil); err != nil {
		return err
	}
	m.mutter, err = m.startDaemon("mutter", nil, "--headless", "--wayland", "--no-x11",
		"--virtual-monitor", fmt.Sprintf("%dx%d", opts.Width, opts.Height), "--wayland-display="+m.display)
	if err != nil {
		return err
	}
	return m.waitFor(60*time.Second, m.mutter, "mutter's ScreenCast and RemoteDesktop services", func() bool {
		if _, err := os.Stat(filepath.Join(m.dir, m.display)); err != nil {
			return false
		}
		for _, name := range []string{"org.gnome.Mutter.ScreenCast", "org.gnome.Mutter.RemoteDesktop", "org.gnome.Mutter.DisplayConfig"} {
			out, err := m.gdbus("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", name)
			if err != nil || !strings.Contains(out, "true") {
				return false
			}
		}
		return true
	})
}

// Bus is the session bus address.
func (m *Mutter) Bus() string { return m.bus }

// MutterLog is the end of mutter's own log, for failure messages.
func (m *Mutter) MutterLog() string {
	if m.mutter == nil {
		return ""
	}
	return m.mutter.logTail()
}

// Close stops the apps, then mutter, wireplumber, pipewire and the bus (in
// the reverse order of their start), then any stray process of this
// session, and removes the runtime directory.
func (m *Mutter) Close() error { return m.close() }
