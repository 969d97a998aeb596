//go:build unix

package supervisor_test

// End-to-end tests of the helper's Wayland backend ("wayland-wlr") on a
// headless sway, with real apps (foot, a GTK 3 probe) and the reference
// tools (grim, wl-copy, wl-paste, swaymsg). Each checks the effect through
// something other than the helper: grim's pixels, a file the app wrote,
// sway's own tree, wl-paste's output.

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// startHelper starts the real helper with env (on the desktop named
// where), closed when the test ends.
func startHelper(t *testing.T, where string, env []string) *bridge.Client {
	t.Helper()
	c := bridge.New(bridge.Options{Path: desktoptest.HelperPath(t), Env: env})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("starting the helper on %s: %v", where, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// wlHelper starts the real helper on w, forced onto its Wayland backend.
func wlHelper(t *testing.T, w *desktoptest.Wayland) *bridge.Client {
	t.Helper()
	c := startHelper(t, "Wayland", append(w.Env(), "DISPLAY=", "DESKHAND_HELPER_BACKEND=wayland"))
	info := c.HandshakeInfo()
	if info.Platform != "linux-wayland" {
		t.Fatalf("helper platform is %q, want linux-wayland", info.Platform)
	}
	return c
}

func wlCall(t *testing.T, c *bridge.Client, method string, params, result any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Call(ctx, method, params, result); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
}

// waitFile waits (up to a minute) until path's content satisfies ok.
func wlWaitFile(t *testing.T, path string, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	var got []byte
	for time.Now().Before(deadline) {
		got, _ = os.ReadFile(path)
		if ok(string(got)) {
			return string(got)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never held what the test waits for; it holds %q", path, got)
	return ""
}

// copyTestdata copies testdata/src to dst and returns dst: a session's
// user cannot read the test's own testdata, as t.TempDir's parent and
// the checkout may be root's alone.
func copyTestdata(t *testing.T, src, dst string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", src))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// copyProbe puts the GTK probe where the session's user can read it.
func copyProbe(t *testing.T, w *desktoptest.Wayland) string {
	t.Helper()
	return copyTestdata(t, "wayland/gtkprobe.py", filepath.Join(w.Dir(), "gtkprobe.py"))
}

// userFile is a path the session's user can create, for an app's output.
func userFile(t *testing.T, w *desktoptest.Wayland, name string) string {
	t.Helper()
	return filepath.Join(w.Dir(), name)
}

func requireWaylandTools(t *testing.T, tools ...string) {
	t.Helper()
	desktoptest.Require(t, append([]string{"sway", "swaymsg"}, tools...)...)
}

func decodePNG(t *testing.T, b []byte) *image.RGBA {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("decoding PNG: %v", err)
	}
	return desktoptest.ToRGBA(img)
}

// countColor counts the pixels within tol of c in every channel.
func wlCountColor(img *image.RGBA, c [3]uint8, tol int) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			i := img.PixOffset(x, y)
			p := img.Pix[i : i+3]
			if wlAbs(int(p[0])-int(c[0])) <= tol && wlAbs(int(p[1])-int(c[1])) <= tol && wlAbs(int(p[2])-int(c[2])) <= tol {
				n++
			}
		}
	}
	return n
}

func wlAbs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func TestWaylandScreenshotMatchesGrim(t *testing.T) {
	requireWaylandTools(t, "foot", "grim")
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	w.StartApp(t, "foot", "-o", "colors.background=204a87", "sh", "-c", "echo deskhand on wayland; sleep 600")
	w.WaitView(t, "foot")
	c := wlHelper(t, w)
	ref := filepath.Join(t.TempDir(), "grim.png")
	// Both reads must see the same frame: the screen is idle, and the text
	// is already drawn once the second one agrees with the first.
	var got *bridge.Capture
	var want *image.RGBA
	deadline := time.Now().Add(time.Minute)
	for {
		var err error
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		got, err = c.Capture(ctx, bridge.CaptureRequest{Format: "png"})
		cancel()
		if err != nil {
			t.Fatalf("capture: %v", err)
		}
		w.Run(t, "grim", "-t", "png", ref)
		b, err := os.ReadFile(ref)
		if err != nil {
			t.Fatal(err)
		}
		want = decodePNG(t, b)
		if wlMeanError(decodePNG(t, got.Data), want) < 1 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	img := decodePNG(t, got.Data)
	if img.Bounds() != want.Bounds() {
		t.Fatalf("capture is %v, grim's is %v", img.Bounds(), want.Bounds())
	}
	if e := wlMeanError(img, want); e >= 1 {
		t.Fatalf("capture differs from grim's: mean per-channel error %.2f, want < 1", e)
	}
	if got.Method != "wlr-screencopy" {
		t.Errorf("method %q, want wlr-screencopy", got.Method)
	}
	// The foot background is on screen, so the match is not of two blanks.
	if n := wlCountColor(want, [3]uint8{0x20, 0x4a, 0x87}, 2); n < 10000 {
		t.Fatalf("grim shows only %d pixels of foot's background; the test saw no window", n)
	}
	// Scaled JPEG goes through the same pipeline.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	small, err := c.Capture(ctx, bridge.CaptureRequest{Format: "jpeg", Width: 640, Height: 360})
	if err != nil {
		t.Fatalf("scaled capture: %v", err)
	}
	if small.Width != 640 || small.Height != 360 || !bytes.HasPrefix(small.Data, []byte{0xff, 0xd8}) {
		t.Fatalf("scaled capture is %dx%d %q..., want a 640x360 JPEG", small.Width, small.Height, small.Data[:4])
	}
}

// meanError is the mean absolute difference per channel of two images.
func wlMeanError(a, b *image.RGBA) float64 {
	if a.Bounds() != b.Bounds() {
		return 255
	}
	var sum, n float64
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			i, j := a.PixOffset(x, y), b.PixOffset(x, y)
			for k := 0; k < 3; k++ {
				sum += float64(wlAbs(int(a.Pix[i+k]) - int(b.Pix[j+k])))
				n++
			}
		}
	}
	return sum / n
}

type wlWindow struct {
	ID     uint32 `json:"id"`
	Title  string `json:"title"`
	Hidden bool   `json:"hidden"`
	App    struct {
		PID       int    `json:"pid"`
		Name      string `json:"name"`
		Exe       string `json:"exe"`
		DesktopID string `json:"desktop_id"`
	} `json:"app"`
	Bounds  desktoptest.Rect `json:"bounds"`
	Focused bool             `json:"focused"`
}

type wlWindows struct {
	Windows []wlWindow `json:"windows"`
	Focused *uint32    `json:"focused"`
}

func wlList(t *testing.T, c *bridge.Client, hidden bool) wlWindows {
	t.Helper()
	var out wlWindows
	wlCall(t, c, "windows", map[string]any{"include_hidden": hidden}, &out)
	return out
}

func TestWaylandToplevelsMatchSwayTree(t *testing.T) {
	requireWaylandTools(t, "foot")
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	w.StartApp(t, "foot", "--app-id", "probe.one", "--title", "first", "sh", "-c", "sleep 600")
	w.WaitView(t, "probe.one")
	w.StartApp(t, "foot", "--app-id", "probe.two", "--title", "second", "sh", "-c", "sleep 600")
	w.WaitView(t, "probe.two")
	c := wlHelper(t, w)
	views := w.Views(t)
	got := wlList(t, c, false)
	if len(got.Windows) != len(views) {
		t.Fatalf("helper lists %d windows, sway's tree has %d views: %+v vs %+v", len(got.Windows), len(views), got.Windows, views)
	}
	for _, v := range views {
		var match *wlWindow
		for i := range got.Windows {
			if got.Windows[i].App.Name == v.AppID {
				match = &got.Windows[i]
			}
		}
		if match == nil {
			t.Fatalf("sway view %s (%q) is not in the helper's list %+v", v.AppID, v.Name, got.Windows)
		}
		if match.Title != v.Name || match.App.PID != v.PID || match.Bounds != v.Rect || match.Focused != v.Focused {
			t.Errorf("helper says %+v, sway says %+v", *match, v)
		}
		if match.App.Exe != "/usr/bin/foot" {
			t.Errorf("%s: exe %q, want /usr/bin/foot (from the pid)", v.AppID, match.App.Exe)
		}
	}
	// Hiding moves the view off screen in sway's own view of it; restoring
	// brings it back.
	var two uint32
	for _, win := range got.Windows {
		if win.App.Name == "probe.two" {
			two = win.ID
		}
	}
	var hidden struct {
		Hidden []uint32 `json:"hidden"`
	}
	wlCall(t, c, "hide", map[string]any{"windows": []uint32{two}}, &hidden)
	if len(hidden.Hidden) != 1 {
		t.Fatalf("hide reported %v, want [%d]", hidden.Hidden, two)
	}
	for _, v := range w.Views(t) {
		if v.AppID == "probe.two" && v.Visible {
			t.Fatalf("sway still shows probe.two after hide: %+v", v)
		}
	}
	var restored struct {
		Restored []uint32 `json:"restored"`
	}
	wlCall(t, c, "restore", map[string]any{"windows": []uint32{two}}, &restored)
	if v := w.WaitView(t, "probe.two"); !v.Visible {
		t.Fatalf("probe.two is not visible after restore: %+v", v)
	}
	// Wayland cannot say which window is under a point: the helper says so
	// instead of guessing.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := c.Call(ctx, "window_at", map[string]any{"x": 10, "y": 10}, &json.RawMessage{})
	if err == nil || !strings.Contains(err.Error(), "does not tell") {
		t.Fatalf("window_at on Wayland: %v, want a refusal saying why", err)
	}
}

func TestWaylandMaskHidesToplevel(t *testing.T) {
	requireWaylandTools(t, "foot", "grim")
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	// Two tiled terminals, each with a background colour nothing else has.
	w.StartApp(t, "foot", "--app-id", "secret", "-o", "colors.background=ff00ff", "sh", "-c", "sleep 600")
	w.WaitView(t, "secret")
	w.StartApp(t, "foot", "--app-id", "approved", "-o", "colors.background=00ff00", "sh", "-c", "sleep 600")
	w.WaitView(t, "approved")
	c := wlHelper(t, w)
	magenta, green := [3]uint8{0xff, 0, 0xff}, [3]uint8{0, 0xff, 0}
	var secret, approved uint32
	for _, win := range wlList(t, c, false).Windows {
		switch win.App.Name {
		case "secret":
			secret = win.ID
		case "approved":
			approved = win.ID
		}
	}
	capture := func(req bridge.CaptureRequest) *image.RGBA {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		req.Format = "png"
		got, err := c.Capture(ctx, req)
		if err != nil {
			t.Fatalf("capture: %v", err)
		}
		return decodePNG(t, got.Data)
	}
	// grim sees the secret window, so the mask below has something to hide.
	ref := filepath.Join(t.TempDir(), "grim.png")
	wlWaitFor(t, "grim to show both terminals", func() bool {
		w.Run(t, "grim", "-t", "png", ref)
		b, _ := os.ReadFile(ref)
		img := decodePNG(t, b)
		return wlCountColor(img, magenta, 0) > 10000 && wlCountColor(img, green, 0) > 10000
	})
	for name, req := range map[string]bridge.CaptureRequest{
		"mask":        {Mask: []uint32{secret}},
		"mask_others": {MaskOthers: true, Keep: []uint32{approved}},
	} {
		img := capture(req)
		if n := wlCountColor(img, magenta, 0); n != 0 {
			t.Errorf("%s: %d pixels of the masked window's colour leak", name, n)
		}
		if n := wlCountColor(img, green, 0); n < 10000 {
			t.Errorf("%s: only %d pixels of the kept window show", name, n)
		}
	}
}

// waitFor polls ok for up to a minute.
func wlWaitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func requireGTKProbe(t *testing.T) {
	t.Helper()
	desktoptest.Require(t, "/usr/bin/python3")
	if err := exec.Command("/usr/bin/python3", "-c", "import gi; gi.require_version('Gtk', '3.0')").Run(); err != nil {
		if desktoptest.InCI() {
			t.Fatalf("python3-gi with GTK 3 is missing (apt-get install python3-gi gir1.2-gtk-3.0); CI is set, so this is a failure")
		}
		t.Skip("python3-gi with GTK 3 is missing (apt-get install python3-gi gir1.2-gtk-3.0)")
	}
}

func wlMove(t *testing.T, c *bridge.Client, x, y int) {
	t.Helper()
	wlCall(t, c, "pointer_move", map[string]any{"x": x, "y": y}, &json.RawMessage{})
}

func TestWaylandClickGTKButton(t *testing.T) {
	requireWaylandTools(t)
	requireGTKProbe(t)
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	out := userFile(t, w, "clicks")
	w.StartApp(t, "/usr/bin/python3", copyProbe(t, w), "button", out)
	v := w.WaitView(t, "gtkprobe.py")
	c := wlHelper(t, w)
	wlMove(t, c, v.Rect.X+v.Rect.Width/2, v.Rect.Y+v.Rect.Height/2)
	wlCall(t, c, "pointer_button", map[string]any{"button": "left", "action": "click"}, &json.RawMessage{})
	wlWaitFile(t, out, func(s string) bool { return s == "clicked\n" })
}

func TestWaylandScrollAndDrag(t *testing.T) {
	requireWaylandTools(t)
	requireGTKProbe(t)
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	probe := copyProbe(t, w)
	t.Run("scroll", func(t *testing.T) {
		out := userFile(t, w, "scrolls")
		w.StartApp(t, "/usr/bin/python3", probe, "scroll", out)
		v := w.WaitView(t, "gtkprobe.py")
		c := wlHelper(t, w)
		wlMove(t, c, v.Rect.X+v.Rect.Width/2, v.Rect.Y+v.Rect.Height/2)
		// A list still being laid out ignores the wheel, so scroll until it
		// moves: what is checked is that it does move, by the wheel.
		wlWaitFor(t, "the list to scroll down", func() bool {
			wlCall(t, c, "pointer_scroll", map[string]any{"dy": 5}, &json.RawMessage{})
			time.Sleep(200 * time.Millisecond)
			b, _ := os.ReadFile(out)
			return strings.Contains(string(b), "scrolled ") && !strings.Contains(string(b), "scrolled 0\n")
		})
	})
	t.Run("drag", func(t *testing.T) {
		out := userFile(t, w, "drags")
		w.Run(t, "swaymsg", "kill")
		w.StartApp(t, "/usr/bin/python3", probe, "drag", out)
		var v desktoptest.View
		wlWaitFor(t, "the drag probe alone on screen", func() bool {
			views := w.Views(t)
			if len(views) == 1 && views[0].Name == "deskhand probe drag" {
				v = views[0]
				return true
			}
			return false
		})
		c := wlHelper(t, w)
		// The probe records the drag in its window's coordinates.
		wlDragProbe(t, c, out, v.Rect.X+100, v.Rect.Y+100, v.Rect.X+300, v.Rect.Y+250, "drag 100 100 300 250\n")
	})
}

// wlDragProbe drags with the helper c from (x0, y0) to (x1, y1), in ten
// moves, until the drag probe writing out records want. The compositor
// may show the probe before GTK takes input on a loaded machine: a drag
// whose press it missed ("drag -1 -1 …") is done again; one that lands
// must land exactly.
func wlDragProbe(t *testing.T, c *bridge.Client, out string, x0, y0, x1, y1 int, want string) {
	t.Helper()
	drag := func() {
		wlMove(t, c, x0, y0)
		wlCall(t, c, "pointer_button", map[string]any{"action": "press"}, &json.RawMessage{})
		for i := 1; i <= 10; i++ {
			wlMove(t, c, x0+(x1-x0)*i/10, y0+(y1-y0)*i/10)
		}
		wlCall(t, c, "pointer_button", map[string]any{"action": "release"}, &json.RawMessage{})
	}
	drag()
	seen := 0
	wlWaitFile(t, out, func(s string) bool {
		lines := strings.SplitAfter(s, "\n")
		done := lines[:len(lines)-1]
		if len(done) > seen {
			seen = len(done)
			last := done[len(done)-1]
			if last == want {
				return true
			}
			if !strings.HasPrefix(last, "drag -1 -1 ") {
				t.Fatalf("the probe recorded %q, want %q", last, want)
			}
			drag()
		}
		return false
	})
}

// wlTyped is the text the issue asks to arrive exactly: umlauts and ß,
// CJK, and the ASCII punctuation that moves between us and de layouts.
const wlTyped = `Grüße, 世界! yz ~|\ @€`

func TestWaylandTypeExactAnyLayout(t *testing.T) {
	requireWaylandTools(t, "foot")
	for _, layout := range []string{"us", "de"} {
		t.Run(layout, func(t *testing.T) {
			w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{Layout: layout})
			out := userFile(t, w, "typed")
			w.StartApp(t, "foot", "sh", "-c", "stty -echo; exec cat > "+out)
			w.WaitView(t, "foot")
			c := wlHelper(t, w)
			// cat sees a line only after Return; ctrl+u in the middle kills
			// the line typed so far, so only what follows it arrives: the
			// combo took effect as a combo, not as the letter u.
			wlCall(t, c, "key_type", map[string]any{"text": "discard me"}, &json.RawMessage{})
			wlCall(t, c, "key_combo", map[string]any{"keys": []uint32{0xffe3, 'u'}}, &json.RawMessage{})
			wlCall(t, c, "key_type", map[string]any{"text": wlTyped + "\n"}, &json.RawMessage{})
			got := wlWaitFile(t, out, func(s string) bool { return strings.HasSuffix(s, "\n") })
			if got != wlTyped+"\n" {
				t.Fatalf("typed %q, the file got %q", wlTyped+"\n", got)
			}
		})
	}
}

func TestWaylandClipboardRoundTrip(t *testing.T) {
	requireWaylandTools(t, "wl-copy", "wl-paste")
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	c := wlHelper(t, w)
	const fromUs = "deskhand → wl-paste: Grüße 世界"
	wlCall(t, c, "clipboard_write", map[string]any{"text": fromUs}, &json.RawMessage{})
	if got := w.Run(t, "wl-paste", "--no-newline"); got != fromUs {
		t.Fatalf("wl-paste read %q, want %q", got, fromUs)
	}
	wlReadCopied(t, w, c, "wl-copy → deskhand: ¡hola! €")
}

// toolSession runs reference tools in a desktoptest session (sway's or
// KWin's).
type toolSession interface {
	Command(name string, args ...string) *exec.Cmd
}

// wlReadCopied copies text with wl-copy in s, as the user's apps do, and
// waits until the helper c reads it from the clipboard.
func wlReadCopied(t *testing.T, s toolSession, c *bridge.Client, text string) {
	t.Helper()
	// --foreground: wl-copy serves its text until killed, instead of
	// forking a server that holds the test's pipes open.
	copier := s.Command("wl-copy", "--foreground", text)
	if err := copier.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = copier.Process.Kill(); _ = copier.Wait() })
	var got struct {
		Text string `json:"text"`
	}
	wlWaitFor(t, "the helper to read wl-copy's text", func() bool {
		wlCall(t, c, "clipboard_read", map[string]any{}, &got)
		return got.Text == text
	})
}

// TestWaylandDoctor: in a native Wayland session doctor says what the
// compositor supports, what it lacks, and which desktop serve would work
// on for the --virtual-display in DESKHAND_VIRTUAL_DISPLAY (doctor runs as
// root here, which a private sway refuses).
func TestWaylandDoctor(t *testing.T) {
	requireWaylandTools(t)
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	doctor := func(virtual string) string {
		cmd := exec.Command(deskhandBinary(t), "doctor", "--state-dir", t.TempDir())
		cmd.Env = append(w.Env(), "DESKHAND_HELPER="+desktoptest.HelperPath(t), "HOME="+t.TempDir(), "DESKHAND_VIRTUAL_DISPLAY="+virtual)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	for virtual, wants := range map[string][]string{
		"auto": {
			"ok    display     native Wayland session " + w.Display() + ": `deskhand serve` works on it",
			"ok    wayland     native Wayland session " + w.Display() + " (helper backend wayland-wlr): screenshots, window list, masking, hiding windows, clipboard, mouse, keyboard",
			"warn  wayland     missing: window_at: Wayland does not say which window is under a point",
			"warn  wayland     the Escape watcher does not work on Wayland",
		},
		"1280x720":      {"warn  display     --virtual-display starts a private Xvfb desktop instead of sway: sway refuses to run as root"},
		"sway:1280x720": {"FAIL  display     --virtual-display sway:1280x720: sway refuses to run as root", "run deskhand as your own user"},
	} {
		out := doctor(virtual)
		for _, want := range wants {
			if !strings.Contains(out, want) {
				t.Errorf("DESKHAND_VIRTUAL_DISPLAY=%s: doctor output lacks %q:\n%s", virtual, want, out)
			}
		}
	}
}

// TestWaylandBackendChoice: the helper speaks Wayland in a session with
// WAYLAND_DISPLAY and no DISPLAY, and X11 when told to (as the X11
// platform always tells it).
func TestWaylandBackendChoice(t *testing.T) {
	requireWaylandTools(t)
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	for _, c := range []struct {
		extra    []string
		platform string
	}{
		{[]string{"DISPLAY="}, "linux-wayland"},
		{[]string{"DISPLAY=", "DESKHAND_HELPER_BACKEND=x11"}, "linux-x11"},
	} {
		cl := bridge.New(bridge.Options{Path: desktoptest.HelperPath(t), Env: append(w.Env(), c.extra...)})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := cl.Start(ctx)
		cancel()
		if err != nil {
			t.Fatalf("%q: %v", c.extra, err)
		}
		if got := cl.HandshakeInfo().Platform; got != c.platform {
			t.Errorf("with %q the helper's platform is %q, want %q", c.extra, got, c.platform)
		}
		_ = cl.Close()
	}
}
