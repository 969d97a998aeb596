//go:build unix

package bridge_test

// Acceptance tests: the real capture helper (desktoptest.HelperPath) on a
// real 24-bit Xvfb desktop with openbox, xterm and a GTK 3 app, driven
// through the bridge client and checked against independent X tools (xrandr,
// xwd + ImageMagick, xprop, xwininfo, wmctrl, xclip). Run them with
//
//	cargo build --release -p deskhand-helper && go test ./bridge/ -run Acceptance -v
//
// They skip without Xvfb, openbox or the helper, and fail instead under CI.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// acceptance starts a desktop and a client for the real helper on it. env
// entries are added to the helper's environment.
func acceptance(t *testing.T, opts desktoptest.Options, env ...string) (*desktoptest.Desktop, *bridge.Client) {
	t.Helper()
	desktoptest.Require(t, "Xvfb", "openbox", "xterm", "zenity", "xprop", "xwininfo", "wmctrl", "xrandr")
	helper := desktoptest.HelperPath(t)
	d := desktoptest.Start(t, opts)
	c := bridge.New(bridge.Options{
		Path:   helper,
		Env:    append(d.Env(), env...),
		Logger: testLogger(t),
		// Full-screen PNG encoding of 1920x1080 can take a while on a
		// loaded 2-core machine with the race detector on.
		CallTimeout: 30 * time.Second,
	})
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx(t)); err != nil {
		t.Fatalf("starting helper %s on %s: %v", helper, d.Display(), err)
	}
	return d, c
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// testLogger sends the client's and the helper's log lines to the test log,
// and drops lines that arrive after the test has ended.
func testLogger(t *testing.T) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(w.stop) // registered first, so it runs after the client closed
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	mu   sync.Mutex
	t    *testing.T
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testWriter) stop() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}

// fnv1a is the display id the protocol prescribes for a monitor name.
func fnv1a(name string) uint32 {
	h := fnv.New32a()
	io.WriteString(h, name)
	return h.Sum32()
}

// checkDisplays compares the helper's displays with xrandr --listmonitors:
// same order, names, ids, geometry, physical size and primary flags. The
// helper marks exactly one display primary: the one RandR marks, else the
// first (helpers/linux/src/displays.rs), since capture defaults to it.
func checkDisplays(t *testing.T, d *desktoptest.Desktop, c *bridge.Client) []bridge.Display {
	t.Helper()
	got, err := c.Displays(ctx(t))
	if err != nil {
		t.Fatalf("Displays: %v", err)
	}
	raw := d.Run(t, "xrandr", "--listmonitors")
	want, err := desktoptest.ParseListMonitors(raw)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("Displays() = %+v\nwant the %d monitors of xrandr --listmonitors:\n%s", got, len(want), raw)
	}
	anyPrimary := slices.ContainsFunc(want, func(m desktoptest.Monitor) bool { return m.Primary })
	for i, w := range want {
		g := got[i]
		wantDisplay := bridge.Display{
			ID:       fnv1a(w.Name),
			Name:     w.Name,
			Origin:   bridge.Point{X: w.X, Y: w.Y},
			Logical:  bridge.Size{Width: w.Width, Height: w.Height},
			Physical: bridge.Size{Width: w.Width, Height: w.Height},
			Scale:    1,
			Primary:  w.Primary || (!anyPrimary && i == 0),
			MM:       bridge.Size{Width: w.WidthMM, Height: w.HeightMM},
		}
		if g != wantDisplay {
			t.Errorf("display %d = %+v\nwant %+v (xrandr --listmonitors:\n%s)", i, g, wantDisplay, raw)
		}
	}
	return got
}

func TestAcceptanceDisplays(t *testing.T) {
	d, c := acceptance(t, desktoptest.Options{})

	t.Run("single screen", func(t *testing.T) {
		ds := checkDisplays(t, d, c)
		if len(ds) != 1 || ds[0].Bounds() != (bridge.Rect{X: 0, Y: 0, Width: 1920, Height: 1080}) {
			t.Errorf("Displays() = %+v, want one 1920x1080 display at 0,0", ds)
		}
	})

	t.Run("two monitors side by side", func(t *testing.T) {
		d.SetMonitors(t, []desktoptest.Monitor{
			{Name: "LEFT", X: 0, Y: 0, Width: 960, Height: 1080},
			{Name: "RIGHT", X: 960, Y: 0, Width: 960, Height: 1080, Primary: true},
		})
		ds := checkDisplays(t, d, c)
		if len(ds) != 2 {
			t.Fatalf("Displays() = %+v, want 2", ds)
		}
	})

	t.Run("two monitors, none primary", func(t *testing.T) {
		d.SetMonitors(t, []desktoptest.Monitor{
			{Name: "A", X: 0, Y: 0, Width: 1000, Height: 1080},
			{Name: "B", X: 1000, Y: 0, Width: 920, Height: 1080},
		})
		checkDisplays(t, d, c)
	})

	t.Run("two monitors stacked, different sizes", func(t *testing.T) {
		d.SetMonitors(t, []desktoptest.Monitor{
			{Name: "TOP", X: 0, Y: 0, Width: 1280, Height: 600, Primary: true},
			{Name: "BOTTOM", X: 320, Y: 600, Width: 1600, Height: 480, WidthMM: 400, HeightMM: 120},
		})
		checkDisplays(t, d, c)

		// A display capture covers exactly that monitor.
		id := fnv1a("BOTTOM")
		shot, err := c.Capture(ctx(t), bridge.CaptureRequest{Display: &id, Format: bridge.FormatPNG})
		if err != nil {
			t.Fatalf("Capture(display BOTTOM): %v", err)
		}
		wantSrc := bridge.Rect{X: 320, Y: 600, Width: 1600, Height: 480}
		if shot.Source != wantSrc || shot.Width != 1600 || shot.Height != 480 || shot.Display == nil || *shot.Display != id {
			t.Errorf("Capture(display BOTTOM) = source %+v, %dx%d, display %v; want source %+v, 1600x480, display %d",
				shot.Source, shot.Width, shot.Height, shot.Display, wantSrc, id)
		}
	})

	t.Run("back to the automatic monitor", func(t *testing.T) {
		d.SetMonitors(t, nil)
		checkDisplays(t, d, c)
	})
}

// putContent puts varied, still content on the screen: an xterm with text
// on a coloured background and a GTK dialog.
func putContent(t *testing.T, d *desktoptest.Desktop) (xt, gtk *desktoptest.Window) {
	t.Helper()
	xt = d.StartXterm(t, desktoptest.XtermOptions{
		Class: "DeskhandAccept", Title: "acceptance xterm", Geometry: "80x24+40+60",
		Background: "#2040A0", Foreground: "#FFE080",
		Text: "deskhand acceptance: The quick brown fox jumps over the lazy dog 0123456789",
	})
	gtk = d.StartGTK(t, "acceptance gtk")
	d.Move(t, gtk.ID, 700, 300, 0, 0)
	return xt, gtk
}

// stableCapture captures with the helper between two xwd references and
// retries until both references agree, so a still screen is compared.
func stableCapture(t *testing.T, d *desktoptest.Desktop, c *bridge.Client, req bridge.CaptureRequest) (*bridge.Capture, *image.RGBA, *image.RGBA) {
	t.Helper()
	for attempt := 1; ; attempt++ {
		before := d.Screenshot(t)
		shot, err := c.Capture(ctx(t), req)
		if err != nil {
			t.Fatalf("Capture(%+v): %v", req, err)
		}
		after := d.Screenshot(t)
		if bytes.Equal(before.Pix, after.Pix) {
			return shot, decode(t, shot), before
		}
		if attempt == 5 {
			t.Fatalf("the screen kept changing between xwd references (5 attempts)")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func decode(t *testing.T, shot *bridge.Capture) *image.RGBA {
	t.Helper()
	var img image.Image
	var err error
	switch shot.Format {
	case bridge.FormatPNG:
		img, err = png.Decode(bytes.NewReader(shot.Data))
	case bridge.FormatJPEG:
		img, err = jpeg.Decode(bytes.NewReader(shot.Data))
	default:
		t.Fatalf("capture format %q", shot.Format)
	}
	if err != nil {
		t.Fatalf("decoding the %s capture: %v", shot.Format, err)
	}
	if b := img.Bounds(); b.Dx() != shot.Width || b.Dy() != shot.Height {
		t.Fatalf("the %s image is %dx%d but the result says %dx%d", shot.Format, b.Dx(), b.Dy(), shot.Width, shot.Height)
	}
	return desktoptest.ToRGBA(img)
}

// compareExact fails unless got equals the area r of ref in every RGB
// value; it reports the first differences.
func compareExact(t *testing.T, what string, got, ref *image.RGBA, r image.Rectangle) {
	t.Helper()
	if got.Rect.Dx() != r.Dx() || got.Rect.Dy() != r.Dy() {
		t.Fatalf("%s: image %v, want the size of %v", what, got.Rect, r)
	}
	var diffs []string
	n := 0
	for y := 0; y < r.Dy(); y++ {
		for x := 0; x < r.Dx(); x++ {
			g, w := got.RGBAAt(x, y), ref.RGBAAt(r.Min.X+x, r.Min.Y+y)
			if g.R != w.R || g.G != w.G || g.B != w.B {
				n++
				if len(diffs) < 5 {
					diffs = append(diffs, fmt.Sprintf("at %d,%d got %v want %v", r.Min.X+x, r.Min.Y+y, rgb(g), rgb(w)))
				}
			}
		}
	}
	if n > 0 {
		t.Errorf("%s: %d of %d pixels differ from xwd's; first: %s", what, n, r.Dx()*r.Dy(), strings.Join(diffs, "; "))
	}
}

func rgb(c color.RGBA) string { return fmt.Sprintf("#%02X%02X%02X", c.R, c.G, c.B) }

// meanAbsError is the mean absolute per-channel difference between got and
// the area r of ref.
func meanAbsError(got, ref *image.RGBA, r image.Rectangle) float64 {
	var sum, n float64
	for y := 0; y < r.Dy(); y++ {
		for x := 0; x < r.Dx(); x++ {
			g, w := got.RGBAAt(x, y), ref.RGBAAt(r.Min.X+x, r.Min.Y+y)
			for _, p := range [][2]uint8{{g.R, w.R}, {g.G, w.G}, {g.B, w.B}} {
				d := int(p[0]) - int(p[1])
				if d < 0 {
					d = -d
				}
				sum += float64(d)
				n++
			}
		}
	}
	return sum / n
}

func TestAcceptanceCapture(t *testing.T) {
	for _, mode := range []struct {
		name, method string
		env          []string
	}{
		{"shm", "shm", nil},
		{"get_image", "get_image", []string{"DESKHAND_HELPER_NO_SHM=1"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			d, c := acceptance(t, desktoptest.Options{}, mode.env...)
			putContent(t, d)
			full := image.Rect(0, 0, 1920, 1080)

			t.Run("png full screen", func(t *testing.T) {
				shot, img, ref := stableCapture(t, d, c, bridge.CaptureRequest{Format: bridge.FormatPNG})
				if shot.Method != mode.method {
					t.Errorf("method %q, want %q", shot.Method, mode.method)
				}
				if shot.Source != (bridge.Rect{X: 0, Y: 0, Width: 1920, Height: 1080}) || shot.Width != 1920 || shot.Height != 1080 {
					t.Errorf("source %+v, size %dx%d; want the whole 1920x1080 screen at native size", shot.Source, shot.Width, shot.Height)
				}
				if shot.Display == nil || *shot.Display != fnv1a("screen") {
					t.Errorf("display %v, want the id of monitor \"screen\" (%d)", shot.Display, fnv1a("screen"))
				}
				if n := distinctColors(ref); n < 16 {
					t.Fatalf("the reference has only %d colours; the screen content is not varied enough to prove anything", n)
				}
				compareExact(t, "full PNG capture", img, ref, full)
			})

			t.Run("jpeg full screen", func(t *testing.T) {
				shot, img, ref := stableCapture(t, d, c, bridge.CaptureRequest{Format: bridge.FormatJPEG, Quality: 90})
				if shot.Format != bridge.FormatJPEG || shot.Method != mode.method {
					t.Errorf("format %q method %q, want jpeg and %q", shot.Format, shot.Method, mode.method)
				}
				if mae := meanAbsError(img, ref, full); mae >= 3 {
					t.Errorf("JPEG mean absolute error %.2f per channel, want < 3", mae)
				} else {
					t.Logf("JPEG quality 90 mean absolute error: %.3f", mae)
				}
			})

			t.Run("png region", func(t *testing.T) {
				// Across the xterm's frame edge, its text, and bare desktop.
				rect := bridge.Rect{X: 17, Y: 33, Width: 641, Height: 355}
				shot, img, ref := stableCapture(t, d, c, bridge.CaptureRequest{Rect: &rect, Format: bridge.FormatPNG})
				if shot.Source != rect || shot.Width != rect.Width || shot.Height != rect.Height || shot.Display != nil {
					t.Errorf("region capture: source %+v, %dx%d, display %v; want source %+v at native size, no display",
						shot.Source, shot.Width, shot.Height, shot.Display, rect)
				}
				compareExact(t, "region PNG capture", img, ref, image.Rect(rect.X, rect.Y, rect.X+rect.Width, rect.Y+rect.Height))
			})

			t.Run("scaled", func(t *testing.T) {
				shot, err := c.Capture(ctx(t), bridge.CaptureRequest{Format: bridge.FormatPNG, Width: 960, Height: 540})
				if err != nil {
					t.Fatalf("Capture(960x540): %v", err)
				}
				img := decode(t, shot)
				if img.Rect.Dx() != 960 || img.Rect.Dy() != 540 || shot.Source.Width != 1920 {
					t.Errorf("scaled capture %v from source %+v, want 960x540 of the full screen", img.Rect, shot.Source)
				}
			})
		})
	}
}

// distinctColors counts the different RGB values in img.
func distinctColors(img *image.RGBA) int {
	seen := map[[3]uint8]bool{}
	for i := 0; i+3 < len(img.Pix); i += 4 {
		seen[[3]uint8{img.Pix[i], img.Pix[i+1], img.Pix[i+2]}] = true
	}
	return len(seen)
}

// countColor counts the pixels of exactly colour c.
func countColor(img *image.RGBA, c color.RGBA) int {
	n := 0
	for i := 0; i+3 < len(img.Pix); i += 4 {
		if img.Pix[i] == c.R && img.Pix[i+1] == c.G && img.Pix[i+2] == c.B {
			n++
		}
	}
	return n
}

func TestAcceptanceMask(t *testing.T) {
	d, c := acceptance(t, desktoptest.Options{})
	secret := color.RGBA{0x13, 0xF1, 0xA7, 0xFF}
	under := d.StartXterm(t, desktoptest.XtermOptions{Title: "secret", Geometry: "80x24+100+100", Background: "#13F1A7", Text: "secret"})
	over := d.StartXterm(t, desktoptest.XtermOptions{Title: "cover", Geometry: "60x15+350+250", Background: "#602020", Text: "cover"})
	d.Focus(t, over.ID)
	under = d.WindowInfo(t, under.ID)
	over = d.WindowInfo(t, over.ID)

	plain, err := c.Capture(ctx(t), bridge.CaptureRequest{Format: bridge.FormatPNG})
	if err != nil {
		t.Fatalf("Capture: %v", err)
	}
	if n := countColor(decode(t, plain), secret); n == 0 {
		t.Fatalf("the unmasked capture has no %s pixel; the test setup is wrong", rgb(secret))
	}

	paint := [3]uint8{255, 0, 255}
	masked, err := c.Capture(ctx(t), bridge.CaptureRequest{Format: bridge.FormatPNG, Mask: []uint32{under.ID}, MaskColor: &paint})
	if err != nil {
		t.Fatalf("Capture(mask %d): %v", under.ID, err)
	}
	img := decode(t, masked)
	if n := countColor(img, secret); n != 0 {
		t.Errorf("the masked capture still has %d pixels of %s", n, rgb(secret))
	}
	if !slices.Equal(masked.Masked, []uint32{under.ID}) {
		t.Errorf("masked = %v, want [%d]", masked.Masked, under.ID)
	}
	// The visible part of the masked window's frame is paint; the window
	// above it is not.
	fr := under.Frame
	if p := img.RGBAAt(fr.X+2, fr.Y+2); p.R != 255 || p.G != 0 || p.B != 255 {
		t.Errorf("pixel at the masked frame's corner %d,%d = %s, want the mask colour #FF00FF", fr.X+2, fr.Y+2, rgb(p))
	}
	cl := over.Client
	inOverlap := image.Pt(cl.X+20, cl.Y+cl.Height/2)
	if !under.Frame.Contains(inOverlap.X, inOverlap.Y) {
		t.Fatalf("setup: %v is not over the masked window %v", inOverlap, under.Frame)
	}
	if p := img.RGBAAt(inOverlap.X, inOverlap.Y); p.R == 255 && p.G == 0 && p.B == 255 {
		t.Errorf("pixel %v of the covering window was painted over", inOverlap)
	}

	// The default paint colour is 24,24,24.
	def, err := c.Capture(ctx(t), bridge.CaptureRequest{Format: bridge.FormatPNG, Mask: []uint32{under.ID}})
	if err != nil {
		t.Fatalf("Capture(mask, default colour): %v", err)
	}
	if p := decode(t, def).RGBAAt(fr.X+2, fr.Y+2); p.R != 24 || p.G != 24 || p.B != 24 {
		t.Errorf("default mask colour at %d,%d = %s, want #181818", fr.X+2, fr.Y+2, rgb(p))
	}
}

// xpropPID reads _NET_WM_PID with xprop, independently of the harness.
func xpropPID(t *testing.T, d *desktoptest.Desktop, id uint32) int {
	t.Helper()
	out := d.Run(t, "xprop", "-id", fmt.Sprint(id), "_NET_WM_PID")
	m := regexp.MustCompile(`_NET_WM_PID\(CARDINAL\) = (\d+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("xprop -id %d _NET_WM_PID: %q", id, out)
	}
	pid, _ := strconv.Atoi(m[1])
	return pid
}

// xpropClass reads WM_CLASS with xprop: instance, class.
func xpropClass(t *testing.T, d *desktoptest.Desktop, id uint32) (string, string) {
	t.Helper()
	out := d.Run(t, "xprop", "-id", fmt.Sprint(id), "WM_CLASS")
	m := regexp.MustCompile(`WM_CLASS\(STRING\) = "([^"]*)", "([^"]*)"`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("xprop -id %d WM_CLASS: %q", id, out)
	}
	return m[1], m[2]
}

func findWindow(list *bridge.WindowList, id uint32) *bridge.Window {
	for i := range list.Windows {
		if list.Windows[i].ID == id {
			return &list.Windows[i]
		}
	}
	return nil
}

func toBridge(r desktoptest.Rect) bridge.Rect {
	return bridge.Rect{X: r.X, Y: r.Y, Width: r.Width, Height: r.Height}
}

func TestAcceptanceWindows(t *testing.T) {
	d, c := acceptance(t, desktoptest.Options{})
	xt, gtk := putContent(t, d)
	// Make them overlap: the GTK dialog over the xterm's lower right.
	d.Move(t, gtk.ID, 400, 300, 0, 0)
	d.Focus(t, gtk.ID)

	t.Run("facts", func(t *testing.T) {
		list, err := c.Windows(ctx(t), false)
		if err != nil {
			t.Fatalf("Windows: %v", err)
		}
		for _, w := range []*desktoptest.Window{xt, gtk} {
			facts := d.WindowInfo(t, w.ID)
			got := findWindow(list, w.ID)
			if got == nil {
				t.Errorf("Windows() lacks %s (%d): %+v", facts.Title, w.ID, list.Windows)
				continue
			}
			instance, class := xpropClass(t, d, w.ID)
			pid := xpropPID(t, d, w.ID)
			if got.App.PID != pid || got.App.Class != class || got.App.Instance != instance {
				t.Errorf("window %d app = pid %d class %q instance %q; xprop says pid %d class %q instance %q",
					w.ID, got.App.PID, got.App.Class, got.App.Instance, pid, class, instance)
			}
			if pid != w.Cmd.Process.Pid {
				t.Errorf("xprop pid %d is not the started process %d", pid, w.Cmd.Process.Pid)
			}
			if got.Title != facts.Title {
				t.Errorf("window %d title %q, want %q", w.ID, got.Title, facts.Title)
			}
			if got.Bounds != toBridge(facts.Frame) || got.Client != toBridge(facts.Client) {
				t.Errorf("window %d bounds %+v client %+v; xwininfo and _NET_FRAME_EXTENTS say frame %v client %v",
					w.ID, got.Bounds, got.Client, facts.Frame, facts.Client)
			}
			if got.Minimized || got.Hidden {
				t.Errorf("window %d minimized=%v hidden=%v, want a visible window", w.ID, got.Minimized, got.Hidden)
			}
			if got.Focused != (w.ID == gtk.ID) {
				t.Errorf("window %d focused=%v after focusing the GTK window", w.ID, got.Focused)
			}
		}
		if list.Focused == nil || *list.Focused != gtk.ID || list.Frontmost == nil || list.Frontmost.PID != gtk.PID {
			t.Errorf("focused %v frontmost %+v, want the GTK window %d (pid %d)", list.Focused, list.Frontmost, gtk.ID, gtk.PID)
		}
		// Stacking, top first, is the reverse of _NET_CLIENT_LIST_STACKING.
		stack := d.Stacking(t)
		slices.Reverse(stack)
		var gotOrder []uint32
		for _, w := range list.Windows {
			if slices.Contains(stack, w.ID) {
				gotOrder = append(gotOrder, w.ID)
			}
		}
		if !slices.Equal(gotOrder, stack) {
			t.Errorf("window order %v, want _NET_CLIENT_LIST_STACKING reversed %v", gotOrder, stack)
		}
	})

	t.Run("frontmost follows focus", func(t *testing.T) {
		d.Focus(t, xt.ID)
		list, err := c.Windows(ctx(t), false)
		if err != nil {
			t.Fatalf("Windows: %v", err)
		}
		if list.Focused == nil || *list.Focused != xt.ID {
			t.Errorf("focused %v after Focus(xterm %d)", list.Focused, xt.ID)
		}
		if list.Frontmost == nil || list.Frontmost.PID != xt.PID || list.Frontmost.Class != "DeskhandAccept" {
			t.Errorf("frontmost %+v after Focus(xterm), want pid %d class DeskhandAccept", list.Frontmost, xt.PID)
		}
	})

	t.Run("window_at", func(t *testing.T) {
		xf, gf := d.WindowInfo(t, xt.ID).Frame, d.WindowInfo(t, gtk.ID).Frame
		// A point inside both frames.
		x, y := gf.X+10, gf.Y+10
		if !xf.Contains(x, y) || !gf.Contains(x, y) {
			t.Fatalf("setup: %d,%d is not in both frames %v and %v", x, y, xf, gf)
		}
		for _, top := range []*desktoptest.Window{gtk, xt, gtk} {
			d.Focus(t, top.ID) // raises it
			at, err := c.WindowAt(ctx(t), x, y)
			if err != nil {
				t.Fatalf("WindowAt(%d,%d): %v", x, y, err)
			}
			if at.Window == nil || at.Window.ID != top.ID || at.App == nil || at.App.PID != top.PID {
				t.Errorf("WindowAt(%d,%d) with %d on top = %+v", x, y, top.ID, at)
			}
		}
		// Only the xterm, and bare desktop.
		if at, err := c.WindowAt(ctx(t), xf.X+5, xf.Y+5); err != nil || at.Window == nil || at.Window.ID != xt.ID {
			t.Errorf("WindowAt(xterm corner) = %+v, %v; want the xterm", at, err)
		}
		if at, err := c.WindowAt(ctx(t), 1900, 1060); err != nil || at.Window != nil {
			t.Errorf("WindowAt(bare desktop) = %+v, %v; want no window", at, err)
		}
	})
}

func TestAcceptancePatchCheck(t *testing.T) {
	d, c := acceptance(t, desktoptest.Options{})
	_, gtk := putContent(t, d)

	var herr *bridge.Error
	if _, err := c.PatchCheck(ctx(t), bridge.PatchCheckRequest{X: 10, Y: 10}); !errors.As(err, &herr) || herr.Name != "no_capture" {
		t.Errorf("PatchCheck before any capture: %v, want a no_capture error", err)
	}

	shot, err := c.Capture(ctx(t), bridge.CaptureRequest{Format: bridge.FormatJPEG})
	if err != nil {
		t.Fatalf("Capture: %v", err)
	}
	// A point on the bare desktop, away from both windows.
	const px, py = 1500, 800
	res, err := c.PatchCheck(ctx(t), bridge.PatchCheckRequest{X: px, Y: py, Size: 15})
	if err != nil {
		t.Fatalf("PatchCheck(still): %v", err)
	}
	if res.Changed || res.DifferingPixels != 0 || res.MaxDelta != 0 || res.CaptureID != shot.CaptureID {
		t.Errorf("PatchCheck on a still screen = %+v, want unchanged for capture %d", res, shot.CaptureID)
	}

	// Move the GTK window over the point.
	d.Move(t, gtk.ID, px-100, py-60, 0, 0)
	res, err = c.PatchCheck(ctx(t), bridge.PatchCheckRequest{X: px, Y: py, Size: 15})
	if err != nil {
		t.Fatalf("PatchCheck(after move): %v", err)
	}
	if !res.Changed || res.DifferingPixels == 0 || res.MaxDelta == 0 {
		t.Errorf("PatchCheck after moving a window over %d,%d = %+v, want changed", px, py, res)
	}

	// Outside the last capture's source.
	rect := bridge.Rect{X: 0, Y: 0, Width: 200, Height: 200}
	if _, err := c.Capture(ctx(t), bridge.CaptureRequest{Rect: &rect}); err != nil {
		t.Fatalf("Capture(rect): %v", err)
	}
	if _, err := c.PatchCheck(ctx(t), bridge.PatchCheckRequest{X: px, Y: py}); !errors.As(err, &herr) || herr.Name != "out_of_bounds" {
		t.Errorf("PatchCheck outside the captured rectangle: %v, want out_of_bounds", err)
	}
}

func TestAcceptanceClipboard(t *testing.T) {
	desktoptest.Require(t, "xclip")
	d, c := acceptance(t, desktoptest.Options{})

	text := "héllo ✓ 日本 🙂"
	if err := c.WriteClipboard(ctx(t), text); err != nil {
		t.Fatalf("WriteClipboard: %v", err)
	}
	if got := d.Run(t, "xclip", "-selection", "clipboard", "-o"); got != text {
		t.Errorf("xclip -o after WriteClipboard(%q) = %q", text, got)
	}
	if got, err := c.ReadClipboard(ctx(t)); err != nil || got != text {
		t.Errorf("ReadClipboard of its own text = %q, %v; want %q", got, err, text)
	}

	other := "from xclip: ünï ✓ 日本語 🙂\nsecond line"
	xclip := d.Command("xclip", "-selection", "clipboard", "-i")
	xclip.Stdin = strings.NewReader(other)
	// xclip forks a child that serves the selection; its output goes to
	// /dev/null so nothing waits on it. The desktop's teardown stops it.
	if err := xclip.Run(); err != nil {
		t.Fatalf("xclip -i: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, err := c.ReadClipboard(ctx(t))
		if err == nil && got == other {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ReadClipboard after xclip -i = %q, %v; want %q", got, err, other)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// PRIMARY is a second selection, independent of the clipboard.
	primary := "selected: ✓ 日本"
	if err := c.WriteSelection(ctx(t), bridge.SelectionPrimary, primary); err != nil {
		t.Fatalf("WriteSelection(primary): %v", err)
	}
	if got := d.Run(t, "xclip", "-selection", "primary", "-o"); got != primary {
		t.Errorf("xclip -selection primary -o after WriteSelection(primary, %q) = %q", primary, got)
	}
	if got, err := c.ReadSelection(ctx(t), bridge.SelectionPrimary); err != nil || got != primary {
		t.Errorf("ReadSelection(primary) = %q, %v; want %q", got, err, primary)
	}
	if got, err := c.ReadClipboard(ctx(t)); err != nil || got != other {
		t.Errorf("ReadClipboard after writing PRIMARY = %q, %v; want %q", got, err, other)
	}
}

func TestAcceptanceHideRestore(t *testing.T) {
	d, c := acceptance(t, desktoptest.Options{})
	xt, gtk := putContent(t, d)
	d.Move(t, gtk.ID, 300, 200, 0, 0) // overlapping, so stacking matters
	d.Focus(t, gtk.ID)
	ids := []uint32{xt.ID, gtk.ID}
	before := map[uint32]*desktoptest.Window{}
	for _, id := range ids {
		before[id] = d.WindowInfo(t, id)
	}
	stackBefore := d.Stacking(t)

	var herr *bridge.Error
	if _, err := c.Hide(ctx(t), []uint32{xt.ID, 0x7ffffff0}); !errors.As(err, &herr) || herr.Name != "no_such_window" {
		t.Errorf("Hide with an unknown id: %v, want no_such_window", err)
	}
	if !d.WindowInfo(t, xt.ID).Viewable {
		t.Fatalf("a failed Hide touched the xterm")
	}

	hidden, err := c.Hide(ctx(t), ids)
	if err != nil {
		t.Fatalf("Hide: %v", err)
	}
	if !sameSet(hidden, ids) {
		t.Errorf("Hide(%v) = %v, want both", ids, hidden)
	}
	for _, id := range ids {
		w := waitWindow(t, d, id, func(w *desktoptest.Window) bool { return w.Minimized() && !w.Viewable })
		if !w.Minimized() || w.Viewable {
			t.Errorf("window %d after Hide: state %q net %v viewable %v, want minimized", id, w.State, w.NetState, w.Viewable)
		}
	}
	list, err := c.Windows(ctx(t), false)
	if err != nil {
		t.Fatalf("Windows: %v", err)
	}
	for _, id := range ids {
		if findWindow(list, id) != nil {
			t.Errorf("Windows(false) lists hidden window %d", id)
		}
	}
	list, err = c.Windows(ctx(t), true)
	if err != nil {
		t.Fatalf("Windows(include hidden): %v", err)
	}
	for _, id := range ids {
		if w := findWindow(list, id); w == nil || !w.Minimized {
			t.Errorf("Windows(true) entry for %d = %+v, want it minimized", id, w)
		}
	}
	// Hiding again changes nothing.
	if again, err := c.Hide(ctx(t), ids); err != nil || len(again) != 0 {
		t.Errorf("Hide of hidden windows = %v, %v; want none changed", again, err)
	}

	restored, err := c.Restore(ctx(t), ids)
	if err != nil {
		t.Fatalf("Restore: %v", err)
	}
	if !sameSet(restored, ids) {
		t.Errorf("Restore(%v) = %v, want both", ids, restored)
	}
	for _, id := range ids {
		// Restore waits for the window manager, so no polling here.
		w := d.WindowInfo(t, id)
		b := before[id]
		if !w.Viewable || w.Minimized() || w.State != "Normal" {
			t.Errorf("window %d after Restore: viewable %v state %q net %v", id, w.Viewable, w.State, w.NetState)
		}
		if w.Frame != b.Frame || w.Client != b.Client {
			t.Errorf("window %d after Restore: frame %v client %v, was %v %v", id, w.Frame, w.Client, b.Frame, b.Client)
		}
	}
	if got := d.Stacking(t); !slices.Equal(got, stackBefore) {
		t.Errorf("stacking after Restore %v, was %v", got, stackBefore)
	}
}

func sameSet(a, b []uint32) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// waitWindow polls a window's facts until ok or 3 seconds pass.
func waitWindow(t *testing.T, d *desktoptest.Desktop, id uint32, ok func(*desktoptest.Window) bool) *desktoptest.Window {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		w := d.WindowInfo(t, id)
		if ok(w) || time.Now().After(deadline) {
			return w
		}
		time.Sleep(20 * time.Millisecond)
	}
}
