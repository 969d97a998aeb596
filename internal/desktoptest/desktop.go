//go:build unix

package desktoptest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/supervisor/desktop/x11/vdisplay"
)

// Options configure a desktop. The zero value is a 1920x1080, 24-bit
// screen managed by openbox.
type Options struct {
	Width, Height, Depth int // default 1920, 1080, 24

	// WindowManager is the window manager to run: "" or "openbox" runs
	// openbox with a private, predictable configuration; "none" runs none;
	// any other value is run as a command without arguments and waited
	// for like openbox.
	WindowManager string

	// Monitors, when set, are configured with SetMonitors after start.
	Monitors []Monitor
}

// Desktop is a running private X server with its window manager and the
// applications started on it.
type Desktop struct {
	display string // ":N"
	id      string // value of DESKHAND_DESKTOP_ID for everything it starts
	dir     string // private temporary directory, removed on Close
	opts    Options

	xvfb *proc
	wm   *proc

	mu      sync.Mutex
	apps    []*proc
	daemons []*proc        // session and accessibility buses, stopped after the apps
	a11y    *Accessibility // nil until LaunchAccessibility
	wine    *Wine          // nil until StartWine

	closeOnce sync.Once
	closeErr  error
}

// ErrMissingTool is wrapped by errors that mean a required program is not
// installed; tests skip on it (or fail under CI).
var ErrMissingTool = errors.New("required program not installed")

// InCI reports whether the tests run under CI (the CI environment variable is
// non-empty), where a missing prerequisite is a failure, not a skip.
func InCI() bool { return os.Getenv("CI") != "" }

// skipOrFail skips the test with the reason, or fails it under CI.
func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf(format+" (CI is set, so this is a failure, not a skip)", args...)
	}
	t.Skipf(format, args...)
}

// Require skips the test (fails it under CI) unless every tool is on PATH.
func Require(t testing.TB, tools ...string) {
	t.Helper()
	if err := lookTools(tools...); err != nil {
		skipOrFail(t, "%v", err)
	}
}

func lookTools(tools ...string) error {
	var missing []string
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			missing = append(missing, tool)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s not on PATH (on Debian: apt-get install xvfb openbox xterm zenity wmctrl xclip xdotool x11-apps x11-utils x11-xserver-utils imagemagick)",
		ErrMissingTool, strings.Join(missing, ", "))
}

// Start starts a desktop for the test and registers its teardown with
// t.Cleanup. It skips the test when Xvfb or the window manager is missing
// (fails under CI) and fails it when the desktop does not come up.
func Start(t testing.TB, opts Options) *Desktop {
	t.Helper()
	d, err := Launch(opts)
	if errors.Is(err, ErrMissingTool) {
		skipOrFail(t, "no desktop: %v", err)
	}
	if err != nil {
		t.Fatalf("starting desktop: %v", err)
	}
	t.Cleanup(func() {
		d.Close()
		if d.closeErr != nil {
			t.Errorf("tearing down desktop %s: %v", d.display, d.closeErr)
		}
	})
	return d
}

// Launch starts a desktop without a test; the caller must Close it. It is
// what Start and the withdesktop command use. Errors that mean a program
// is missing wrap ErrMissingTool.
func Launch(opts Options) (*Desktop, error) {
	if opts.Width == 0 {
		opts.Width = 1920
	}
	if opts.Height == 0 {
		opts.Height = 1080
	}
	if opts.Depth == 0 {
		opts.Depth = 24
	}
	if opts.WindowManager == "" {
		opts.WindowManager = "openbox"
	}
	if opts.Width < 1 || opts.Height < 1 {
		return nil, fmt.Errorf("screen size %dx%d: both sides must be positive", opts.Width, opts.Height)
	}
	tools := []string{"Xvfb", "xprop", "xwininfo"}
	if opts.WindowManager != "none" {
		tools = append(tools, opts.WindowManager)
	}
	if len(opts.Monitors) > 0 {
		tools = append(tools, "xrandr")
	}
	if err := lookTools(tools...); err != nil {
		return nil, err
	}

	var idBytes [8]byte
	if _, err := rand.Read(idBytes[:]); err != nil {
		return nil, fmt.Errorf("making desktop id: %w", err)
	}
	dir, err := os.MkdirTemp("", "deskhand-desktop-")
	if err != nil {
		return nil, fmt.Errorf("creating desktop directory: %w", err)
	}
	d := &Desktop{id: hex.EncodeToString(idBytes[:]), dir: dir, opts: opts}
	if err := d.launch(); err != nil {
		d.Close()
		if d.closeErr != nil {
			err = fmt.Errorf("%w (and tearing down: %v)", err, d.closeErr)
		}
		return nil, err
	}
	return d, nil
}

func (d *Desktop) launch() error {
	for _, sub := range []string{"home", "config", "data", "cache", "state", "runtime", "logs"} {
		if err := os.MkdirAll(filepath.Join(d.dir, sub), 0o700); err != nil {
			return fmt.Errorf("creating desktop directory: %w", err)
		}
	}
	if err := d.startXvfb(); err != nil {
		return err
	}
	if d.opts.WindowManager != "none" {
		if err := d.startWM(); err != nil {
			return err
		}
	}
	if len(d.opts.Monitors) > 0 {
		if err := d.setMonitors(d.opts.Monitors); err != nil {
			return err
		}
	}
	return nil
}

// startXvfb starts Xvfb and lets it pick a free display itself: it writes
// the number to the -displayfd pipe once it accepts connections.
func (d *Desktop) startXvfb() error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("creating display pipe: %w", err)
	}
	defer r.Close()
	screen := fmt.Sprintf("%dx%dx%d", d.opts.Width, d.opts.Height, d.opts.Depth)
	cmd := exec.Command("Xvfb",
		"-displayfd", "3", // ExtraFiles[0] is fd 3 in the child
		"-screen", "0", screen,
		"-nolisten", "tcp",
		"-noreset",
		"+extension", "RANDR")
	cmd.ExtraFiles = []*os.File{w}
	cmd.Env = d.baseEnv(false)
	cmd.Dir = d.dir
	d.xvfb, err = startProc("Xvfb", cmd, filepath.Join(d.dir, "logs", "xvfb.log"), syscall.SIGTERM)
	w.Close()
	if err != nil {
		return err
	}

	type result struct {
		line string
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		line, err := bufio.NewReader(r).ReadString('\n')
		ch <- result{line, err}
	}()
	select {
	case res := <-ch:
		n, convErr := strconv.Atoi(strings.TrimSpace(res.line))
		if convErr != nil || n < 0 {
			<-d.xvfb.done // the pipe closed without a number: Xvfb is exiting
			return fmt.Errorf("Xvfb -screen 0 %s did not start (%v): %s", screen, d.xvfb.err, d.xvfb.logTail())
		}
		d.display = ":" + strconv.Itoa(n)
	case <-time.After(20 * time.Second):
		return fmt.Errorf("Xvfb did not report a display within 20s: %s", d.xvfb.logTail())
	}
	return nil
}

// startWM starts the window manager and waits until it announces itself
// through EWMH: _NET_SUPPORTING_WM_CHECK on the root names a window that
// carries the same property pointing to itself.
func (d *Desktop) startWM() error {
	var args []string
	if d.opts.WindowManager == "openbox" {
		rc := filepath.Join(d.dir, "openbox-rc.xml")
		if err := os.WriteFile(rc, []byte(vdisplay.OpenboxConfig), 0o600); err != nil {
			return fmt.Errorf("writing openbox config: %w", err)
		}
		args = []string{"--config-file", rc, "--sm-disable"}
	}
	cmd := exec.Command(d.opts.WindowManager, args...)
	cmd.Env = d.AppEnv()
	cmd.Dir = filepath.Join(d.dir, "home")
	var err error
	d.wm, err = startProc(d.opts.WindowManager, cmd, filepath.Join(d.dir, "logs", "wm.log"), syscall.SIGTERM)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if d.wm.exited() {
			return fmt.Errorf("window manager %s exited during startup (%v): %s", d.opts.WindowManager, d.wm.err, d.wm.logTail())
		}
		if ok, _ := d.wmReady(); ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("window manager %s did not set _NET_SUPPORTING_WM_CHECK within 20s: %s", d.opts.WindowManager, d.wm.logTail())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func (d *Desktop) wmReady() (bool, error) {
	root, err := d.props("-root", "_NET_SUPPORTING_WM_CHECK")
	if err != nil {
		return false, err
	}
	check := root["_NET_SUPPORTING_WM_CHECK"].uints()
	if len(check) != 1 || check[0] == 0 {
		return false, nil
	}
	self, err := d.props(hexID(uint32(check[0])), "_NET_SUPPORTING_WM_CHECK")
	if err != nil {
		return false, nil // the check window may not exist yet
	}
	again := self["_NET_SUPPORTING_WM_CHECK"].uints()
	return len(again) == 1 && again[0] == check[0], nil
}

// Display returns the X display name, ":N".
func (d *Desktop) Display() string { return d.display }

// ID returns the value of DESKHAND_DESKTOP_ID that every process started on
// this desktop carries (see TaggedProcesses).
func (d *Desktop) ID() string { return d.id }

// Dir returns the desktop's private temporary directory (removed on Close).
func (d *Desktop) Dir() string { return d.dir }

// Env returns os.Environ() with DISPLAY set to this desktop, WAYLAND_DISPLAY
// and XAUTHORITY removed (Xvfb runs without authorization), and the
// desktop id set. After LaunchAccessibility it also points
// DBUS_SESSION_BUS_ADDRESS at the desktop's private session bus, so a
// helper or tool started with it finds the desktop's accessibility bus.
func (d *Desktop) Env() []string { return d.baseEnv(true) }

func (d *Desktop) baseEnv(withDisplay bool) []string {
	env := withoutVars(os.Environ(), "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", idVar)
	if withDisplay {
		env = append(env, "DISPLAY="+d.display)
	}
	if a := d.accessibility(); a != nil {
		env = append(withoutVars(env, "DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS"),
			"DBUS_SESSION_BUS_ADDRESS="+a.SessionBus)
	}
	return append(env, idVar+"="+d.id)
}

func (d *Desktop) accessibility() *Accessibility {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.a11y
}

// AppEnv returns the environment applications are started with: Env plus a
// private HOME and XDG directories inside the desktop's temporary directory,
// a C.UTF-8 locale, and settings that keep GTK off Wayland, D-Bus, the
// accessibility bus and dconf, so apps do not depend on the user's session.
// After LaunchAccessibility apps get the desktop's private session bus and
// accessibility turned on instead (see Accessibility).
func (d *Desktop) AppEnv() []string {
	env := withoutVars(d.Env(), "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME",
		"XDG_STATE_HOME", "XDG_RUNTIME_DIR", "XDG_CONFIG_DIRS", "XDG_DATA_DIRS", "XDG_SESSION_TYPE",
		"XDG_CURRENT_DESKTOP", "DESKTOP_SESSION", "SESSION_MANAGER", "DBUS_SESSION_BUS_ADDRESS",
		"LANG", "LANGUAGE", "LC_ALL", "SHELL", "GDK_BACKEND", "GTK_MODULES", "GTK_THEME",
		"GSETTINGS_BACKEND", "NO_AT_BRIDGE", "XMODIFIERS", "GTK_IM_MODULE", "QT_IM_MODULE",
		"GTK_A11Y", "GSK_RENDERER", "QT_ACCESSIBILITY", "QT_LINUX_ACCESSIBILITY_ALWAYS_ON", "AT_SPI_BUS_ADDRESS")
	env = withoutPrefix(env, "LC_")
	bus := "DBUS_SESSION_BUS_ADDRESS=unix:path=" + filepath.Join(d.dir, "runtime", "no-session-bus")
	a11y := []string{"NO_AT_BRIDGE=1"}
	if a := d.accessibility(); a != nil {
		bus = "DBUS_SESSION_BUS_ADDRESS=" + a.SessionBus
		a11y = a11yEnv
	}
	env = append(env, a11y...)
	return append(env,
		"HOME="+filepath.Join(d.dir, "home"),
		"XDG_CONFIG_HOME="+filepath.Join(d.dir, "config"),
		"XDG_DATA_HOME="+filepath.Join(d.dir, "data"),
		"XDG_CACHE_HOME="+filepath.Join(d.dir, "cache"),
		"XDG_STATE_HOME="+filepath.Join(d.dir, "state"),
		"XDG_RUNTIME_DIR="+filepath.Join(d.dir, "runtime"),
		"XDG_SESSION_TYPE=x11",
		// Without the private bus, an address that cannot connect stops
		// GLib from autolaunching one (dbus-launch would daemonize out of
		// our reach).
		bus,
		"GDK_BACKEND=x11",
		"GSETTINGS_BACKEND=memory",
		"LANG=C.UTF-8",
		"SHELL=/bin/sh",
	)
}

func withoutVars(env []string, names ...string) []string {
	out := make([]string, 0, len(env))
next:
	for _, kv := range env {
		for _, name := range names {
			if strings.HasPrefix(kv, name+"=") {
				continue next
			}
		}
		out = append(out, kv)
	}
	return out
}

func withoutPrefix(env []string, prefix string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		}
	}
	return out
}

// Command returns a command that runs on this desktop (environment from
// Env). The caller starts and waits for it; processes it leaves behind are
// still swept on Close.
func (d *Desktop) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = d.Env()
	return cmd
}

// Run runs an X tool on this desktop and returns its stdout. It fails the
// test, quoting stderr, when the tool fails or runs longer than 30 seconds.
func (d *Desktop) Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := d.output(30*time.Second, name, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// output runs a tool with Env and returns stdout, or an error quoting stderr.
func (d *Desktop) output(timeout time.Duration, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = d.Env()
	var stdout, stderr strings.Builder
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			err = fmt.Errorf("%w: %v", ErrMissingTool, err)
		}
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (timed out after %s)", err, timeout)
		}
		return stdout.String(), fmt.Errorf("DISPLAY=%s %s %s: %w: %s", d.display, name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// Close stops the applications, the window manager and Xvfb (each process
// group gets SIGTERM, then SIGKILL after a few seconds), kills any process
// still carrying the desktop id, and removes the temporary directory. It is
// idempotent and safe to call from several goroutines.
func (d *Desktop) Close() {
	d.closeOnce.Do(func() {
		var errs []error
		d.mu.Lock()
		apps := d.apps
		d.apps = nil
		d.mu.Unlock()
		stopAll(apps, &errs)
		d.mu.Lock()
		daemons := d.daemons
		d.daemons = nil
		d.mu.Unlock()
		stopAll(daemons, &errs)
		if err := sweep(d.id, stopTimeout); err != nil {
			errs = append(errs, err)
		}
		if d.wm != nil {
			stopAll([]*proc{d.wm}, &errs)
		}
		if d.xvfb != nil {
			stopAll([]*proc{d.xvfb}, &errs)
		}
		if err := sweep(d.id, stopTimeout); err != nil {
			errs = append(errs, err)
		}
		if err := os.RemoveAll(d.dir); err != nil {
			errs = append(errs, fmt.Errorf("removing %s: %w", d.dir, err))
		}
		d.closeErr = errors.Join(errs...)
	})
}

// stopAll stops processes concurrently so a slow one does not delay the rest.
func stopAll(ps []*proc, errs *[]error) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	for _, p := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.stop(stopTimeout); err != nil {
				mu.Lock()
				*errs = append(*errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// Pids returns the process ids of Xvfb, the window manager (0 when none)
// and the applications still tracked, for teardown checks.
func (d *Desktop) Pids() (xvfb, wm int, apps []int) {
	if d.xvfb != nil {
		xvfb = d.xvfb.pid()
	}
	if d.wm != nil {
		wm = d.wm.pid()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range d.apps {
		apps = append(apps, p.pid())
	}
	return xvfb, wm, apps
}
