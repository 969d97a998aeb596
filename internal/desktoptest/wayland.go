//go:build unix

package desktoptest

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// WaylandUser is the unprivileged account headless sway runs as: sway 1.7
// refuses to run as root.
const WaylandUser = "deskhand-wl"

// WaylandOptions configure a headless sway desktop.
type WaylandOptions struct {
	Width, Height int // the output's mode; default 1280x720
	// Layout is the XKB layout sway gives real keyboards ("us" when
	// empty). deskhand's virtual keyboard brings its own keymap, so
	// text must arrive the same under any of them.
	Layout string
}

// Wayland is a headless sway compositor (WLR_BACKENDS=headless,
// WLR_RENDERER=pixman) with its own runtime directory.
//
// sway and the apps run as WaylandUser in a private XDG_RUNTIME_DIR owned
// by it, mode 0700, as a login session would have. The test process, the
// helper and the reference tools (grim, wl-paste, swaymsg) run as root,
// which reaches that socket only because root passes the directory's
// permissions: in a real session they run as the session's user.
type Wayland struct {
	*userSession
	swaysock string
	sway     *proc
	attached bool // a session someone else runs (AttachWayland)
}

// StartWayland starts headless sway for the test, with teardown in
// t.Cleanup. A missing sway (or tool) skips the test, failing it under CI.
func StartWayland(t testing.TB, opts WaylandOptions) *Wayland {
	t.Helper()
	Require(t, "sway", "swaymsg", "useradd")
	w, err := LaunchWayland(opts)
	if err != nil {
		t.Fatalf("starting headless sway: %v", err)
	}
	t.Cleanup(func() {
		if err := w.Close(); err != nil {
			t.Errorf("tearing down headless sway: %v", err)
		}
	})
	return w
}

// waylandAccount returns WaylandUser's uid, gid and home, creating the
// account (a system user with a home) when it is missing.
func waylandAccount() (uid, gid int, home string, err error) {
	u, err := user.Lookup(WaylandUser)
	if err != nil {
		var unknown user.UnknownUserError
		if !errors.As(err, &unknown) {
			return 0, 0, "", fmt.Errorf("looking up %s: %w", WaylandUser, err)
		}
		out, err := exec.Command("useradd", "--system", "--create-home",
			"--home-dir", "/var/lib/"+WaylandUser, "--shell", "/usr/sbin/nologin", WaylandUser).CombinedOutput()
		// Another test process may have made it meanwhile: only a user
		// that is still missing is a failure.
		if _, lookErr := user.Lookup(WaylandUser); err != nil && lookErr != nil {
			return 0, 0, "", fmt.Errorf("creating user %s (the harness runs as root): %w: %s", WaylandUser, err, out)
		}
		if u, err = user.Lookup(WaylandUser); err != nil {
			return 0, 0, "", fmt.Errorf("looking up %s after creating it: %w", WaylandUser, err)
		}
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	return uid, gid, u.HomeDir, nil
}

// LaunchWayland starts headless sway without a test; the caller must Close.
func LaunchWayland(opts WaylandOptions) (*Wayland, error) {
	if opts.Width == 0 {
		opts.Width, opts.Height = 1280, 720
	}
	if opts.Layout == "" {
		opts.Layout = "us"
	}
	s, err := newUserSession("wl")
	if err != nil {
		return nil, err
	}
	w := &Wayland{userSession: s}
	config := fmt.Sprintf(`output HEADLESS-1 resolution %dx%d position 0 0
default_border none
default_floating_border none
focus_follows_mouse no
input * xkb_layout %s
`, opts.Width, opts.Height, opts.Layout)
	if err := w.writeFile("config", config); err != nil {
		_ = w.Close()
		return nil, err
	}
	w.sway, err = w.startDaemon("sway", []string{"WLR_BACKENDS=headless", "WLR_RENDERER=pixman", "WLR_LIBINPUT_NO_DEVICES=1"},
		"-c", filepath.Join(w.dir, "config"))
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	if err := w.waitReady(30 * time.Second); err != nil {
		_ = w.Close()
		return nil, err
	}
	return w, nil
}

// waitReady waits until sway's Wayland socket and IPC answer.
func (w *Wayland) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if w.sway.exited() {
			return fmt.Errorf("sway exited at start: %v\n%s", w.sway.err, w.sway.logTail())
		}
		sockets, _ := filepath.Glob(filepath.Join(w.dir, "wayland-*"))
		ipc, _ := filepath.Glob(filepath.Join(w.dir, "sway-ipc.*.sock"))
		for _, s := range sockets {
			if !strings.HasSuffix(s, ".lock") {
				w.display = filepath.Base(s)
			}
		}
		if w.display != "" && len(ipc) == 1 {
			w.swaysock = ipc[0]
			w.clientVars = []string{"SWAYSOCK=" + w.swaysock}
			if _, err := w.output(10*time.Second, "swaymsg", "-t", "get_version"); err == nil {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("sway did not come up within %v:\n%s", timeout, w.sway.logTail())
}

// View is one client window in sway's tree.
type View struct {
	ID      int64  `json:"id"`
	PID     int    `json:"pid"`
	AppID   string `json:"app_id"`
	Name    string `json:"name"`
	Focused bool   `json:"focused"`
	Visible bool   `json:"visible"`
	Rect    Rect   `json:"rect"`
}

// Views lists sway's client windows, from `swaymsg -t get_tree`.
func (w *Wayland) Views(t testing.TB) []View {
	t.Helper()
	out := w.Run(t, "swaymsg", "-r", "-t", "get_tree")
	var root map[string]any
	if err := json.Unmarshal([]byte(out), &root); err != nil {
		t.Fatalf("parsing get_tree: %v", err)
	}
	var views []View
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if _, ok := n["pid"]; ok && (n["type"] == "con" || n["type"] == "floating_con") {
			b, _ := json.Marshal(n)
			var v View
			if err := json.Unmarshal(b, &v); err == nil {
				views = append(views, v)
			}
		}
		for _, k := range []string{"nodes", "floating_nodes"} {
			kids, _ := n[k].([]any)
			for _, c := range kids {
				if m, ok := c.(map[string]any); ok {
					walk(m)
				}
			}
		}
	}
	walk(root)
	return views
}

// WaitView waits (up to a minute) for a mapped view whose app_id is appID.
func (w *Wayland) WaitView(t testing.TB, appID string) View {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		for _, v := range w.Views(t) {
			if v.AppID == appID && v.Rect.Width > 0 {
				return v
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no %s window appeared within a minute; sway log:\n%s", appID, w.sway.logTail())
	return View{}
}

// WaitViewGone waits (up to a minute) until sway lists no view whose
// app_id is appID: `swaymsg kill` only asks the client to close.
func (w *Wayland) WaitViewGone(t testing.TB, appID string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		gone := true
		for _, v := range w.Views(t) {
			if v.AppID == appID {
				gone = false
			}
		}
		if gone {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("the %s window was still open a minute after it was asked to close; sway log:\n%s", appID, w.sway.logTail())
}

// AttachWayland is the session of a sway that someone else runs (such as
// the private one `deskhand serve --virtual-display` starts as
// WaylandUser) in the runtime directory dir, for its reference tools and
// for apps in it. Close stops only the apps started through it.
func AttachWayland(t testing.TB, dir string) *Wayland {
	t.Helper()
	uid, gid, _, err := waylandAccount()
	if err != nil {
		t.Fatal(err)
	}
	w := &Wayland{userSession: &userSession{id: "wl-" + filepath.Base(dir), dir: dir, home: filepath.Join(dir, "home"), uid: uid, gid: gid}, attached: true}
	sockets, _ := filepath.Glob(filepath.Join(dir, "wayland-*"))
	for _, s := range sockets {
		if !strings.HasSuffix(s, ".lock") {
			w.display = filepath.Base(s)
		}
	}
	ipc, _ := filepath.Glob(filepath.Join(dir, "sway-ipc.*.sock"))
	if w.display == "" || len(ipc) != 1 {
		t.Fatalf("no sway session in %s (sockets %q, ipc %q)", dir, sockets, ipc)
	}
	w.swaysock = ipc[0]
	w.clientVars = []string{"SWAYSOCK=" + w.swaysock}
	if err := os.MkdirAll(w.home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(w.home, uid, gid); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		var errs []error
		stopAll(w.apps, &errs)
		if err := errors.Join(errs...); err != nil {
			t.Errorf("stopping the apps of the sway in %s: %v", dir, err)
		}
	})
	return w
}

// Close stops the apps, then sway, then any stray process of this session,
// and removes the runtime directory; for an attached session only the apps.
func (w *Wayland) Close() error {
	if w.attached {
		var errs []error
		stopAll(w.apps, &errs)
		return errors.Join(errs...)
	}
	return w.close()
}
