//go:build mutter && unix

package supervisor_test

// End-to-end tests of the helper's GNOME backend ("gnome-mutter") on a
// headless mutter, with a GTK 3 probe. Mutter lists no windows to any
// client, so the tests find the probe by its unique colours in the
// helper's screenshot, and check input through the file the probe writes.

import (
	"context"
	"encoding/json"
	"errors"
	"image"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// mutterHelper starts the real helper in m's session, letting it choose
// its backend from the environment as it would in a GNOME session.
func mutterHelper(t *testing.T, m *desktoptest.Mutter) *bridge.Client {
	t.Helper()
	c := startHelper(t, "GNOME", append(m.Env(), "DISPLAY="))
	var hello struct {
		Platform     string   `json:"platform"`
		Backend      string   `json:"backend"`
		Capabilities []string `json:"capabilities"`
		Missing      []string `json:"missing"`
		DisplayError string   `json:"display_error"`
	}
	wlCall(t, c, "handshake", map[string]any{"protocol_versions": []int{1}}, &hello)
	if hello.Platform != "linux-wayland" || hello.Backend != "gnome-mutter" {
		t.Fatalf("helper is %s/%s, want linux-wayland/gnome-mutter", hello.Platform, hello.Backend)
	}
	if hello.DisplayError != "" {
		t.Fatalf("helper cannot reach mutter: %s", hello.DisplayError)
	}
	return c
}

func TestMutterScreenshotShowsProbe(t *testing.T) {
	m := desktoptest.StartMutter(t, desktoptest.MutterOptions{Width: 1280, Height: 720})
	c := mutterHelper(t, m)
	var ds wlDisplays
	wlCall(t, c, "displays", map[string]any{}, &ds)
	if len(ds.Displays) != 1 || ds.Displays[0].Logical.Width != 1280 || ds.Displays[0].Logical.Height != 720 || !ds.Displays[0].Primary {
		t.Fatalf("displays = %+v, want the one 1280x720 virtual monitor", ds.Displays)
	}
	_, _, w, h := startProbe(t, m, "probe.py")
	box := captureProbeArea(t, c, "mutter-screencast", w, h, m.MutterLog)
	captureScaledJPEG(t, c)
	// A part of the screen: the probe's area alone.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	part, err := c.Capture(ctx, bridge.CaptureRequest{Format: "png",
		Rect: &bridge.Rect{X: box.Min.X, Y: box.Min.Y, Width: w, Height: h}})
	if err != nil {
		t.Fatalf("capturing the probe's rectangle: %v", err)
	}
	if _, n := colorBox(decodePNG(t, part.Data), probeArea); n != w*h {
		t.Fatalf("the probe's rectangle holds %d pixels of its colour, want all %d", n, w*h)
	}
}

// shownProbe starts the GTK 3 probe in m once the helper c has a pointer
// there, and waits until c's screenshot shows the probe whole; it returns
// the file the probe writes and where its area and its button are.
func shownProbe(t *testing.T, m *desktoptest.Mutter, c *bridge.Client) (out string, area, button image.Rectangle) {
	t.Helper()
	// Headless mutter has no pointer until the helper's remote desktop
	// session moves it first (as with the keyboard, see
	// TestMutterTypeIntoGTKEntry): a client started before may miss the
	// first click while it binds the new pointer.
	wlCall(t, c, "pointer_move", map[string]any{"x": 1000, "y": 600}, &json.RawMessage{})
	_, out, w, h := startProbe(t, m, "probe.py")
	img := captureUntil(t, c, "mutter-screencast", bridge.CaptureRequest{}, func(img *image.RGBA) bool {
		_, a := colorBox(img, probeArea)
		_, b := colorBox(img, probeButton)
		return a == w*h && b > 1000
	})
	area, _ = colorBox(img, probeArea)
	button, n := colorBox(img, probeButton)
	if n < 1000 {
		t.Fatalf("the screenshot (kept as %s) shows %d pixels of the probe's button; the test cannot find it", keepPNG(t, img), n)
	}
	return out, area, button
}

func TestMutterClickGTKButton(t *testing.T) {
	m := desktoptest.StartMutter(t, desktoptest.MutterOptions{})
	c := mutterHelper(t, m)
	out, area, button := shownProbe(t, m, c)
	click := func(p image.Point) {
		wlCall(t, c, "pointer_move", map[string]any{"x": p.X, "y": p.Y}, &json.RawMessage{})
		wlCall(t, c, "pointer_button", map[string]any{"button": "left", "action": "click"}, &json.RawMessage{})
	}
	// A click beside the button must not press it: the click lands where
	// it is sent, not anywhere in the window.
	click(image.Pt((area.Min.X+area.Max.X)/2, (area.Min.Y+area.Max.Y)/2))
	click(image.Pt((button.Min.X+button.Max.X)/2, (button.Min.Y+button.Max.Y)/2))
	got := wlWaitFile(t, out, func(s string) bool { return strings.Contains(s, "clicked") })
	if k := strings.Count(got, "clicked"); k != 1 {
		t.Fatalf("the probe recorded %d clicks, want exactly the one on its button: %q", k, got)
	}
}

func TestMutterRefusesWhatItCannotSee(t *testing.T) {
	m := desktoptest.StartMutter(t, desktoptest.MutterOptions{})
	c := mutterHelper(t, m)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, call := range []struct {
		method string
		params map[string]any
		want   string
	}{
		{"windows", map[string]any{}, "no window list"},
		{"window_at", map[string]any{"x": 10, "y": 10}, "which window is under a point"},
		{"capture", map[string]any{"format": "png", "mask_others": true}, "cannot mask"},
		{"clipboard_read", map[string]any{}, "clipboard"},
	} {
		err := c.Call(ctx, call.method, call.params, &json.RawMessage{})
		var be *bridge.Error
		if !errors.As(err, &be) || !strings.Contains(be.Message, call.want) {
			t.Errorf("%s: error %v, want a refusal saying %q", call.method, err, call.want)
		}
	}
}

// TestMutterDoctor: in a GNOME session doctor asks the gnome-mutter
// backend, says screenshots and input work, and says what does not (the
// window list) and that serve refuses what needs it.
func TestMutterDoctor(t *testing.T) {
	m := desktoptest.StartMutter(t, desktoptest.MutterOptions{})
	cmd := exec.Command(deskhandBinary(t), "doctor", "--state-dir", t.TempDir())
	cmd.Env = append(m.Env(), "DISPLAY=", "DESKHAND_HELPER="+desktoptest.HelperPath(t), "HOME="+t.TempDir())
	out, _ := cmd.CombinedOutput()
	for _, want := range []string{
		"ok    wayland     GNOME session " + m.Display() + " (helper backend gnome-mutter, Mutter's ScreenCast and RemoteDesktop): screenshots, mouse, keyboard work",
		"warn  wayland     missing: windows: mutter gives clients no window list",
		"warn  wayland     GNOME (mutter) gives apps no window list, no window under a point and no clipboard, so deskhand cannot check which app an action would reach",
		"warn  wayland     the Escape watcher does not work on Wayland",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "wlr-screencopy") {
		t.Errorf("doctor judged the GNOME session by the wlroots backend:\n%s", out)
	}
}

// TestMutterTypeIntoGTKEntry: key_type types into the probe's focused
// entry and key_combo's backspace deletes, as the entry itself reports.
func TestMutterTypeIntoGTKEntry(t *testing.T) {
	m := desktoptest.StartMutter(t, desktoptest.MutterOptions{})
	c := mutterHelper(t, m)
	// Headless mutter has no keyboard until the helper's remote desktop
	// session sends its first key (seen on mutter 43.8: a client started
	// before that never gets keyboard focus), so a Shift tap comes first;
	// on a real desktop the physical keyboard is there all along.
	wlCall(t, c, "key_combo", map[string]any{"keys": []uint32{0xffe1}}, &json.RawMessage{})
	_, out, _, _ := startProbe(t, m, "probe.py")
	wlWaitFile(t, out, func(s string) bool { return strings.Contains(s, "entry focused\n") })
	const text = "Deskhand types 42, ok? ~|@"
	wlCall(t, c, "key_type", map[string]any{"text": text}, &json.RawMessage{})
	wlWaitFile(t, out, func(s string) bool { return strings.Contains(s, "text "+text+"\n") })
	wlCall(t, c, "key_combo", map[string]any{"keys": []uint32{0xff08}}, &json.RawMessage{})
	wlWaitFile(t, out, func(s string) bool { return strings.HasSuffix(s, "text "+text[:len(text)-1]+"\n") })
}
