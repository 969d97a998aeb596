package desktoptest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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
	id       string
	dir      string
	display  string // WAYLAND_DISPLAY
	bus      string // DBUS_SESSION_BUS_ADDRESS
	uid, gid int
	home     string
	daemons  []*proc // dbus-daemon, pipewire, wireplumber, mutter (started in that order)
	mutter   *proc
	apps     []*proc
}

// mutterBusConfig is the private session bus: no service directories, and
// <allow user="*"/> so root's helper may connect to a bus WaylandUser runs.
const mutterBusConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

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
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: the headless mutter harness runs as root (it starts mutter as the user %s)", ErrMissingTool, WaylandUser)
	}
	if err := lookTools(mutterTools...); err != nil {
		return nil, fmt.Errorf("%w (on Debian: apt-get install mutter pipewire wireplumber dbus libglib2.0-bin)", err)
	}
	if opts.Width == 0 {
		opts.Width, opts.Height = 1280, 720
	}
	uid, gid, _, err := waylandAccount()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "deskhand-mutter-")
	if err != nil {
		return nil, fmt.Errorf("creating the runtime dir: %w", err)
	}
	m := &Mutter{id: "mutter-" + filepath.Base(dir), dir: dir, uid: uid, gid: gid,
		display: "wayland-deskhand", home: filepath.Join(dir, "home")}
	m.bus = "unix:path=" + filepath.Join(dir, "bus")
	if err := m.prepare(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := m.start(opts); err != nil {
		_ = m.Close()
		return nil, err
	}
	return m, nil
}

// prepare makes the runtime dir private to WaylandUser and writes the bus
// configuration.
func (m *Mutter) prepare() error {
	if err := os.Mkdir(m.home, 0o700); err != nil {
		return fmt.Errorf("creating the session's home: %w", err)
	}
	for _, p := range []string{m.dir, m.home} {
		if err := os.Chown(p, m.uid, m.gid); err != nil {
			return fmt.Errorf("giving %s to %s: %w", p, WaylandUser, err)
		}
	}
	if err := os.Chmod(m.dir, 0o700); err != nil {
		return fmt.Errorf("making the runtime dir private: %w", err)
	}
	conf := fmt.Sprintf(mutterBusConfig, filepath.Join(m.dir, "bus"))
	if err := os.WriteFile(filepath.Join(m.dir, "bus.conf"), []byte(conf), 0o644); err != nil {
		return fmt.Errorf("writing the session bus config: %w", err)
	}
	return nil
}

// userEnv is the environment of the session's own processes.
func (m *Mutter) userEnv() []string {
	return []string{
		"HOME=" + m.home,
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"XDG_RUNTIME_DIR=" + m.dir,
		"DBUS_SESSION_BUS_ADDRESS=" + m.bus,
		"XDG_CURRENT_DESKTOP=GNOME",
		"XDG_SESSION_TYPE=wayland",
		// No dconf on this bus: settings live in memory.
		"GSETTINGS_BACKEND=memory",
		"LANG=C.UTF-8",
		"SHELL=/bin/sh",
		idVar + "=" + m.id,
	}
}

func (m *Mutter) startDaemon(name string, env []string, args ...string) (*proc, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = m.dir
	cmd.Env = append(m.userEnv(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(m.uid), Gid: uint32(m.gid)}}
	p, err := startProc(name, cmd, filepath.Join(m.dir, name+".log"), syscall.SIGKILL)
	if err != nil {
		return nil, err
	}
	m.daemons = append(m.daemons, p)
	return p, nil
}

func (m *Mutter) start(opts MutterOptions) error {
	bus, err := m.startDaemon("dbus-daemon", nil, "--config-file="+filepath.Join(m.dir, "bus.conf"), "--nofork", "--nopidfile")
	if err != nil {
		return err
	}
	if err := m.waitFor(30*time.Second, bus, "the session bus", func() bool {
		_, err := m.gdbus("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.GetId")
		return err == nil
	}); err != nil {
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

// waitFor polls ready until it holds, p exits or timeout passes.
func (m *Mutter) waitFor(timeout time.Duration, p *proc, what string, ready func() bool) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if ready() {
			return nil
		}
		if p.exited() {
			return fmt.Errorf("%s exited before %s came up: %v\n%s", p.name, what, p.err, p.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s did not come up within %v:\n%s", what, timeout, p.logTail())
}

// gdbus calls one method on the session bus, as root.
func (m *Mutter) gdbus(dest, path, method string, args ...string) (string, error) {
	out, err := m.output(15*time.Second, "gdbus", append([]string{"call", "--timeout", "10", "--address", m.bus,
		"--dest", dest, "--object-path", path, "--method", method}, args...)...)
	return out, err
}

// Display is WAYLAND_DISPLAY; Dir the runtime directory; Bus the session
// bus address.
func (m *Mutter) Display() string { return m.display }
func (m *Mutter) Dir() string     { return m.dir }
func (m *Mutter) Bus() string     { return m.bus }

// UID and GID are those of WaylandUser, who owns the session.
func (m *Mutter) UID() int { return m.uid }
func (m *Mutter) GID() int { return m.gid }

// Env is the environment a client of this GNOME session has: no DISPLAY
// or SWAYSOCK, WAYLAND_DISPLAY, XDG_RUNTIME_DIR (where PipeWire's socket
// is), the session bus and XDG_CURRENT_DESKTOP=GNOME.
func (m *Mutter) Env() []string {
	env := withoutVars(os.Environ(), "DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "SWAYSOCK",
		"XAUTHORITY", "DESKHAND_HELPER_BACKEND", "DBUS_SESSION_BUS_ADDRESS", "XDG_CURRENT_DESKTOP",
		"XDG_SESSION_TYPE", idVar)
	return append(env, "WAYLAND_DISPLAY="+m.display, "XDG_RUNTIME_DIR="+m.dir,
		"DBUS_SESSION_BUS_ADDRESS="+m.bus, "XDG_CURRENT_DESKTOP=GNOME", "XDG_SESSION_TYPE=wayland", idVar+"="+m.id)
}

// Command is a tool run as root in the session's environment.
func (m *Mutter) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = m.Env()
	return cmd
}

func (m *Mutter) output(timeout time.Duration, name string, args ...string) (string, error) {
	cmd := m.Command(name, args...)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
		<-done
		return string(out), fmt.Errorf("%s did not finish within %v", name, timeout)
	}
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// StartApp starts a Wayland app as WaylandUser in the session; it is
// stopped with the compositor. Files it writes should go in Dir.
func (m *Mutter) StartApp(t testing.TB, name string, args ...string) int {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = m.dir
	cmd.Env = append(m.userEnv(), "WAYLAND_DISPLAY="+m.display, "GDK_BACKEND=wayland", "NO_AT_BRIDGE=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(m.uid), Gid: uint32(m.gid)}}
	p, err := startProc(name, cmd, filepath.Join(m.dir, fmt.Sprintf("app-%d.log", len(m.apps))), syscall.SIGKILL)
	if err != nil {
		t.Fatal(err)
	}
	m.apps = append(m.apps, p)
	return p.pid()
}

// AppLog is the output of the i-th app StartApp started.
func (m *Mutter) AppLog(i int) string {
	if i < 0 || i >= len(m.apps) {
		return ""
	}
	return m.apps[i].logTail()
}

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
func (m *Mutter) Close() error {
	var errs []error
	stopAll(m.apps, &errs)
	for i := len(m.daemons) - 1; i >= 0; i-- {
		if err := m.daemons[i].stop(stopTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	if err := sweep(m.id, stopTimeout); err != nil {
		errs = append(errs, err)
	}
	if err := os.RemoveAll(m.dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
