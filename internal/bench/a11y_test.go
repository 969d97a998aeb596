//go:build unix

package bench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

const a11yRuns = 15 // the median of these is reported

// TestBenchA11yTree times the helper's a11y_tree of gtk3-widget-factory and
// gtk4-widget-factory's windows (the tree read alone: the MCP state adds a
// screenshot on top), as `helper_a11y_tree_ms_gtk3` / `_gtk4`, with their
// node counts.
func TestBenchA11yTree(t *testing.T) {
	if os.Getenv("DESKHAND_BENCH") == "" {
		t.Skip("benchmarks run under `make bench` (DESKHAND_BENCH=1)")
	}
	d := desktoptest.Start(t, desktoptest.Options{Width: 1920, Height: 1080, Depth: 24})
	d.StartAccessibility(t)
	client := bridge.New(bridge.Options{Path: desktoptest.HelperPath(t), Env: d.Env(), CallTimeout: time.Minute})
	defer client.Close()
	ctx := context.Background()
	for _, app := range []struct {
		name string
		app  desktoptest.App
	}{{"gtk3", desktoptest.GTK3WidgetFactory()}, {"gtk4", desktoptest.GTK4WidgetFactory()}} {
		w := d.StartApp(t, app.app)
		var tree struct {
			Nodes []struct {
				Role string `json:"role"`
			} `json:"nodes"`
		}
		params := map[string]any{"pid": w.PID, "deadline_ms": 30000}
		// Warm up until the app has registered and filled its tree.
		deadline := time.Now().Add(60 * time.Second)
		for len(tree.Nodes) < 50 {
			_ = client.Call(ctx, "a11y_tree", params, &tree)
			if time.Now().After(deadline) {
				t.Fatalf("%s: no tree within 60s", app.name)
			}
			time.Sleep(200 * time.Millisecond)
		}
		samples := make([]time.Duration, 0, a11yRuns)
		for i := 0; i < a11yRuns; i++ {
			start := time.Now()
			if err := client.Call(ctx, "a11y_tree", params, &tree); err != nil {
				t.Fatalf("%s: a11y_tree: %v", app.name, err)
			}
			samples = append(samples, time.Since(start))
		}
		report("helper_a11y_tree_ms_"+app.name, ms(median(samples)), "ms")
		report("helper_a11y_tree_nodes_"+app.name, float64(len(tree.Nodes)), "nodes")
	}
}
