//go:build linux

package supervisor_test

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// End to end on Windows, under Wine on Xvfb and openbox: deskhand.exe and
// the Windows helper, both built for windows/amd64, serve a real MCP
// client on Linux over stdio (`wine64 deskhand.exe serve`), and every
// effect is checked on the X side, independently of deskhand: xwd's
// image of the root window, the target app's title and marker file, the
// X clipboard (Wine's explorer.exe bridges it), pixel counts of a unique
// colour.
//
//	go test ./supervisor -run TestWindowsUnderWine -v

// wineServe starts deskhand.exe serve under w with the Windows helper.
func wineServe(t *testing.T, d *desktoptest.Desktop, w *desktoptest.Wine, exe, helper string, args ...string) *e2e {
	t.Helper()
	logs := desktoptest.NewServerLog(t, nil)
	full := append([]string{"serve", "--virtual-display", "off", "--state-dir", desktoptest.WindowsPath(t.TempDir()), "--log-level", "debug"}, args...)
	cmd := w.Command(exe, full...)
	cmd.Env = append(cmd.Env, "DESKHAND_HELPER="+desktoptest.WindowsPath(helper))
	cmd.Stderr = logs
	client := mcp.NewClient(&mcp.Implementation{Name: "deskhand-wine-e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		t.Fatalf("starting wine64 %s %v: %v", exe, full, err)
	}
	t.Cleanup(func() { cs.Close() })
	return &e2e{t: t, d: d, cs: cs, cmd: cmd}
}

// buildWinTarget builds the test app (testdata/wintarget) with mingw.
func buildWinTarget(t *testing.T, name string) string {
	t.Helper()
	desktoptest.Require(t, "x86_64-w64-mingw32-gcc")
	out := filepath.Join(t.TempDir(), name)
	cmd := exec.Command("x86_64-w64-mingw32-gcc", "-mwindows", "-O2", "-o", out, filepath.Join("testdata", "wintarget", "wintarget.c"))
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building %s: %v\n%s", name, err, b)
	}
	return out
}

func TestWindowsUnderWine(t *testing.T) {
	desktoptest.Require(t, "Xvfb", "openbox", "xdotool", "xclip", "xprop", "xwininfo", "xwd", "convert")
	d := desktoptest.Start(t, desktoptest.Options{Width: 1024, Height: 768, WindowManager: openboxWrapper(t)})
	w := d.StartWine(t)
	exe := desktoptest.BuildWindows(t, "./cmd/deskhand")
	helper := os.Getenv("DESKHAND_WINDOWS_HELPER") // a prebuilt one, else this tree's
	if helper == "" {
		helper = desktoptest.BuildWindows(t, "./helpers/windows")
	}
	dir := t.TempDir()

	// The approved target (blue) and an unapproved app of a colour found
	// nowhere else (magenta), side by side; notepad under them.
	blue, magenta := color.RGBA{0x20, 0x60, 0xa0, 0xff}, color.RGBA{0xe0, 0x1c, 0xb4, 0xff}
	marker := filepath.Join(dir, "clicked")
	target := w.StartApp(t, "wintarget.exe", buildWinTarget(t, "wintarget.exe"), "Deskhand Target", "2060A0", desktoptest.WindowsPath(marker), "0", "0")
	// The unapproved app takes the approved one's window class, which
	// any program may register: it must stay unapproved all the same.
	masked := w.StartApp(t, "winmask.exe", buildWinTarget(t, "winmask.exe"), "Unapproved", "E01CB4", desktoptest.WindowsPath(filepath.Join(dir, "unused")), "560", "0", "DeskhandTarget")
	notepad := w.StartApp(t, "notepad.exe", "notepad")
	d.Run(t, "xdotool", "windowmove", "--sync", hexWin(notepad.ID), "0", "400")

	e := wineServe(t, d, w, exe, helper,
		"--allow", "wintarget.exe=full", "--allow", "notepad.exe=full", "--allow", "conhost.exe", "--allow", "wineconsole.exe",
		"--grant", "clipboardRead,clipboardWrite", "--hide-unapproved=false")
	e.ok("request_access", map[string]any{"apps": []string{"wintarget.exe", "notepad.exe", "conhost.exe", "wineconsole.exe"},
		"reason": "end-to-end test under Wine", "clipboardRead": true, "clipboardWrite": true})

	// Each part reports on its own subtest, e's calls included.
	run := func(name string, part func(t *testing.T)) {
		t.Run(name, func(t *testing.T) {
			parent := e.t
			e.t = t
			defer func() { e.t = parent }()
			part(t)
		})
	}

	run("screenshot", func(t *testing.T) {
		// Focus the target, which has no blinking caret, so the screen
		// holds still around the capture.
		d.Focus(t, target.ID)
		var img *image.RGBA
		ref := stableReference(t, d, func() { img, _ = e.screenshot("screenshot", nil) })
		// The unapproved window is masked, so compare everything else.
		mw := d.WindowInfo(t, masked.ID).Frame
		for _, im := range []*image.RGBA{ref} {
			r := image.Rect(mw.X, mw.Y, mw.X+mw.Width, mw.Y+mw.Height)
			for y := r.Min.Y; y < r.Max.Y; y++ {
				for x := r.Min.X; x < r.Max.X; x++ {
					im.SetRGBA(x, y, color.RGBA{})
				}
			}
		}
		w, h := img.Rect.Dx(), img.Rect.Dy()
		sw, sh := w*ref.Rect.Dx()/e.shot.Display.Size.Width, h*ref.Rect.Dy()/e.shot.Display.Size.Height
		want := boxScale(ref, ref.Rect, sw, sh)
		got := img.SubImage(image.Rect(0, 0, sw, sh)).(*image.RGBA)
		mr := image.Rect(mw.X*sw/ref.Rect.Dx(), mw.Y*sh/ref.Rect.Dy(), (mw.X+mw.Width)*sw/ref.Rect.Dx()+1, (mw.Y+mw.Height)*sh/ref.Rect.Dy()+1)
		for y := mr.Min.Y; y < mr.Max.Y && y < sh; y++ {
			for x := mr.Min.X; x < mr.Max.X && x < sw; x++ {
				got.SetRGBA(x, y, color.RGBA{})
			}
		}
		mae := meanAbsError(got, want)
		wrong := meanAbsError(got, boxScale(ref, image.Rect(40, 40, ref.Rect.Dx(), ref.Rect.Dy()), sw, sh))
		t.Logf("screenshot %dx%d vs xwd: mean abs error %.2f; vs a shifted reference %.2f", w, h, mae, wrong)
		if mae > 6 {
			t.Errorf("the screenshot differs from xwd's image of the root window: mean absolute error %.2f per channel, want ≤ 6", mae)
		}
		if wrong < 2*mae || wrong < 6 {
			t.Errorf("the comparison does not discriminate: error against a shifted reference %.2f vs %.2f", wrong, mae)
		}
	})

	run("mask", func(t *testing.T) {
		// The X side shows the unapproved window; deskhand's screenshot
		// must not show one pixel of its colour.
		if n := countColor(d.Screenshot(t), magenta, 0); n < 10000 {
			t.Fatalf("the unapproved window shows %d pixels of its colour on the X side, want it visible", n)
		}
		img, _ := e.screenshot("screenshot", nil)
		if n := countColor(img, magenta, 24); n != 0 {
			t.Errorf("deskhand's screenshot shows %d pixels of the unapproved window's colour, want 0", n)
		}
		if n := countColor(img, blue, 24); n < 1000 {
			t.Errorf("deskhand's screenshot shows %d pixels of the approved window's colour, want it visible", n)
		}
	})

	run("click", func(t *testing.T) {
		e.screenshot("screenshot", nil)
		c := d.WindowInfo(t, target.ID).Client
		e.ok("left_click", map[string]any{"coordinate": e.at(c.X+200, c.Y+135)})
		waitFor(t, "the target's title to say it was clicked", 20*time.Second, func() bool {
			return d.WindowInfo(t, target.ID).Title == "Deskhand Target clicked"
		})
		if b, err := os.ReadFile(marker); err != nil || string(b) != "clicked" {
			t.Errorf("the target's marker file holds %q (%v), want %q", b, err, "clicked")
		}
	})

	run("type", func(t *testing.T) {
		const text = "Grüße, 世界! 👋"
		e.screenshot("screenshot", nil)
		c := d.WindowInfo(t, notepad.ID).Client
		e.ok("left_click", map[string]any{"coordinate": e.at(c.X+c.Width/2, c.Y+c.Height/2)})
		e.ok("type", map[string]any{"text": text})
		// Read it back without deskhand: select all and copy from the X
		// side, then the X clipboard.
		d.Focus(t, notepad.ID)
		var got string
		waitFor(t, "notepad's text on the X clipboard", 20*time.Second, func() bool {
			d.Run(t, "xdotool", "key", "--clearmodifiers", "ctrl+a", "ctrl+c")
			got = xclipOut(d)
			return got == text
		})
	})

	run("clipboard", func(t *testing.T) {
		e.ok("write_clipboard", map[string]any{"text": "from deskhand ✓"})
		waitFor(t, "deskhand's text on the X clipboard", 20*time.Second, func() bool {
			return xclipOut(d) == "from deskhand ✓"
		})
		w.OfferXClipboard(t, "from X ✓", func() bool {
			res := e.call("read_clipboard", nil)
			return !res.IsError && resultText(res) == "from X ✓"
		})
	})

	run("blocked chord", func(t *testing.T) {
		e.bad("key", map[string]any{"text": "super+r"}, "system shortcut", "Run dialog")
		e.bad("key", map[string]any{"text": "ctrl+shift+Escape"}, "system shortcut", "Task Manager")
		e.bad("key", map[string]any{"text": "super+Pause"}, "system shortcut", "About")
	})

	run("click tier", func(t *testing.T) {
		// A console (cmd.exe in Wine's console host) is click-tier: it may
		// be clicked, never typed into.
		proof := filepath.Join(dir, "typed")
		console := w.StartApp(t, "conhost.exe", "wineconsole", "cmd")
		d.Run(t, "xdotool", "windowmove", "--sync", hexWin(console.ID), "560", "400")
		e.screenshot("screenshot", nil)
		c := d.WindowInfo(t, console.ID).Client
		e.ok("left_click", map[string]any{"coordinate": e.at(c.X+c.Width/2, c.Y+c.Height/2)})
		e.bad("type", map[string]any{"text": "echo typed > " + desktoptest.WindowsPath(proof) + "\n"}, "click")
		e.bad("key", map[string]any{"text": "Return"}, "click")
		if _, err := os.Stat(proof); err == nil {
			t.Errorf("the console ran the typed command: %s exists", proof)
		}
	})

	run("lock", func(t *testing.T) {
		// This server took the session's lock with its first action; a
		// second deskhand in the same session is refused until it ends.
		second := wineServe(t, d, w, exe, helper, "--allow", "notepad.exe=full")
		second.ok("request_access", map[string]any{"apps": []string{"notepad.exe"}, "reason": "the lock test"})
		second.bad("screenshot", nil, "cu_lock_held")
	})

	run("escape", func(t *testing.T) {
		// deskhand's own Escape (injected) does not stop it; the user's,
		// from the X side (hardware input to Wine), does.
		e.screenshot("screenshot", nil)
		c := d.WindowInfo(t, notepad.ID).Client
		e.ok("left_click", map[string]any{"coordinate": e.at(c.X+c.Width/2, c.Y+c.Height/2)})
		e.ok("key", map[string]any{"text": "Escape"})
		e.ok("screenshot", nil)
		d.Focus(t, notepad.ID)
		d.Run(t, "xdotool", "key", "Escape")
		waitFor(t, "the user's Escape to stop the session", 20*time.Second, func() bool {
			res := e.call("screenshot", nil)
			return res.IsError && strings.Contains(resultText(res), "pressed Escape")
		})
	})
}

func hexWin(id uint32) string { return fmt.Sprintf("%#x", id) }

// xclipOut reads the X clipboard; "" while it holds no text (Wine offers
// it a moment after a copy).
func xclipOut(d *desktoptest.Desktop) string {
	cmd := exec.Command("xclip", "-o", "-selection", "clipboard")
	cmd.Env = d.AppEnv()
	out, _ := cmd.Output()
	return strings.TrimRight(string(out), "\n")
}
