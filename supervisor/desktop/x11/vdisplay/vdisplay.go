//go:build unix

// Package vdisplay runs a private virtual X desktop: an Xvfb server and a
// window manager (openbox), for `deskhand serve --virtual-display WxH`, so
// an agent can work on a sandboxed screen without touching the user's own.
//
// Start picks a free display number itself (Xvfb -displayfd), waits until
// the window manager has announced itself through EWMH, and returns the
// display's name; Close stops the window manager and Xvfb, each with its
// whole process group (SIGTERM, then SIGKILL).
package vdisplay

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/deskhand/deskhand/supervisor/desktop/proctail"
)

// Options configure Start.
type Options struct {
	// Width and Height are the screen size; both are required.
	Width, Height int
	// Depth is the colour depth; 0 means 24.
	Depth int
	// WindowManager is the window manager to run: "" or "openbox" runs
	// openbox with a private configuration; "none" runs none.
	WindowManager string
	// StartTimeout bounds the start of each process; 0 means 20 s.
	StartTimeout time.Duration
	// Logger receives the processes' output at debug level; nil discards
	// it.
	Logger *slog.Logger
}

// CheckTools reports what Start would miss: Xvfb, or the window manager
// ("" means openbox, "none" none). doctor asks it too.
func CheckTools(windowManager string) error {
	if windowManager == "" {
		windowManager = "openbox"
	}
	if _, err := exec.LookPath("Xvfb"); err != nil {
		return errors.New("Xvfb is not installed; install it (Debian/Ubuntu: apt-get install xvfb), or run on an existing display by setting DISPLAY")
	}
	if windowManager != "none" {
		if _, err := exec.LookPath(windowManager); err != nil {
			return fmt.Errorf("the window manager %s is not installed; install it (Debian/Ubuntu: apt-get install %s)", windowManager, windowManager)
		}
	}
	return nil
}

// Display is a running virtual desktop.
type Display struct {
	name string
	dir  string
	log  *slog.Logger
	xvfb *proc
	wm   *proc

	closeOnce sync.Once
	closeErr  error
}

// ParseSize parses "WIDTHxHEIGHT", such as "1920x1080".
func ParseSize(s string) (int, int, error) {
	ws, hs, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "x")
	w, werr := strconv.Atoi(ws)
	h, herr := strconv.Atoi(hs)
	if !ok || werr != nil || herr != nil || w < 1 || h < 1 || w > 32767 || h > 32767 {
		return 0, 0, fmt.Errorf("virtual display size %q is not WIDTHxHEIGHT, such as 1920x1080", s)
	}
	return w, h, nil
}

// Start starts Xvfb and the window manager. The returned Display must be
// closed. ctx bounds the start only.
func Start(ctx context.Context, opts Options) (*Display, error) {
	if opts.Width < 1 || opts.Height < 1 {
		return nil, fmt.Errorf("virtual display size %dx%d is empty", opts.Width, opts.Height)
	}
	if opts.Depth == 0 {
		opts.Depth = 24
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = 20 * time.Second
	}
	if opts.WindowManager == "" {
		opts.WindowManager = "openbox"
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := CheckTools(opts.WindowManager); err != nil {
		return nil, fmt.Errorf("starting a virtual display: %w", err)
	}
	dir, err := os.MkdirTemp("", "deskhand-vdisplay-")
	if err != nil {
		return nil, fmt.Errorf("starting a virtual display: %w", err)
	}
	d := &Display{dir: dir, log: log}
	if err := d.startXvfb(ctx, opts); err != nil {
		d.Close()
		return nil, err
	}
	if opts.WindowManager != "none" {
		if err := d.startWM(ctx, opts); err != nil {
			d.Close()
			return nil, err
		}
	}
	log.Info("virtual display started", "display", d.name, "size", fmt.Sprintf("%dx%d", opts.Width, opts.Height), "wm", opts.WindowManager)
	return d, nil
}

// Name returns the X display name, ":N".
func (d *Display) Name() string { return d.name }

// Env returns environ with DISPLAY set to this display and WAYLAND_DISPLAY
// removed, so that toolkits use X.
func (d *Display) Env(environ []string) []string {
	out := make([]string, 0, len(environ)+1)
	for _, kv := range environ {
		if strings.HasPrefix(kv, "DISPLAY=") || strings.HasPrefix(kv, "WAYLAND_DISPLAY=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "DISPLAY="+d.name)
}

// Pids returns the process ids of Xvfb and the window manager (0 when
// none runs).
func (d *Display) Pids() (xvfb, wm int) {
	if d.xvfb != nil {
		xvfb = d.xvfb.cmd.Process.Pid
	}
	if d.wm != nil {
		wm = d.wm.cmd.Process.Pid
	}
	return xvfb, wm
}

// Close stops the window manager, then Xvfb, each with its process group,
// and removes the private directory. It is safe to call more than once.
func (d *Display) Close() error {
	d.closeOnce.Do(func() {
		var errs []error
		if d.wm != nil {
			errs = append(errs, d.wm.stop(3*time.Second))
		}
		if d.xvfb != nil {
			errs = append(errs, d.xvfb.stop(3*time.Second))
		}
		errs = append(errs, os.RemoveAll(d.dir))
		d.closeErr = errors.Join(errs...)
		if d.name != "" {
			d.log.Info("virtual display stopped", "display", d.name)
		}
	})
	return d.closeErr
}

func (d *Display) startXvfb(ctx context.Context, opts Options) error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("starting Xvfb: %w", err)
	}
	defer r.Close()
	screen := fmt.Sprintf("%dx%dx%d", opts.Width, opts.Height, opts.Depth)
	cmd := exec.Command("Xvfb",
		"-displayfd", "3", // ExtraFiles[0] is fd 3 in the child
		"-screen", "0", screen,
		"-nolisten", "tcp",
		"-noreset",
		"+extension", "RANDR")
	cmd.ExtraFiles = []*os.File{w}
	cmd.Dir = d.dir
	d.xvfb, err = startProc("Xvfb", cmd, d.log)
	w.Close()
	if err != nil {
		return err
	}
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		lines <- line
	}()
	timer := time.NewTimer(opts.StartTimeout)
	defer timer.Stop()
	select {
	case line := <-lines:
		n, err := strconv.Atoi(strings.TrimSpace(line))
		if err != nil || n < 0 {
			<-d.xvfb.done
			return fmt.Errorf("Xvfb -screen 0 %s did not start (%v): %s", screen, d.xvfb.err, d.xvfb.out.String())
		}
		d.name = ":" + strconv.Itoa(n)
		return nil
	case <-timer.C:
		return fmt.Errorf("Xvfb did not report its display within %s: %s", opts.StartTimeout, d.xvfb.out.String())
	case <-ctx.Done():
		return fmt.Errorf("starting Xvfb: %w", ctx.Err())
	}
}

func (d *Display) startWM(ctx context.Context, opts Options) error {
	var args []string
	if opts.WindowManager == "openbox" {
		rc := filepath.Join(d.dir, "openbox-rc.xml")
		if err := os.WriteFile(rc, []byte(OpenboxConfig), 0o600); err != nil {
			return fmt.Errorf("writing the openbox configuration: %w", err)
		}
		args = []string{"--config-file", rc, "--sm-disable"}
	}
	cmd := exec.Command(opts.WindowManager, args...)
	cmd.Env = d.Env(os.Environ())
	cmd.Dir = d.dir
	var err error
	d.wm, err = startProc(opts.WindowManager, cmd, d.log)
	if err != nil {
		return err
	}
	// xgb has no deadlines: a server that stops answering would hold the
	// wait below inside one round trip. Start's error path stops Xvfb,
	// which ends the abandoned wait.
	done := make(chan error, 1)
	go func() { done <- d.waitWM(ctx, opts) }()
	t := time.NewTimer(opts.StartTimeout + time.Second)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		return fmt.Errorf("the virtual display %s stopped answering while waiting for window manager %s", d.name, opts.WindowManager)
	}
}

// waitWM waits until the window manager announces itself on the display.
func (d *Display) waitWM(ctx context.Context, opts Options) error {
	// xgb logs its connection attempts to stderr on a package logger;
	// its notes about a missing ~/.Xauthority (normal for a private Xvfb)
	// would only confuse a user reading deskhand's log.
	quietXGB.Do(func() { xgb.Logger = stdlog.New(io.Discard, "", 0) })
	conn, err := xgb.NewConnDisplay(d.name)
	if err != nil {
		return fmt.Errorf("connecting to the virtual display %s: %w", d.name, err)
	}
	defer conn.Close()
	deadline := time.Now().Add(opts.StartTimeout)
	for {
		if d.wm.exited() {
			return fmt.Errorf("window manager %s exited during startup (%v): %s", opts.WindowManager, d.wm.err, d.wm.out.String())
		}
		if wmReady(conn) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("window manager %s did not announce itself (_NET_SUPPORTING_WM_CHECK) within %s: %s", opts.WindowManager, opts.StartTimeout, d.wm.out.String())
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("starting %s: %w", opts.WindowManager, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

var quietXGB sync.Once

// wmReady reports whether an EWMH window manager runs: the root's
// _NET_SUPPORTING_WM_CHECK names a window whose own property points to
// itself.
func wmReady(conn *xgb.Conn) bool {
	root := xproto.Setup(conn).DefaultScreen(conn).Root
	atom, err := xproto.InternAtom(conn, true, uint16(len("_NET_SUPPORTING_WM_CHECK")), "_NET_SUPPORTING_WM_CHECK").Reply()
	if err != nil || atom.Atom == 0 {
		return false
	}
	check := windowProp(conn, root, atom.Atom)
	return check != 0 && windowProp(conn, xproto.Window(check), atom.Atom) == check
}

func windowProp(conn *xgb.Conn, w xproto.Window, atom xproto.Atom) uint32 {
	reply, err := xproto.GetProperty(conn, false, w, atom, xproto.AtomWindow, 0, 1).Reply()
	if err != nil || reply.Format != 32 || len(reply.Value) < 4 {
		return 0
	}
	return binary.LittleEndian.Uint32(reply.Value)
}

// proc is a child process in its own process group.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *proctail.Tail
	done chan struct{}
	err  error // Wait's result, valid once done is closed
}

func startProc(name string, cmd *exec.Cmd, log *slog.Logger) (*proc, error) {
	out := proctail.New(log.With("process", name))
	cmd.Stdout, cmd.Stderr = out, out
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, out: out, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop ends the process group: SIGTERM, then SIGKILL after timeout. The
// group is signalled even after its leader exited, since processes it
// forked may remain.
func (p *proc) stop(timeout time.Duration) error {
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(timeout):
	}
	if err := syscall.Kill(-pgid, 0); err == nil || errors.Is(err, syscall.EPERM) {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	select {
	case <-p.done:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("%s (pid %d) still running after SIGKILL", p.name, pgid)
	}
}
