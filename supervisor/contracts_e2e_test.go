package supervisor_test

// End-to-end tests of the model-native contracts: every member tool of
// Anthropic's computer_toolset_20260801 called with the arguments the API
// documents, and the openai profile's computer tool running an OpenAI
// actions[] batch on real GTK dialogs, through the built binary on Xvfb
// and openbox with the go-sdk client. What the input did is checked
// independently: xdotool for the pointer, an xinput raw-event log for keys
// and buttons, what zenity and cat print.
//
//	go test ./supervisor -run Contracts -v

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// contractEvent is one raw XI2 event: a key or button going down or up.
type contractEvent struct {
	down   bool
	button bool
	detail int // keycode or button number
}

// contractInput logs every raw key and button event on the display, from
// any client, with xinput test-xi2.
type contractInput struct {
	path  string
	codes map[string]int // keysym name → keycode
}

func recordInput(t *testing.T, d *desktoptest.Desktop) *contractInput {
	t.Helper()
	desktoptest.Require(t, "xinput", "xmodmap", "stdbuf")
	r := &contractInput{path: filepath.Join(t.TempDir(), "xi2"), codes: map[string]int{}}
	for _, line := range strings.Split(d.Run(t, "xmodmap", "-pke"), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == "keycode" && f[2] == "=" {
			code, _ := strconv.Atoi(f[1])
			for _, sym := range f[3:] {
				if _, seen := r.codes[sym]; !seen {
					r.codes[sym] = code
				}
			}
		}
	}
	out, err := os.Create(r.path)
	if err != nil {
		t.Fatal(err)
	}
	cmd := d.Command("stdbuf", "-oL", "xinput", "test-xi2", "--root")
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		out.Close()
	})
	// xinput selects the events once it is up; an event of our own shows
	// when it is.
	waitFor(t, "xinput to log events", 10*time.Second, func() bool {
		d.Run(t, "xdotool", "mousemove_relative", "--", "1", "0")
		data, _ := os.ReadFile(r.path)
		return bytes.Contains(data, []byte("EVENT type"))
	})
	return r
}

func (r *contractInput) events() []contractEvent {
	data, _ := os.ReadFile(r.path)
	var evs []contractEvent
	var cur *contractEvent
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "EVENT type"):
			cur = nil
			for name, ev := range map[string]contractEvent{
				"(RawKeyPress)": {down: true}, "(RawKeyRelease)": {},
				"(RawButtonPress)": {down: true, button: true}, "(RawButtonRelease)": {button: true},
			} {
				if strings.HasSuffix(line, name) {
					ev := ev
					cur = &ev
				}
			}
		case cur != nil && strings.HasPrefix(line, "detail:"):
			cur.detail, _ = strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "detail:")))
			evs = append(evs, *cur)
			cur = nil
		}
	}
	return evs
}

// mark returns how many events are logged so far, to look only at those
// an action caused.
func (r *contractInput) mark() int { return len(r.events()) }

// since returns the events after mark, once the log holds want presses of
// button (or key) detail and as many releases, or the deadline passes.
func (r *contractInput) since(t *testing.T, mark int, button bool, detail, want int) []contractEvent {
	t.Helper()
	return r.until(mark, func(evs []contractEvent) bool {
		released := 0
		for _, e := range evs {
			if !e.down && e.button == button && e.detail == detail {
				released++
			}
		}
		return r.presses(evs, button, detail) >= want && released >= want
	})
}

// until returns the events after mark once done says they are complete,
// or when the deadline passes (the caller's checks then say what is
// missing).
func (r *contractInput) until(mark int, done func([]contractEvent) bool) []contractEvent {
	deadline := time.Now().Add(5 * time.Second)
	for {
		evs := r.events()[mark:]
		if done(evs) || time.Now().After(deadline) {
			return evs
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// released reports whether the last event of evs releases key code.
func released(evs []contractEvent, code int) bool {
	return len(evs) > 0 && !evs[len(evs)-1].button && !evs[len(evs)-1].down && evs[len(evs)-1].detail == code
}

func (r *contractInput) presses(evs []contractEvent, button bool, detail int) int {
	n := 0
	for _, e := range evs {
		if e.down && e.button == button && e.detail == detail {
			n++
		}
	}
	return n
}

func (r *contractInput) key(t *testing.T, sym string) int {
	t.Helper()
	code, ok := r.codes[sym]
	if !ok {
		t.Fatalf("no keycode for %s in the keymap", sym)
	}
	return code
}

// heldAround reports whether key code went down before every press of
// button and came up after the last one.
func heldAround(evs []contractEvent, code, button int) bool {
	down, up, first, last := -1, -1, -1, -1
	for i, e := range evs {
		switch {
		case !e.button && e.detail == code && e.down && down < 0:
			down = i
		case !e.button && e.detail == code && !e.down:
			up = i
		case e.button && e.detail == button && e.down:
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	return down >= 0 && first > down && up > last
}

// scaleReceipt is the "scale" object of a screenshot's JSON block.
type scaleReceipt struct {
	Preset         string             `json:"preset"`
	MaxLongEdge    int                `json:"max_long_edge"`
	ImageToLogical map[string]float64 `json:"image_to_logical"`
}

// TestContractsAnthropicToolset: each of the 17 member tools of
// computer_toolset_20260801, called with the arguments the API sends
// (key's repeat, modifiers in text on clicks, drags and scrolls, waits and
// holds in seconds), is accepted and does what the toolset documents.
func TestContractsAnthropicToolset(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	dir := t.TempDir()
	typed := filepath.Join(dir, "typed")
	w := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"+sb", "-bw", "0", "-class", "DeskhandContracts",
		"-geometry", "80x24+100+100", "-e", "sh", "-c", "exec cat > " + typed}, Class: "DeskhandContracts"})
	d.Focus(t, w.ID)
	e := serve(t, d)
	in := recordInput(t, d)
	called := map[string]bool{}
	call := func(tool string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		called[tool] = true
		return e.ok(tool, args)
	}

	// screenshot: an image, sized to the limits, with the scale receipt.
	called["screenshot"] = true
	e.screenshot("screenshot", map[string]any{})
	res := e.ok("screenshot", map[string]any{})
	var receipt struct {
		Scale scaleReceipt `json:"scale"`
	}
	if err := json.Unmarshal([]byte(res.Content[len(res.Content)-1].(*mcp.TextContent).Text), &receipt); err != nil {
		t.Fatal(err)
	}
	if receipt.Scale.Preset != "anthropic" || receipt.Scale.ImageToLogical["x"] != float64(e.shot.Display.Size.Width)/float64(e.shot.Image.Width) {
		t.Errorf("screenshot receipt = %+v for a %dx%d image of a %dx%d display", receipt.Scale, e.shot.Image.Width, e.shot.Image.Height, e.shot.Display.Size.Width, e.shot.Display.Size.Height)
	}

	// zoom: an image of the region.
	res = call("zoom", map[string]any{"region": append(e.at(100, 100), e.at(580, 412)...)})
	if !slices.ContainsFunc(res.Content, func(c mcp.Content) bool { _, ok := c.(*mcp.ImageContent); return ok }) {
		t.Errorf("zoom returned no image: %s", resultText(res))
	}

	// mouse_move and cursor_position, against xdotool.
	cx, cy := w.Client.X+200, w.Client.Y+150
	call("mouse_move", map[string]any{"coordinate": e.at(cx, cy)})
	x, y := e.mouseLocation()
	if abs(x-cx) > 2 || abs(y-cy) > 2 {
		t.Errorf("mouse_move to (%d, %d) put the pointer at (%d, %d)", cx, cy, x, y)
	}
	res = call("cursor_position", map[string]any{})
	var pos struct {
		Point struct{ X, Y int } `json:"screen_point"`
	}
	js, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(js, &pos)
	if pos.Point.X != x || pos.Point.Y != y {
		t.Errorf("cursor_position reports screen point %+v, xdotool (%d, %d)", pos.Point, x, y)
	}

	// type, key with repeat, into cat: "hellox", two BackSpaces, Return.
	mark := in.mark()
	call("type", map[string]any{"text": "hellox"})
	call("key", map[string]any{"text": "BackSpace", "repeat": 2})
	call("key", map[string]any{"text": "Return"})
	waitFor(t, "cat to write the line", 5*time.Second, func() bool {
		b, _ := os.ReadFile(typed)
		return string(b) == "hell\n"
	})
	if n := in.presses(in.since(t, mark, false, in.key(t, "Return"), 1), false, in.key(t, "BackSpace")); n != 2 {
		t.Errorf("key BackSpace with repeat 2 pressed BackSpace %d times", n)
	}

	// hold_key: shift goes down, then up.
	mark = in.mark()
	call("hold_key", map[string]any{"text": "shift", "duration": 0.3})
	shift := in.key(t, "Shift_L")
	var evs []contractEvent
	waitFor(t, "hold_key's Shift_L press and release in the event log", 5*time.Second, func() bool {
		evs = in.events()[mark:]
		return in.presses(evs, false, shift) == 1 && released(evs, shift)
	})
	// wait: seconds.
	if res := call("wait", map[string]any{"duration": 0.2}); !strings.Contains(resultText(res), "0.2 s") {
		t.Errorf("wait 0.2 says %q", resultText(res))
	}

	// The clicks, each the right button the right number of times, and
	// one holding shift.
	at := e.at(w.Client.X+300, w.Client.Y+60)
	for _, tc := range []struct {
		tool          string
		button, count int
		mods          string
	}{
		{"left_click", 1, 1, ""},
		{"left_click", 1, 1, "shift"},
		{"double_click", 1, 2, ""},
		{"triple_click", 1, 3, ""},
		{"right_click", 3, 1, ""},
		{"middle_click", 2, 1, ""},
	} {
		e.ok("wait", map[string]any{"duration": 0.4}) // apart from the last gesture
		mark := in.mark()
		args := map[string]any{"coordinate": at}
		if tc.mods != "" {
			args["text"] = tc.mods
		}
		call(tc.tool, args)
		evs := in.since(t, mark, true, tc.button, tc.count)
		if tc.mods != "" {
			evs = in.until(mark, func(evs []contractEvent) bool { return released(evs, in.key(t, "Shift_L")) })
		}
		if n := in.presses(evs, true, tc.button); n != tc.count {
			t.Errorf("%s %v: button %d pressed %d times, want %d", tc.tool, args, tc.button, n, tc.count)
		}
		if tc.mods != "" && !heldAround(evs, in.key(t, "Shift_L"), tc.button) {
			t.Errorf("%s holding shift: Shift_L was not held around the click: %v", tc.tool, evs)
		}
	}

	// left_click_drag holding shift: shift around the button, and the
	// pointer ends at coordinate.
	mark = in.mark()
	from, to := e.at(w.Client.X+20, w.Client.Y+20), e.at(w.Client.X+240, w.Client.Y+80)
	call("left_click_drag", map[string]any{"start_coordinate": from, "coordinate": to, "text": "shift"})
	evs = in.until(mark, func(evs []contractEvent) bool { return released(evs, in.key(t, "Shift_L")) })
	if !heldAround(evs, in.key(t, "Shift_L"), 1) {
		t.Errorf("left_click_drag holding shift: raw events %v, want Shift_L held around button 1", evs)
	}
	if x, y := e.mouseLocation(); abs(x-(w.Client.X+240)) > 3 || abs(y-(w.Client.Y+80)) > 3 {
		t.Errorf("left_click_drag ended at (%d, %d), want near (%d, %d)", x, y, w.Client.X+240, w.Client.Y+80)
	}

	// left_mouse_down and left_mouse_up: the button's state, from xinput.
	call("left_mouse_down", map[string]any{})
	if !e.buttonDown(1) {
		t.Errorf("button 1 is not down after left_mouse_down")
	}
	call("left_mouse_up", map[string]any{})
	if e.buttonDown(1) {
		t.Errorf("button 1 is still down after left_mouse_up")
	}

	// scroll holding ctrl: three wheel-down clicks with ctrl held.
	mark = in.mark()
	call("scroll", map[string]any{"coordinate": at, "scroll_direction": "down", "scroll_amount": 3, "text": "ctrl"})
	evs = in.until(mark, func(evs []contractEvent) bool { return released(evs, in.key(t, "Control_L")) })
	if in.presses(evs, true, 5) != 3 || !heldAround(evs, in.key(t, "Control_L"), 5) {
		t.Errorf("scroll down 3 holding ctrl: raw events %v, want Control_L held around 3 presses of button 5", evs)
	}

	members := []string{"screenshot", "zoom", "cursor_position", "mouse_move", "type", "key", "hold_key", "wait",
		"left_click", "double_click", "triple_click", "right_click", "middle_click",
		"left_click_drag", "left_mouse_down", "left_mouse_up", "scroll"}
	for _, m := range members {
		if !called[m] {
			t.Errorf("member tool %s was not called", m)
		}
	}
	if len(members) != 17 {
		t.Fatalf("%d members listed, want the toolset's 17", len(members))
	}
	// Arguments the toolset does not have are still refused, by name.
	e.bad("key", map[string]any{"text": "a", "count": 2}, `"count"`, `"repeat"`)
	e.bad("hold_key", map[string]any{"text": "shift", "duration": 301}, "from 0 to 300")
}

// TestContractsModifierScrollNeedsFullTier: a scroll holding a modifier
// is keyboard input, so over a click-tier app it is refused like a
// modifier click, and no key or wheel event reaches the display; a plain
// scroll there is allowed.
func TestContractsModifierScrollNeedsFullTier(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	w := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"+sb", "-bw", "0", "-class", "DeskhandScroll",
		"-geometry", "80x24+100+100", "-e", "cat"}, Class: "DeskhandScroll"})
	d.Focus(t, w.ID)
	e := serveRaw(t, d, nil, "--allow", "xterm=click")
	e.ok("request_access", map[string]any{"apps": []string{"xterm"}, "reason": "scroll the terminal"})
	in := recordInput(t, d)
	e.screenshot("screenshot", nil)
	at := e.at(w.Client.X+200, w.Client.Y+150)

	mark := in.mark()
	e.ok("scroll", map[string]any{"coordinate": at, "scroll_direction": "up", "scroll_amount": 2})
	if n := in.presses(in.since(t, mark, true, 4, 2), true, 4); n != 2 {
		t.Errorf("a plain scroll over a click-tier app pressed button 4 %d times, want 2", n)
	}

	mark = in.mark()
	e.bad("scroll", map[string]any{"coordinate": at, "scroll_direction": "down", "scroll_amount": 2, "text": "ctrl"}, "full")
	e.bad("left_click_drag", map[string]any{"start_coordinate": at, "coordinate": e.at(w.Client.X+300, w.Client.Y+150), "text": "shift"}, "full")
	// A marker event of our own: once it is logged, anything the refused
	// actions sent would be too.
	d.Run(t, "xdotool", "click", "9")
	evs := in.since(t, mark, true, 9, 1)
	for _, ev := range evs {
		if !(ev.button && ev.detail == 9) {
			t.Errorf("a refused scroll or drag holding a modifier reached the display: %v", evs)
			break
		}
	}
}

// openAIShot returns the screenshot geometry of the computer tool's
// result, recording it as the latest for e.at.
func openAIShot(t *testing.T, e *e2e, res *mcp.CallToolResult) {
	t.Helper()
	if !slices.ContainsFunc(res.Content, func(c mcp.Content) bool { _, ok := c.(*mcp.ImageContent); return ok }) {
		t.Fatalf("the computer tool returned no screenshot: %s", resultText(res))
	}
	var data struct {
		Screenshot shotInfo `json:"screenshot"`
	}
	if err := json.Unmarshal([]byte(res.Content[len(res.Content)-1].(*mcp.TextContent).Text), &data); err != nil {
		t.Fatalf("the computer tool's JSON block: %v", err)
	}
	e.shot = data.Screenshot
}

// TestContractsOpenAIBatch: with --tool-profile openai, one computer call
// with OpenAI's actions clicks into a zenity entry, types and presses
// Return (zenity prints the text), and another scrolls a zenity text view.
func TestContractsOpenAIBatch(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	e := serve(t, d, "--tool-profile", "openai", "--image-preset", "openai")
	tools, err := e.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "computer") || slices.Contains(names, "left_click") {
		t.Errorf("the openai profile lists %v, want computer and not deskhand's own tools", names)
	}

	// The entry starts with "old", selected as GTK selects an entry's text
	// when the dialog focuses it: typing without the click would replace
	// it. The click at the entry's right end puts the caret after it.
	w, out, code := shellApp(t, d, `--entry --title "OpenAI entry" --text "Type here" --entry-text old --width 400`)
	res := e.ok("computer", map[string]any{"actions": []any{}})
	openAIShot(t, e, res)
	c := d.WindowInfo(t, w.ID).Client
	entry := e.at(c.X+c.Width-40, c.Y+52)
	res = e.ok("computer", map[string]any{"actions": []any{
		map[string]any{"type": "click", "x": entry[0], "y": entry[1], "button": "left"},
		map[string]any{"type": "type", "text": " and new"},
		map[string]any{"type": "keypress", "keys": []string{"ENTER"}},
	}})
	openAIShot(t, e, res)
	if status := waitExit(t, code); status != 0 {
		t.Fatalf("zenity --entry exited %d", status)
	}
	if got, _ := os.ReadFile(out); string(got) != "old and new\n" {
		t.Errorf("after click, type and keypress, zenity printed %q, want %q", got, "old and new\n")
	}
	waitGone(t, d, w.ID)

	// scroll: the text view shows other lines.
	list := filepath.Join(t.TempDir(), "lines")
	var lines strings.Builder
	for i := 1; i <= 400; i++ {
		fmt.Fprintf(&lines, "line %d of the list\n", i)
	}
	if err := os.WriteFile(list, []byte(lines.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	w, _, _ = shellApp(t, d, fmt.Sprintf(`--text-info --title "OpenAI scroll" --filename %s --width 500 --height 400`, list))
	c = d.WindowInfo(t, w.ID).Client
	region := image.Rect(c.X+10, c.Y+10, c.X+c.Width-30, c.Y+c.Height-80)
	var before *image.RGBA
	waitFor(t, "the text view to settle", 10*time.Second, func() bool {
		a := desktoptest.ToRGBA(d.Screenshot(t).SubImage(region))
		time.Sleep(200 * time.Millisecond)
		b := desktoptest.ToRGBA(d.Screenshot(t).SubImage(region))
		before = b
		return bytes.Equal(a.Pix, b.Pix)
	})
	openAIShot(t, e, e.ok("computer", map[string]any{"actions": []any{}}))
	mid := e.at(c.X+c.Width/2, c.Y+c.Height/3)
	res = e.ok("computer", map[string]any{"actions": []any{
		map[string]any{"type": "scroll", "x": mid[0], "y": mid[1], "scroll_x": 0, "scroll_y": 500},
		map[string]any{"type": "wait"},
	}})
	openAIShot(t, e, res)
	waitFor(t, "the text view to scroll", 5*time.Second, func() bool {
		return !bytes.Equal(desktoptest.ToRGBA(d.Screenshot(t).SubImage(region)).Pix, before.Pix)
	})
	var receipt struct {
		Screenshot struct {
			Scale scaleReceipt `json:"scale"`
		} `json:"screenshot"`
	}
	json.Unmarshal([]byte(res.Content[len(res.Content)-1].(*mcp.TextContent).Text), &receipt)
	if receipt.Screenshot.Scale.Preset != "openai" || receipt.Screenshot.Scale.MaxLongEdge != 2048 {
		t.Errorf("the closing screenshot's receipt = %+v, want the openai preset", receipt.Screenshot.Scale)
	}
}
