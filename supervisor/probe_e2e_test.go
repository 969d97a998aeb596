//go:build unix

package supervisor_test

// The GTK 3 probe the Wayland compositor tests share (KWin's, and mutter's
// behind the mutter build tag): a window of unique colours that records
// its size, clicks and typing in a file.

import (
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

var (
	probeArea   = [3]uint8{23, 201, 137}
	probeButton = [3]uint8{201, 23, 180}
)

// appSession is what the probe needs of a desktoptest session (mutter's
// or KWin's).
type appSession interface {
	Dir() string
	StartApp(t testing.TB, name string, args ...string) int
}

// startProbe starts the GTK probe under the script name name (its app_id)
// and returns its pid and the file it records into, once it has drawn its
// area at its final size (w, h).
func startProbe(t *testing.T, s appSession, name string) (pid int, out string, w, h int) {
	t.Helper()
	desktoptest.Require(t, "python3")
	script := copyTestdata(t, "mutter/probe.py", filepath.Join(s.Dir(), name))
	out = filepath.Join(s.Dir(), name+".out")
	pid = s.StartApp(t, "/usr/bin/python3", script, out)
	got := wlWaitFile(t, out, func(s string) bool { return strings.Contains(s, "area ") })
	// The probe may record its focus between the size and this read: the
	// latest size is the last "area" line, not the last line.
	var last string
	for _, l := range strings.Split(strings.TrimSpace(got), "\n") {
		if strings.HasPrefix(l, "area ") {
			last = l
		}
	}
	if _, err := fmt.Sscanf(last, "area %d %d", &w, &h); err != nil {
		t.Fatalf("probe wrote %q: %v", got, err)
	}
	return pid, out, w, h
}

// captureUntil captures req as PNGs until ok holds for one (up to a
// minute) and returns the last; each must come by method, the backend's
// own way to capture.
func captureUntil(t *testing.T, c *bridge.Client, method string, req bridge.CaptureRequest, ok func(*image.RGBA) bool) *image.RGBA {
	t.Helper()
	req.Format = "png"
	deadline := time.Now().Add(time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		got, err := c.Capture(ctx, req)
		cancel()
		if err != nil {
			t.Fatalf("capture: %v", err)
		}
		if got.Method != method {
			t.Fatalf("capture method %q, want %s", got.Method, method)
		}
		img := decodePNG(t, got.Data)
		if ok(img) || time.Now().After(deadline) {
			return img
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// captureProbeArea captures the 1280x720 screen by method until it shows
// the probe's w×h area whole, and returns where the area is; the
// compositor's log goes in the failure.
func captureProbeArea(t *testing.T, c *bridge.Client, method string, w, h int, log func() string) image.Rectangle {
	t.Helper()
	img := captureUntil(t, c, method, bridge.CaptureRequest{}, func(img *image.RGBA) bool {
		_, n := colorBox(img, probeArea)
		return n == w*h
	})
	if img.Bounds().Dx() != 1280 || img.Bounds().Dy() != 720 {
		t.Fatalf("capture is %v, want 1280x720", img.Bounds())
	}
	box, n := colorBox(img, probeArea)
	if n != w*h || box.Dx() != w || box.Dy() != h {
		t.Fatalf("the screenshot (kept as %s) has %d pixels of the probe's colour in %v, want its %dx%d area (%d); compositor log:\n%s",
			keepPNG(t, img), n, box, w, h, w*h, log())
	}
	return box
}

// captureScaledJPEG captures the screen scaled to 640x360 as JPEG, which
// goes through the same pipeline as PNG.
func captureScaledJPEG(t *testing.T, c *bridge.Client) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	small, err := c.Capture(ctx, bridge.CaptureRequest{Format: "jpeg", Width: 640, Height: 360})
	if err != nil {
		t.Fatalf("scaled capture: %v", err)
	}
	if small.Width != 640 || small.Height != 360 || len(small.Data) < 2 || small.Data[0] != 0xff || small.Data[1] != 0xd8 {
		t.Fatalf("scaled capture is %dx%d, want a 640x360 JPEG", small.Width, small.Height)
	}
}

// keepPNG writes img where it outlives the test, for a failure message.
func keepPNG(t *testing.T, img *image.RGBA) string {
	t.Helper()
	f, err := os.CreateTemp("", "deskhand-mutter-*.png")
	if err != nil {
		return "(not kept: " + err.Error() + ")"
	}
	defer f.Close()
	if err := png.Encode(f, img); err != nil {
		return "(not kept: " + err.Error() + ")"
	}
	return f.Name()
}

// colorBox is the bounding box of the pixels of colour c (exact match).
func colorBox(img *image.RGBA, c [3]uint8) (image.Rectangle, int) {
	box := image.Rectangle{}
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			i := img.PixOffset(x, y)
			if img.Pix[i] == c[0] && img.Pix[i+1] == c[1] && img.Pix[i+2] == c[2] {
				n++
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return box, n
}

// wlDisplays is a Wayland helper's answer to displays.
type wlDisplays struct {
	Displays []struct {
		Name     string  `json:"name"`
		Primary  bool    `json:"primary"`
		Scale    float64 `json:"scale"`
		Physical struct{ Width, Height int }
		Logical  struct{ Width, Height int }
	} `json:"displays"`
}
