//go:build unix

package desktoptest

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// KWinOptions configure a headless KWin desktop.
type KWinOptions struct {
	Width, Height int // the virtual output's mode; default 1280x720
	// Authorize are executables KWin grants its restricted interfaces
	// (fake input, key state, plasma window management, screencast, the ScreenShot2
	// D-Bus API), as a desktop entry does for spectacle or krfb on a real
	// Plasma session. Each is resolved to its real path, since KWin
	// compares the entry's Exec= with /proc/PID/exe of the client. Empty:
	// no entry, so no client gets them.
	Authorize []string
}

// KWinInterfaces are the restricted interfaces the harness's desktop entry
// grants, in the keys a Plasma session reads.
const (
	KWinWaylandInterfaces = "org_kde_kwin_fake_input,org_kde_kwin_keystate,org_kde_plasma_window_management,zkde_screencast_unstable_v1"
	KWinDBusInterfaces    = "org.kde.KWin.ScreenShot2"
)

// KWin is a headless KDE Plasma compositor: kwin_wayland --virtual, on a
// private session bus, with a desktop entry that authorizes the given
// executables.
//
// Everything runs as WaylandUser in a private XDG_RUNTIME_DIR. Two facts
// of Debian 12's KWin 5.27 shape it: /usr/bin/kwin_wayland carries the file
// capability cap_sys_resource, which a container's bounding set may lack
// (exec then fails with EPERM), so the harness runs a plain copy, and
// KWin's QPA plugin loads in a binary of another path only with
// KWIN_FORCE_OWN_QPA=1. KWin reads a client's executable through
// /proc/PID/exe, which it (as WaylandUser) cannot do for root's processes:
// an authorized client must run as WaylandUser (UserCommand, AsUser), as it
// would in a real session.
type KWin struct {
	*userSession
	kwin    *proc
	data    string // the XDG_DATA_DIRS entry holding applications/
	scripts int    // scripts run, to name each
}

// kwinTools are the programs the harness needs.
var kwinTools = []string{"kwin_wayland", "dbus-daemon", "gdbus", "setpriv", "useradd"}

// StartKWin starts headless KWin for the test, with teardown in
// t.Cleanup. A missing tool skips the test, failing it under CI.
func StartKWin(t testing.TB, opts KWinOptions) *KWin {
	t.Helper()
	Require(t, kwinTools...)
	k, err := LaunchKWin(opts)
	if err != nil {
		t.Fatalf("starting headless KWin: %v", err)
	}
	t.Cleanup(func() {
		if err := k.Close(); err != nil {
			t.Errorf("tearing down headless KWin: %v", err)
		}
	})
	return k
}

// LaunchKWin starts headless KWin without a test; the caller must Close.
func LaunchKWin(opts KWinOptions) (*KWin, error) {
	if err := lookTools(kwinTools...); err != nil {
		return nil, fmt.Errorf("%w (on Debian: apt-get install kwin-wayland dbus libglib2.0-bin util-linux)", err)
	}
	if opts.Width == 0 {
		opts.Width, opts.Height = 1280, 720
	}
	s, err := newUserSession("kwin")
	if err != nil {
		return nil, err
	}
	k := &KWin{userSession: s, data: filepath.Join(s.dir, "data")}
	s.display = "wayland-kwin"
	s.userVars = []string{"XDG_CURRENT_DESKTOP=KDE", "KDE_SESSION_VERSION=5",
		"XDG_DATA_DIRS=" + k.data + ":/usr/local/share:/usr/share", "KWIN_FORCE_OWN_QPA=1", "QT_QPA_PLATFORM=wayland"}
	s.clientVars = []string{"XDG_CURRENT_DESKTOP=KDE", "XDG_SESSION_TYPE=wayland"}
	if err := k.start(opts); err != nil {
		_ = k.Close()
		return nil, err
	}
	return k, nil
}

func (k *KWin) start(opts KWinOptions) error {
	bin, err := k.copyKWin()
	if err != nil {
		return err
	}
	if err := k.writeEntry(opts.Authorize); err != nil {
		return err
	}
	if err := k.startBus(); err != nil {
		return err
	}
	k.kwin, err = k.startDaemon(bin, nil, "--virtual", "--no-lockscreen", "--no-global-shortcuts",
		"--width", strconv.Itoa(opts.Width), "--height", strconv.Itoa(opts.Height), "--socket", k.display)
	if err != nil {
		return err
	}
	return k.waitFor(60*time.Second, k.kwin, "KWin's Wayland socket and D-Bus service", func() bool {
		if _, err := os.Stat(filepath.Join(k.dir, k.display)); err != nil {
			return false
		}
		out, err := k.gdbus("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.NameHasOwner", "org.kde.KWin")
		if err != nil || !strings.Contains(out, "true") {
			return false
		}
		// KWin owns its name before it registers its scripting object,
		// which Windows needs.
		out, err = k.output(15*time.Second, "gdbus", "introspect", "--address", k.bus, "--dest", "org.kde.KWin", "--object-path", "/Scripting")
		return err == nil && strings.Contains(out, "org.kde.kwin.Scripting")
	})
}

// copyKWin copies kwin_wayland, without its file capability, into a
// root-owned directory of the session.
func (k *KWin) copyKWin() (string, error) {
	src, err := exec.LookPath("kwin_wayland")
	if err != nil {
		return "", fmt.Errorf("%w: kwin_wayland (on Debian: apt-get install kwin-wayland)", ErrMissingTool)
	}
	binDir := filepath.Join(k.dir, "kwin-bin")
	if err := os.Mkdir(binDir, 0o755); err != nil {
		return "", fmt.Errorf("creating the directory of KWin's copy: %w", err)
	}
	dst := filepath.Join(binDir, "kwin_wayland")
	in, err := os.Open(src)
	if err != nil {
		return "", fmt.Errorf("opening %s: %w", src, err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		return "", fmt.Errorf("creating %s: %w", dst, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return "", fmt.Errorf("copying %s: %w", src, err)
	}
	if err := out.Close(); err != nil {
		return "", fmt.Errorf("copying %s: %w", src, err)
	}
	return dst, nil
}

// KWinEntry is the desktop entry that authorizes exe on KWin: the file a
// Plasma session reads from $XDG_DATA_DIRS/applications (or
// ~/.local/share/applications).
func KWinEntry(exe string) string {
	return fmt.Sprintf(`[Desktop Entry]
Type=Application
Name=%s
Exec=%s
NoDisplay=true
X-KDE-Wayland-Interfaces=%s
X-KDE-DBUS-Restricted-Interfaces=%s
`, filepath.Base(exe), exe, KWinWaylandInterfaces, KWinDBusInterfaces)
}

// writeEntry writes one desktop entry per authorized executable.
func (k *KWin) writeEntry(exes []string) error {
	apps := filepath.Join(k.data, "applications")
	if err := os.MkdirAll(apps, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", apps, err)
	}
	for i, exe := range exes {
		real, err := filepath.EvalSymlinks(exe)
		if err != nil {
			return fmt.Errorf("resolving the executable to authorize: %w", err)
		}
		if real, err = filepath.Abs(real); err != nil {
			return fmt.Errorf("resolving the executable to authorize: %w", err)
		}
		p := filepath.Join(apps, fmt.Sprintf("deskhand-test-%d.desktop", i))
		if err := os.WriteFile(p, []byte(KWinEntry(real)), 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	return nil
}

// Bus is the session bus address.
func (k *KWin) Bus() string { return k.bus }

// AsUser is argv run as WaylandUser (through setpriv, which execs it, so
// KWin sees argv[0]'s own executable), for a client KWin must authorize.
func (k *KWin) AsUser(argv ...string) []string {
	return append([]string{"/usr/bin/setpriv", "--reuid=" + strconv.Itoa(k.uid), "--regid=" + strconv.Itoa(k.gid),
		"--clear-groups", "--"}, argv...)
}

// UserEnv is the environment of a client that runs as WaylandUser: Env
// with the session's HOME.
func (k *KWin) UserEnv() []string {
	return append(withoutVars(k.Env(), "HOME", "XDG_DATA_DIRS"), "HOME="+k.home, "XDG_DATA_DIRS="+k.data+":/usr/share")
}

// UserCommand is a client run as WaylandUser in the session's
// environment.
func (k *KWin) UserCommand(name string, args ...string) *exec.Cmd {
	argv := k.AsUser(append([]string{name}, args...)...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = k.UserEnv()
	return cmd
}

// RunAsUser runs a client as WaylandUser and returns its output, failing
// the test on error.
func (k *KWin) RunAsUser(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := runCmd(k.UserCommand(name, args...), 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// KWinLog is the end of KWin's own log, for failure messages.
func (k *KWin) KWinLog() string {
	if k.kwin == nil {
		return ""
	}
	return k.kwin.logTail()
}

// Close stops the apps, then KWin and the bus, then any stray process of
// this session, and removes the runtime directory.
func (k *KWin) Close() error { return k.close() }

// KWinWindow is one window as KWin's own scripting API reports it (KWin
// 5.27's scripts cannot read the stacking order).
type KWinWindow struct {
	Caption   string `json:"caption"`
	AppID     string `json:"app_id"` // resourceClass: the Wayland app_id
	PID       int    `json:"pid"`
	X         int    `json:"x"`
	Y         int    `json:"y"`
	Width     int    `json:"width"`
	Height    int    `json:"height"`
	Minimized bool   `json:"minimized"`
	Active    bool   `json:"active"`
	Normal    bool   `json:"normal"` // a normal window: no panel, desktop or popup
	UUID      string `json:"uuid"`   // KWin's internalId, the uuid plasma window management reports
}

// kwinListScript prints KWin's window list as one JSON line, through
// KWin's own scripting API (org.kde.kwin.Scripting): an independent view
// of the windows the helper reads through plasma window management.
const kwinListScript = `
var out = workspace.clientList().map(function (c) {
  var g = c.frameGeometry;
  return {caption: c.caption, app_id: String(c.resourceClass), pid: c.pid,
    x: g.x, y: g.y, width: g.width, height: g.height,
    minimized: c.minimized, active: c === workspace.activeClient, normal: c.normalWindow,
    uuid: String(c.internalId)};
});
print("%s" + JSON.stringify(out));
`

// Windows lists KWin's windows through a KWin script.
func (k *KWin) Windows(t testing.TB) []KWinWindow {
	t.Helper()
	var ws []KWinWindow
	out := k.Script(t, kwinListScript)
	if err := json.Unmarshal([]byte(out), &ws); err != nil {
		t.Fatalf("parsing KWin's window list %q: %v", out, err)
	}
	return ws
}

// MoveWindow moves the frame of pid's windows to x, y through a KWin
// script, as a user dragging it would.
func (k *KWin) MoveWindow(t testing.TB, pid, x, y int) {
	t.Helper()
	k.Script(t, fmt.Sprintf(`
workspace.clientList().forEach(function (c) {
  if (c.pid === %d) {
    var g = c.frameGeometry;
    c.frameGeometry = {x: %d, y: %d, width: g.width, height: g.height};
  }
});
print("%%s" + "moved");
`, pid, x, y))
}

// Script runs js in KWin (org.kde.kwin.Scripting) and returns what it
// printed after the marker its text holds as "%s" (the script must print
// "%s" + result exactly once).
func (k *KWin) Script(t testing.TB, js string) string {
	t.Helper()
	k.scripts++
	marker := fmt.Sprintf("deskhand-script-%d-%d:", k.scripts, time.Now().UnixNano())
	script := filepath.Join(k.dir, fmt.Sprintf("script-%d.js", k.scripts))
	if err := os.WriteFile(script, []byte(fmt.Sprintf(js, marker)), 0o644); err != nil {
		t.Fatal(err)
	}
	name := strings.TrimSuffix(marker, ":")
	out, err := k.gdbus("org.kde.KWin", "/Scripting", "org.kde.kwin.Scripting.loadScript", script, name)
	if err != nil {
		t.Fatalf("loading a KWin script: %v", err)
	}
	// "(N,)": the script's id.
	id := strings.Trim(strings.TrimSpace(out), "(,)")
	// KWin 5.27 puts a script at /<id>; later ones at /Scripting/Script<id>.
	if _, err := k.gdbus("org.kde.KWin", "/"+id, "org.kde.kwin.Script.run"); err != nil {
		if _, err2 := k.gdbus("org.kde.KWin", "/Scripting/Script"+id, "org.kde.kwin.Script.run"); err2 != nil {
			t.Fatalf("running KWin script %s: %v; %v", id, err, err2)
		}
	}
	defer func() { _, _ = k.gdbus("org.kde.KWin", "/Scripting", "org.kde.kwin.Scripting.unloadScript", name) }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		b, _ := os.ReadFile(k.kwin.log)
		for _, line := range strings.Split(string(b), "\n") {
			if i := strings.Index(line, marker); i >= 0 {
				return line[i+len(marker):]
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("a KWin script printed nothing within 30s; KWin log:\n%s", k.KWinLog())
	return ""
}

// WaitWindow waits (up to a minute) for a normal, mapped window of the
// app pid as KWin reports it.
func (k *KWin) WaitWindow(t testing.TB, pid int) KWinWindow {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		for _, w := range k.Windows(t) {
			if w.PID == pid && w.Normal && w.Width > 0 {
				return w
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("no window of pid %d appeared on KWin within a minute; KWin log:\n%s", pid, k.KWinLog())
	return KWinWindow{}
}
