//go:build unix

package supervisor_test

// The desktops the tier matrix and the lock tests (gates_e2e_test.go) run
// their one body on: the private Xvfb desktop with X apps, and headless
// sway with Wayland apps. Each gives the same three apps, one per tier, a
// way to put one in front, and its own independent evidence.

import (
	"path/filepath"
	"testing"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/lock"
)

// matrixApp is one app of the matrix: where it is, in screen pixels, and
// how to put it in front.
type matrixApp struct {
	title string
	rect  desktoptest.Rect
	front func(t *testing.T)
}

// center is the middle of the app's area, nudged by (dx, dy).
func (a matrixApp) center(dx, dy int) (int, int) {
	return a.rect.X + a.rect.Width/2 + dx, a.rect.Y + a.rect.Height/2 + dy
}

// matrixDesktop is a desktop with an app of each tier running.
type matrixDesktop struct {
	// serve starts `deskhand serve` on the desktop with the apps
	// pre-approved, without asking for access.
	serve func(t *testing.T, args ...string) *e2e
	// access are the names request_access grants; granted the lines
	// list_granted_applications must show.
	access, granted   []string
	read, click, full matrixApp
	// typed is the file the click-tier terminal writes what it is typed;
	// readMouse, when set, the one the read-tier app writes the mouse
	// buttons it gets.
	typed, readMouse string
	// pointer is where the pointer is, from outside deskhand; ok is false
	// where no client can know (Wayland).
	pointer func(e *e2e) (x, y int, ok bool)
	// notHere says why an action of the matrix cannot apply to the app
	// of tier on this desktop, "" when it does.
	notHere func(action, tier string) string
	// lockOwner reads the holder of this desktop's cross-session lock,
	// nil when it is free (or, for a file, left by a process that is
	// gone).
	lockOwner func(t *testing.T) *lock.Owner
}

// matrixDesktops are the desktops of the matrix, by name.
var matrixDesktops = []struct {
	name  string
	start func(t *testing.T) *matrixDesktop
}{{"x11", x11Matrix}, {"sway", swayMatrix}}

// x11Matrix: xterm (click tier in the catalog) running cat into a file, a
// window that identifies as Firefox (read), zenity (full), on Xvfb with
// openbox.
func x11Matrix(t *testing.T) *matrixDesktop {
	d := newDesktop(t, desktoptest.Options{})
	typed := filepath.Join(t.TempDir(), "typed")
	term := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"-geometry", "60x16+40+40", "-e", "sh", "-c", "exec cat > " + typed}, Class: "XTerm"})
	browser := browserApp(t, d, "browser")
	d.Move(t, browser.ID, 600, 40, 0, 0)
	full := d.StartGTK(t, "full app")
	d.Move(t, full.ID, 1150, 40, 0, 0)
	app := func(w *desktoptest.Window) matrixApp {
		w = d.WindowInfo(t, w.ID)
		return matrixApp{title: w.Title, rect: w.Client, front: func(t *testing.T) { d.Focus(t, w.ID) }}
	}
	return &matrixDesktop{
		serve: func(t *testing.T, args ...string) *e2e {
			return gatedServer(t, d, nil, append([]string{"--allow", "xterm", "--allow", "firefox", "--allow", "zenity"}, args...)...)
		},
		access:  []string{"xterm", "firefox", "zenity"},
		granted: []string{"XTerm: click tier", "Firefox: read tier", "zenity: full tier"},
		read:    app(browser), click: app(term), full: app(full),
		typed: typed,
		pointer: func(e *e2e) (int, int, bool) {
			x, y := e.mouseLocation()
			return x, y, true
		},
		notHere:   func(string, string) string { return "" },
		lockOwner: func(t *testing.T) *lock.Owner { return lockOwner(t, d) },
	}
}

// swayMatrix: foot (click tier) running cat into a file, a foot whose
// app_id is firefox (read), the GTK 3 probe pre-approved at the full tier,
// tiled side by side on headless sway.
func swayMatrix(t *testing.T) *matrixDesktop {
	requireWaylandTools(t, "foot")
	requireGTKProbe(t)
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	typed, _ := wlTerminal(t, w, "foot", "204a87")
	// The read-tier app reports every mouse button it gets (xterm mouse
	// mode) into a file: the evidence on Wayland that refused clicks,
	// scrolls and drags never reached it.
	readMouse := userFile(t, w, "read.mouse")
	w.StartApp(t, "foot", "--app-id", "firefox", "sh", "-c", "stty raw -echo; printf '\\033[?1000h'; exec cat > "+readMouse)
	w.WaitView(t, "firefox")
	w.StartApp(t, "/usr/bin/python3", copyProbe(t, w), "button", userFile(t, w, "clicks"))
	w.WaitView(t, "gtkprobe.py")
	// The three tiled side by side, each at its final width.
	var views map[string]desktoptest.View
	wlWaitFor(t, "sway to tile the three apps", func() bool {
		views = map[string]desktoptest.View{}
		for _, v := range w.Views(t) {
			views[v.AppID] = v
		}
		return len(views) == 3 && views["foot"].Rect.Width > 0 && views["foot"].Rect.Width < 500
	})
	app := func(appID string) matrixApp {
		return matrixApp{title: appID, rect: views[appID].Rect, front: func(t *testing.T) {
			w.Run(t, "swaymsg", "[app_id="+appID+"] focus")
			wlWaitFor(t, appID+" to have the focus", func() bool {
				for _, v := range w.Views(t) {
					if v.AppID == appID {
						return v.Focused
					}
				}
				return false
			})
		}}
	}
	return &matrixDesktop{
		serve: func(t *testing.T, args ...string) *e2e {
			return wlServe(t, w, t.TempDir(), append([]string{"--allow", "foot", "--allow", "firefox", "--allow", "gtkprobe.py=full"}, args...)...)
		},
		access:  []string{"foot", "firefox", "gtkprobe.py"},
		granted: []string{"foot: click tier", "firefox: read tier", "gtkprobe.py: full tier"},
		read:    app("firefox"), click: app("foot"), full: app("gtkprobe.py"),
		typed:     typed,
		readMouse: readMouse,
		pointer:   func(*e2e) (int, int, bool) { return 0, 0, false },
		notHere: func(action, tier string) string {
			// The lower tiers refuse these by tier before Wayland is asked.
			switch {
			case tier != "full":
				return ""
			case action == "hold_key":
				return "Wayland's virtual keyboard cannot hold a key for a time, so deskhand refuses hold_key there"
			case action == "shift+left_click":
				return "the Wayland helper presses a key combination and releases it in one step, so deskhand refuses a click with a key held there"
			}
			return ""
		},
		lockOwner: func(t *testing.T) *lock.Owner {
			o, err := lock.New(lock.Path(filepath.Join(w.Dir(), "deskhand"), w.Display()), lock.Options{}).Holder()
			if err != nil {
				t.Fatalf("reading the computer-use lock: %v", err)
			}
			return o
		},
	}
}
