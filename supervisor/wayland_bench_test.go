//go:build unix

package supervisor_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestBenchWayland measures the helper's Wayland backend on headless sway
// through the helper protocol (TestBenchWaylandMCP measures serve) beside the shell tools a Wayland computer-use server would run for the
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

// TestBenchWaylandMCP measures `deskhand serve` on headless sway through a
// real MCP client over stdio, with the same jobs and sizes as TestBenchMCP
// on X11, beside the shell tools a Wayland computer-use server would run:
// grim piped to convert per screenshot, one wtype process per typed
// string, and for the pointer one swaymsg seat cursor command per action:
// wtype cannot move the pointer, and ydotool needs /dev/uinput, which these
// machines lack (a NOTE line says so). Only under `make bench`; it asserts
// no timings.
func TestBenchWaylandMCP(t *testing.T) {
	if os.Getenv("DESKHAND_BENCH") == "" {
		t.Skip("benchmarks run under `make bench` (DESKHAND_BENCH=1)")
	}
	requireWaylandTools(t, "foot", "grim", "convert", "wtype")
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{Width: 1920, Height: 1080})
	w.StartApp(t, "foot", "sh", "-c", "stty -echo; exec cat > /dev/null")
	sink := w.WaitView(t, "foot")
	e := wlServe(t, w, t.TempDir(), "--log-level", "warn", "--allow", "foot=full")
	e.access([]string{"foot"})
	call := e.benchCall
	shell := func(name string, args ...string) {
		if out, err := w.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v: %s", name, args, err, out)
		}
	}
	pair := func(name string, mcpTime, shellTime time.Duration) {
		report("wayland_mcp_"+name+"_ms", ms(mcpTime), "ms")
		report("wayland_shell_"+name+"_ms", ms(shellTime), "ms")
		report("wayland_shell_over_mcp_"+name, float64(shellTime)/float64(mcpTime), "x")
	}
	for range 5 {
		call("screenshot", nil)
	}
	e.screenshot("screenshot", nil) // the geometry e.at scales by
	mcpShot := timeIt(50, func(int) { call("screenshot", nil) })
	shellShot := timeIt(8, func(int) {
		shell("sh", "-c", "grim -t ppm - | convert ppm:- -resize 1456x819 -quality 80 jpeg:- > /dev/null")
	})
	pair("screenshot_1080p", mcpShot, shellShot)

	// The pointer stays on the terminal, the one approved app.
	spot := func(i int) []int {
		return e.at(sink.Rect.X+100+i%200, sink.Rect.Y+100+i%50)
	}
	// sway's own IPC is the one shell route to the pointer here: one
	// swaymsg process per action, as xdotool is on X11.
	at := func(i int) (string, string) {
		return strconv.Itoa(sink.Rect.X + 100 + i%200), strconv.Itoa(sink.Rect.Y + 100 + i%50)
	}
	mcpMove := timeIt(300, func(i int) { call("mouse_move", map[string]any{"coordinate": spot(i)}) })
	shellMove := timeIt(30, func(i int) {
		x, y := at(i)
		shell("swaymsg", "seat - cursor set "+x+" "+y)
	})
	pair("mouse_move", mcpMove, shellMove)
	mcpClick := timeIt(100, func(i int) { call("left_click", map[string]any{"coordinate": spot(i)}) })
	shellClick := timeIt(30, func(i int) {
		x, y := at(i)
		shell("swaymsg", "seat - cursor set "+x+" "+y+", seat - cursor press button1, seat - cursor release button1")
	})
	pair("left_click", mcpClick, shellClick)
	fmt.Println("NOTE wayland pointer figures compare with swaymsg's seat cursor commands: wtype cannot move or click the pointer, and ydotool needs /dev/uinput, which this machine does not offer")

	text := strings.Repeat("abcdefghij", 10)
	mcpType := timeIt(10, func(int) { call("type", map[string]any{"text": text}) })
	shellType := timeIt(3, func(int) { shell("wtype", text) })
	pair("type_100_ascii", mcpType, shellType)
}
