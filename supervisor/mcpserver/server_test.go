package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// wantTools is the coordinate family's tools as the registry declares
// them; testdata/tools.json holds their surface.
func wantTools() (names []string) {
	for _, t := range Tools(ProfileDefault, ToolsCoordinates) {
		if !t.Teaching && !t.Consent {
			names = append(names, t.Name)
		}
	}
	return names
}

type harness struct {
	t      *testing.T
	fake   *fakeExecutor
	server *Server
	cs     *mcp.ClientSession
	done   chan error
}

func start(t *testing.T, fake *fakeExecutor, opts Options) *harness {
	t.Helper()
	opts.Executor = fake
	s, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	st, ct := mcp.NewInMemoryTransports()
	h := &harness{t: t, fake: fake, server: s, done: make(chan error, 1)}
	go func() { h.done <- s.Run(ctx, st) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		cancel()
		t.Fatalf("connecting: %v", err)
	}
	h.cs = cs
	t.Cleanup(func() {
		cs.Close()
		cancel()
		select {
		case <-h.done:
		case <-time.After(5 * time.Second):
			t.Errorf("server did not stop")
		}
	})
	return h
}

func (h *harness) call(name string, args any) *mcp.CallToolResult {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		h.t.Fatalf("CallTool(%s, %v): protocol error %v", name, args, err)
	}
	return res
}

// ok calls a tool and fails the test if the result is an error.
func (h *harness) ok(name string, args any) *mcp.CallToolResult {
	h.t.Helper()
	res := h.call(name, args)
	if res.IsError {
		h.t.Fatalf("%s(%v) is an error: %s", name, args, text(res))
	}
	return res
}

// bad calls a tool and checks it is an error mentioning each of want.
func (h *harness) bad(name string, args any, want ...string) string {
	h.t.Helper()
	res := h.call(name, args)
	msg := text(res)
	if !res.IsError {
		h.t.Fatalf("%s(%v) = %q, want an error", name, args, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			h.t.Errorf("%s(%v) error = %q, want it to contain %q", name, args, msg, w)
		}
	}
	return msg
}

func text(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func structured(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if res.StructuredContent != nil {
		m, ok := res.StructuredContent.(map[string]any)
		if !ok {
			t.Fatalf("structured content is %T, want an object", res.StructuredContent)
		}
		return m
	}
	// Image results carry the data as their last text block.
	last, ok := res.Content[len(res.Content)-1].(*mcp.TextContent)
	if !ok {
		t.Fatalf("result has neither structured content nor a JSON text block: %v", res.Content)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(last.Text), &m); err != nil {
		t.Fatalf("last text block is not JSON: %v: %q", err, last.Text)
	}
	return m
}

func imageOf(t *testing.T, res *mcp.CallToolResult) (*mcp.ImageContent, image.Image) {
	t.Helper()
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			img, _, err := image.Decode(bytes.NewReader(ic.Data))
			if err != nil {
				t.Fatalf("decoding the %s image: %v", ic.MIMEType, err)
			}
			return ic, img
		}
	}
	t.Fatalf("result has no image: %s", text(res))
	return nil, nil
}

func TestToolList(t *testing.T) {
	h := start(t, newFake(), Options{Tools: ToolsCoordinates})
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		byName[tool.Name] = tool
		if tool.Description == "" || tool.Annotations == nil || tool.Annotations.Title == "" {
			t.Errorf("tool %s lacks a description or annotations", tool.Name)
		}
	}
	// Clients list tools sorted by name.
	if diff := cmp.Diff(wantTools(), names, cmpopts.SortSlices(func(a, b string) bool { return a < b })); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	for _, name := range []string{"screenshot", "zoom", "cursor_position", "read_clipboard", "wait", "switch_display"} {
		if !byName[name].Annotations.ReadOnlyHint {
			t.Errorf("%s: readOnlyHint = false, want true", name)
		}
	}
	for _, name := range []string{"left_click", "type", "key", "computer_batch", "left_click_drag", "write_clipboard"} {
		a := byName[name].Annotations
		if a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
			t.Errorf("%s: annotations %+v, want destructive and not read-only", name, a)
		}
	}
	if got := h.cs.InitializeResult().ServerInfo.Name; got != ServerName {
		t.Errorf("server name = %q, want %q", got, ServerName)
	}
}

func TestScreenshotScalesAndRecordsGeometry(t *testing.T) {
	fake := newFake(fullHD("DP-1", 0, true), display("HDMI-1", 1920, 0, 1280, 1024, false))
	h := start(t, fake, Options{})
	res := h.ok("screenshot", nil)
	ic, img := imageOf(t, res)
	if ic.MIMEType != "image/jpeg" {
		t.Errorf("MIME type = %q, want image/jpeg", ic.MIMEType)
	}
	if b := img.Bounds(); b.Dx() != 1456 || b.Dy() != 819 {
		t.Errorf("image is %dx%d, want 1456x819", b.Dx(), b.Dy())
	}
	if res.StructuredContent != nil {
		t.Errorf("an image result carries structured content; some clients would drop the image")
	}
	msg := text(res)
	for _, want := range []string{`"DP-1"`, "primary", "1456x819", `Other displays: "HDMI-1"`, "switch_display"} {
		if !strings.Contains(msg, want) {
			t.Errorf("screenshot text %q lacks %q", msg, want)
		}
	}
	data := structured(t, res)
	if d := data["display"].(map[string]any); d["name"] != "DP-1" {
		t.Errorf("display = %v, want DP-1", d)
	}
	if others := data["other_displays"].([]any); len(others) != 1 || others[0].(map[string]any)["name"] != "HDMI-1" {
		t.Errorf("other_displays = %v, want [HDMI-1]", others)
	}
	if got := fake.captures[0]; got.Width != 1456 || got.Height != 819 || got.Quality != DefaultJPEGQuality || *got.Display != fnv32("DP-1") {
		t.Errorf("capture request = %+v, want 1456x819 of DP-1 at quality 80", got)
	}

	// Coordinates now convert through that screenshot.
	h.ok("left_click", map[string]any{"coordinate": []float64{728, 409}})
	h.ok("left_click", map[string]any{"coordinate": []float64{1455, 818}, "text": "shift"})
	want := []string{`Click 960,540 left x1 ""`, `Click 1919,1079 left x1 "shift"`}
	if diff := cmp.Diff(want, fake.actions()); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
}

func TestScreenshotOptions(t *testing.T) {
	fake := newFake(display("wide", 0, 0, 5120, 1440, true))
	h := start(t, fake, Options{Format: FormatPNG, Limits: geometry.Limits{MaxLongEdge: 1000, MaxTokens: 600}})
	ic, img := imageOf(t, h.ok("screenshot", nil))
	b := img.Bounds()
	if ic.MIMEType != "image/png" {
		t.Errorf("MIME type = %q, want image/png", ic.MIMEType)
	}
	if max(b.Dx(), b.Dy()) > 1000 || geometry.Tokens(b.Dx(), b.Dy(), 28) > 600 {
		t.Errorf("image %dx%d breaks the limits (long edge 1000, 600 tokens)", b.Dx(), b.Dy())
	}
	if fake.captures[0].Quality != 0 {
		t.Errorf("PNG capture asked for JPEG quality %d", fake.captures[0].Quality)
	}
	// A screen that fits is captured at its native size.
	small := newFake(display("small", 0, 0, 800, 600, true))
	h2 := start(t, small, Options{})
	_, img = imageOf(t, h2.ok("screenshot", nil))
	if b := img.Bounds(); b.Dx() != 800 || b.Dy() != 600 || small.captures[0].Width != 0 {
		t.Errorf("800x600 screen: image %v, request %+v; want native size, no scaling", b, small.captures[0])
	}
}

func TestOptionsValidation(t *testing.T) {
	bad := []Options{
		{Executor: newFake(), Mode: "percent"},
		{Executor: newFake(), Format: "gif"},
		{Executor: newFake(), JPEGQuality: 101},
		{Executor: newFake(), Limits: geometry.Limits{MaxTokens: -1}},
		{},
	}
	for _, o := range bad {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) = nil error, want one", o)
		}
	}
}

func TestPixelsNeedAScreenshot(t *testing.T) {
	fake := newFake()
	h := start(t, fake, Options{})
	h.bad("left_click", map[string]any{"coordinate": []int{10, 10}}, "no screenshot yet", "call screenshot first")
	// Without a coordinate, a click needs no screenshot.
	fake.move(geometry.Point{X: 5, Y: 6})
	h.ok("left_click", nil)
	if got := fake.actions(); !slices.Equal(got, []string{`Click 5,6 left x1 ""`}) {
		t.Errorf("actions = %q, want one click at the pointer", got)
	}
}

func TestNormalizedMode(t *testing.T) {
	fake := newFake(fullHD("left", 0, true), display("right", 1920, 0, 1280, 1024, false))
	h := start(t, fake, Options{Mode: geometry.ModeNormalized})
	// No screenshot needed: percentages of the selected display.
	h.ok("mouse_move", map[string]any{"coordinate": []float64{50, 50}})
	h.ok("switch_display", map[string]any{"display": "right"})
	h.ok("left_click", map[string]any{"coordinate": []float64{50, 50}})
	h.ok("left_click", map[string]any{"coordinate": []float64{100, 100}})
	want := []string{"MoveMouse 960,540", `Click 2560,512 left x1 ""`, `Click 3199,1023 left x1 ""`}
	if diff := cmp.Diff(want, fake.actions()); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	h.bad("left_click", map[string]any{"coordinate": []float64{101, 5}}, "outside 0–100")
	res, _ := h.cs.ListTools(context.Background(), nil)
	for _, tool := range res.Tools {
		if tool.Name == "left_click" && !strings.Contains(tool.Description, "percentages (0–100)") {
			t.Errorf("left_click description in normalized mode = %q, want it to speak of percentages", tool.Description)
		}
	}
}

func TestSwitchDisplay(t *testing.T) {
	fake := newFake(fullHD("DP-1", 0, true), display("HDMI-1", 1920, 0, 1280, 1024, false))
	h := start(t, fake, Options{})
	res := h.ok("switch_display", map[string]any{"display": "HDMI-1"})
	_, img := imageOf(t, res)
	// 1280x1024 is 1702 tokens: scaled to fit 1568.
	if b := img.Bounds(); b.Dx() != 1225 || b.Dy() != 980 {
		t.Errorf("HDMI-1 screenshot is %v, want 1225x980", b)
	}
	if !strings.Contains(text(res), `Switched to display "HDMI-1"`) || !strings.Contains(text(res), `Other displays: "DP-1"`) {
		t.Errorf("switch_display text = %q", text(res))
	}
	h.ok("mouse_move", map[string]any{"coordinate": []int{0, 0}})
	// Later screenshots show the selected display; ids work as well as names.
	h.ok("screenshot", nil)
	h.ok("switch_display", map[string]any{"display": fnv32("DP-1")})
	h.ok("mouse_move", map[string]any{"coordinate": []int{0, 0}})
	h.ok("switch_display", map[string]any{"display": "hdmi-1"})
	var ids []uint32
	for _, c := range fake.captures {
		ids = append(ids, *c.Display)
	}
	if want := []uint32{fnv32("HDMI-1"), fnv32("HDMI-1"), fnv32("DP-1"), fnv32("HDMI-1")}; !slices.Equal(ids, want) {
		t.Errorf("captured displays %v, want %v", ids, want)
	}
	if want := []string{"MoveMouse 1920,0", "MoveMouse 0,0"}; !slices.Equal(fake.actions(), want) {
		t.Errorf("actions = %q, want %q", fake.actions(), want)
	}
	h.bad("switch_display", map[string]any{"display": "VGA-9"}, `no display "VGA-9"`, `"DP-1"`, `"HDMI-1"`)
	h.bad("switch_display", map[string]any{}, `needs "display"`)
}

func TestZoom(t *testing.T) {
	fake := newFake()
	h := start(t, fake, Options{})
	h.bad("zoom", map[string]any{"region": []int{0, 0, 10, 10}}, "no screenshot yet")
	h.ok("screenshot", nil)
	res := h.ok("zoom", map[string]any{"region": []float64{728, 409, 1456, 819}})
	_, img := imageOf(t, res)
	req := fake.captures[1]
	// Image row 409 starts at screen row 409*1080/819 = 539.3.
	if req.Rect == nil || *req.Rect != (bridge.Rect{X: 960, Y: 539, Width: 960, Height: 541}) {
		t.Errorf("zoom capture rect = %+v, want 960x541+960+539", req.Rect)
	}
	if b := img.Bounds(); b.Dx() != 960 || b.Dy() != 541 {
		t.Errorf("zoom image %v, want the region at native 960x541", b)
	}
	// Zoom does not change what coordinates refer to.
	h.ok("mouse_move", map[string]any{"coordinate": []int{728, 409}})
	if got := fake.actions(); !slices.Equal(got, []string{"MoveMouse 960,540"}) {
		t.Errorf("after zoom, mouse_move went to %q, want 960,540", got)
	}
	h.bad("zoom", map[string]any{"region": []int{10, 10, 5, 20}}, "is empty")
	h.bad("zoom", map[string]any{"region": []int{0, 0, 2000, 10}}, "outside")
	h.bad("zoom", map[string]any{"region": []int{0, 0, 10}}, "[x0, y0, x1, y1]")
}

func TestCursorPosition(t *testing.T) {
	fake := newFake(fullHD("DP-1", 0, true), display("HDMI-1", 1920, 0, 1280, 1024, false))
	h := start(t, fake, Options{})
	fake.move(geometry.Point{X: 960, Y: 540})
	res := h.ok("cursor_position", nil)
	if !strings.Contains(text(res), "take a screenshot") {
		t.Errorf("cursor_position before a screenshot = %q", text(res))
	}
	h.ok("screenshot", nil)
	res = h.ok("cursor_position", nil)
	if got := structured(t, res)["coordinate"]; !cmp.Equal(got, []any{728.0, 409.0}) {
		t.Errorf("coordinate = %v, want [728 409]", got)
	}
	fake.move(geometry.Point{X: 2000, Y: 10})
	res = h.ok("cursor_position", nil)
	if msg := text(res); !strings.Contains(msg, `display "HDMI-1"`) || !strings.Contains(msg, "switch_display") {
		t.Errorf("pointer on the other display: %q", msg)
	}
}

func TestPointerTools(t *testing.T) {
	fake := newFake(display("s", 0, 0, 1000, 800, true))
	h := start(t, fake, Options{})
	h.ok("screenshot", nil)
	h.ok("double_click", map[string]any{"coordinate": []int{1, 2}})
	h.ok("triple_click", map[string]any{"coordinate": "[3, 4]"})
	h.ok("right_click", map[string]any{"coordinate": []string{"5", "6"}})
	h.ok("middle_click", map[string]any{"coordinate": []int{7, 8}, "text": "ctrl+shift"})
	h.ok("left_click_drag", map[string]any{"start_coordinate": []int{10, 10}, "coordinate": []int{20, 30}})
	h.ok("left_click_drag", map[string]any{"coordinate": []int{40, 50}})
	h.ok("left_mouse_down", map[string]any{"coordinate": []int{60, 60}})
	h.ok("mouse_move", map[string]any{"coordinate": []int{70, 70}})
	h.ok("left_mouse_up", nil)
	h.ok("scroll", map[string]any{"coordinate": []int{100, 100}, "scroll_direction": "down", "scroll_amount": 5})
	h.ok("scroll", map[string]any{"scroll_direction": "UP"})
	want := []string{
		`Click 1,2 left x2 ""`,
		`Click 3,4 left x3 ""`,
		`Click 5,6 right x1 ""`,
		`Click 7,8 middle x1 "ctrl+shift"`,
		"Drag 10,10->20,30",
		"Drag 20,30->40,50",
		"MoveMouse 60,60", "MouseDown left",
		"MoveMouse 70,70",
		"MouseUp left",
		"Scroll 100,100 down 5",
		"Scroll 100,100 up 3",
	}
	if diff := cmp.Diff(want, fake.actions()); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
}

func TestKeyboardAndOtherTools(t *testing.T) {
	fake := newFake()
	h := start(t, fake, Options{})
	h.ok("type", map[string]any{"text": "Grüße, 日本 🙂\n\tend"})
	h.ok("key", map[string]any{"text": "ctrl+a ctrl+c"})
	h.ok("hold_key", map[string]any{"text": "shift", "duration": 0.25})
	start := time.Now()
	h.ok("wait", map[string]any{"duration": 0.2})
	if d := time.Since(start); d < 200*time.Millisecond {
		t.Errorf("wait 0.2 returned after %v", d)
	}
	h.ok("write_clipboard", map[string]any{"text": "copied"})
	res := h.ok("read_clipboard", nil)
	if text(res) != "copied" || structured(t, res)["text"] != "copied" {
		t.Errorf("read_clipboard = %q / %v, want \"copied\"", text(res), res.StructuredContent)
	}
	res = h.ok("open_application", map[string]any{"app": "xterm"})
	if data := structured(t, res); data["desktop_id"] != "debian-xterm" || data["pid"] != 42.0 {
		t.Errorf("open_application data = %v", data)
	}
	h.bad("open_application", map[string]any{"app": "nosuchapp"}, "close matches: xterm")
	want := []string{
		`Type "Grüße, 日本 🙂\n\tend"`, "Key ctrl+a ctrl+c", "HoldKey shift 250ms",
		"WriteClipboard 6 bytes", "ReadClipboard ", "OpenApplication xterm", "OpenApplication nosuchapp",
	}
	if diff := cmp.Diff(want, fake.actions()); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
}

// TestBadInput: every malformed call is an error result that says what is
// wrong, runs nothing, releases what is held, and the server keeps serving.
func TestBadInput(t *testing.T) {
	fake := newFake()
	h := start(t, fake, Options{})
	h.ok("screenshot", nil)
	huge := strings.Repeat("x", 1<<20)
	cases := []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"left_click", map[string]any{"coordinate": []int{1456, 10}}, []string{"outside the 1456x819 screenshot", "x must be 0–1455"}},
		{"left_click", map[string]any{"coordinate": []int{-1, 10}}, []string{"outside"}},
		{"left_click", map[string]any{"coordinate": []any{"NaN", 10}}, []string{"not a finite number"}},
		{"left_click", map[string]any{"coordinate": []any{"Infinity", 10}}, []string{"not a finite number"}},
		{"left_click", map[string]any{"coordinate": []int{1, 2, 3}}, []string{"[x, y]"}},
		{"left_click", map[string]any{"coordinate": "here"}, []string{"[x, y]"}},
		{"left_click", map[string]any{"coordinate": []int{1, 2}, "text": "hyper+ctrl"}, []string{"modifier", "hyper"}},
		{"left_click", map[string]any{"coordinates": []int{1, 2}}, []string{`does not take "coordinates"`, `"coordinate"`}},
		{"mouse_move", map[string]any{}, []string{`needs "coordinate"`}},
		{"wait", map[string]any{"duration": -1}, []string{"duration -1 is out of range"}},
		{"wait", map[string]any{"duration": 1e9}, []string{"out of range"}},
		{"wait", map[string]any{"duration": "NaN"}, []string{"not a finite number"}},
		{"wait", map[string]any{"duration": "soon"}, []string{"must be a number"}},
		{"hold_key", map[string]any{"text": "shift", "duration": -0.5}, []string{"out of range"}},
		{"key", map[string]any{"text": "ctrl+nosuchkey"}, []string{`unknown key "nosuchkey"`}},
		{"key", map[string]any{"text": ""}, []string{"empty key combination"}},
		{"key", map[string]any{"text": huge}, []string{"over the limit"}},
		{"hold_key", map[string]any{"text": "Hyperdrive", "duration": 1}, []string{"unknown key"}},
		{"type", map[string]any{"text": huge}, []string{"over the limit"}},
		{"type", map[string]any{"text": "a\x07b"}, []string{"control character U+0007"}},
		{"type", map[string]any{"text": "a\uFFFDb"}, []string{"U+FFFD"}},
		{"type", map[string]any{"text": 5}, []string{"must be a string"}},
		{"type", map[string]any{}, []string{`needs "text"`}},
		{"write_clipboard", map[string]any{"text": huge}, []string{"over the limit"}},
		{"scroll", map[string]any{"scroll_direction": "sideways"}, []string{"not one of"}},
		{"scroll", map[string]any{"scroll_direction": "down", "scroll_amount": 2.5}, []string{"whole number"}},
		{"scroll", map[string]any{"scroll_direction": "down", "scroll_amount": 0}, []string{"out of range"}},
		{"switch_display", map[string]any{"display": "nope"}, []string{`no display "nope"`, `"screen"`}},
		{"switch_display", map[string]any{"display": huge}, []string{"bytes long"}},
		{"open_application", map[string]any{"app": " "}, []string{"empty"}},
		{"screenshot", map[string]any{"display": "x"}, []string{"accepts no arguments"}},
		{"computer_batch", map[string]any{"actions": []any{}}, []string{"empty"}},
		{"computer_batch", map[string]any{"actions": "click"}, []string{"must be a list"}},
	}
	for _, c := range cases {
		before := fake.releaseCount()
		h.bad(c.tool, c.args, c.want...)
		if fake.releaseCount() != before+1 {
			t.Errorf("%s(%.60v): held input was not released after the error", c.tool, c.args)
		}
	}
	if got := fake.actions(); len(got) != 0 {
		t.Errorf("bad calls reached the desktop: %q", got)
	}
	// Still serving.
	h.ok("left_click", map[string]any{"coordinate": []int{0, 0}})
}

func TestExecutorErrorsAreToolErrors(t *testing.T) {
	fake := newFake()
	h := start(t, fake, Options{})
	fake.fail("Capture", 0, &bridge.Error{Code: bridge.CodeCaptureFailed, Name: "capture_failed", Message: "the X server refused", Hint: "Try again."})
	h.bad("screenshot", nil, "the X server refused", "Try again.")
	fake.fail("Displays", 0, errors.New("helper gone"))
	h.bad("screenshot", nil, "helper gone")
}

func TestHeldButtonReleasedOnFailure(t *testing.T) {
	fake := newFake()
	h := start(t, fake, Options{})
	h.ok("screenshot", nil)
	h.ok("left_mouse_down", map[string]any{"coordinate": []int{10, 10}})
	if !fake.isHeld(ButtonLeft) {
		t.Fatal("left button not held after left_mouse_down")
	}
	fake.fail("MoveMouse", 0, errors.New("the X server went away"))
	h.bad("mouse_move", map[string]any{"coordinate": []int{20, 20}}, "the X server went away")
	if fake.isHeld(ButtonLeft) {
		t.Errorf("left button still held after a failed action")
	}
}

func TestHeldButtonReleasedOnDisconnect(t *testing.T) {
	fake := newFake()
	h := start(t, fake, Options{})
	h.ok("left_mouse_down", nil)
	if !fake.isHeld(ButtonLeft) {
		t.Fatal("left button not held after left_mouse_down")
	}
	h.cs.Close()
	deadline := time.Now().Add(5 * time.Second)
	for fake.isHeld(ButtonLeft) {
		if time.Now().After(deadline) {
			t.Fatal("left button still held 5 s after the client disconnected")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestBatch(t *testing.T) {
	fake := newFake()
	h := start(t, fake, Options{})
	h.ok("screenshot", nil)

	// An invalid third action: nothing runs.
	res := h.call("computer_batch", map[string]any{"actions": []any{
		map[string]any{"action": "left_click", "coordinate": []int{10, 10}},
		map[string]any{"action": "type", "text": "hi"},
		map[string]any{"action": "key", "text": "ctrl+nosuchkey"},
		map[string]any{"action": "key", "text": "Return"},
	}})
	if !res.IsError || !strings.Contains(text(res), "Nothing was run") || !strings.Contains(text(res), "action 3 (key)") {
		t.Errorf("invalid batch = %v %q", res.IsError, text(res))
	}
	data := structured(t, res)
	if len(data["completed"].([]any)) != 0 || data["failed"].(map[string]any)["index"] != 2.0 || len(data["remaining"].([]any)) != 3 {
		t.Errorf("invalid batch data = %v", data)
	}
	if got := fake.actions(); len(got) != 0 {
		t.Fatalf("an invalid batch ran %q", got)
	}

	// A failing third action: two run, the rest are reported.
	fake.fail("Key", 0, errors.New("keyboard unplugged"))
	res = h.call("computer_batch", map[string]any{"actions": []any{
		map[string]any{"action": "left_click", "coordinate": []int{10, 10}},
		map[string]any{"action": "type", "text": "hi"},
		map[string]any{"action": "key", "text": "Return"},
		map[string]any{"action": "mouse_move", "coordinate": []int{5, 5}},
		map[string]any{"action": "screenshot"},
	}})
	if !res.IsError {
		t.Fatalf("failing batch is not an error: %q", text(res))
	}
	data = structured(t, res)
	completed, remaining := data["completed"].([]any), data["remaining"].([]any)
	failed := data["failed"].(map[string]any)
	if len(completed) != 2 || failed["index"] != 2.0 || !strings.Contains(failed["error"].(string), "keyboard unplugged") ||
		len(remaining) != 2 || remaining[0].(map[string]any)["action"] != "mouse_move" {
		t.Errorf("failing batch data = %v", data)
	}
	if want := []string{`Click 13,13 left x1 ""`, `Type "hi"`, "Key Return"}; !slices.Equal(fake.actions(), want) {
		t.Errorf("failing batch ran %q, want %q", fake.actions(), want)
	}
	delete(fake.failOn, "Key")

	// A screenshot anywhere but last is invalid.
	h.bad("computer_batch", map[string]any{"actions": []any{
		map[string]any{"action": "screenshot"}, map[string]any{"action": "wait", "duration": 0},
	}}, "only be the last action")
	h.bad("computer_batch", map[string]any{"actions": []any{
		map[string]any{"action": "open_application", "app": "xterm"},
	}}, "cannot run in a batch")
	h.bad("computer_batch", map[string]any{"actions": []any{map[string]any{"coordinate": []int{1, 1}}}}, `no "action" field`)
	h.bad("computer_batch", map[string]any{"actions": []any{map[string]any{"action": "left_click", "coordinate": []int{1, 1}, "button": "left"}}}, `does not take "button"`)
}

// TestBatchCoordinatesUsePreBatchScreenshot: a batch ending with a
// screenshot of another size still converted its coordinates through the
// screenshot taken before it, and the next call uses the new one.
func TestBatchCoordinatesUsePreBatchScreenshot(t *testing.T) {
	fake := newFake(fullHD("DP-1", 0, true))
	h := start(t, fake, Options{Limits: geometry.Limits{MaxLongEdge: 960}})
	h.ok("screenshot", nil) // 960x540: factor 2
	fake.mu.Lock()
	fake.displays[0].Logical = bridge.Size{Width: 1280, Height: 720}
	fake.displays[0].Physical = bridge.Size{Width: 1280, Height: 720}
	fake.mu.Unlock()
	res := h.ok("computer_batch", map[string]any{"actions": []any{
		map[string]any{"action": "mouse_move", "coordinate": []int{100, 100}},
		map[string]any{"action": "left_click", "coordinate": []int{200, 200}},
		map[string]any{"action": "screenshot"},
	}})
	_, img := imageOf(t, res)
	if b := img.Bounds(); b.Dx() != 960 || b.Dy() != 540 {
		t.Errorf("final screenshot %v, want 960x540", b)
	}
	h.ok("mouse_move", map[string]any{"coordinate": []int{480, 270}})
	want := []string{"MoveMouse 201,201", `Click 401,401 left x1 ""`, "MoveMouse 640,360"}
	if diff := cmp.Diff(want, fake.actions()); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	if !strings.Contains(text(res), "Ran all 3 actions") {
		t.Errorf("batch text = %q", text(res))
	}
}

func TestGatesRunBeforeEveryAction(t *testing.T) {
	fake := newFake()
	var seen []string
	gate := GateFunc{GateName: "test gate", Func: func(ctx context.Context, a *Action) error {
		entry := a.Tool
		if a.Target != nil {
			entry += " " + strings.Trim(strings.ReplaceAll(strings.ReplaceAll(jsonString(*a.Target), `"x":`, ""), `"y":`, ""), "{}")
		}
		if a.Batch != nil {
			entry += " batch"
		}
		seen = append(seen, entry)
		if a.Keys == "alt+F4" {
			return errors.New("closing windows is not allowed; ask the user")
		}
		return nil
	}}
	h := start(t, fake, Options{Gates: []Gate{gate}})
	h.ok("screenshot", nil)
	fake.move(geometry.Point{X: 3, Y: 4})
	h.ok("left_click", nil)
	res := h.call("computer_batch", map[string]any{"actions": []any{
		map[string]any{"action": "mouse_move", "coordinate": []int{0, 0}},
		map[string]any{"action": "key", "text": "alt+F4"},
		map[string]any{"action": "type", "text": "x"},
	}})
	if !res.IsError || !strings.Contains(text(res), "test gate: closing windows is not allowed") {
		t.Errorf("gated batch: %v %q", res.IsError, text(res))
	}
	want := []string{"screenshot", "left_click 3,4", "mouse_move 0,0 batch", "key batch"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("gate saw (-want +got):\n%s", diff)
	}
	if want := []string{`Click 3,4 left x1 ""`, "MoveMouse 0,0"}; !slices.Equal(fake.actions(), want) {
		t.Errorf("actions %q, want %q", fake.actions(), want)
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestStatePersistsAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "screen-9.json")
	fake := newFake(fullHD("DP-1", 0, true), display("HDMI-1", 1920, 0, 1280, 1024, false))
	h := start(t, fake, Options{StatePath: path, Display: ":9"})
	h.ok("switch_display", map[string]any{"display": "HDMI-1"})
	h.server.Close() // flush the state file

	st, err := geometry.LoadState(path)
	if err != nil || st.LastShot == nil || st.LastShot.DisplayName != "HDMI-1" || st.SelectedDisplay == nil || *st.SelectedDisplay != fnv32("HDMI-1") {
		t.Fatalf("state file = %+v, %v; want HDMI-1's geometry and selection", st, err)
	}

	// A new server on the same display converts through the restored
	// screenshot without taking one.
	fake2 := newFake(fullHD("DP-1", 0, true), display("HDMI-1", 1920, 0, 1280, 1024, false))
	h2 := start(t, fake2, Options{StatePath: path, Display: ":9"})
	h2.ok("mouse_move", map[string]any{"coordinate": []int{10, 10}})
	h2.ok("screenshot", nil)
	if want := []string{"MoveMouse 1930,10"}; !slices.Equal(fake2.actions(), want) {
		t.Errorf("after restart: %q, want %q", fake2.actions(), want)
	}
	if got := *fake2.captures[0].Display; got != fnv32("HDMI-1") {
		t.Errorf("after restart the screenshot showed display %d, want the selected HDMI-1", got)
	}

	// A changed layout invalidates the restored geometry.
	fake3 := newFake(fullHD("DP-1", 0, true))
	h3 := start(t, fake3, Options{StatePath: path, Display: ":9"})
	h3.bad("mouse_move", map[string]any{"coordinate": []int{10, 10}}, "displays changed", "take a new screenshot")
	res := h3.ok("screenshot", nil)
	if !strings.Contains(text(res), "is gone; showing the primary") {
		t.Errorf("screenshot with the selected display gone: %q", text(res))
	}

	// Another X display's state is not restored.
	fake4 := newFake(fullHD("DP-1", 0, true), display("HDMI-1", 1920, 0, 1280, 1024, false))
	h4 := start(t, fake4, Options{StatePath: path, Display: ":3"})
	h4.bad("mouse_move", map[string]any{"coordinate": []int{10, 10}}, "no screenshot yet")
}

// TestStopDuringGateSaysWhy: when the safety layer ends an action's
// context while a gate is still checking (the user's Escape arriving as
// the gate lists windows), the refusal gives the reason, not the gate's
// bare "context canceled".
func TestStopDuringGateSaysWhy(t *testing.T) {
	fake := newFake()
	var stop context.CancelCauseFunc
	gate := GateFunc{GateName: "slow gate", Func: func(ctx context.Context, a *Action) error {
		if a.Tool == "screenshot" {
			return nil
		}
		stop(errors.New("the user pressed Escape"))
		<-ctx.Done()
		return fmt.Errorf("listing the windows: %w", ctx.Err())
	}}
	h := start(t, fake, Options{Gates: []Gate{gate}, ActionContext: func(ctx context.Context) (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancelCause(ctx)
		stop = cancel
		return ctx, func() { cancel(nil) }
	}})
	h.ok("screenshot", nil)
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"left_click", map[string]any{"coordinate": []int{1, 1}}},
		{"computer_batch", map[string]any{"actions": []any{map[string]any{"action": "mouse_move", "coordinate": []int{0, 0}}}}},
	} {
		res := h.call(call.tool, call.args)
		if !res.IsError || !strings.Contains(text(res), "pressed Escape") {
			t.Errorf("%s stopped during a gate: %v %q, want the Escape named", call.tool, res.IsError, text(res))
		}
	}
	if got := fake.actions(); len(got) != 0 {
		t.Errorf("actions ran after the stop: %q", got)
	}
}
