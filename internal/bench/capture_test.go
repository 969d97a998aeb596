//go:build unix

// Package bench measures deskhand against the tools a user would otherwise
// use. It runs only under `make bench` (DESKHAND_BENCH=1) and prints one
// `BENCH <name> <value> <unit>` line per figure; it asserts no timings,
// because these shared machines make timed assertions flaky.
package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

const (
	captureRuns = 60   // the median of these is reported
	rssRuns     = 1000 // captures before the resident-memory reading
	importRuns  = 12
	outW, outH  = 1456, 819
	jpegQuality = 80
)

func TestBenchCapture(t *testing.T) {
	if os.Getenv("DESKHAND_BENCH") == "" {
		t.Skip("benchmarks run under `make bench` (DESKHAND_BENCH=1)")
	}
	desktoptest.Require(t, "import", "convert")
	d := desktoptest.Start(t, desktoptest.Options{Width: 1920, Height: 1080, Depth: 24})
	paintVariedScreen(t, d)

	client := bridge.New(bridge.Options{Path: desktoptest.HelperPath(t), Env: d.Env()})
	defer client.Close()
	ctx := context.Background()
	req := bridge.CaptureRequest{Width: outW, Height: outH, Format: "jpeg", Quality: jpegQuality}

	// Warm up: start the helper, attach SHM, fault in buffers.
	for i := 0; i < 5; i++ {
		if _, err := client.Capture(ctx, req); err != nil {
			t.Fatalf("Capture: %v", err)
		}
	}
	// A small window changes colour before each timed capture (outside
	// the timing), so every capture reads, scales and encodes: the helper
	// serves an unchanged screen's last image again, which the _unchanged
	// figure measures.
	change := d.ChangingWindow(t, 1200, 200, 240, 120)
	timeCaptures := func(req bridge.CaptureRequest, runs int, changed bool) (samples []time.Duration, size int) {
		for i := 0; i < runs; i++ {
			if changed {
				change(i)
			}
			start := time.Now()
			shot, err := client.Capture(ctx, req)
			if err != nil {
				t.Fatalf("Capture %s: %v", req.Format, err)
			}
			samples = append(samples, time.Since(start))
			size = len(shot.Data)
			if shot.Width != outW || shot.Height != outH {
				t.Fatalf("Capture size = %dx%d, want %dx%d", shot.Width, shot.Height, outW, outH)
			}
			if shot.Reused == changed {
				t.Fatalf("capture %d of a screen that changed=%v came back reused=%v", i, changed, shot.Reused)
			}
		}
		return samples, size
	}
	samples, size := timeCaptures(req, captureRuns, true)
	helperMs := ms(median(samples))
	report("helper_capture_1080p_jpeg_ms", helperMs, "ms")
	report("helper_capture_1080p_jpeg_p90_ms", ms(percentile(samples, 0.9)), "ms")
	report("helper_capture_1080p_jpeg_bytes", float64(size), "bytes")
	unchanged, _ := timeCaptures(req, captureRuns, false)
	report("helper_capture_1080p_jpeg_unchanged_ms", ms(median(unchanged)), "ms")

	pngReq := req
	pngReq.Format = "png"
	pngSamples, _ := timeCaptures(pngReq, 20, true)
	report("helper_capture_1080p_png_ms", ms(median(pngSamples)), "ms")

	// The alternative: ImageMagick's import of the root window, piped into
	// convert for the resize and JPEG encoding, as shell-based servers do.
	out := filepath.Join(t.TempDir(), "shot.jpg")
	pipeline := fmt.Sprintf("import -silent -window root miff:- | convert miff:- -resize %dx%d -quality %d jpg:%s", outW, outH, jpegQuality, out)
	importSamples := make([]time.Duration, 0, importRuns)
	for i := 0; i < importRuns; i++ {
		cmd := d.Command("sh", "-c", pipeline)
		start := time.Now()
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("import pipeline: %v\n%s", err, b)
		}
		importSamples = append(importSamples, time.Since(start))
	}
	importMs := ms(median(importSamples))
	report("import_pipeline_1080p_ms", importMs, "ms")
	report("import_over_helper_ratio", importMs/helperMs, "x")

	rssBefore := rssKiB(t, client.PID())
	for i := 0; i < rssRuns; i++ {
		change(i)
		if _, err := client.Capture(ctx, req); err != nil {
			t.Fatalf("Capture %d: %v", i, err)
		}
	}
	rssAfter := rssKiB(t, client.PID())
	report("helper_rss_after_warmup_kib", float64(rssBefore), "KiB")
	report("helper_rss_after_1000_captures_kib", float64(rssAfter), "KiB")
	report("helper_rss_growth_kib", float64(rssAfter-rssBefore), "KiB")

	// Last, as it covers the scene: a screen that changed everywhere
	// before each capture, so nothing of the last image can be kept.
	change = d.ChangingScreen(t, 1920, 1080)
	for i := 0; i < 5; i++ {
		change(i)
		if _, err := client.Capture(ctx, req); err != nil {
			t.Fatalf("Capture: %v", err)
		}
	}
	full, _ := timeCaptures(req, captureRuns, true)
	report("helper_capture_1080p_jpeg_full_change_ms", ms(median(full)), "ms")
}

// paintVariedScreen covers the screen with a seeded plasma image (shown by
// xwud in a full-screen window) and opens two terminals full of text and a
// GTK dialog, so JPEG has real work to do.
func paintVariedScreen(t *testing.T, d *desktoptest.Desktop) {
	t.Helper()
	bg := filepath.Join(t.TempDir(), "bg.xwd")
	if b, err := exec.Command("convert", "-seed", "7", "-size", "1920x1080", "plasma:fractal", "xwd:"+bg).CombinedOutput(); err != nil {
		t.Fatalf("making background: %v\n%s", err, b)
	}
	d.StartApp(t, desktoptest.App{Name: "xwud", Class: "Xwud", Args: []string{"-noclick", "-in", bg, "-geometry", "1920x1080+0+0"}})
	d.StartXterm(t, desktoptest.XtermOptions{Title: "bench-a", Geometry: "100x40+40+40", Background: "#202840"})
	d.StartXterm(t, desktoptest.XtermOptions{Title: "bench-b", Geometry: "90x30+900+500", Background: "#f4f0e0"})
	d.StartGTK(t, "bench-gtk")
	time.Sleep(300 * time.Millisecond)
}

func report(name string, value float64, unit string) {
	fmt.Printf("BENCH %s %s %s\n", name, strconv.FormatFloat(value, 'f', 2, 64), unit)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(s []time.Duration) time.Duration { return percentile(s, 0.5) }

func percentile(s []time.Duration, p float64) time.Duration {
	c := append([]time.Duration(nil), s...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return c[int(p*float64(len(c)-1)+0.5)]
}

func rssKiB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading helper status: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
