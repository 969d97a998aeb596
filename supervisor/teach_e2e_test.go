//go:build unix

package supervisor_test

// End-to-end tests of guided teaching (issue 11): teach_step and
// teach_batch through the built binary and the real helper's overlay on
// a private Xvfb desktop, driven by the go-sdk MCP client. The evidence
// is independent of deskhand: ImageMagick's `import -window root` for
// what is really on the screen, deskhand's own screenshots for what the
// model sees, what a zenity entry prints on stdout for what was typed,
// and xdotool for where the pointer is.
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run Teach -v

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// tooltip is one teaching tooltip as the server logged it (debug record
// "teaching tooltip shown"): where the helper put it and its buttons.
type tooltip struct {
	bounds, next, exit image.Rectangle
}

// tooltipLog passes the server's stderr to the test log
// (desktoptest.ServerLog) and collects the tooltips it shows.
type tooltipLog struct {
	*desktoptest.ServerLog
	mu   sync.Mutex
	tips []tooltip
}

var tooltipRecord = regexp.MustCompile(`teaching tooltip shown.* bounds=(\d+),(\d+),(\d+)x(\d+) next=(\d+),(\d+),(\d+)x(\d+) exit=(\d+),(\d+),(\d+)x(\d+)`)

func newTooltipLog(t *testing.T) *tooltipLog {
	l := &tooltipLog{}
	l.ServerLog = desktoptest.NewServerLog(t, l.line)
	return l
}

func (l *tooltipLog) line(line string) {
	m := tooltipRecord.FindStringSubmatch(line)
	if m == nil {
		return
	}
	n := make([]int, 12)
	for k := range n {
		n[k], _ = strconv.Atoi(m[k+1])
	}
	r := func(k int) image.Rectangle { return image.Rect(n[k], n[k+1], n[k]+n[k+2], n[k+1]+n[k+3]) }
	l.mu.Lock()
	l.tips = append(l.tips, tooltip{bounds: r(0), next: r(4), exit: r(8)})
	l.mu.Unlock()
}

func (l *tooltipLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.tips)
}

// wait returns tooltip number n (1-based) once the server has shown it.
func (l *tooltipLog) wait(t *testing.T, n int) tooltip {
	t.Helper()
	waitFor(t, fmt.Sprintf("teaching tooltip %d to be shown", n), 30*time.Second, func() bool { return l.count() >= n })
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tips[n-1]
}

// teachServe starts `deskhand serve --teach on` on d with the test apps
// pre-approved (and args, which win), and approves them for teaching.
func teachServe(t *testing.T, d *desktoptest.Desktop, args ...string) (*e2e, *tooltipLog, *hand) {
	t.Helper()
	bin := deskhandBinary(t)
	helper := desktoptest.HelperPath(t)
	logs := newTooltipLog(t)
	config := t.TempDir()
	full := append(append([]string{"serve", "--virtual-display", "off", "--state-dir", t.TempDir(), "--log-level", "debug", "--teach", "on", "--format", "png"},
		preapproveTestApps()...), args...)
	cmd := exec.Command(bin, full...)
	policy := filepath.Join(config, "policy.json")
	cmd.Env = append(d.AppEnv(), "DESKHAND_HELPER="+helper, "XDG_CONFIG_HOME="+config, "DESKHAND_POLICY_FILE="+policy,
		"DESKHAND_TEACH_TRUSTED_DEVICES="+desktoptest.HandPointer)
	cmd.Stderr = logs
	h := &hand{desktoptest.NewHand(t, d)}
	client := mcp.NewClient(&mcp.Implementation{Name: "deskhand-teach-e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("starting %s %v: %v", bin, full, err)
	}
	t.Cleanup(func() { cs.Close() })
	e := &e2e{t: t, d: d, cs: cs, cmd: cmd, configHome: config, policy: policy}
	e.ok("request_teach_access", map[string]any{"apps": testApps, "reason": "teaching end-to-end test"})
	return e, logs, h
}

// startCall calls a tool in the background; the result arrives on the
// channel (nil after a protocol error, which fails the test).
func (e *e2e) startCall(name string, args any) <-chan *mcp.CallToolResult {
	out := make(chan *mcp.CallToolResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			e.t.Errorf("%s: protocol error: %v", name, err)
		}
		out <- res
	}()
	return out
}

// result waits for a background call's result.
func result(t *testing.T, c <-chan *mcp.CallToolResult) *mcp.CallToolResult {
	t.Helper()
	select {
	case res := <-c:
		if res == nil {
			t.FailNow()
		}
		return res
	case <-time.After(2 * time.Minute):
		t.Fatal("the teaching call did not return")
		return nil
	}
}

// importRoot is the real screen as ImageMagick's import reads it.
func importRoot(t *testing.T, d *desktoptest.Desktop) *image.RGBA {
	t.Helper()
	desktoptest.Require(t, "import")
	out, err := d.Command("import", "-window", "root", "png:-").Output()
	if err != nil {
		t.Fatalf("import -window root: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatalf("decoding import's PNG: %v", err)
	}
	return desktoptest.ToRGBA(img)
}

// changed counts the pixels of r that differ between a and b by more
// than a small tolerance in any channel.
func changed(a, b *image.RGBA, r image.Rectangle) int {
	r = r.Intersect(a.Bounds()).Intersect(b.Bounds())
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			i, j := a.PixOffset(x, y), b.PixOffset(x, y)
			for c := 0; c < 3; c++ {
				if d := int(a.Pix[i+c]) - int(b.Pix[j+c]); d > 8 || d < -8 {
					n++
					break
				}
			}
		}
	}
	return n
}

func area(r image.Rectangle) int { return r.Dx() * r.Dy() }

// distance is how far p lies outside r (0 inside).
func distance(p image.Point, r image.Rectangle) int {
	dx := max(r.Min.X-p.X, 0, p.X-r.Max.X+1)
	dy := max(r.Min.Y-p.Y, 0, p.Y-r.Max.Y+1)
	return max(dx, dy)
}

// inShot maps a screen rectangle into the latest screenshot's pixels.
func (e *e2e) inShot(r image.Rectangle) image.Rectangle {
	p, q := e.at(r.Min.X, r.Min.Y), e.at(r.Max.X, r.Max.Y)
	return image.Rect(p[0], p[1], q[0], q[1])
}

// hand is the user's hand (desktoptest.Hand), which presses tooltip
// buttons.
type hand struct{ *desktoptest.Hand }

// press clicks the middle of r with the user's hand.
func (h hand) press(r image.Rectangle) {
	c := r.Min.Add(r.Max).Div(2)
	h.Click(c.X, c.Y)
}

// entryDialog starts a zenity entry the test reads back: what it prints
// when Return is pressed in it.
func entryDialog(t *testing.T, d *desktoptest.Desktop, title string) (w *desktoptest.Window, out, code string) {
	t.Helper()
	w, out, code = shellApp(t, d, fmt.Sprintf(`--entry --title %q --text "Your name" --width 400`, title))
	d.Move(t, w.ID, 500, 300, 0, 0)
	return d.WindowInfo(t, w.ID), out, code
}

// printed presses Return in the entry dialog (as the user would) unless
// it has exited already, and returns what it printed.
func printed(t *testing.T, d *desktoptest.Desktop, w *desktoptest.Window, out, code string) string {
	t.Helper()
	if _, err := os.Stat(code); err != nil {
		d.Focus(t, w.ID)
		d.Run(t, "xdotool", "key", "Return")
	}
	waitExit(t, code)
	got, _ := os.ReadFile(out)
	return string(got)
}

func data(t *testing.T, res *mcp.CallToolResult) map[string]any {
	t.Helper()
	if m, ok := res.StructuredContent.(map[string]any); ok {
		return m
	}
	t.Fatalf("result has no structured content: %s", resultText(res))
	return nil
}

// TestTeachStepShowsTooltipAndNextRuns: teach_step puts the tooltip on
// the real screen next to its anchor, deskhand's own screenshot taken
// meanwhile shows the desktop under it instead, and the user's click on
// Next runs the step's actions: the text arrives in the zenity entry.
func TestTeachStepShowsTooltipAndNextRuns(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	w, out, code := entryDialog(t, d, "teach next")
	e, tips, user := teachServe(t, d, "--max-long-edge", "1920", "--max-tokens", "3000")
	shot0, _ := e.screenshot("screenshot", nil)
	real0 := importRoot(t, d)
	ex, ey := entryPoint(w)

	call := e.startCall("teach_step", map[string]any{
		"explanation":  "This is where your name goes.",
		"next_preview": "I will type a name and press Return.",
		"anchor":       e.at(ex, ey),
		"actions": []any{
			map[string]any{"action": "left_click", "coordinate": e.at(ex, ey)},
			map[string]any{"action": "type", "text": "taught"},
			map[string]any{"action": "key", "text": "Return"},
		},
	})
	tip := tips.wait(t, 1)
	if dist := distance(image.Pt(ex, ey), tip.bounds); dist > 64 {
		t.Errorf("the tooltip at %v is %d pixels from its anchor (%d, %d)", tip.bounds, dist, ex, ey)
	}
	var real1 *image.RGBA
	waitFor(t, "the tooltip to show on the real screen", 20*time.Second, func() bool {
		real1 = importRoot(t, d)
		return changed(real0, real1, tip.bounds) >= area(tip.bounds)/4
	})
	// deskhand's screenshot meanwhile (1:1 with the screen) does not
	// show the tooltip: of the pixels where the tooltip changed the real
	// screen, hardly any look in it as they do on the real screen.
	shot1, _ := e.screenshot("screenshot", nil)
	if b := shot1.Bounds(); b.Dx() != real1.Bounds().Dx() {
		t.Fatalf("deskhand's screenshot is %v, want the screen's %v", b, real1.Bounds())
	}
	tipPixels, shown := 0, 0
	for y := tip.bounds.Min.Y; y < tip.bounds.Max.Y; y++ {
		for x := tip.bounds.Min.X; x < tip.bounds.Max.X; x++ {
			p := image.Rect(x, y, x+1, y+1)
			if changed(real0, real1, p) == 0 {
				continue
			}
			tipPixels++
			if changed(real1, shot1, p) == 0 {
				shown++
			}
		}
	}
	if shown > tipPixels/10 {
		t.Errorf("deskhand's screenshot shows %d of the tooltip's %d pixels as the real screen does: the tooltip is in it", shown, tipPixels)
	}
	// Nor anything in its place: the desktop's own pixels under it, as
	// before it showed (not a mask, not a ghost of its old place).
	if n := changed(shot0, shot1, tip.bounds); n > area(tip.bounds)/50 {
		t.Errorf("deskhand's screenshot under the tooltip differs from before it in %d of %d pixels", n, area(tip.bounds))
		if dir := os.Getenv("DESKHAND_TEST_ARTIFACTS"); dir != "" {
			for name, img := range map[string]*image.RGBA{"before": shot0, "during": shot1, "real": real1} {
				var buf bytes.Buffer
				_ = png.Encode(&buf, img)
				_ = os.WriteFile(filepath.Join(dir, "teach-"+name+".png"), buf.Bytes(), 0o644)
			}
		}
	}
	if _, err := os.Stat(code); err == nil {
		t.Fatal("the entry dialog ended before the user answered the tooltip")
	}

	user.press(tip.next)
	res := result(t, call)
	if res.IsError {
		t.Fatalf("teach_step after Next: %s", resultText(res))
	}
	if got := printed(t, d, w, out, code); got != "taught\n" {
		t.Errorf("after Next the entry printed %q, want %q", got, "taught\n")
	}
}

// TestTeachStepExitAndModelClicks: while the tooltip waits, the model's
// click on Next is refused and an XTest click on it (the input deskhand
// itself sends) does not count; the user's Exit then returns
// {exited: true} and nothing runs.
func TestTeachStepExitAndModelClicks(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	w, out, code := entryDialog(t, d, "teach exit")
	e, tips, user := teachServe(t, d)
	e.screenshot("screenshot", nil)
	ex, ey := entryPoint(w)
	call := e.startCall("teach_step", map[string]any{
		"explanation": "e", "next_preview": "n", "anchor": e.at(ex, ey),
		"actions": []any{
			map[string]any{"action": "left_click", "coordinate": e.at(ex, ey)},
			map[string]any{"action": "type", "text": "never"},
			map[string]any{"action": "key", "text": "Return"},
		},
	})
	tip := tips.wait(t, 1)
	next := tip.next.Min.Add(tip.next.Max).Div(2)
	px, py := e.mouseLocation()
	e.bad("left_click", map[string]any{"coordinate": e.at(next.X, next.Y)}, "teaching tooltip", "only the user")
	if !e.pointerNear(px, py, 0) {
		t.Errorf("the refused click on the tooltip moved the pointer")
	}
	// An XTest click, as deskhand's own input is, on Next: ignored.
	d.Run(t, "xdotool", "mousemove", strconv.Itoa(next.X), strconv.Itoa(next.Y), "click", "1")

	user.press(tip.exit)
	res := result(t, call)
	if res.IsError {
		t.Fatalf("teach_step after Exit: %s", resultText(res))
	}
	if got := data(t, res); got["exited"] != true {
		t.Errorf("teach_step after an XTest click on Next and the user's Exit = %v, want exited (the XTest click must not count)", got)
	}
	if got := printed(t, d, w, out, code); got != "\n" {
		t.Errorf("after Exit the entry printed %q, want nothing typed", got)
	}
}

// TestTeachEscapeEndsLesson: the user's Escape while the tooltip waits
// ends the lesson with nothing run.
func TestTeachEscapeEndsLesson(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	w, out, code := entryDialog(t, d, "teach escape")
	e, tips, _ := teachServe(t, d)
	e.screenshot("screenshot", nil)
	ex, ey := entryPoint(w)
	call := e.startCall("teach_step", map[string]any{
		"explanation": "e", "next_preview": "n",
		"actions": []any{
			map[string]any{"action": "left_click", "coordinate": e.at(ex, ey)},
			map[string]any{"action": "type", "text": "never"},
		},
	})
	tips.wait(t, 1)
	d.Run(t, "xdotool", "key", "Escape")
	res := result(t, call)
	if got := data(t, res); got["exited"] != true {
		t.Errorf("teach_step after Escape = %v, want exited", got)
	}
	// zenity takes the Escape as Cancel too, and exits printing nothing.
	waitExit(t, code)
	if got, _ := os.ReadFile(out); strings.Contains(string(got), "never") {
		t.Errorf("after Escape the entry printed %q: the step ran", got)
	}
}

// TestTeachBatchInvalidStepRunsNothing: one invalid envelope among three
// and no tooltip shows, nothing is typed.
func TestTeachBatchInvalidStepRunsNothing(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	w, out, code := entryDialog(t, d, "teach invalid")
	e, tips, _ := teachServe(t, d)
	e.screenshot("screenshot", nil)
	ex, ey := entryPoint(w)
	real0 := importRoot(t, d)
	res := e.call("teach_batch", map[string]any{"steps": []any{
		map[string]any{"explanation": "one", "next_preview": "n", "actions": []any{
			map[string]any{"action": "left_click", "coordinate": e.at(ex, ey)}, map[string]any{"action": "type", "text": "one"}}},
		map[string]any{"explanation": "two", "actions": []any{map[string]any{"action": "type", "text": "two"}}},
		map[string]any{"explanation": "three", "next_preview": "n", "actions": []any{map[string]any{"action": "type", "text": "three"}}},
	}})
	if !res.IsError || !strings.Contains(resultText(res), "step 2") {
		t.Fatalf("teach_batch with an invalid step 2 = %s, want a refusal naming step 2", resultText(res))
	}
	if n := tips.count(); n != 0 {
		t.Errorf("the invalid batch showed %d tooltips", n)
	}
	if n := changed(real0, importRoot(t, d), image.Rect(0, 0, 1920, 1080)); n > 2000 {
		t.Errorf("the screen changed in %d pixels after the invalid batch", n)
	}
	if got := printed(t, d, w, out, code); got != "\n" {
		t.Errorf("after the invalid batch the entry printed %q, want nothing typed", got)
	}
}

// TestTeachBatchRuntimeFailure: step 2's action is refused by a gate (a
// system shortcut without systemKeyCombos) after the user clicked Next:
// step 1 completed, step 2 failed, step 3 remains, and only step 1's
// text is in the entry.
func TestTeachBatchRuntimeFailure(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	w, out, code := entryDialog(t, d, "teach failure")
	e, tips, user := teachServe(t, d)
	e.screenshot("screenshot", nil)
	ex, ey := entryPoint(w)
	call := e.startCall("teach_batch", map[string]any{"steps": []any{
		map[string]any{"explanation": "one", "next_preview": "n", "actions": []any{
			map[string]any{"action": "left_click", "coordinate": e.at(ex, ey)}, map[string]any{"action": "type", "text": "one"}}},
		map[string]any{"explanation": "two", "next_preview": "n", "actions": []any{map[string]any{"action": "key", "text": "alt+F4"}}},
		map[string]any{"explanation": "three", "next_preview": "n", "actions": []any{map[string]any{"action": "type", "text": "three"}}},
	}})
	for i := 1; i <= 2; i++ {
		tip := tips.wait(t, i)
		user.press(tip.next)
	}
	res := result(t, call)
	if !res.IsError {
		t.Fatalf("teach_batch with a refused step 2 succeeded: %s", resultText(res))
	}
	got := data(t, res)
	completed, remaining := got["completed"].([]any), got["remaining"].([]any)
	failed, _ := got["failed"].(map[string]any)
	if len(completed) != 1 || completed[0].(map[string]any)["index"] != 0.0 {
		t.Errorf("completed = %v, want step 1 (index 0)", completed)
	}
	if failed == nil || failed["index"] != 1.0 || !strings.Contains(fmt.Sprint(failed["error"]), "system shortcut") {
		t.Errorf("failed = %v, want step 2 (index 1) refused as a system shortcut", failed)
	}
	if len(remaining) != 1 || remaining[0].(map[string]any)["index"] != 2.0 {
		t.Errorf("remaining = %v, want step 3 (index 2)", remaining)
	}
	if n := tips.count(); n != 2 {
		t.Errorf("%d tooltips were shown, want 2 (step 3 never)", n)
	}
	if got := printed(t, d, w, out, code); got != "one\n" {
		t.Errorf("the entry printed %q, want only step 1's %q", got, "one\n")
	}
}

// TestTeachBatchAnchorsUsePreBatchScreenshot: the screenshot before the
// batch is a restored one of another size (a server with smaller
// screenshots took it); step 1 takes a screenshot of this server's size,
// and step 2's anchor and pointer move still use the pre-batch one: the
// pointer ends where that screenshot's coordinates point, and the
// tooltip shows there.
func TestTeachBatchAnchorsUsePreBatchScreenshot(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	state := t.TempDir()
	first, _, _ := teachServe(t, d, "--state-dir", state, "--max-long-edge", "640")
	first.screenshot("screenshot", nil) // 640x360 of 1920x1080: factor 3
	pre := first.shot
	// Closing the session ends the first server, which writes the state
	// file before it exits.
	first.cs.Close()

	e, tips, user := teachServe(t, d, "--state-dir", state)
	e.shot = pre // the model still reads coordinates off the 640x360 image
	target := image.Pt(900, 600)
	at := e.at(target.X, target.Y)
	real0 := importRoot(t, d)
	call := e.startCall("teach_batch", map[string]any{"steps": []any{
		map[string]any{"explanation": "one", "next_preview": "I will take a screenshot", "actions": []any{map[string]any{"action": "screenshot"}}},
		map[string]any{"explanation": "two", "next_preview": "I will move the pointer", "anchor": at, "actions": []any{map[string]any{"action": "mouse_move", "coordinate": at}}},
	}})
	user.press(tips.wait(t, 1).next)
	tip := tips.wait(t, 2)
	if dist := distance(target, tip.bounds); dist > 64 {
		t.Errorf("step 2's tooltip at %v is %d pixels from the pre-batch anchor %v", tip.bounds, dist, target)
	}
	waitFor(t, "step 2's tooltip on the real screen", 20*time.Second, func() bool {
		return changed(real0, importRoot(t, d), tip.bounds) >= area(tip.bounds)/4
	})
	user.press(tip.next)
	res := result(t, call)
	if res.IsError {
		t.Fatalf("teach_batch: %s", resultText(res))
	}
	if !e.pointerNear(target.X, target.Y, 3) {
		x, y := e.mouseLocation()
		t.Errorf("step 2 moved the pointer to (%d, %d), want the pre-batch screenshot's (%d, %d)", x, y, target.X, target.Y)
	}
}

// TestTeachAutoOffersTools: with the default --teach auto, on a display
// where the helper can show the tooltip (it announces the capability
// teach), tools/list has the teaching tools from the first call.
func TestTeachAutoOffersTools(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	e := serveRaw(t, d, nil)
	res, err := e.cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"request_teach_access", "teach_step", "teach_batch"} {
		if !slices.Contains(names, want) {
			t.Errorf("with --teach auto, tools/list %q lacks %s", names, want)
		}
	}
}

// TestTeachHonoursTheLock: while another deskhand holds the desktop, a
// teaching step is refused by the cross-session lock and no tooltip
// shows on the real screen.
func TestTeachHonoursTheLock(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	first, _, _ := teachServe(t, d)
	first.screenshot("screenshot", nil) // takes the lock
	second, tips, _ := teachServe(t, d)
	real0 := importRoot(t, d)
	second.bad("teach_step", map[string]any{"explanation": "e", "next_preview": "n"}, "cu_lock_held")
	second.bad("teach_batch", map[string]any{"steps": []any{map[string]any{"explanation": "e", "next_preview": "n"}}}, "cu_lock_held")
	if n := tips.count(); n != 0 {
		t.Errorf("the locked-out server showed %d tooltips", n)
	}
	if n := changed(real0, importRoot(t, d), real0.Bounds()); n > 0 {
		t.Errorf("the screen changed in %d pixels after the refused teaching calls", n)
	}
}
