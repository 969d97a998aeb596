//go:build unix

package desktoptest

import (
	"bufio"
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

	"github.com/google/go-cmp/cmp"
)

// TestDesktop drives one desktop through everything the harness offers:
// apps, window facts checked against the tools, focus, move, monitors, and
// a teardown that leaves nothing behind.
func TestDesktop(t *testing.T) {
	Require(t, "Xvfb", "openbox", "xterm", "zenity", "wmctrl", "xrandr", "xdpyinfo")
	d := Start(t, Options{})

	t.Run("screen", func(t *testing.T) {
		info := d.Run(t, "xdpyinfo")
		for _, want := range []string{"dimensions:    1920x1080 pixels", "depth of root window:    24 planes", "MIT-SHM", "XTEST", "RANDR"} {
			if !strings.Contains(info, want) {
				t.Errorf("xdpyinfo output lacks %q", want)
			}
		}
		name := d.Run(t, "xprop", "-root", "-notype", "-f", "_NET_WM_NAME", "8u", "_NET_SUPPORTING_WM_CHECK")
		if !strings.Contains(name, "window id #") {
			t.Errorf("root _NET_SUPPORTING_WM_CHECK = %q, want a window", name)
		}
	})

	xt := d.StartXterm(t, XtermOptions{Class: "DeskhandTest", Title: "harness xterm", Geometry: "80x24+10+10", Background: "#13F1A7", Text: "hello from the harness"})
	gtk := d.StartGTK(t, "harness gtk")

	t.Run("window facts", func(t *testing.T) {
		checkWindow(t, d, xt, "DeskhandTest", "xterm", "harness xterm")
		checkWindow(t, d, gtk, "Zenity", "zenity", "harness gtk")
		if xt.Frame.X != 10 || xt.Frame.Y != 10 {
			t.Errorf("xterm -geometry +10+10: frame at %d,%d, want 10,10", xt.Frame.X, xt.Frame.Y)
		}
		if xt.Extents[2] == 0 {
			t.Errorf("xterm frame extents %v: want a title bar", xt.Extents)
		}
		clients := d.ClientList(t)
		for _, w := range []*Window{xt, gtk} {
			if !slices.Contains(clients, w.ID) {
				t.Errorf("_NET_CLIENT_LIST %s lacks %s", hexIDs(clients), hexID(w.ID))
			}
		}
	})

	t.Run("focus", func(t *testing.T) {
		d.Focus(t, xt.ID)
		if got := d.ActiveWindow(t); got != xt.ID {
			t.Fatalf("ActiveWindow() = %s after Focus(xterm %s)", hexID(got), hexID(xt.ID))
		}
		d.Focus(t, gtk.ID)
		if got := d.ActiveWindow(t); got != gtk.ID {
			t.Fatalf("ActiveWindow() = %s after Focus(gtk %s)", hexID(got), hexID(gtk.ID))
		}
		stack := d.Stacking(t)
		if stack[len(stack)-1] != gtk.ID {
			t.Errorf("stacking %s after Focus(gtk): want %s on top", hexIDs(stack), hexID(gtk.ID))
		}
		// wmctrl reads the same property independently.
		if out := d.Run(t, "xprop", "-root", "_NET_ACTIVE_WINDOW"); !strings.Contains(out, hexID(gtk.ID)) {
			t.Errorf("xprop -root _NET_ACTIVE_WINDOW = %q, want %s", out, hexID(gtk.ID))
		}
	})

	t.Run("move", func(t *testing.T) {
		d.Move(t, xt.ID, 300, 200, 600, 400)
		w := d.WindowInfo(t, xt.ID)
		if w.Frame.X != 300 || w.Frame.Y != 200 {
			t.Errorf("frame after Move(300,200) = %v", w.Frame)
		}
		// xterm resizes in character cells (6x13 with the default font).
		if w.Client.Width > 600 || w.Client.Width <= 600-6 || w.Client.Height > 400 || w.Client.Height <= 400-13 {
			t.Errorf("client after Move(600x400) = %v", w.Client)
		}
		checkFrameWindow(t, d, w)
		d.Move(t, gtk.ID, 700, 150, 0, 0)
		if w := d.WindowInfo(t, gtk.ID); w.Frame.X != 700 || w.Frame.Y != 150 || w.Client.Width != gtk.Client.Width {
			t.Errorf("gtk after Move(700,150, keep size) = frame %v client %v, was client %v", w.Frame, w.Client, gtk.Client)
		}
	})

	t.Run("monitors", func(t *testing.T) {
		want := []Monitor{
			{Name: "LEFT", X: 0, Y: 0, Width: 960, Height: 1080},
			{Name: "RIGHT", X: 960, Y: 0, Width: 960, Height: 1080, Primary: true},
		}
		d.SetMonitors(t, want)
		raw := d.Run(t, "xrandr", "--listmonitors")
		got, err := ParseListMonitors(raw)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(a, b Monitor) int { return strings.Compare(a.Name, b.Name) })
		opt := cmp.FilterPath(func(p cmp.Path) bool {
			f := p.Last().String()
			return f == ".WidthMM" || f == ".HeightMM" || f == ".Outputs" || f == ".Automatic"
		}, cmp.Ignore())
		if diff := cmp.Diff(want, got, opt); diff != "" {
			t.Errorf("xrandr --listmonitors after SetMonitors (-want +got):\n%s\nraw:\n%s", diff, raw)
		}
		if got[0].WidthMM != 254 || got[0].HeightMM != 286 {
			t.Errorf("LEFT physical size %dx%d mm, want 254x286 (96 DPI)", got[0].WidthMM, got[0].HeightMM)
		}
		// Replacing works, and the primary can move.
		three := []Monitor{
			{Name: "A", X: 0, Y: 0, Width: 640, Height: 1080, Primary: true},
			{Name: "B", X: 640, Y: 0, Width: 640, Height: 1080},
			{Name: "C", X: 1280, Y: 0, Width: 640, Height: 1080},
		}
		d.SetMonitors(t, three)
		if ms := d.Monitors(t); len(ms) != 3 || !ms[0].Primary || ms[0].Name != "A" {
			t.Errorf("Monitors() after setting A*,B,C = %v", ms)
		}
		d.SetMonitors(t, nil)
		ms := d.Monitors(t)
		if len(ms) != 1 || !ms[0].Automatic || ms[0].Rect() != (Rect{0, 0, 1920, 1080}) {
			t.Errorf("Monitors() after SetMonitors(nil) = %v, want the automatic whole screen", ms)
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		img := d.Screenshot(t)
		if img.Rect.Dx() != 1920 || img.Rect.Dy() != 1080 {
			t.Fatalf("screenshot is %v, want 1920x1080", img.Rect)
		}
		// The xterm was moved to 300,200; its client area is #13F1A7 away
		// from the text in the first line.
		w := d.WindowInfo(t, xt.ID)
		c := img.RGBAAt(w.Client.X+w.Client.Width-5, w.Client.Y+w.Client.Height-5)
		if c.R != 0x13 || c.G != 0xF1 || c.B != 0xA7 {
			t.Errorf("pixel in the xterm's bottom-right corner = %v, want #13F1A7", c)
		}
	})

	t.Run("teardown", func(t *testing.T) {
		xvfb, wm, apps := d.Pids()
		if len(apps) != 2 {
			t.Errorf("tracked app pids = %v, want the xterm and zenity", apps)
		}
		if got := TaggedProcesses(d.ID()); len(got) < 4 {
			t.Errorf("TaggedProcesses before Close = %v, want at least Xvfb, openbox, xterm and zenity", got)
		}
		display, dir := d.Display(), d.Dir()
		d.Close()
		d.Close() // idempotent
		for _, pid := range append([]int{xvfb, wm}, apps...) {
			if alive(pid) {
				t.Errorf("pid %d (%s) is still alive after Close", pid, comm(pid))
			}
		}
		if got := TaggedProcesses(d.ID()); len(got) != 0 {
			t.Errorf("processes of the desktop alive after Close: %v", describe(got))
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("desktop directory %s still exists after Close (%v)", dir, err)
		}
		if _, err := os.Stat("/tmp/.X11-unix/X" + strings.TrimPrefix(display, ":")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("display socket for %s still exists after Close (%v)", display, err)
		}
	})
}

// checkWindow compares a Window with what xprop, wmctrl and the process
// table say.
func checkWindow(t *testing.T, d *Desktop, w *Window, class, instance, title string) {
	t.Helper()
	if w.PID != w.Cmd.Process.Pid {
		t.Errorf("%s: PID %d, want the started process %d", title, w.PID, w.Cmd.Process.Pid)
	}
	if w.Class != class || w.Instance != instance || w.Title != title {
		t.Errorf("%s: class/instance/title = %q/%q/%q, want %q/%q/%q", title, w.Class, w.Instance, w.Title, class, instance, title)
	}
	if !w.Viewable || w.State != "Normal" || w.Minimized() {
		t.Errorf("%s: viewable=%v state=%q netstate=%v, want a viewable Normal window", title, w.Viewable, w.State, w.NetState)
	}
	out := d.Run(t, "xprop", "-id", hexID(w.ID), "_NET_WM_PID", "WM_CLASS")
	if !strings.Contains(out, fmt.Sprintf("_NET_WM_PID(CARDINAL) = %d", w.PID)) ||
		!strings.Contains(out, fmt.Sprintf("WM_CLASS(STRING) = %q, %q", instance, class)) {
		t.Errorf("%s: xprop says %q", title, out)
	}
	// wmctrl -lp: id, desktop, pid, host, title.
	var found bool
	for _, line := range strings.Split(d.Run(t, "wmctrl", "-lp"), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		id, _ := strconv.ParseUint(f[0], 0, 32)
		if uint32(id) == w.ID {
			found = true
			if f[2] != strconv.Itoa(w.PID) {
				t.Errorf("%s: wmctrl -lp pid %s, want %d", title, f[2], w.PID)
			}
		}
	}
	if !found {
		t.Errorf("%s: wmctrl -lp does not list %s", title, hexID(w.ID))
	}
	checkFrameWindow(t, d, w)
}

// checkFrameWindow checks the computed frame against the window manager's
// real frame window: the client's ancestor that is a child of the root.
func checkFrameWindow(t *testing.T, d *Desktop, w *Window) {
	t.Helper()
	id := w.ID
	for {
		tree := d.Run(t, "xwininfo", "-tree", "-id", hexID(id))
		m := regexp.MustCompile(`Parent window id: (0x[0-9a-f]+)( \(the root window\))?`).FindStringSubmatch(tree)
		if m == nil {
			t.Fatalf("no parent in xwininfo -tree -id %s: %q", hexID(id), tree)
		}
		if m[2] != "" {
			break
		}
		p, _ := strconv.ParseUint(m[1], 0, 32)
		id = uint32(p)
	}
	info := d.Run(t, "xwininfo", "-id", hexID(id))
	var x, y, wd, ht, bw int
	for _, f := range []struct {
		key string
		v   *int
	}{{"Absolute upper-left X:", &x}, {"Absolute upper-left Y:", &y}, {"Width:", &wd}, {"Height:", &ht}, {"Border width:", &bw}} {
		m := regexp.MustCompile(regexp.QuoteMeta(f.key) + `\s+(-?\d+)`).FindStringSubmatch(info)
		if m == nil {
			t.Fatalf("xwininfo of frame %s lacks %q", hexID(id), f.key)
		}
		*f.v, _ = strconv.Atoi(m[1])
	}
	// The frame window's outer edge includes its X border.
	got := Rect{x - bw, y - bw, wd + 2*bw, ht + 2*bw}
	if id == w.ID {
		t.Errorf("window %s is not reparented: no frame", hexID(w.ID))
	} else if got != w.Frame {
		t.Errorf("window %s: frame from extents %v, real frame window %s is %v", hexID(w.ID), w.Frame, hexID(id), got)
	}
}

func alive(pid int) bool {
	return pid > 0 && !isZombie(pid)
}

func comm(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

func describe(pids []int) string {
	var s []string
	for _, pid := range pids {
		s = append(s, fmt.Sprintf("%d(%s)", pid, comm(pid)))
	}
	return strings.Join(s, " ")
}

// TestOptions covers a non-default screen and running without a window
// manager.
func TestOptions(t *testing.T) {
	Require(t, "Xvfb", "xterm", "xdpyinfo")
	d := Start(t, Options{Width: 1024, Height: 768, Depth: 16, WindowManager: "none"})
	info := d.Run(t, "xdpyinfo")
	for _, want := range []string{"dimensions:    1024x768 pixels", "depth of root window:    16 planes"} {
		if !strings.Contains(info, want) {
			t.Errorf("xdpyinfo lacks %q", want)
		}
	}
	if out := d.Run(t, "xprop", "-root", "_NET_SUPPORTING_WM_CHECK"); !strings.Contains(out, "not found") && !strings.Contains(out, "no such atom") {
		t.Errorf("WindowManager none, but the root has %q", out)
	}
	w := d.StartXterm(t, XtermOptions{Geometry: "40x10+33+44", Text: "no wm"})
	if w.Frame != w.Client || w.Client.X != 33 || w.Client.Y != 44 {
		t.Errorf("xterm without a window manager: frame %v client %v, want both at 33,44", w.Frame, w.Client)
	}
	if w.Class != "XTerm" || w.PID != w.Cmd.Process.Pid {
		t.Errorf("xterm class %q pid %d, want XTerm and %d", w.Class, w.PID, w.Cmd.Process.Pid)
	}
}

// TestEnv checks the environment given to tools and apps.
func TestEnv(t *testing.T) {
	t.Setenv("WAYLAND_DISPLAY", "wayland-9")
	t.Setenv("XAUTHORITY", "/nonexistent/xauth")
	t.Setenv("DISPLAY", ":999")
	t.Setenv("LC_CTYPE", "xx_XX")
	d := &Desktop{display: ":42", id: "abc", dir: "/tmp/d"}
	env := d.Env()
	get := func(env []string, name string) (string, int) {
		var v string
		n := 0
		for _, kv := range env {
			if k, val, _ := strings.Cut(kv, "="); k == name {
				v, n = val, n+1
			}
		}
		return v, n
	}
	for _, c := range []struct {
		name, want string
		count      int
	}{{"DISPLAY", ":42", 1}, {"WAYLAND_DISPLAY", "", 0}, {"XAUTHORITY", "", 0}, {idVar, "abc", 1}} {
		if v, n := get(env, c.name); v != c.want || n != c.count {
			t.Errorf("Env() %s = %q (%d times), want %q (%d times)", c.name, v, n, c.want, c.count)
		}
	}
	app := d.AppEnv()
	for _, c := range []struct{ name, want string }{
		{"HOME", "/tmp/d/home"}, {"XDG_RUNTIME_DIR", "/tmp/d/runtime"}, {"NO_AT_BRIDGE", "1"},
		{"GDK_BACKEND", "x11"}, {"DISPLAY", ":42"}, {"LC_CTYPE", ""}, {"LANG", "C.UTF-8"},
	} {
		if v, _ := get(app, c.name); v != c.want {
			t.Errorf("AppEnv() %s = %q, want %q", c.name, v, c.want)
		}
	}
}

func TestParseListMonitors(t *testing.T) {
	tests := []struct {
		in      string
		want    []Monitor
		wantErr bool
	}{
		{
			in:   "Monitors: 1\n 0: +screen 1920/508x1080/286+0+0  screen\n",
			want: []Monitor{{Name: "screen", Width: 1920, Height: 1080, WidthMM: 508, HeightMM: 286, Automatic: true, Outputs: []string{"screen"}}},
		},
		{
			in: "Monitors: 2\n 0: *RIGHT 960/254x1080/286+960+0 \n 1: LEFT 960/254x1080/286+0+0  screen\n",
			want: []Monitor{
				{Name: "RIGHT", X: 960, Width: 960, Height: 1080, WidthMM: 254, HeightMM: 286, Primary: true},
				{Name: "LEFT", Width: 960, Height: 1080, WidthMM: 254, HeightMM: 286, Outputs: []string{"screen"}},
			},
		},
		{
			in:   "Monitors: 1\n 0: +*eDP-1 2560/344x1600/215+-10+20  eDP-1\n",
			want: []Monitor{{Name: "eDP-1", X: -10, Y: 20, Width: 2560, Height: 1600, WidthMM: 344, HeightMM: 215, Primary: true, Automatic: true, Outputs: []string{"eDP-1"}}},
		},
		{in: "Monitors: 2\n 0: A 1/1x1/1+0+0\n", wantErr: true},
		{in: "garbage", wantErr: true},
	}
	for _, tt := range tests {
		got, err := ParseListMonitors(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseListMonitors(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ParseListMonitors(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseMonitors(t *testing.T) {
	got, err := ParseMonitors("LEFT:960x1080+0+0*, RIGHT:960x1080+960+0")
	want := []Monitor{{Name: "LEFT", Width: 960, Height: 1080, Primary: true}, {Name: "RIGHT", X: 960, Width: 960, Height: 1080}}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("ParseMonitors = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"LEFT", "LEFT:960x1080", ":1x1+0+0"} {
		if _, err := ParseMonitors(bad); err == nil {
			t.Errorf("ParseMonitors(%q) succeeded, want an error", bad)
		}
	}
}

func TestParseProps(t *testing.T) {
	out := "WM_CLASS(STRING) = 0x78, 0x0, 0x58, 0x0\n" +
		"WM_NAME(STRING) = 0x68, 0xe9, 0x22\n" +
		"_NET_WM_NAME(UTF8_STRING) = 0xe2, 0x9c, 0x93\n" +
		"_NET_WM_PID(CARDINAL) = 0x3039\n" +
		"_NET_FRAME_EXTENTS:  not found.\n" +
		"_NET_WM_STATE(ATOM) = \n"
	ps := parseProps(out)
	if got := string(ps["WM_CLASS"].bytes()); got != "x\x00X\x00" {
		t.Errorf("WM_CLASS bytes = %q", got)
	}
	if got := ps["WM_NAME"].text(); got != "hé\"" {
		t.Errorf("WM_NAME (Latin-1) = %q, want %q", got, "hé\"")
	}
	if got := ps["_NET_WM_NAME"].text(); got != "✓" {
		t.Errorf("_NET_WM_NAME = %q, want ✓", got)
	}
	if got := ps["_NET_WM_PID"].uints(); !cmp.Equal(got, []uint64{12345}) {
		t.Errorf("_NET_WM_PID = %v", got)
	}
	if _, ok := ps["_NET_FRAME_EXTENTS"]; ok {
		t.Error("a missing property was parsed")
	}
	if p, ok := ps["_NET_WM_STATE"]; !ok || len(p.values) != 0 {
		t.Errorf("empty _NET_WM_STATE = %+v, %v", p, ok)
	}
}

// TestTeardownOnPanic runs a test that panics with a desktop up, in a
// child process, and checks that its cleanup still removed everything.
func TestTeardownOnPanic(t *testing.T) {
	Require(t, "Xvfb", "openbox", "xterm")
	id, out, err := runChild(t, "panic", nil)
	if err == nil {
		t.Fatalf("the panicking child succeeded:\n%s", out)
	}
	if !strings.Contains(out, "panic: deliberate") {
		t.Errorf("child output lacks the panic:\n%s", out)
	}
	waitNoTagged(t, id, 0)
}

// TestTeardownOnKill kills the test process outright (no cleanups run) and
// checks that the parent-death signal still stops Xvfb, openbox and apps.
func TestTeardownOnKill(t *testing.T) {
	Require(t, "Xvfb", "openbox", "xterm")
	id, out, err := runChild(t, "hang", func(p *os.Process) { _ = p.Kill() })
	if err == nil {
		t.Fatalf("the killed child succeeded:\n%s", out)
	}
	waitNoTagged(t, id, 10*time.Second)
}

// runChild re-runs this test binary in a mode of TestChild; it returns the
// desktop id the child printed. onID runs once the id is known.
func runChild(t *testing.T, mode string, onID func(*os.Process)) (string, string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestChild$", "-test.v")
	cmd.Env = append(os.Environ(), "DESKTOPTEST_CHILD="+mode)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var id string
	var all strings.Builder
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		all.WriteString(line + "\n")
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "DESKTOP_ID="); ok && id == "" {
			id = v
			if onID != nil {
				onID(cmd.Process)
			}
		}
	}
	err = cmd.Wait()
	if id == "" {
		t.Fatalf("child printed no desktop id (%v):\n%s", err, all.String())
	}
	return id, all.String(), err
}

func waitNoTagged(t *testing.T, id string, grace time.Duration) {
	t.Helper()
	deadline := time.Now().Add(grace)
	for {
		left := TaggedProcesses(id)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes of desktop %s still alive: %s", id, describe(left))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestChild is the body of the child processes above; it does nothing in
// a normal run.
func TestChild(t *testing.T) {
	mode := os.Getenv("DESKTOPTEST_CHILD")
	if mode == "" {
		t.Skip("only runs as a child of TestTeardownOnPanic / TestTeardownOnKill")
	}
	d := Start(t, Options{})
	d.StartXterm(t, XtermOptions{Title: "child"})
	fmt.Printf("DESKTOP_ID=%s\n", d.ID())
	switch mode {
	case "panic":
		panic("deliberate")
	case "hang":
		time.Sleep(time.Minute)
	}
}

// TestWithdesktop builds the withdesktop command and checks it runs a
// command on a desktop, passes on its exit status and cleans up after a
// signal.
func TestWithdesktop(t *testing.T) {
	Require(t, "Xvfb", "openbox", "xterm", "zenity", "xdpyinfo", "xprop")
	bin := filepath.Join(t.TempDir(), "withdesktop")
	if out, err := exec.Command("go", "build", "-o", bin, "./withdesktop").CombinedOutput(); err != nil {
		t.Fatalf("go build ./withdesktop: %v\n%s", err, out)
	}

	t.Run("xdpyinfo", func(t *testing.T) {
		out, err := exec.Command(bin, "-size", "1280x720", "--", "xdpyinfo").Output()
		if err != nil {
			t.Fatalf("withdesktop -- xdpyinfo: %v", err)
		}
		for _, want := range []string{"dimensions:    1280x720 pixels", "depth of root window:    24 planes", "MIT-SHM", "XTEST"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("xdpyinfo output lacks %q", want)
			}
		}
	})

	t.Run("exit status", func(t *testing.T) {
		err := exec.Command(bin, "--", "sh", "-c", "exit 3").Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 3 {
			t.Errorf("withdesktop -- sh -c 'exit 3': %v, want exit status 3", err)
		}
		err = exec.Command(bin, "--", "/nonexistent/program").Run()
		if !errors.As(err, &ee) || ee.ExitCode() != 127 {
			t.Errorf("withdesktop -- /nonexistent/program: %v, want exit status 127", err)
		}
	})

	t.Run("apps and monitors", func(t *testing.T) {
		script := `xprop -id "$DESKHAND_WINDOW_XTERM" WM_CLASS && xprop -id "$DESKHAND_WINDOW_GTK" WM_CLASS && xrandr --listmonitors`
		out, err := exec.Command(bin, "-apps", "xterm,gtk", "-monitors", "L:960x1080+0+0*,R:960x1080+960+0", "--", "sh", "-c", script).CombinedOutput()
		if err != nil {
			t.Fatalf("withdesktop -apps xterm,gtk: %v\n%s", err, out)
		}
		for _, want := range []string{`"xterm", "XTerm"`, `"zenity", "Zenity"`, "Monitors: 2", "*L 960/254x1080/286+0+0", "R 960/254x1080/286+960+0"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("signal", func(t *testing.T) {
		cmd := exec.Command(bin, "-apps", "xterm", "--", "sh", "-c", `echo "$DESKHAND_DESKTOP_ID"; exec sleep 60`)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		id, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			_ = cmd.Process.Kill()
			t.Fatalf("reading the desktop id: %v", err)
		}
		id = strings.TrimSpace(id)
		if len(TaggedProcesses(id)) < 4 {
			t.Errorf("before the signal only %s carry the desktop id", describe(TaggedProcesses(id)))
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
			t.Errorf("withdesktop after SIGTERM: %v, want exit status %d", err, 128+int(syscall.SIGTERM))
		}
		waitNoTagged(t, id, 0)
	})
}
