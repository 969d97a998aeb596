//go:build unix

// Package sway runs a private headless sway compositor for `deskhand serve
// --virtual-display` on Wayland hosts, so an agent works on a Wayland
// desktop of its own and never touches the user's session.
//
// The compositor renders to memory (WLR_BACKENDS=headless,
// WLR_RENDERER=pixman) and has its own XDG_RUNTIME_DIR, mode 0700, so its
// WAYLAND_DISPLAY socket, its IPC socket and its D-Bus session bus are
// apart from the user's.
// Close stops it with its process group; were deskhand killed without
// closing it, the kernel sends it SIGKILL (Pdeathsig, Linux), the apps in
// it exit as their Wayland connection ends, and the next Start removes
// the runtime directory left behind.
package sway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/deskhand/deskhand/supervisor/desktop/proctail"
)

// ErrRoot is the refusal to start a private sway as root, which sway 1.7
// itself refuses (it will not run setuid-root or as root).
var ErrRoot = errors.New("sway refuses to run as root, so deskhand cannot start a private Wayland desktop as root; run deskhand as your own user, or pass --virtual-display xvfb:WIDTHxHEIGHT for a private X11 desktop instead")

// CheckTools reports why Start could not run here: sway missing, or
// deskhand running as root. doctor asks it too.
func CheckTools() error {
	if _, err := exec.LookPath("sway"); err != nil {
		return errors.New("sway is not installed; install it (Debian/Ubuntu: apt-get install sway), or pass --virtual-display xvfb:WIDTHxHEIGHT for a private X11 desktop")
	}
	if os.Geteuid() == 0 {
		return ErrRoot
	}
	return nil
}

// Options configure Start.
type Options struct {
	// Width and Height are the output's mode; both are required.
	Width, Height int
	// Env is the environment the compositor starts from (KEY=value); the
	// display variables in it are replaced. nil means os.Environ().
	Env []string
	// StartTimeout bounds the start; 0 means 30 s.
	StartTimeout time.Duration
	// Logger receives sway's output at debug level; nil discards it.
	Logger *slog.Logger
}

// Compositor is a running private sway.
type Compositor struct {
	dir      string // its XDG_RUNTIME_DIR
	display  string // WAYLAND_DISPLAY, a name inside dir
	swaysock string
	base     []string
	log      *slog.Logger
	cmd      *exec.Cmd
	bus      *exec.Cmd // the private session bus, nil for none
	done     chan struct{}
	waitErr  error
	out      *proctail.Tail

	closeOnce sync.Once
	closeErr  error
}

// displayVars are the variables that name a Wayland or X session: a
// client of the private compositor must see none of the user's.
var displayVars = []string{"DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "XDG_RUNTIME_DIR", "SWAYSOCK",
	"XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS", "WLR_BACKENDS", "WLR_RENDERER", "WLR_LIBINPUT_NO_DEVICES", "I3SOCK", "XDG_SESSION_TYPE"}

// Start starts the compositor and waits until its Wayland and IPC sockets
// answer. ctx bounds the start only.
func Start(ctx context.Context, opts Options) (*Compositor, error) {
	if opts.Width < 1 || opts.Height < 1 {
		return nil, fmt.Errorf("private sway output size %dx%d is empty", opts.Width, opts.Height)
	}
	if err := CheckTools(); err != nil {
		return nil, fmt.Errorf("starting a private sway desktop: %w", err)
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 30 * time.Second
	}
	if opts.Env == nil {
		opts.Env = os.Environ()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	removeStale(os.TempDir(), log)
	// MkdirTemp makes the directory 0700: the sockets in it are this
	// user's alone, as in a login session's runtime directory.
	dir, err := os.MkdirTemp("", "deskhand-sway-")
	if err != nil {
		return nil, fmt.Errorf("creating the private sway's runtime dir: %w", err)
	}
	c := &Compositor{dir: dir, base: without(opts.Env, displayVars), log: log, done: make(chan struct{}), out: proctail.New(log.With("process", "sway"))}
	config := fmt.Sprintf(`output HEADLESS-1 resolution %dx%d position 0 0
default_border none
default_floating_border none
focus_follows_mouse no
xwayland disable
`, opts.Width, opts.Height)
	if err := os.WriteFile(filepath.Join(dir, "config"), []byte(config), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("writing the private sway's config: %w", err)
	}
	c.cmd = exec.Command("sway", "-c", filepath.Join(dir, "config"))
	c.cmd.Dir = dir
	c.cmd.Env = append(append([]string{}, c.base...), "XDG_RUNTIME_DIR="+dir,
		"WLR_BACKENDS=headless", "WLR_RENDERER=pixman", "WLR_LIBINPUT_NO_DEVICES=1")
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.out
	c.cmd.SysProcAttr = procAttr()
	if err := c.cmd.Start(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("starting sway: %w", err)
	}
	go func() { c.waitErr = c.cmd.Wait(); close(c.done) }()
	if err := c.waitReady(ctx, opts.StartTimeout); err != nil {
		_ = c.Close()
		return nil, err
	}
	c.startBus()
	log.Info("private sway desktop started", "runtime_dir", dir, "wayland_display", c.display,
		"size", fmt.Sprintf("%dx%d", opts.Width, opts.Height), "pid", c.cmd.Process.Pid)
	return c, nil
}

func (c *Compositor) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// waitReady waits for sway's Wayland socket and for its IPC to answer.
func (c *Compositor) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if c.exited() {
			return fmt.Errorf("sway exited at start (%v): %s", c.waitErr, c.out.String())
		}
		if c.display == "" {
			if s, _ := filepath.Glob(filepath.Join(c.dir, "wayland-*")); len(s) > 0 {
				for _, p := range s {
					if !strings.HasSuffix(p, ".lock") {
						c.display = filepath.Base(p)
					}
				}
			}
		}
		if ipc, _ := filepath.Glob(filepath.Join(c.dir, "sway-ipc.*.sock")); c.display != "" && len(ipc) == 1 {
			c.swaysock = ipc[0]
			cmd := exec.CommandContext(ctx, "swaymsg", "-t", "get_version")
			cmd.Env = c.Env(nil)
			if err := cmd.Run(); err == nil {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the private sway did not come up within %v: %s", timeout, c.out.String())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("starting sway: %w", ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Display names the private desktop for deskhand's state and lock files:
// the socket's full path, since its bare name (wayland-1) is likely the
// user's session's too.
func (c *Compositor) Display() string { return filepath.Join(c.dir, c.display) }

// Dir is the compositor's XDG_RUNTIME_DIR.
func (c *Compositor) Dir() string { return c.dir }

// Pid is sway's process id.
func (c *Compositor) Pid() int { return c.cmd.Process.Pid }

// Env is the environment of a client of the private desktop: environ
// (nil: the one sway started from) without any of the user's session
// variables, with this compositor's WAYLAND_DISPLAY, XDG_RUNTIME_DIR and
// SWAYSOCK.
func (c *Compositor) Env(environ []string) []string {
	base := c.base
	if environ != nil {
		base = without(environ, displayVars)
	}
	return append(append([]string{}, base...), "WAYLAND_DISPLAY="+c.display, "XDG_RUNTIME_DIR="+c.dir, "SWAYSOCK="+c.swaysock,
		"DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(c.dir, "bus"))
}

// startBus starts the private desktop's own D-Bus session bus at dir/bus.
// Without one, an app launched here would find the user's session bus,
// and a single-instance app (a GApplication, Firefox) would hand its
// window to the copy already running in the user's session. Without
// dbus-daemon the address names a socket that does not exist: such apps
// then run on their own, with no bus.
func (c *Compositor) startBus() {
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		c.log.Info("no dbus-daemon: the private sway's apps get no session bus", "err", err)
		return
	}
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--nopidfile", "--address=unix:path="+filepath.Join(c.dir, "bus"))
	cmd.Dir = c.dir
	cmd.Env = c.Env(nil)
	cmd.Stdout, cmd.Stderr = c.out, c.out
	cmd.SysProcAttr = procAttr()
	if err := cmd.Start(); err != nil {
		c.log.Warn("starting the private sway's session bus; its apps get none", "err", err)
		return
	}
	c.bus = cmd
	go func() { _ = cmd.Wait() }()
}

// Close stops sway with its process group (SIGTERM, then SIGKILL) and
// removes the runtime directory. It is safe to call more than once.
func (c *Compositor) Close() error {
	c.closeOnce.Do(func() {
		if c.bus != nil {
			// The bus has no clients worth a grace period once its
			// desktop goes.
			_ = syscall.Kill(-c.bus.Process.Pid, syscall.SIGKILL)
		}
		pgid := c.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(3 * time.Second):
		}
		if err := syscall.Kill(-pgid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
		var errs []error
		select {
		case <-c.done:
		case <-time.After(5 * time.Second):
			errs = append(errs, fmt.Errorf("sway (pid %d) still running after SIGKILL", pgid))
		}
		errs = append(errs, os.RemoveAll(c.dir))
		c.closeErr = errors.Join(errs...)
		c.log.Info("private sway desktop stopped", "runtime_dir", c.dir)
	})
	return c.closeErr
}

func without(env, keys []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, key := range keys {
			if k == key {
				drop = true
			}
		}
		if !drop {
			out = append(out, kv)
		}
	}
	return out
}
