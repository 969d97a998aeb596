//go:build unix

package supervisor_test

// End-to-end tests of the helper's KDE backend ("kde-kwin") on a headless
// KWin (kwin_wayland --virtual), with the GTK 3 probe of the mutter tests.
// KWin grants its window list and screenshots only to a program a desktop
// entry authorizes, and identifies it by /proc/PID/exe, which KWin (run as
// the session's user) cannot read for root's processes: so the helper runs
// as the session's user here, as it does in a real session.

import (
	"context"
	"encoding/json"
	"fmt"
	"image"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

type kwinHello struct {
	Platform     string   `json:"platform"`
	Backend      string   `json:"backend"`
	Capabilities []string `json:"capabilities"`
	Missing      []string `json:"missing"`
	DisplayError string   `json:"display_error"`
}

// startKWin starts KWin with the helper under test authorized (or not).
func startKWin(t *testing.T, authorize bool) (*desktoptest.KWin, string) {
	t.Helper()
	helper := desktoptest.HelperPath(t)
	opts := desktoptest.KWinOptions{Width: 1280, Height: 720}
	if authorize {
		opts.Authorize = []string{helper}
	}
	return desktoptest.StartKWin(t, opts), helper
}

// kwinHelper starts the real helper as the session's user in k's session,
// choosing its backend from the environment as in a Plasma session.
func kwinHelper(t *testing.T, k *desktoptest.KWin, helper string) (*bridge.Client, kwinHello) {
	t.Helper()
	argv := k.AsUser(helper)
	c := bridge.New(bridge.Options{Path: argv[0], Args: argv[1:], Env: append(k.UserEnv(), "DISPLAY=")})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("starting the helper on KWin: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	var hello kwinHello
	wlCall(t, c, "handshake", map[string]any{"protocol_versions": []int{1}}, &hello)
	if hello.Platform != "linux-wayland" || hello.Backend != "kde-kwin" {
		t.Fatalf("helper is %s/%s, want linux-wayland/kde-kwin", hello.Platform, hello.Backend)
	}
	if hello.DisplayError != "" {
		t.Fatalf("helper cannot reach KWin: %s", hello.DisplayError)
	}
	return c, hello
}

type kwinWindow struct {
	ID     int    `json:"id"`
	Title  string `json:"title"`
	Bounds struct {
		X, Y, Width, Height int
	} `json:"bounds"`
	Hidden  bool `json:"hidden"`
	Focused bool `json:"focused"`
	App     struct {
		PID  int    `json:"pid"`
		Name string `json:"name"`
		Exe  string `json:"exe"`
	} `json:"app"`
}

func kwinWindows(t *testing.T, c *bridge.Client, hidden bool) []kwinWindow {
	t.Helper()
	var res struct {
		Windows []kwinWindow `json:"windows"`
	}
	wlCall(t, c, "windows", map[string]any{"include_hidden": hidden}, &res)
	return res.Windows
}

func TestKWinScreenshotShowsProbeAtItsBounds(t *testing.T) {
	k, helper := startKWin(t, true)
	c, hello := kwinHelper(t, k, helper)
	for _, want := range []string{"capture", "windows", "windows_epoch", "hide", "capture.mask", "window_at", "clipboard"} {
		if !contains(hello.Capabilities, want) {
			t.Errorf("capabilities %q lack %s (missing: %q)", hello.Capabilities, want, hello.Missing)
		}
	}
	var ds wlDisplays
	wlCall(t, c, "displays", map[string]any{}, &ds)
	if len(ds.Displays) != 1 || ds.Displays[0].Logical.Width != 1280 || ds.Displays[0].Logical.Height != 720 ||
		ds.Displays[0].Physical.Width != 1280 || ds.Displays[0].Scale != 1 || !ds.Displays[0].Primary {
		t.Fatalf("displays = %+v, want KWin's one 1280x720 virtual output at scale 1", ds.Displays)
	}
	pid, _, w, h := startProbe(t, k, "probe.py")
	box := captureProbeArea(t, c, "kwin-screenshot2", w, h, k.KWinLog)
	// The helper's window of the probe holds the colour, as KWin places it.
	var probe *kwinWindow
	for _, win := range kwinWindows(t, c, false) {
		if win.App.PID == pid {
			probe = &win
		}
	}
	if probe == nil {
		t.Fatalf("the helper lists no window of the probe (pid %d): %+v", pid, kwinWindows(t, c, true))
	}
	bounds := image.Rect(probe.Bounds.X, probe.Bounds.Y, probe.Bounds.X+probe.Bounds.Width, probe.Bounds.Y+probe.Bounds.Height)
	if !box.In(bounds) {
		t.Fatalf("the probe's colour lies at %v, outside the window's bounds %v", box, bounds)
	}
	// A part of the screen: the probe's area alone, then scaled JPEG.
	part := captureUntil(t, c, "kwin-screenshot2", bridge.CaptureRequest{Rect: &bridge.Rect{X: box.Min.X, Y: box.Min.Y, Width: w, Height: h}},
		func(img *image.RGBA) bool { _, n := colorBox(img, probeArea); return n == w*h })
	if _, n := colorBox(part, probeArea); n != w*h {
		t.Fatalf("the probe's rectangle holds %d pixels of its colour, want all %d", n, w*h)
	}
	captureScaledJPEG(t, c)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestKWinWindowsMatchKWin compares the helper's list with KWin's own,
// read through a KWin script: titles, pids, geometry, the active window,
// and follows a minimise (hide) and restore; window_at answers from the
// same geometry and stacking.
func TestKWinWindowsMatchKWin(t *testing.T) {
	desktoptest.Require(t, "zenity")
	k, helper := startKWin(t, true)
	c, _ := kwinHelper(t, k, helper)
	probePID, _, _, _ := startProbe(t, k, "probe.py")
	zenityPID := k.StartApp(t, "zenity", "--info", "--title=kwin second", "--text=second window")
	k.WaitWindow(t, probePID)
	k.WaitWindow(t, zenityPID)
	var epoch struct {
		Epoch int64 `json:"epoch"`
	}
	wlCall(t, c, "windows_epoch", map[string]any{}, &epoch)
	before := epoch.Epoch

	check := func() []kwinWindow {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			theirs := k.Windows(t)
			ours := kwinWindows(t, c, true)
			diff := kwinDiff(theirs, ours)
			if diff == "" {
				return ours
			}
			if time.Now().After(deadline) {
				t.Fatalf("the helper's windows differ from KWin's: %s\nKWin: %+v\nhelper: %+v", diff, theirs, ours)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
	ours := check()
	if len(ours) != 2 {
		t.Fatalf("helper lists %d windows, want the probe and zenity: %+v", len(ours), ours)
	}
	// zenity mapped last and is active: it is on top, listed first.
	if ours[0].App.PID != zenityPID || !ours[0].Focused {
		t.Fatalf("the first window is %+v, want the active zenity (pid %d) on top", ours[0], zenityPID)
	}
	var probe kwinWindow
	for _, w := range ours {
		if w.App.PID == probePID {
			probe = w
		}
	}
	if probe.App.Exe != "/usr/bin/python3.11" && !strings.HasPrefix(probe.App.Exe, "/usr/bin/python3") {
		t.Errorf("the probe's exe is %q, want python3's", probe.App.Exe)
	}
	// window_at: the probe's corner not under zenity is the probe's; a
	// point on zenity is zenity's.
	var at struct {
		Window *kwinWindow `json:"window"`
	}
	wlCall(t, c, "window_at", map[string]any{"x": probe.Bounds.X + 2, "y": probe.Bounds.Y + 2}, &at)
	if at.Window == nil || at.Window.ID != probe.ID {
		t.Fatalf("window_at the probe's corner = %+v, want the probe %d", at.Window, probe.ID)
	}
	z := ours[0]
	wlCall(t, c, "window_at", map[string]any{"x": z.Bounds.X + z.Bounds.Width/2, "y": z.Bounds.Y + z.Bounds.Height/2}, &at)
	if at.Window == nil || at.Window.ID != z.ID {
		t.Fatalf("window_at zenity's centre = %+v, want zenity %d", at.Window, z.ID)
	}

	// hide minimises through KWin; KWin's own list agrees, and the
	// epoch moved on.
	var hid struct {
		Hidden []int `json:"hidden"`
	}
	wlCall(t, c, "hide", map[string]any{"windows": []int{z.ID}}, &hid)
	deadline := time.Now().Add(time.Minute)
	for {
		minimized := false
		for _, w := range k.Windows(t) {
			if w.PID == zenityPID && w.Minimized {
				minimized = true
			}
		}
		if minimized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("KWin never minimised zenity after hide (answer %+v)", hid)
		}
		time.Sleep(100 * time.Millisecond)
	}
	check()
	wlCall(t, c, "windows_epoch", map[string]any{}, &epoch)
	if epoch.Epoch == before {
		t.Errorf("windows_epoch stayed %d across a minimise", before)
	}
	// The point on zenity is now the probe's or nothing's, never zenity's.
	wlCall(t, c, "window_at", map[string]any{"x": z.Bounds.X + z.Bounds.Width/2, "y": z.Bounds.Y + z.Bounds.Height/2}, &at)
	if at.Window != nil && at.Window.ID == z.ID {
		t.Fatalf("window_at names the minimised zenity")
	}
	var rest struct {
		Restored []int `json:"restored"`
	}
	wlCall(t, c, "restore", map[string]any{"windows": []int{z.ID}}, &rest)
	if len(rest.Restored) != 1 {
		t.Fatalf("restore = %+v, want zenity restored", rest)
	}
	deadline = time.Now().Add(time.Minute)
	for {
		shown := false
		for _, w := range k.Windows(t) {
			if w.PID == zenityPID && !w.Minimized {
				shown = true
			}
		}
		if shown {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("KWin never unminimised zenity after restore")
		}
		time.Sleep(100 * time.Millisecond)
	}
	check()
}

// kwinDiff says how the helper's windows differ from KWin's normal ones
// ("" when they agree).
func kwinDiff(theirs []desktoptest.KWinWindow, ours []kwinWindow) string {
	var normal []desktoptest.KWinWindow
	for _, w := range theirs {
		if w.Normal {
			normal = append(normal, w)
		}
	}
	if len(normal) != len(ours) {
		return fmt.Sprintf("KWin has %d windows, the helper %d", len(normal), len(ours))
	}
	for _, k := range normal {
		found := false
		for _, o := range ours {
			if o.App.PID != k.PID || o.Title != k.Caption {
				continue
			}
			found = true
			if o.Bounds.X != k.X || o.Bounds.Y != k.Y || o.Bounds.Width != k.Width || o.Bounds.Height != k.Height {
				return fmt.Sprintf("%q is at %+v for the helper, at %d,%d %dx%d for KWin", k.Caption, o.Bounds, k.X, k.Y, k.Width, k.Height)
			}
			if o.Hidden != k.Minimized {
				return fmt.Sprintf("%q hidden=%v for the helper, minimized=%v for KWin", k.Caption, o.Hidden, k.Minimized)
			}
			if o.Focused != k.Active {
				return fmt.Sprintf("%q focused=%v for the helper, active=%v for KWin", k.Caption, o.Focused, k.Active)
			}
		}
		if !found {
			return fmt.Sprintf("the helper lists no %q of pid %d", k.Caption, k.PID)
		}
	}
	return ""
}

func TestKWinClipboardRoundTrip(t *testing.T) {
	desktoptest.Require(t, "wl-copy", "wl-paste")
	k, helper := startKWin(t, true)
	c, _ := kwinHelper(t, k, helper)
	wlReadCopied(t, k, c, "from wl-copy: Grüße 世界")
	const ours = "from deskhand: ~|\\ @€"
	wlCall(t, c, "clipboard_write", map[string]any{"text": ours}, &json.RawMessage{})
	if pasted := k.Run(t, "wl-paste", "--no-newline"); pasted != ours {
		t.Fatalf("wl-paste = %q, want %q", pasted, ours)
	}
}

// TestKWinUnauthorizedHelperSaysWhy: without the desktop entry KWin grants
// the helper neither its window list nor screenshots; the handshake and
// the refused calls name the entry and its keys.
func TestKWinUnauthorizedHelperSaysWhy(t *testing.T) {
	k, helper := startKWin(t, false)
	c, hello := kwinHelper(t, k, helper)
	for _, cap := range []string{"capture", "windows", "window_at"} {
		if contains(hello.Capabilities, cap) {
			t.Errorf("an unauthorized helper claims %s: %q", cap, hello.Capabilities)
		}
	}
	all := strings.Join(hello.Missing, "\n")
	for _, want := range []string{"deskhand-helper.desktop", "X-KDE-Wayland-Interfaces=", "org_kde_plasma_window_management", "X-KDE-DBUS-Restricted-Interfaces=org.kde.KWin.ScreenShot2"} {
		if !strings.Contains(all, want) {
			t.Errorf("missing %q does not name %q", hello.Missing, want)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := c.Capture(ctx, bridge.CaptureRequest{Format: "png"})
	if err == nil || !strings.Contains(err.Error(), "deskhand-helper.desktop") || !strings.Contains(err.Error(), "X-KDE-DBUS-Restricted-Interfaces") {
		t.Fatalf("an unauthorized capture gives %v, want a refusal naming the desktop entry", err)
	}
	err = c.Call(ctx, "windows", map[string]any{}, &json.RawMessage{})
	if err == nil {
		t.Fatal("an unauthorized helper lists windows")
	}
}
