//go:build unix

package supervisor_test

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestBenchElements measures the element tools through a real MCP
// client: the whole state (tree and window screenshot, no diff) of
// gtk3-widget-factory and gtk4-widget-factory, and a click by element id
// that the accessibility API runs (a check box's click action). It runs
// only under `make bench` (DESKHAND_BENCH=1), prints `BENCH <name> <value>
// <unit>` lines (medians) and asserts no timings.
func TestBenchElements(t *testing.T) {
	if os.Getenv("DESKHAND_BENCH") == "" {
		t.Skip("benchmarks run under `make bench` (DESKHAND_BENCH=1)")
	}
	desktoptest.Require(t, "gtk3-widget-factory", "gtk4-widget-factory")
	d := a11yDesktop(t)
	for _, app := range []struct {
		name string
		app  desktoptest.App
	}{{"gtk3", desktoptest.GTK3WidgetFactory()}, {"gtk4", desktoptest.GTK4WidgetFactory()}} {
		w := d.StartApp(t, app.app)
		w = d.WindowInfo(t, w.ID)
		d.Focus(t, w.ID)
		// Without the effect's settling (about 600 ms a click, measured
		// apart by TestBenchEffect), which would hide these figures.
		e := gatedServer(t, d, nil, "--allow", app.app.Name+"=full", "--log-level", "warn", "--no-effect")
		e.access([]string{app.app.Name})
		state := e.waitState(w.PID, `check box`)
		var nodes float64
		var reads []time.Duration
		samples := make([]time.Duration, 15)
		for i := range samples {
			start := time.Now()
			res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "get_app_state", Arguments: map[string]any{"pid": w.PID, "disableDiff": true}})
			samples[i] = time.Since(start)
			if err != nil || res.IsError {
				t.Fatalf("get_app_state: %v %s", err, resultText(res))
			}
			if n, ok := structuredNumber(res, "elements"); ok {
				nodes = n
			}
			if n, ok := structuredNumber(res, "elapsed_ms"); ok {
				reads = append(reads, time.Duration(n*float64(time.Millisecond)))
			}
		}
		report("get_app_state_ms_"+app.name, ms(median(samples)), "ms")
		report("get_app_state_nodes_"+app.name, nodes, "elements")
		if len(reads) > 0 {
			// The helper's own tree read, of the whole above.
			report("a11y_tree_read_ms_"+app.name, ms(median(reads)), "ms")
		}

		if app.name == "gtk3" {
			box := elementID(t, state, "check box", "")
			clicks := make([]time.Duration, 21)
			for i := range clicks {
				// Each click changes the box; a fresh state keeps its id good.
				e.ok("get_app_state", map[string]any{"pid": w.PID})
				start := time.Now()
				res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "click", Arguments: map[string]any{"pid": w.PID, "element_id": box}})
				clicks[i] = time.Since(start)
				if err != nil || res.IsError {
					t.Fatalf("click: %v %s", err, resultText(res))
				}
			}
			report("element_click_ms", ms(median(clicks)), "ms")
		}
		e.cs.Close()
	}
}

// structuredNumber reads a number from an image result's JSON block.
func structuredNumber(res *mcp.CallToolResult, key string) (float64, bool) {
	last, ok := res.Content[len(res.Content)-1].(*mcp.TextContent)
	if !ok {
		return 0, false
	}
	var data map[string]any
	if json.Unmarshal([]byte(last.Text), &data) != nil {
		return 0, false
	}
	v, ok := data[key].(float64)
	return v, ok
}
