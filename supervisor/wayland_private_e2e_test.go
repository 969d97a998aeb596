//go:build unix

package supervisor_test

// End-to-end tests of `deskhand serve --virtual-display` on a Wayland
// host: deskhand runs as the session's unprivileged user beside the
// user's own sway (the harness's), starts its private headless sway, and
// a real MCP client drives it. Evidence comes from outside deskhand: what
// the apps in each sway wrote, grim's pixels of each output, and the
// processes that are left.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// asWaylandUser is a copy of path that WaylandUser may run: the test
// binaries live in root's private temporary directories.
func asWaylandUser(t *testing.T, dir, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(dir, filepath.Base(path))
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// userBins copies deskhand and the helper where the session's user may
// run them (t.TempDir's parent is root's alone) and returns their paths.
func userBins(t *testing.T) (deskhand, helper string) {
	t.Helper()
	bins, err := os.MkdirTemp("", "deskhand-userbin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(bins) })
	if err := os.Chmod(bins, 0o755); err != nil {
		t.Fatal(err)
	}
	return asWaylandUser(t, bins, deskhandBinary(t)), asWaylandUser(t, bins, desktoptest.HelperPath(t))
}

// ownedSession is what running deskhand as the session's user needs of
// a desktoptest session (sway's, mutter's or KWin's).
type ownedSession interface {
	Dir() string
	UID() int
	GID() int
}

// userHome is a new home, config and state directory of s's user.
func userHome(t *testing.T, s ownedSession) string {
	t.Helper()
	home := filepath.Join(s.Dir(), fmt.Sprintf("deskhand-home-%d", time.Now().UnixNano()))
	for _, d := range []string{home, filepath.Join(home, "config"), filepath.Join(home, "state")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(d, s.UID(), s.GID()); err != nil {
			t.Fatal(err)
		}
	}
	return home
}

// userCommand is deskhand (bin, with helper) run as s's user with home,
// in env, the session's environment for a client.
func userCommand(s ownedSession, env []string, bin, helper, home string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Dir = home
	cmd.Env = append(env, "HOME="+home, "USER="+desktoptest.WaylandUser, "DESKHAND_HELPER="+helper,
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"), "DESKHAND_POLICY_FILE="+filepath.Join(home, "config", "policy.json"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(s.UID()), Gid: uint32(s.GID())}}
	return cmd
}

// connectAsUser starts cmd, `deskhand serve` from userCommand, and
// connects an MCP client named client to it.
func connectAsUser(t *testing.T, cmd *exec.Cmd, client string) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: client, Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("starting %s %v as %s: %v", cmd.Path, cmd.Args[1:], desktoptest.WaylandUser, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// privateServe is `deskhand serve --virtual-display VIRTUAL` run as
// WaylandUser in the user's session w, with its log watched for the
// private sway it starts.
type privateServe struct {
	*e2e
	dir    string // the private sway's runtime directory
	swayID int    // its pid
}

var swayStarted = regexp.MustCompile(`private sway desktop started.*runtime_dir=(\S+).*pid=(\d+)`)

func startPrivateServe(t *testing.T, w *desktoptest.Wayland, virtual string, args ...string) *privateServe {
	t.Helper()
	bin, helper := userBins(t)
	// The user's home, config and state: the account's own.
	home := userHome(t, w)
	cmd := userCommand(w, w.Env(), bin, helper, home,
		append([]string{"serve", "--virtual-display", virtual, "--state-dir", filepath.Join(home, "state"), "--log-level", "debug"}, args...)...)
	logs := &testLog{t: t}
	t.Cleanup(logs.stop)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	started := make(chan []string, 1)
	var once sync.Once
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			_, _ = logs.Write(append(sc.Bytes(), '\n'))
			if m := swayStarted.FindStringSubmatch(sc.Text()); m != nil {
				once.Do(func() { started <- m })
			}
		}
	}()
	t.Cleanup(func() { pw.Close() })
	cs := connectAsUser(t, cmd, "deskhand-private-sway-e2e")
	p := &privateServe{e2e: &e2e{t: t, cs: cs, cmd: cmd, configHome: filepath.Join(home, "config")}}
	select {
	case m := <-started:
		p.dir = m[1]
		fmt.Sscan(m[2], &p.swayID)
	case <-time.After(time.Minute):
		t.Fatal("deskhand never logged its private sway's start")
	}
	if p.dir == w.Dir() || !strings.HasPrefix(filepath.Base(p.dir), "deskhand-sway-") {
		t.Fatalf("the private sway's runtime dir is %s (the user's is %s)", p.dir, w.Dir())
	}
	fi, err := os.Stat(p.dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 || fi.Sys().(*syscall.Stat_t).Uid != uint32(w.UID()) {
		t.Fatalf("the private runtime dir is %v owned by uid %d, want 0700 owned by %s", fi.Mode().Perm(), fi.Sys().(*syscall.Stat_t).Uid, desktoptest.WaylandUser)
	}
	return p
}

// alive reports whether pid still runs (a zombie of another parent
// counts as gone).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// processWith is the pid of a process one of whose arguments is arg, 0
// for none.
func processWith(arg string) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil {
			continue
		}
		for _, a := range strings.Split(string(b), "\x00") {
			if a == arg {
				var pid int
				fmt.Sscan(filepath.Base(d), &pid)
				return pid
			}
		}
	}
	return 0
}

func grimShot(t *testing.T, w *desktoptest.Wayland) *image.RGBA {
	t.Helper()
	ref := filepath.Join(t.TempDir(), "grim.png")
	w.Run(t, "grim", "-t", "png", ref)
	b, err := os.ReadFile(ref)
	if err != nil {
		t.Fatal(err)
	}
	return decodePNG(t, b)
}

// TestWaylandPrivateSway: on a Wayland host, deskhand serve
// --virtual-display WxH (or sway:WxH), run as the session's user, works on a
// headless sway of its own. Its screenshot is that sway's output (grim of
// it agrees), its click and typing reach the apps in it, the user's sway
// gets nothing (its apps record nothing, grim of its output is
// unchanged), and the private sway and its apps die with deskhand: on its
// normal exit (the client disconnects), on SIGTERM and on SIGKILL.
func TestWaylandPrivateSway(t *testing.T) {
	requireWaylandTools(t, "foot", "grim", "dbus-daemon", "dbus-send")
	requireGTKProbe(t)
	// A bare size means the private sway on a Wayland host, when sway
	// can run; sway: asks for it outright.
	for _, c := range []struct{ end, virtual string }{{"exit", "1280x720"}, {"SIGTERM", "sway:1280x720"}, {"SIGKILL", "sway:1280x720"}} {
		end := c.end
		t.Run(end+"/"+c.virtual, func(t *testing.T) {
			user := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
			// The user's own apps: a terminal that records what it is
			// typed and a button that records its clicks.
			userTyped, _ := wlTerminal(t, user, "foot", "00ff00")
			userClicks := userFile(t, user, "user-clicks")
			user.StartApp(t, "/usr/bin/python3", copyProbe(t, user), "button", userClicks)
			user.WaitView(t, "gtkprobe.py")
			green := [3]uint8{0, 0xff, 0}
			var before *image.RGBA
			wlWaitFor(t, "grim to show the user's terminal", func() bool {
				before = grimShot(t, user)
				return wlCountColor(before, green, 0) > 10000
			})

			p := startPrivateServe(t, user, c.virtual, "--allow", "foot=full", "--allow", "gtkprobe.py=full", "--format", "png")
			priv := desktoptest.AttachWayland(t, p.dir)
			// The private desktop's own session bus answers, so its apps
			// never reach the user's.
			busPid := 0
			wlWaitFor(t, "the private session bus to answer", func() bool {
				busPid = processWith("--address=unix:path=" + filepath.Join(p.dir, "bus"))
				// A session bus lets in only its own user.
				cmd := exec.Command("dbus-send", "--bus=unix:path="+filepath.Join(p.dir, "bus"), "--print-reply",
					"--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.ListNames")
				cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(user.UID()), Gid: uint32(user.GID())}}
				return busPid != 0 && cmd.Run() == nil
			})
			// The private apps' output goes outside the private runtime
			// directory, which deskhand removes when it stops.
			out, err := os.MkdirTemp("", "deskhand-wlout-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(out) })
			if err := os.Chown(out, user.UID(), user.GID()); err != nil {
				t.Fatal(err)
			}
			typed := filepath.Join(out, "typed")
			clicks := filepath.Join(out, "clicks")
			footPid := priv.StartApp(t, "foot", "--app-id", "foot", "-o", "colors.background=ff00ff", "sh", "-c", "stty -echo; exec cat > "+typed)
			priv.WaitView(t, "foot")
			probe := copyTestdata(t, "wayland/gtkprobe.py", filepath.Join(out, "gtkprobe.py"))
			probePid := priv.StartApp(t, "/usr/bin/python3", probe, "button", clicks)
			priv.WaitView(t, "gtkprobe.py")
			magenta := [3]uint8{0xff, 0, 0xff}
			// Both apps drawn and the layout still: two captures agree.
			var want *image.RGBA
			wlWaitFor(t, "the private output to settle with the terminal shown", func() bool {
				prev := want
				want = grimShot(t, priv)
				return prev != nil && wlCountColor(want, magenta, 0) > 10000 && meanAbsError(prev, want) == 0
			})
			term, button := priv.WaitView(t, "foot"), priv.WaitView(t, "gtkprobe.py")

			// (a) The screenshot is the private sway's output.
			p.access([]string{"foot", "gtkprobe.py"})
			img, _ := p.screenshot("screenshot", nil)
			if p.shot.Display.Size.Width != 1280 || p.shot.Display.Size.Height != 720 {
				t.Errorf("the screenshot reports the display as %+v, want the private 1280x720 output", p.shot.Display)
			}
			if n := wlCountColor(img, magenta, 0); n < 10000 {
				t.Errorf("the screenshot shows %d pixels of the private terminal's colour", n)
			}
			if n := wlCountColor(img, green, 0); n != 0 {
				t.Errorf("the screenshot shows %d pixels of the user's terminal's colour", n)
			}
			// The terminal's area is the private output's own pixels.
			scaled := boxScale(want, want.Bounds(), img.Bounds().Dx(), img.Bounds().Dy())
			p0, p1 := p.at(term.Rect.X+20, term.Rect.Y+20), p.at(term.Rect.X+term.Rect.Width-20, term.Rect.Y+term.Rect.Height-20)
			r := image.Rect(p0[0], p0[1], p1[0], p1[1])
			if me := meanAbsError(img.SubImage(r).(*image.RGBA), scaled.SubImage(r).(*image.RGBA)); me > 8 {
				t.Errorf("the screenshot of the private terminal differs from grim's capture of the private output: mean error %.1f", me)
			}
			// A click focuses the private terminal, typing reaches it, and
			// a click triggers the private button.
			p.ok("left_click", map[string]any{"coordinate": p.at(term.Rect.X+term.Rect.Width/2, term.Rect.Y+term.Rect.Height/2)})
			p.ok("type", map[string]any{"text": "private hello\n"})
			if got := wlWaitFile(t, typed, func(s string) bool { return strings.HasSuffix(s, "\n") }); got != "private hello\n" {
				t.Fatalf("the private terminal got %q", got)
			}
			p.ok("left_click", map[string]any{"coordinate": p.at(button.Rect.X+button.Rect.Width/2, button.Rect.Y+button.Rect.Height/2)})
			wlWaitFile(t, clicks, func(s string) bool { return s == "clicked\n" })

			// (b) The user's sway got nothing: a roundtrip through it,
			// then its apps' records and its pixels.
			user.Run(t, "swaymsg", "-t", "get_tree")
			if b, _ := os.ReadFile(userTyped); len(b) > 0 {
				t.Errorf("the user's terminal received %q", b)
			}
			if b, _ := os.ReadFile(userClicks); len(b) > 0 {
				t.Errorf("the user's button recorded %q", b)
			}
			if me := meanAbsError(grimShot(t, user), before); me > 0.5 {
				t.Errorf("the user's output changed while deskhand worked: mean error %.2f", me)
			}

			// The private sway and its apps die with deskhand.
			switch end {
			case "exit":
				p.cs.Close()
			case "SIGTERM", "SIGKILL":
				sig := map[string]syscall.Signal{"SIGTERM": syscall.SIGTERM, "SIGKILL": syscall.SIGKILL}[end]
				if err := p.cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
			}
			wlWaitFor(t, "deskhand to exit", func() bool { return !alive(p.cmd.Process.Pid) })
			wlWaitFor(t, "the private sway to exit", func() bool { return !alive(p.swayID) })
			wlWaitFor(t, "the private apps to exit", func() bool { return priv.Exited(footPid) && priv.Exited(probePid) })
			wlWaitFor(t, "the private session bus to exit", func() bool { return !alive(busPid) })
			if end == "SIGKILL" {
				// Nothing of the killed deskhand is left to remove its
				// runtime dir: the next one that starts a private sway
				// does.
				t.Cleanup(func() { os.RemoveAll(p.dir) })
				next := startPrivateServe(t, user, c.virtual)
				next.cs.Close()
			}
			if _, err := os.Stat(p.dir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the private runtime dir %s is left behind (%v)", p.dir, err)
			}
			if !alive(user.Views(t)[0].PID) {
				t.Error("the user's app died with deskhand")
			}
		})
	}
}

// TestWaylandPrivateSwayAsRoot: sway refuses to run as root, so serve as
// root asked for a private sway stops at once with an error that names
// the fix, and starts nothing.
func TestWaylandPrivateSwayAsRoot(t *testing.T) {
	requireWaylandTools(t)
	if os.Geteuid() != 0 {
		t.Skip("the test runs deskhand as root")
	}
	user := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "deskhand-sway-*"))
	cmd := exec.Command(deskhandBinary(t), "serve", "--virtual-display", "sway:1280x720", "--state-dir", "none")
	cmd.Env = append(user.Env(), "DESKHAND_HELPER="+desktoptest.HelperPath(t))
	cmd.Stdin = strings.NewReader("")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("serve as root with a private sway succeeded: %s", out)
	}
	for _, want := range []string{"sway refuses to run as root", "run deskhand as your own user", "--virtual-display xvfb:"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the error does not say %q: %s", want, out)
		}
	}
	if after, _ := filepath.Glob(filepath.Join(os.TempDir(), "deskhand-sway-*")); len(after) > len(before) {
		t.Errorf("a private sway runtime dir was created: %v, before %v", after, before)
	}
}

// TestWaylandPrivateXvfbFallback: as root (which sway refuses) a bare
// --virtual-display size on a Wayland host still gives a private desktop,
// an Xvfb one: the screenshot is of a 1280x720 screen that shows nothing of
// the user's sway, whose terminal stays shown and untouched.
func TestWaylandPrivateXvfbFallback(t *testing.T) {
	requireWaylandTools(t, "foot", "grim")
	desktoptest.Require(t, "Xvfb", "openbox")
	if os.Geteuid() != 0 {
		t.Skip("the test runs deskhand as root")
	}
	user := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	typed, _ := wlTerminal(t, user, "foot", "00ff00")
	green := [3]uint8{0, 0xff, 0}
	wlWaitFor(t, "grim to show the user's terminal", func() bool { return wlCountColor(grimShot(t, user), green, 0) > 10000 })
	e := wlServe(t, user, t.TempDir(), "--virtual-display", "1280x720", "--format", "png", "--allow", "foot=full")
	e.access([]string{"foot"})
	img, _ := e.screenshot("screenshot", nil)
	if e.shot.Display.Size.Width != 1280 || e.shot.Display.Size.Height != 720 {
		t.Errorf("the screenshot reports the display as %+v, want the private 1280x720 one", e.shot.Display)
	}
	if n := wlCountColor(img, green, 0); n != 0 {
		t.Errorf("the private desktop's screenshot shows %d pixels of the user's terminal's colour", n)
	}
	if n := wlCountColor(grimShot(t, user), green, 0); n < 10000 {
		t.Errorf("the user's terminal shows only %d pixels of its colour: the private desktop hid it", n)
	}
	if b, _ := os.ReadFile(typed); len(b) > 0 {
		t.Errorf("the user's terminal received %q", b)
	}
}
