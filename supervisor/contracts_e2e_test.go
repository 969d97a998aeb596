//go:build unix

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
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	"os"
	"os/exec"
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

// buildHarness builds the example harness (examples/harness) in a copy
// outside the tree: npm ci from its lockfile, then tsc.
func buildHarness(t *testing.T) string {
	t.Helper()
	desktoptest.Require(t, "node", "npm")
	root, err := desktoptest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := filepath.Join(root, "examples", "harness")
	// The sources only: node_modules and dist of a local build stay
	// behind, so the test installs exactly what the lockfile pins.
	for _, name := range []string{"package.json", "package-lock.json", "tsconfig.json", "src", "fixtures"} {
		if out, err := exec.Command("cp", "-R", filepath.Join(src, name), dir).CombinedOutput(); err != nil {
			t.Fatalf("copying %s: %v: %s", name, err, out)
		}
	}
	for _, step := range [][]string{
		{"npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"},
		{filepath.Join("node_modules", ".bin", "tsc"), "-p", "."},
	} {
		cmd := exec.Command(step[0], step[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s in %s: %v\n%s", strings.Join(step, " "), dir, err, out)
		}
	}
	return dir
}

// replayed is what the example harness sent the vendor's API.
type replayed struct {
	Requests []struct {
		Path string          `json:"path"`
		Body json.RawMessage `json:"body"`
	} `json:"requests"`
	Answer string `json:"answer"`
}

// runHarness replays fixture through the example harness against a
// deskhand started with serveArgs on d, and returns what it sent.
func runHarness(t *testing.T, d *desktoptest.Desktop, dir, vendor, fixture string, serveArgs ...string) replayed {
	t.Helper()
	out := filepath.Join(t.TempDir(), "replayed.json")
	config := t.TempDir()
	args := append([]string{filepath.Join(dir, "dist", "replay.js"), vendor, filepath.Join(dir, "fixtures", fixture), out, "zenity", "--",
		deskhandBinary(t), "serve", "--virtual-display", "off", "--state-dir", t.TempDir(), "--allow", "zenity"}, serveArgs...)
	cmd := exec.Command("node", args...)
	cmd.Env = append(d.AppEnv(), "DESKHAND_HELPER="+desktoptest.HelperPath(t), "XDG_CONFIG_HOME="+config,
		"DESKHAND_POLICY_FILE="+filepath.Join(config, "policy.json"))
	logs := &testLog{t: t}
	t.Cleanup(logs.stop)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %v: %v", args, err)
	}
	var r replayed
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("the harness's record: %v", err)
	}
	return r
}

func pointer(t *testing.T, d *desktoptest.Desktop) (int, int) {
	t.Helper()
	var x, y int
	if _, err := fmt.Sscanf(d.Run(t, "xdotool", "getmouselocation"), "x:%d y:%d", &x, &y); err != nil {
		t.Fatalf("xdotool getmouselocation: %v", err)
	}
	return x, y
}

// decodeScreenshot decodes a base64 screenshot and returns its size.
func decodeScreenshot(t *testing.T, b64 string) image.Point {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatalf("the screenshot is not base64: %v", err)
	}
	img, _, err := image.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the screenshot does not decode: %v", err)
	}
	return img.Bounds().Size()
}

// TestContractsExampleHarness: the example harness, on the vendors' own
// SDKs, replays a Claude and an OpenAI run offline (the SDK clients get a
// fetch that answers from the fixture; no key, no network) against a real
// deskhand: the model's calls type into a zenity dialog, and what the
// harness sends back is what each API expects (tool_result blocks with
// the screenshot; computer_call_output items with a data URL).
func TestContractsExampleHarness(t *testing.T) {
	dir := buildHarness(t)
	t.Run("anthropic", func(t *testing.T) {
		d := newDesktop(t, desktoptest.Options{})
		_, out, code := shellApp(t, d, `--entry --title "Harness" --text "Type here"`)
		r := runHarness(t, d, dir, "anthropic", "anthropic.json")
		if status := waitExit(t, code); status != 0 {
			t.Fatalf("zenity --entry exited %d", status)
		}
		if got, _ := os.ReadFile(out); string(got) != "from clau\n" {
			t.Errorf("zenity printed %q, want %q", got, "from clau\n")
		}
		if len(r.Requests) != 3 || r.Answer != `Done: the dialog received "from clau".` {
			t.Fatalf("the harness made %d requests and answered %q", len(r.Requests), r.Answer)
		}
		type toolResult struct {
			Type        string `json:"type"`
			ToolUseID   string `json:"tool_use_id"`
			ToolsetName string `json:"toolset_name"`
			IsError     bool   `json:"is_error"`
			Content     []struct {
				Type   string `json:"type"`
				Text   string `json:"text"`
				Source struct {
					Type      string `json:"type"`
					MediaType string `json:"media_type"`
					Data      string `json:"data"`
				} `json:"source"`
			} `json:"content"`
		}
		lastTurn := func(i int) []toolResult {
			var body struct {
				Tools    []map[string]any `json:"tools"`
				Messages []struct {
					Role    string          `json:"role"`
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(r.Requests[i].Body, &body); err != nil {
				t.Fatal(err)
			}
			if len(body.Tools) != 1 || body.Tools[0]["type"] != "computer_toolset_20260801" {
				t.Errorf("request %d offers tools %v, want the computer toolset", i+1, body.Tools)
			}
			var results []toolResult
			json.Unmarshal(body.Messages[len(body.Messages)-1].Content, &results)
			return results
		}
		// The screenshot's tool_result: the image, its text, its JSON.
		shot := lastTurn(1)
		if len(shot) != 1 || shot[0].ToolUseID != "toolu_replay_01" || shot[0].ToolsetName != "computer" || shot[0].IsError || len(shot[0].Content) != 3 {
			t.Fatalf("the screenshot's tool_result = %+v", shot)
		}
		var info struct {
			Scale scaleReceipt `json:"scale"`
			Size  struct {
				Width  int `json:"width"`
				Height int `json:"height"`
			} `json:"image"`
		}
		if err := json.Unmarshal([]byte(shot[0].Content[2].Text), &info); err != nil {
			t.Fatalf("the screenshot's JSON block: %v", err)
		}
		if img := shot[0].Content[0]; img.Type != "image" || img.Source.Type != "base64" || img.Source.MediaType != "image/jpeg" ||
			decodeScreenshot(t, img.Source.Data) != image.Pt(info.Size.Width, info.Size.Height) {
			t.Errorf("the screenshot's image block is %s %s %s, want a base64 JPEG of %dx%d", img.Type, img.Source.Type, img.Source.MediaType, info.Size.Width, info.Size.Height)
		}
		// The four actions of the second turn, each answered in order.
		acts := lastTurn(2)
		if len(acts) != 4 {
			t.Fatalf("the second turn's tool_results = %+v, want 4", acts)
		}
		for i, a := range acts {
			if want := fmt.Sprintf("toolu_replay_%02d", i+2); a.ToolUseID != want || a.IsError || a.ToolsetName != "computer" {
				t.Errorf("tool_result %d = %+v, want a success for %s", i+1, a, want)
			}
		}
		// mouse_move [100, 100] of the screenshot put the pointer where the
		// receipt's scale says.
		x, y := pointer(t, d)
		wx, wy := int(100*info.Scale.ImageToLogical["x"]+0.5), int(100*info.Scale.ImageToLogical["y"]+0.5)
		if abs(x-wx) > 1 || abs(y-wy) > 1 {
			t.Errorf("mouse_move [100, 100] put the pointer at (%d, %d), want (%d, %d) by the scale receipt %v", x, y, wx, wy, info.Scale.ImageToLogical)
		}
	})

	t.Run("openai", func(t *testing.T) {
		d := newDesktop(t, desktoptest.Options{})
		_, out, code := shellApp(t, d, `--entry --title "Harness" --text "Type here"`)
		r := runHarness(t, d, dir, "openai", "openai.json", "--tool-profile", "openai", "--image-preset", "openai")
		if status := waitExit(t, code); status != 0 {
			t.Fatalf("zenity --entry exited %d", status)
		}
		if got, _ := os.ReadFile(out); string(got) != "from gp\n" {
			t.Errorf("zenity printed %q, want %q", got, "from gp\n")
		}
		if len(r.Requests) != 3 || r.Answer != `Done: the dialog received "from gp".` {
			t.Fatalf("the harness made %d requests and answered %q", len(r.Requests), r.Answer)
		}
		for i := 1; i < 3; i++ {
			var body struct {
				Previous string `json:"previous_response_id"`
				Input    []struct {
					Type   string `json:"type"`
					CallID string `json:"call_id"`
					Output struct {
						Type     string `json:"type"`
						ImageURL string `json:"image_url"`
					} `json:"output"`
				} `json:"input"`
			}
			if err := json.Unmarshal(r.Requests[i].Body, &body); err != nil {
				t.Fatal(err)
			}
			if body.Previous != fmt.Sprintf("resp_replay_%02d", i) || len(body.Input) != 1 {
				t.Fatalf("request %d: previous_response_id %q, %d input items", i+1, body.Previous, len(body.Input))
			}
			in := body.Input[0]
			const prefix = "data:image/jpeg;base64,"
			if in.Type != "computer_call_output" || in.CallID != fmt.Sprintf("call_replay_%02d", i) || in.Output.Type != "computer_screenshot" || !strings.HasPrefix(in.Output.ImageURL, prefix) {
				t.Fatalf("request %d input = %s %s %s %.40s", i+1, in.Type, in.CallID, in.Output.Type, in.Output.ImageURL)
			}
			// The openai preset's size of a 1920x1080 screen.
			if size := decodeScreenshot(t, strings.TrimPrefix(in.Output.ImageURL, prefix)); size != image.Pt(1650, 928) {
				t.Errorf("request %d's screenshot is %v, want 1650x928 (the openai preset)", i+1, size)
			}
		}
		// move {x: 200, y: 150} of the 1650x928 screenshot.
		x, y := pointer(t, d)
		if wx, wy := (200*1920+825)/1650, (150*1080+464)/928; abs(x-wx) > 1 || abs(y-wy) > 1 {
			t.Errorf("move (200, 150) put the pointer at (%d, %d), want (%d, %d)", x, y, wx, wy)
		}
	})
}

// TestContractsModifierSpellingsMeetTheBlocklist: the modifiers of a
// scroll or drag are one combination held for the whole action, however
// they are spaced, so "alt + F4" is the system shortcut Alt+F4 for the
// blocklist as it is for the keyboard: refused without systemKeyCombos,
// no key reaches the display and the dialog stays open.
func TestContractsModifierSpellingsMeetTheBlocklist(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	w, _, code := shellApp(t, d, `--entry --title "Blocklist" --text "Stay open" --width 400`)
	e := serve(t, d)
	in := recordInput(t, d)
	e.screenshot("screenshot", nil)
	c := d.WindowInfo(t, w.ID).Client
	at := e.at(c.X+c.Width/2, c.Y+20)
	mark := in.mark()
	for _, spelling := range []string{"alt + F4", "alt +F4", "alt\t+\tF4"} {
		e.bad("scroll", map[string]any{"coordinate": at, "scroll_direction": "down", "scroll_amount": 1, "text": spelling}, "system shortcut")
		e.bad("left_click_drag", map[string]any{"start_coordinate": at, "coordinate": e.at(c.X+c.Width/2+20, c.Y+20), "text": spelling}, "system shortcut")
	}
	d.Run(t, "xdotool", "click", "9")
	evs := in.since(t, mark, true, 9, 1)
	for _, ev := range evs {
		if !(ev.button && ev.detail == 9) {
			t.Errorf("a refused action sent input: %v", evs)
			break
		}
	}
	if _, err := os.Stat(code); err == nil {
		t.Errorf("the dialog exited: a modifier spelling got Alt+F4 through")
	}
	if !slices.Contains(d.ClientList(t), w.ID) {
		t.Errorf("the dialog's window is gone")
	}
}
