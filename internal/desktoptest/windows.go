//go:build unix

package desktoptest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Rect is a rectangle in root-window pixels.
type Rect struct{ X, Y, Width, Height int }

// Contains reports whether the point x,y lies inside r.
func (r Rect) Contains(x, y int) bool {
	return x >= r.X && y >= r.Y && x < r.X+r.Width && y < r.Y+r.Height
}

func (r Rect) String() string { return fmt.Sprintf("%dx%d+%d+%d", r.Width, r.Height, r.X, r.Y) }

// App describes an application to start on the desktop.
type App struct {
	Name  string   // program, looked up on PATH
	Args  []string // its arguments
	Class string   // WM_CLASS class to wait for, when the window's pid may differ
	Env   []string // extra environment entries, added to AppEnv
}

// Window holds the facts about a top-level client window, read from the X
// server with xprop and xwininfo.
type Window struct {
	ID       uint32
	PID      int    // _NET_WM_PID, 0 when unset
	Class    string // WM_CLASS class
	Instance string // WM_CLASS instance
	Title    string // _NET_WM_NAME, else WM_NAME
	Frame    Rect   // client area plus _NET_FRAME_EXTENTS
	Client   Rect   // client area in root coordinates
	Extents  [4]int // _NET_FRAME_EXTENTS: left, right, top, bottom
	Framed   bool   // _NET_FRAME_EXTENTS is set (all zero for a client-side decorated window)
	Viewable bool   // xwininfo "Map State: IsViewable"
	State    string // WM_STATE: "Normal", "Iconic", "Withdrawn", or "" when unset
	NetState []string
	Cmd      *exec.Cmd // the process, for windows started with StartApp
}

// Minimized reports whether the window manager iconified the window.
func (w *Window) Minimized() bool {
	return w.State == "Iconic" || slices.Contains(w.NetState, "_NET_WM_STATE_HIDDEN")
}

// windowFacts reads a window's facts.
func (d *Desktop) windowFacts(id uint32) (*Window, error) {
	ps, err := d.props(hexID(id), "_NET_WM_PID", "WM_CLASS", "_NET_WM_NAME", "WM_NAME",
		"_NET_FRAME_EXTENTS", "WM_STATE", "_NET_WM_STATE")
	if err != nil {
		return nil, err
	}
	w := &Window{ID: id}
	if pid := ps["_NET_WM_PID"].uints(); len(pid) == 1 {
		w.PID = int(pid[0])
	}
	if cls, ok := ps["WM_CLASS"]; ok {
		parts := strings.Split(strings.TrimRight(string(cls.bytes()), "\x00"), "\x00")
		w.Instance = parts[0]
		if len(parts) > 1 {
			w.Class = parts[1]
		}
	}
	if name, ok := ps["_NET_WM_NAME"]; ok {
		w.Title = name.text()
	} else if name, ok := ps["WM_NAME"]; ok {
		w.Title = name.text()
	}
	if ext := ps["_NET_FRAME_EXTENTS"].uints(); len(ext) == 4 {
		w.Framed = true
		for i, v := range ext {
			w.Extents[i] = int(v)
		}
	}
	if st := ps["WM_STATE"].uints(); len(st) >= 1 {
		w.State = map[uint64]string{0: "Withdrawn", 1: "Normal", 3: "Iconic"}[st[0]]
	}
	w.NetState = ps["_NET_WM_STATE"].values

	info, err := d.output(10*time.Second, "xwininfo", "-id", hexID(id))
	if err != nil {
		return nil, err
	}
	fields := map[string]int{}
	for _, line := range strings.Split(info, "\n") {
		key, val, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		if key == "Map State" {
			w.Viewable = val == "IsViewable"
			continue
		}
		if n, err := strconv.Atoi(val); err == nil {
			fields[key] = n
		}
	}
	w.Client = Rect{fields["Absolute upper-left X"], fields["Absolute upper-left Y"], fields["Width"], fields["Height"]}
	l, r, t, b := w.Extents[0], w.Extents[1], w.Extents[2], w.Extents[3]
	w.Frame = Rect{w.Client.X - l, w.Client.Y - t, w.Client.Width + l + r, w.Client.Height + t + b}
	return w, nil
}

// WindowInfo reads the current facts of window id, failing the test when
// the window does not exist.
func (d *Desktop) WindowInfo(t testing.TB, id uint32) *Window {
	t.Helper()
	w, err := d.windowFacts(id)
	if err != nil {
		t.Fatalf("reading window %s: %v", hexID(id), err)
	}
	return w
}

// rootWindows reads a window-list property of the root (_NET_CLIENT_LIST,
// _NET_CLIENT_LIST_STACKING).
func (d *Desktop) rootWindows(name string) ([]uint32, error) {
	ps, err := d.props("-root", name)
	if err != nil {
		return nil, err
	}
	var ids []uint32
	for _, v := range ps[name].uints() {
		ids = append(ids, uint32(v))
	}
	return ids, nil
}

var childLine = regexp.MustCompile(`(?m)^\s+(0x[0-9a-f]+) `)

// topLevels lists the managed client windows: _NET_CLIENT_LIST with a
// window manager, the root's children without one.
func (d *Desktop) topLevels() ([]uint32, error) {
	if d.wm != nil {
		return d.rootWindows("_NET_CLIENT_LIST")
	}
	out, err := d.output(10*time.Second, "xwininfo", "-root", "-children")
	if err != nil {
		return nil, err
	}
	var ids []uint32
	for _, m := range childLine.FindAllStringSubmatch(out, -1) {
		n, _ := strconv.ParseUint(m[1], 0, 32)
		ids = append(ids, uint32(n))
	}
	return ids, nil
}

// ClientList returns _NET_CLIENT_LIST (in mapping order).
func (d *Desktop) ClientList(t testing.TB) []uint32 {
	t.Helper()
	ids, err := d.rootWindows("_NET_CLIENT_LIST")
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// Stacking returns _NET_CLIENT_LIST_STACKING, bottom-most first.
func (d *Desktop) Stacking(t testing.TB) []uint32 {
	t.Helper()
	ids, err := d.rootWindows("_NET_CLIENT_LIST_STACKING")
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// appStartTimeout bounds how long StartApp waits for the window: an
// app usually shows one in well under a second, but on a CI machine whose
// two cores the race-detector shards fill, xmessage once took over 15 s.
const appStartTimeout = 45 * time.Second

// StartApp starts an application in its own process group (stopped when the
// test or the desktop ends) and waits until a new top-level client window
// of its pid, or with WM_CLASS class app.Class, is managed and viewable.
func (d *Desktop) StartApp(t testing.TB, app App) *Window {
	t.Helper()
	w, p, err := d.launchApp(app)
	if errors.Is(err, ErrMissingTool) {
		skipOrFail(t, "cannot start %s: %v", app.Name, err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.stopApp(p) })
	return w
}

// LaunchApp is StartApp without a test: the app is stopped by Close.
func (d *Desktop) LaunchApp(app App) (*Window, error) {
	w, _, err := d.launchApp(app)
	return w, err
}

func (d *Desktop) launchApp(app App) (*Window, *proc, error) {
	if err := lookTools(app.Name); err != nil {
		return nil, nil, err
	}
	before, err := d.topLevels()
	if err != nil {
		return nil, nil, fmt.Errorf("listing windows before starting %s: %w", app.Name, err)
	}
	cmd := exec.Command(app.Name, app.Args...)
	cmd.Env = append(d.AppEnv(), app.Env...)
	cmd.Dir = filepath.Join(d.dir, "home")
	logFile, err := os.CreateTemp(filepath.Join(d.dir, "logs"), filepath.Base(app.Name)+"-*.log")
	if err != nil {
		return nil, nil, fmt.Errorf("creating log for %s: %w", app.Name, err)
	}
	logFile.Close()
	d.mu.Lock()
	if d.xvfb == nil || d.xvfb.exited() {
		d.mu.Unlock()
		return nil, nil, fmt.Errorf("starting %s: the desktop is closed", app.Name)
	}
	p, err := startProc(app.Name, cmd, logFile.Name(), syscall.SIGKILL)
	if err == nil {
		d.apps = append(d.apps, p)
	}
	d.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}

	deadline := time.Now().Add(appStartTimeout)
	var last error
	for {
		w, err := d.findAppWindow(p.pid(), app.Class, before)
		if err != nil {
			last = err
		}
		if w != nil {
			w.Cmd = cmd
			return w, p, nil
		}
		if p.exited() {
			return nil, p, fmt.Errorf("%s exited (%v) before showing a window: %s", app.Name, p.err, p.logTail())
		}
		if time.Now().After(deadline) {
			d.stopApp(p)
			msg := fmt.Sprintf("%s (pid %d) showed no viewable top-level window within %s", app.Name, p.pid(), appStartTimeout)
			if app.Class != "" {
				msg += fmt.Sprintf(" (looking for pid %d or WM_CLASS class %q)", p.pid(), app.Class)
			}
			if last != nil {
				msg += fmt.Sprintf("; last error: %v", last)
			}
			return nil, nil, fmt.Errorf("%s; its output: %s", msg, p.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// findAppWindow returns the facts of a new, viewable, managed top-level
// window that belongs to pid or has WM_CLASS class, or nil if none yet.
func (d *Desktop) findAppWindow(pid int, class string, before []uint32) (*Window, error) {
	ids, err := d.topLevels()
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		w, err := d.windowFacts(id)
		if err != nil {
			continue // windows come and go while an app starts
		}
		// X reuses a departed client's id range, so an id seen before the
		// start is only old news when it still belongs to another process.
		if slices.Contains(before, id) && (pid == 0 || w.PID != pid) {
			continue
		}
		if w.PID != pid && (class == "" || w.Class != class) {
			continue
		}
		if !w.Viewable {
			continue
		}
		if d.wm != nil && (w.State != "Normal" || !w.Framed) {
			continue // not fully managed and framed yet
		}
		return w, nil
	}
	return nil, nil
}

func (d *Desktop) stopApp(p *proc) {
	d.mu.Lock()
	d.apps = slices.DeleteFunc(d.apps, func(q *proc) bool { return q == p })
	d.mu.Unlock()
	_ = p.stop(stopTimeout)
}

// XtermOptions configure StartXterm; empty fields keep xterm's defaults.
type XtermOptions struct {
	Class      string // WM_CLASS class (-class)
	Title      string // window title (-title)
	Geometry   string // "COLSxROWS+X+Y" (-geometry); the frame's top-left lands at X,Y
	Background string // colour name or #rrggbb (-bg)
	Foreground string // colour name or #rrggbb (-fg)
	// Text, when set, is printed in the terminal instead of running a shell,
	// so the content is fixed (no prompt, no cursor movement).
	Text string
}

// StartXterm starts an xterm and waits for its window.
func (d *Desktop) StartXterm(t testing.TB, opts XtermOptions) *Window {
	t.Helper()
	return d.StartApp(t, xtermApp(opts))
}

// LaunchXterm is StartXterm without a test.
func (d *Desktop) LaunchXterm(opts XtermOptions) (*Window, error) {
	return d.LaunchApp(xtermApp(opts))
}

func xtermApp(opts XtermOptions) App {
	args := []string{"+sb", "-bw", "0"} // no scrollbar or X border: simpler, stable pixels
	if opts.Class != "" {
		args = append(args, "-class", opts.Class)
	}
	if opts.Title != "" {
		args = append(args, "-title", opts.Title)
	}
	if opts.Geometry != "" {
		args = append(args, "-geometry", opts.Geometry)
	}
	if opts.Background != "" {
		args = append(args, "-bg", opts.Background)
	}
	if opts.Foreground != "" {
		args = append(args, "-fg", opts.Foreground)
	}
	app := App{Name: "xterm", Class: opts.Class}
	if opts.Text != "" {
		// The sleep keeps the command, and with it the window, alive
		// without anything else ever being printed.
		args = append(args, "-e", "sh", "-c", `printf '%s' "$DESKHAND_XTERM_TEXT"; exec sleep 2147483647`)
		app.Env = []string{"DESKHAND_XTERM_TEXT=" + opts.Text}
	}
	app.Args = args
	return app
}

// StartGTK starts a real GTK 3 application (a zenity information dialog)
// with the given title and waits for its window.
func (d *Desktop) StartGTK(t testing.TB, title string) *Window {
	t.Helper()
	return d.StartApp(t, gtkApp(title))
}

// LaunchGTK is StartGTK without a test.
func (d *Desktop) LaunchGTK(title string) (*Window, error) {
	return d.LaunchApp(gtkApp(title))
}

func gtkApp(title string) App {
	return App{
		Name: "zenity",
		Args: []string{"--info", "--title", title, "--no-wrap",
			"--text", "deskhand test window: " + title,
			"--width", "420", "--height", "160"},
		Class: "Zenity",
	}
}

// ActiveWindow returns _NET_ACTIVE_WINDOW, 0 when no window is active.
func (d *Desktop) ActiveWindow(t testing.TB) uint32 {
	t.Helper()
	id, err := d.activeWindow()
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (d *Desktop) activeWindow() (uint32, error) {
	ps, err := d.props("-root", "_NET_ACTIVE_WINDOW")
	if err != nil {
		return 0, err
	}
	if v := ps["_NET_ACTIVE_WINDOW"].uints(); len(v) == 1 {
		return uint32(v[0]), nil
	}
	return 0, nil
}

// Focus activates window id through the window manager (wmctrl -a: focus
// and raise) and waits until _NET_ACTIVE_WINDOW is id and the window is on
// top of _NET_CLIENT_LIST_STACKING.
func (d *Desktop) Focus(t testing.TB, id uint32) {
	t.Helper()
	Require(t, "wmctrl")
	deadline := time.Now().Add(5 * time.Second)
	nextRequest := time.Now()
	for {
		if time.Now().After(nextRequest) {
			// Asked again now and then: a request sent while the window
			// manager is busy mapping another window can be dropped.
			if _, err := d.output(10*time.Second, "wmctrl", "-i", "-a", hexID(id)); err != nil {
				t.Fatalf("activating window %s: %v", hexID(id), err)
			}
			nextRequest = time.Now().Add(time.Second)
		}
		active, err := d.activeWindow()
		if err != nil {
			t.Fatal(err)
		}
		stack, err := d.rootWindows("_NET_CLIENT_LIST_STACKING")
		if err != nil {
			t.Fatal(err)
		}
		if active == id && len(stack) > 0 && stack[len(stack)-1] == id {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Focus(%s): after 5s _NET_ACTIVE_WINDOW is %s and the stacking order (bottom first) is %s",
				hexID(id), hexID(active), hexIDs(stack))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func hexIDs(ids []uint32) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = hexID(id)
	}
	return "[" + strings.Join(s, " ") + "]"
}

// Move moves window id so its frame's top-left corner is at x,y and resizes
// its client area to w×h (wmctrl -e; w or h ≤ 0 keeps that side), then
// waits until the window shows that geometry. The size may be rounded down
// to the window's resize increments (an xterm resizes by character cells).
func (d *Desktop) Move(t testing.TB, id uint32, x, y, w, h int) {
	t.Helper()
	Require(t, "wmctrl")
	if w <= 0 {
		w = -1
	}
	if h <= 0 {
		h = -1
	}
	geom := fmt.Sprintf("0,%d,%d,%d,%d", x, y, w, h)
	if _, err := d.output(10*time.Second, "wmctrl", "-i", "-r", hexID(id), "-e", geom); err != nil {
		t.Fatalf("moving window %s: %v", hexID(id), err)
	}
	incW, incH := d.resizeIncrements(id)
	deadline := time.Now().Add(5 * time.Second)
	for {
		win, err := d.windowFacts(id)
		if err != nil {
			t.Fatal(err)
		}
		ok := win.Frame.X == x && win.Frame.Y == y &&
			(w < 0 || (win.Client.Width <= w && win.Client.Width > w-incW)) &&
			(h < 0 || (win.Client.Height <= h && win.Client.Height > h-incH))
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Move(%s, %d,%d %dx%d): after 5s the frame is %v and the client %v (resize increments %dx%d)",
				hexID(id), x, y, w, h, win.Frame, win.Client, incW, incH)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// resizeIncrements reads the window's WM_NORMAL_HINTS resize increments,
// 1x1 when it has none.
func (d *Desktop) resizeIncrements(id uint32) (int, int) {
	ps, err := d.props(hexID(id), "WM_NORMAL_HINTS")
	if err != nil {
		return 1, 1
	}
	v := ps["WM_NORMAL_HINTS"].uints()
	const pResizeInc = 1 << 6
	if len(v) < 11 || v[0]&pResizeInc == 0 || v[9] == 0 || v[10] == 0 {
		return 1, 1
	}
	return int(v[9]), int(v[10])
}
