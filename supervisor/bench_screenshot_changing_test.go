//go:build unix

package supervisor_test

import (
	"os"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestBenchScreenshotChanging measures MCP screenshots of a screen that
// changed since the previous one: a small window over the scene is filled
// with another colour before each screenshot, outside the timed part, so
// the helper cannot serve its last image again and every screenshot reads,
// scales and encodes. TestBenchMCP's mcp_screenshot_1080p_ms is the same
// call on an unchanged screen. A second figure changes the whole screen
// before each screenshot. Only under `make bench` (DESKHAND_BENCH=1).
func TestBenchScreenshotChanging(t *testing.T) {
	if os.Getenv("DESKHAND_BENCH") == "" {
		t.Skip("benchmarks run under `make bench` (DESKHAND_BENCH=1)")
	}
	d := newDesktop(t, desktoptest.Options{Width: 1920, Height: 1080, Depth: 24})
	putScene(t, d, 40, 60)
	change := d.ChangingWindow(t, 1200, 200, 240, 120)
	e := serve(t, d, "--log-level", "warn")
	report("mcp_screenshot_changed_1080p_ms", ms(screenshotsAfter(e, change)), "ms")

	// The whole screen changed before each screenshot: nothing of the
	// last image can be kept.
	changeAll := d.ChangingScreen(t, 1920, 1080)
	report("mcp_screenshot_full_change_1080p_ms", ms(screenshotsAfter(e, changeAll)), "ms")
}

// screenshotsAfter is the median time of a screenshot taken right after
// change(i), which runs outside the timing, after five to warm up the
// helper and its buffers.
func screenshotsAfter(e *e2e, change func(i int)) time.Duration {
	for i := range 5 {
		change(i)
		e.benchCall("screenshot", nil)
	}
	samples := make([]time.Duration, 50)
	for i := range samples {
		change(i)
		start := time.Now()
		e.benchCall("screenshot", nil)
		samples[i] = time.Since(start)
	}
	return median(samples)
}
