package supervisor_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestBenchWayland measures the helper's Wayland backend on headless sway
// (through the helper protocol: the supervisor does not drive Wayland yet)
// beside the shell tools a Wayland computer-use server would run for the
// same jobs: grim piped to convert per screenshot, one wtype process per
// typed string. Only under `make bench` (DESKHAND_BENCH=1); it prints
// `BENCH <name> <value> <unit>` medians and asserts no timings.
func TestBenchWayland(t *testing.T) {
	if os.Getenv("DESKHAND_BENCH") == "" {
		t.Skip("benchmarks run under `make bench` (DESKHAND_BENCH=1)")
	}
	requireWaylandTools(t, "foot", "grim", "convert", "wtype")
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{Width: 1920, Height: 1080})
	w.StartApp(t, "foot", "sh", "-c", "stty -echo; exec cat > /dev/null")
	w.WaitView(t, "foot")
	c := wlHelper(t, w)
	timeIt := func(n int, fn func(i int)) time.Duration {
		samples := make([]time.Duration, n)
		for i := range n {
			start := time.Now()
			fn(i)
			samples[i] = time.Since(start)
		}
		return median(samples)
	}
	raw := &json.RawMessage{}
	report("wayland_screenshot_1920x1080_jpeg_ms", ms(timeIt(20, func(int) {
		wlCall(t, c, "capture", bridge.CaptureRequest{Format: "jpeg"}, raw)
	})), "ms")
	report("wayland_screenshot_1456x819_jpeg_ms", ms(timeIt(20, func(int) {
		wlCall(t, c, "capture", bridge.CaptureRequest{Format: "jpeg", Width: 1456, Height: 819}, raw)
	})), "ms")
	report("wayland_grim_convert_jpeg_ms", ms(timeIt(10, func(int) {
		cmd := exec.Command("sh", "-c", "grim -t ppm - | convert ppm:- jpeg:- > /dev/null")
		cmd.Env = w.Env()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("grim | convert: %v: %s", err, out)
		}
	})), "ms")
	report("wayland_mouse_move_ms", ms(timeIt(50, func(i int) {
		wlCall(t, c, "pointer_move", map[string]any{"x": 100 + i*7, "y": 100 + i*5}, raw)
	})), "ms")
	report("wayland_click_ms", ms(timeIt(50, func(int) {
		wlCall(t, c, "pointer_button", map[string]any{"action": "click"}, raw)
	})), "ms")
	const text = "The quick brown fox 42"
	report("wayland_type_22_chars_ms", ms(timeIt(20, func(int) {
		wlCall(t, c, "key_type", map[string]any{"text": text}, raw)
	})), "ms")
	report("wayland_wtype_22_chars_ms", ms(timeIt(20, func(int) {
		if out, err := w.Command("wtype", text).CombinedOutput(); err != nil {
			t.Fatalf("wtype: %v: %s", err, out)
		}
	})), "ms")
}
