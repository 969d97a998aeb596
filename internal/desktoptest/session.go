//go:build unix

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

// userSession is what every headless Wayland compositor harness (sway,
// mutter, KWin) shares: the compositor and its apps run as WaylandUser in a
// private XDG_RUNTIME_DIR owned by it, mode 0700, as a login session would
// have; the test and its reference tools run as root, which reaches the
// sockets there only because root passes the directory's permissions.
type userSession struct {
	id       string // DESKHAND_DESKTOP_ID of everything the session starts
	dir      string // runtime dir: sockets, config, logs
	home     string // HOME of the session's processes, inside dir
	display  string // WAYLAND_DISPLAY, a name inside dir
	bus      string // DBUS_SESSION_BUS_ADDRESS, "" without a session bus
	uid, gid int

	// userVars are added to the environment of the session's own
	// processes (the compositor, its daemons and apps).
	userVars []string
	// clientVars are added to Env, for clients run as root.
	clientVars []string

	daemons []*proc // started in order, stopped in reverse
	apps    []*proc
}

// sessionVars are the variables Env replaces in the test's environment,
// so a client never reaches a session other than this one.
var sessionVars = []string{"DISPLAY", "WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "SWAYSOCK", "XAUTHORITY",
	"DESKHAND_HELPER_BACKEND", "DBUS_SESSION_BUS_ADDRESS", "XDG_CURRENT_DESKTOP", "XDG_SESSION_TYPE", idVar}

// newUserSession creates WaylandUser when missing, and a runtime dir
// (prefix names it and the session id) with a home in it, both private
// to that user.
func newUserSession(prefix string) (*userSession, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: the headless %s harness runs as root (it starts the compositor as the user %s)",
			ErrMissingTool, prefix, WaylandUser)
	}
	uid, gid, _, err := waylandAccount()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "deskhand-"+prefix+"-")
	if err != nil {
		return nil, fmt.Errorf("creating the runtime dir: %w", err)
	}
	s := &userSession{id: prefix + "-" + filepath.Base(dir), dir: dir, home: filepath.Join(dir, "home"), uid: uid, gid: gid}
	if err := s.prepare(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

func (s *userSession) prepare() error {
	if err := os.Mkdir(s.home, 0o700); err != nil {
		return fmt.Errorf("creating the session's home: %w", err)
	}
	for _, p := range []string{s.dir, s.home} {
		if err := os.Chown(p, s.uid, s.gid); err != nil {
			return fmt.Errorf("giving %s to %s: %w", p, WaylandUser, err)
		}
	}
	if err := os.Chmod(s.dir, 0o700); err != nil {
		return fmt.Errorf("making the runtime dir private: %w", err)
	}
	return nil
}

// writeFile writes a file of the session's into the runtime dir, owned by
// WaylandUser.
func (s *userSession) writeFile(name, text string) error {
	p := filepath.Join(s.dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", p, err)
	}
	return os.Chown(p, s.uid, s.gid)
}

// userEnv is the environment of the session's own processes.
func (s *userSession) userEnv() []string {
	bus := s.bus
	if bus == "" {
		// No session bus: GTK's lookups fail at once instead of
		// reaching the test process's bus.
		bus = "unix:path=" + filepath.Join(s.dir, "no-session-bus")
	}
	env := []string{
		"HOME=" + s.home,
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"XDG_RUNTIME_DIR=" + s.dir,
		"DBUS_SESSION_BUS_ADDRESS=" + bus,
		"XDG_SESSION_TYPE=wayland",
		// No dconf: settings live in memory.
		"GSETTINGS_BACKEND=memory",
		"LANG=C.UTF-8",
		"SHELL=/bin/sh",
		idVar + "=" + s.id,
	}
	return append(env, s.userVars...)
}

// startAs starts a process of the session's as WaylandUser, logging to
// <dir>/<log>.
func (s *userSession) startAs(name, log string, env []string, args ...string) (*proc, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = s.dir
	cmd.Env = append(s.userEnv(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.gid)}}
	return startProc(filepath.Base(name), cmd, filepath.Join(s.dir, log), syscall.SIGKILL)
}

// startDaemon starts one of the session's services; Close stops it after
// the apps, in the reverse order of the starts.
func (s *userSession) startDaemon(name string, env []string, args ...string) (*proc, error) {
	p, err := s.startAs(name, filepath.Base(name)+".log", env, args...)
	if err != nil {
		return nil, err
	}
	s.daemons = append(s.daemons, p)
	return p, nil
}

// waitFor polls ready until it holds, p exits or timeout passes.
func (s *userSession) waitFor(timeout time.Duration, p *proc, what string, ready func() bool) error {
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

// Display is WAYLAND_DISPLAY; Dir the runtime directory.
func (s *userSession) Display() string { return s.display }
func (s *userSession) Dir() string     { return s.dir }

// UID and GID are those of WaylandUser, who owns the session.
func (s *userSession) UID() int { return s.uid }
func (s *userSession) GID() int { return s.gid }

// Env is the environment a client of this session has when the test runs
// it as root: the test's own without DISPLAY (so the helper picks its
// Wayland backend) or any other session's variables, plus
// WAYLAND_DISPLAY, XDG_RUNTIME_DIR, the session bus when there is one and
// the compositor's own variables.
func (s *userSession) Env() []string {
	env := append(withoutVars(os.Environ(), sessionVars...),
		"WAYLAND_DISPLAY="+s.display, "XDG_RUNTIME_DIR="+s.dir, idVar+"="+s.id)
	if s.bus != "" {
		env = append(env, "DBUS_SESSION_BUS_ADDRESS="+s.bus)
	}
	return append(env, s.clientVars...)
}

// Command is a reference tool run as root in the session's environment.
func (s *userSession) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = s.Env()
	return cmd
}

func (s *userSession) output(timeout time.Duration, name string, args ...string) (string, error) {
	return runCmd(s.Command(name, args...), timeout)
}

// runCmd runs cmd, killing it after timeout, and returns its combined
// output.
func runCmd(cmd *exec.Cmd, timeout time.Duration) (string, error) {
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
		return string(out), fmt.Errorf("%s did not finish within %v", cmd.Path, timeout)
	}
	if err != nil {
		return string(out), fmt.Errorf("%s: %w: %s", strings.Join(cmd.Args, " "), err, out)
	}
	return string(out), nil
}

// Run runs a reference tool and returns its output, failing the test on
// error.
func (s *userSession) Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := s.output(60*time.Second, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// StartApp starts a Wayland app (GTK ones with GDK_BACKEND=wayland) as
// WaylandUser in the session; it is stopped with the compositor. Files it
// writes should go in Dir.
func (s *userSession) StartApp(t testing.TB, name string, args ...string) int {
	t.Helper()
	p, err := s.startAs(name, fmt.Sprintf("app-%d.log", len(s.apps)),
		[]string{"WAYLAND_DISPLAY=" + s.display, "GDK_BACKEND=wayland", "NO_AT_BRIDGE=1"}, args...)
	if err != nil {
		t.Fatal(err)
	}
	s.apps = append(s.apps, p)
	return p.pid()
}

// Exited reports whether the app StartApp returned pid for has exited.
func (s *userSession) Exited(pid int) bool {
	for _, p := range s.apps {
		if p.pid() == pid {
			return p.exited()
		}
	}
	return true
}

// AppLog is the end of the output of the i-th app StartApp started.
func (s *userSession) AppLog(i int) string {
	if i < 0 || i >= len(s.apps) {
		return ""
	}
	return s.apps[i].logTail()
}

// close stops the apps, then the daemons in the reverse order of their
// start, then any stray process of the session, and removes the runtime
// dir.
func (s *userSession) close() error {
	var errs []error
	stopAll(s.apps, &errs)
	for i := len(s.daemons) - 1; i >= 0; i-- {
		if err := s.daemons[i].stop(stopTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	if err := sweep(s.id, stopTimeout); err != nil {
		errs = append(errs, err)
	}
	if err := os.RemoveAll(s.dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// userBusConfig is a private session bus: no service directories, so
// every name on it belongs to a process the harness started, and
// <allow user="*"/> so the test's root tools may call a bus WaylandUser
// runs, as the session's own tools would.
const userBusConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
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

// startBus starts the session's private bus and waits until it answers.
func (s *userSession) startBus() error {
	path := filepath.Join(s.dir, "bus")
	conf := filepath.Join(s.dir, "bus.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(userBusConfig, path)), 0o644); err != nil {
		return fmt.Errorf("writing the session bus config: %w", err)
	}
	s.bus = "unix:path=" + path
	p, err := s.startDaemon("dbus-daemon", nil, "--config-file="+conf, "--nofork", "--nopidfile")
	if err != nil {
		return err
	}
	return s.waitFor(30*time.Second, p, "the session bus", func() bool {
		_, err := s.gdbus("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.GetId")
		return err == nil
	})
}

// gdbus calls one method on the session bus, as root.
func (s *userSession) gdbus(dest, path, method string, args ...string) (string, error) {
	return s.output(15*time.Second, "gdbus", append([]string{"call", "--timeout", "10", "--address", s.bus,
		"--dest", dest, "--object-path", path, "--method", method}, args...)...)
}
