//go:build unix

package desktoptest

import (
	"bufio"
	"context"
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

// Accessibility is the AT-SPI stack of one desktop: a private session bus
// and the accessibility bus at-spi-bus-launcher started for it, with the
// registry already running. Apps and tools started on the desktop after
// [Desktop.StartAccessibility] find it through [Desktop.Env] and
// [Desktop.AppEnv], as they would in a real session.
type Accessibility struct {
	// SessionBus is the private session bus address (DBUS_SESSION_BUS_ADDRESS).
	SessionBus string
	// Bus is the accessibility bus address that org.a11y.Bus.GetAddress gives.
	Bus string
}

// a11yEnv is the environment that turns accessibility on: the bridges load
// (no NO_AT_BRIDGE), GTK 4 uses AT-SPI, Qt exposes its tree. GTK 4 registers
// with the registry from an idle callback, which gtk4-widget-factory's
// animations starve forever under software GL on Xvfb (checked on Debian 12,
// GTK 4.8.3: no Embed call ever reaches the bus); the cairo renderer leaves
// the main loop idle time.
var a11yEnv = []string{"GTK_A11Y=atspi", "GSK_RENDERER=cairo", "QT_ACCESSIBILITY=1", "QT_LINUX_ACCESSIBILITY_ALWAYS_ON=1"}

// sessionBusConfig is a session bus with NO service directories: nothing
// gets activated behind the test's back (dconf, portals, a second
// org.a11y.Bus), so every process on the bus is one the harness started.
const sessionBusConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=%s</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// busLauncher is where Debian's at-spi2-core installs the launcher.
const busLauncher = "/usr/libexec/at-spi-bus-launcher"

// StartAccessibility starts the desktop's AT-SPI stack (see
// [Desktop.LaunchAccessibility]). It skips the test when dbus-daemon, gdbus
// or at-spi2-core is missing (fails under CI) and fails it when the stack
// does not come up. Start it before the apps that should be accessible.
func (d *Desktop) StartAccessibility(t testing.TB) *Accessibility {
	t.Helper()
	a, err := d.LaunchAccessibility()
	if errors.Is(err, ErrMissingTool) {
		skipOrFail(t, "no accessibility bus: %v", err)
	}
	if err != nil {
		t.Fatalf("starting accessibility: %v", err)
	}
	return a
}

// LaunchAccessibility starts, as a desktop session does, a private session
// bus (dbus-daemon with a configuration that activates nothing), then
// at-spi-bus-launcher --launch-immediately on it, and calls the registry
// once so it is running before any app looks for it. From then on Env
// carries DBUS_SESSION_BUS_ADDRESS, and AppEnv also drops NO_AT_BRIDGE and
// sets GTK_A11Y=atspi and QT_ACCESSIBILITY=1. Everything it starts is
// stopped by Close. Calling it again returns the running stack.
func (d *Desktop) LaunchAccessibility() (*Accessibility, error) {
	d.mu.Lock()
	a := d.a11y
	d.mu.Unlock()
	if a != nil {
		return a, nil
	}
	if err := lookTools("dbus-daemon", "gdbus"); err != nil {
		return nil, fmt.Errorf("%w (on Debian: apt-get install dbus libglib2.0-bin at-spi2-core)", err)
	}
	if err := checkExecutable(busLauncher); err != nil {
		return nil, fmt.Errorf("%w: %s: %v (on Debian: apt-get install at-spi2-core)", ErrMissingTool, busLauncher, err)
	}

	sock := filepath.Join(d.dir, "runtime", "session-bus")
	conf := filepath.Join(d.dir, "session-bus.conf")
	if err := os.WriteFile(conf, fmt.Appendf(nil, sessionBusConfig, sock), 0o600); err != nil {
		return nil, fmt.Errorf("writing session bus config: %w", err)
	}
	bus, err := d.startSessionBus(conf)
	if err != nil {
		return nil, err
	}
	a = &Accessibility{SessionBus: bus}
	d.mu.Lock()
	d.a11y = a // AppEnv now points at the private bus
	d.mu.Unlock()

	cmd := exec.Command(busLauncher, "--launch-immediately")
	cmd.Env = d.AppEnv()
	cmd.Dir = d.dir
	launcher, err := startProc("at-spi-bus-launcher", cmd, filepath.Join(d.dir, "logs", "at-spi-bus-launcher.log"), syscall.SIGKILL)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.daemons = append(d.daemons, launcher)
	d.mu.Unlock()

	// The launcher owns org.a11y.Bus once the accessibility bus is up;
	// the registry is activated on that bus by the first call to it.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := d.gdbus(5*time.Second, "--address", bus, "--dest", "org.a11y.Bus",
			"--object-path", "/org/a11y/bus", "--method", "org.a11y.Bus.GetAddress")
		if err == nil {
			a.Bus = parseGVariantString(out)
			if a.Bus != "" {
				break
			}
		}
		if launcher.exited() {
			return nil, fmt.Errorf("at-spi-bus-launcher exited (%v): %s", launcher.err, launcher.logTail())
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("org.a11y.Bus did not answer GetAddress within 30s (last: %v %q): %s", err, out, launcher.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		// GetChildren on the desktop root starts at-spi2-registryd and
		// returns once it serves; apps that start later register with it.
		_, err := d.gdbus(10*time.Second, "--address", a.Bus, "--dest", "org.a11y.atspi.Registry",
			"--object-path", "/org/a11y/atspi/accessible/root", "--method", "org.a11y.atspi.Accessible.GetChildren")
		if err == nil {
			return a, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("the AT-SPI registry did not answer within 30s: %v: %s", err, launcher.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Accessibility returns the desktop's AT-SPI stack, nil before
// LaunchAccessibility.
func (d *Desktop) Accessibility() *Accessibility { return d.accessibility() }

// startSessionBus runs dbus-daemon with conf and returns the address it
// prints once it listens.
func (d *Desktop) startSessionBus(conf string) (string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("creating bus address pipe: %w", err)
	}
	defer r.Close()
	cmd := exec.Command("dbus-daemon", "--config-file="+conf, "--nofork", "--nopidfile", "--print-address=3")
	cmd.ExtraFiles = []*os.File{w}
	cmd.Env = d.Env()
	cmd.Dir = d.dir
	p, err := startProc("dbus-daemon", cmd, filepath.Join(d.dir, "logs", "session-bus.log"), syscall.SIGKILL)
	w.Close()
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	d.daemons = append(d.daemons, p)
	d.mu.Unlock()
	ch := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		ch <- strings.TrimSpace(line)
	}()
	select {
	case addr := <-ch:
		if addr == "" {
			<-p.done
			return "", fmt.Errorf("dbus-daemon --config-file=%s printed no address (%v): %s", conf, p.err, p.logTail())
		}
		return addr, nil
	case <-time.After(20 * time.Second):
		return "", fmt.Errorf("dbus-daemon did not print its address within 20s: %s", p.logTail())
	}
}

// gdbus calls one method with `gdbus call` and returns its output.
func (d *Desktop) gdbus(timeout time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "gdbus", append([]string{"call", "--timeout", "5"}, args...)...)
	cmd.Env = d.Env()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("gdbus call %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// parseGVariantString returns the string in gdbus's "('value',)" output.
func parseGVariantString(out string) string {
	out = strings.TrimSpace(out)
	i, j := strings.IndexByte(out, '\''), strings.LastIndexByte(out, '\'')
	if i < 0 || j <= i {
		return ""
	}
	return out[i+1 : j]
}

// GTK3WidgetFactory is gtk3-widget-factory (Debian: gtk-3-examples), a GTK 3
// window with every common widget.
func GTK3WidgetFactory() App {
	return App{Name: "gtk3-widget-factory", Class: "Gtk3-widget-factory"}
}

// GTK4WidgetFactory is gtk4-widget-factory (Debian: gtk-4-examples).
func GTK4WidgetFactory() App {
	return App{Name: "gtk4-widget-factory", Class: "Gtk4-widget-factory"}
}
