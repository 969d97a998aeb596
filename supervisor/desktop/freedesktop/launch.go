package freedesktop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/desktop"
)

var execLookPath = exec.LookPath

// DefaultLaunchTimeout bounds how long OpenApplication waits for a window.
const DefaultLaunchTimeout = 15 * time.Second

// Helper lists the desktop's windows and its installed applications'
// desktop entries; *bridge.Client satisfies it.
type Helper interface {
	Windows(ctx context.Context, includeHidden bool) (*bridge.WindowList, error)
	AppIndex
}

// resolveTimeout bounds reading the desktop entries for ResolveApp.
const resolveTimeout = 10 * time.Second

// LauncherOptions configure NewLauncher.
type LauncherOptions struct {
	// Helper is the capture helper, which reads the desktop entries and
	// sees the new window. Required.
	Helper Helper
	// Env is the environment applications are launched with (it names
	// the display); nil means os.Environ().
	Env []string
	// Timeout bounds the wait for a launched application's window; 0
	// means DefaultLaunchTimeout.
	Timeout time.Duration
	// Logger receives the records; nil discards them.
	Logger *slog.Logger
}

// Launcher starts applications from their desktop entries, the way
// freedesktop.org desktops (X11 and Wayland alike) do.
type Launcher struct {
	helper  Helper
	env     []string
	timeout time.Duration
	log     *slog.Logger
}

// NewLauncher returns a launcher.
func NewLauncher(opts LauncherOptions) *Launcher {
	e := &Launcher{helper: opts.Helper, env: opts.Env, timeout: opts.Timeout, log: opts.Logger}
	if e.env == nil {
		e.env = os.Environ()
	}
	if e.timeout <= 0 {
		e.timeout = DefaultLaunchTimeout
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	return e
}

// ResolveApp finds the identity of the app name names (see Resolve): its
// desktop-entry id, name, StartupWMClass and executable.
func (e *Launcher) ResolveApp(name string) (bridge.App, error) {
	ctx, cancel := context.WithTimeout(context.Background(), resolveTimeout)
	defer cancel()
	entries, err := LoadEntries(ctx, e.helper)
	if err != nil {
		return bridge.App{}, err
	}
	entry, err := Resolve(entries, name)
	if err != nil {
		return bridge.App{}, err
	}
	app := bridge.App{Name: entry.Name, DesktopID: entry.ID, Class: entry.StartupWMClass}
	if cmd, err := entry.Command(); err == nil && len(cmd) > 0 {
		app.Exe = cmd[0]
	}
	return app, nil
}

// OpenApplication launches the application app names (see Resolve), like
// gtk-launch: detached in its own session, with the launcher's environment,
// and waits until a new window of it maps.
func (e *Launcher) OpenApplication(ctx context.Context, app string) (*desktop.LaunchedApp, error) {
	entries, err := LoadEntries(ctx, e.helper)
	if err != nil {
		return nil, err
	}
	entry, err := Resolve(entries, app)
	if err != nil {
		return nil, err
	}
	argv, err := entry.Command()
	if err != nil {
		return nil, err
	}
	if entry.Terminal {
		term, err := terminal()
		if err != nil {
			return nil, fmt.Errorf("%s runs in a terminal: %w", entry.ID, err)
		}
		argv = append([]string{term, "-e"}, argv...)
	}

	// Windows that exist now are not the new application's.
	before, err := e.helper.Windows(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("listing windows before launching %s: %w", entry.ID, err)
	}
	known := map[uint32]bool{}
	for _, w := range before.Windows {
		known[w.ID] = true
	}

	env := e.env
	argv, env = withRendererAccessibility(argv, env)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = entry.WorkDir
	if cmd.Dir == "" {
		if home, err := os.UserHomeDir(); err == nil {
			cmd.Dir = home
		}
	}
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("launching %s (%s): %w", entry.ID, strings.Join(argv, " "), err)
	}
	pid := cmd.Process.Pid
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reap it whenever it exits
	e.log.Info("launched application", "id", entry.ID, "pid", pid, "argv", argv)

	launched := &desktop.LaunchedApp{DesktopID: entry.ID, Name: entry.Name, Exec: argv, PID: pid}
	deadline := time.NewTimer(e.timeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var exitErr error
	exitedEarly := false
	for {
		list, err := e.helper.Windows(ctx, false)
		if err == nil {
			if w := e.findWindow(list.Windows, known, entry, argv, pid); w != nil {
				launched.Window = w
				return launched, nil
			}
		}
		select {
		case err := <-exited:
			exitedEarly, exitErr = true, err
			if err != nil {
				return nil, fmt.Errorf("%s (%s) exited before showing a window: %v", entry.ID, strings.Join(argv, " "), err)
			}
			// Exit status 0: it may have handed over to a running
			// instance, whose new window is still to come.
		case <-tick.C:
		case <-deadline.C:
			state := "is still running"
			if exitedEarly {
				state = fmt.Sprintf("exited (%v)", exitErr)
			}
			return nil, fmt.Errorf("launched %s (pid %d), but no window of it appeared within %s and it %s; take a screenshot to see whether it shows up later",
				entry.ID, pid, e.timeout, state)
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s's window: %w", entry.ID, ctx.Err())
		}
	}
}

// findWindow picks a new window that belongs to the launched application:
// its process or a descendant of it, its desktop-entry id, or its WM_CLASS
// matching the entry's StartupWMClass or program name.
func (e *Launcher) findWindow(windows []bridge.Window, known map[uint32]bool, entry *DesktopEntry, argv []string, pid int) *bridge.Window {
	classes := []string{entry.StartupWMClass, filepath.Base(argv[0]), idTail(entry.ID), entry.ID}
	for i := range windows {
		w := &windows[i]
		// A splash screen or tooltip (override-redirect) is not the
		// window the application opened.
		if known[w.ID] || w.Hidden || w.Minimized || w.OverrideRedirect {
			continue
		}
		if w.App.PID != 0 && descends(w.App.PID, pid) {
			return w
		}
		if w.App.DesktopID != "" && w.App.DesktopID == entry.ID {
			return w
		}
		for _, c := range classes {
			if c != "" && (strings.EqualFold(w.App.Class, c) || strings.EqualFold(w.App.Instance, c)) {
				return w
			}
		}
	}
	return nil
}

// descends reports whether process pid is ancestor or one of its
// descendants, following parent links in /proc.
func descends(pid, ancestor int) bool {
	for range 64 {
		if pid == ancestor {
			return true
		}
		if pid <= 1 {
			return false
		}
		ppid, err := parentPID(pid)
		if err != nil {
			return false
		}
		pid = ppid
	}
	return false
}

func parentPID(pid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name in parentheses may contain spaces; the fields
	// after the last ")" are state, ppid, ...
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 2 {
		return 0, errors.New("malformed stat")
	}
	return strconv.Atoi(fields[1])
}

// terminal returns a terminal emulator that runs a command given after -e.
func terminal() (string, error) {
	for _, t := range []string{"x-terminal-emulator", "xterm", "uxterm", "gnome-terminal", "konsole", "xfce4-terminal"} {
		if p, err := execLookPath(t); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no terminal emulator found (install xterm)")
}
