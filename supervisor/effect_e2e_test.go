//go:build unix

package supervisor_test

// End-to-end tests of issue 29: every input action reports its effect,
// what it changed on screen (in screenshot coordinates) and among the
// windows, or plainly that nothing visible changed. Real Xvfb, openbox,
// gtk3-widget-factory and zenity, the release helper and a real MCP
// client; the evidence of where things are is the apps' own
// accessibility tree and the X server's window facts.
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run Effect -v

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// effectOf decodes the "effect" of an action's structured result.
type effectData struct {
	Screen    string `json:"screen"`
	SettledMS int    `json:"settled_ms"`
	Regions   []struct {
		Region []float64 `json:"region"`
		Share  float64   `json:"share"`
	} `json:"regions"`
	Windows struct {
		Opened []struct {
			App   string  `json:"app"`
			Title *string `json:"title"`
		} `json:"opened"`
		Focus *struct {
			App   string  `json:"app"`
			Title *string `json:"title"`
		} `json:"focus"`
	} `json:"windows"`
}

func effectOf(t *testing.T, res *mcp.CallToolResult) effectData {
	t.Helper()
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if res.StructuredContent == nil {
		// With an image, the data is the last text block.
		tc, _ := res.Content[len(res.Content)-1].(*mcp.TextContent)
		if tc == nil {
			t.Fatalf("no data in %s", resultText(res))
		}
		raw = []byte(tc.Text)
	}
	var out struct {
		Effect *effectData `json:"effect"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Effect == nil {
		t.Fatalf("no effect in %s (%v)", raw, err)
	}
	return *out.Effect
}

// inside says whether the region r ([x0, y0, x1, y1], screenshot pixels)
// lies within box, grown by slack pixels on each side.
func inside(r []float64, box [4]int, slack int) bool {
	return int(r[0]) >= box[0]-slack && int(r[1]) >= box[1]-slack && int(r[2]) <= box[2]+slack && int(r[3]) <= box[3]+slack
}

// overlaps says whether r meets box.
func overlaps(r []float64, box [4]int) bool {
	return int(r[0]) < box[2] && box[0] < int(r[2]) && int(r[1]) < box[3] && box[1] < int(r[3])
}

// findNode returns the first showing node of one of roles, with bounds,
// that is sensitive (enabled and determinate) or insensitive as asked.
func findNode(tree *bridge.A11yTree, sensitive bool, roles ...string) *bridge.A11yNode {
	for i, n := range tree.Nodes {
		if !slices.Contains(roles, n.Role) || n.Bounds == nil || n.Bounds.Width < 8 || !slices.Contains(n.States, "showing") {
			continue
		}
		enabled := slices.Contains(n.States, "sensitive") && slices.Contains(n.States, "enabled") && !slices.Contains(n.States, "indeterminate")
		if sensitive && enabled || !sensitive && !slices.Contains(n.States, "sensitive") {
			return &tree.Nodes[i]
		}
	}
	return nil
}

// TestEffectWidgetFactory: a click on an insensitive button reports no
// visible change; a click on a check box reports a changed region that
// contains the box; a computer_batch reports each step's effect; typing
// into a zenity entry reports regions inside the entry.
func TestEffectWidgetFactory(t *testing.T) {
	desktoptest.Require(t, "gtk3-widget-factory")
	d := a11yDesktop(t)
	w := d.StartApp(t, desktoptest.GTK3WidgetFactory())
	d.Move(t, w.ID, 0, 0, 0, 0)
	d.Focus(t, w.ID)
	w = d.WindowInfo(t, w.ID)

	dlg, _ := zenity(t, d, "--entry", "--title", "effect entry", "--width", "450", "--height", "160")
	d.Move(t, dlg.ID, 1100, 700, 0, 0)
	d.Focus(t, w.ID)

	c := bridge.New(bridge.Options{Path: desktoptest.HelperPath(t), Env: d.AppEnv()})
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var button, box *bridge.A11yNode
	var last string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last tree read: %s", last)
		}
	})
	waitFor(t, "the widget factory's insensitive button and check box in its tree", 60*time.Second, func() bool {
		tree, err := c.A11yTree(ctx, bridge.A11yTreeRequest{PID: w.PID})
		if err != nil {
			last = err.Error()
			return false
		}
		var b strings.Builder
		for _, n := range tree.Nodes {
			fmt.Fprintf(&b, "\n%s %q %v %v", n.Role, n.Name, n.States, n.Bounds)
		}
		last = b.String()
		button, box = findNode(tree, false, "push button", "toggle button"), findNode(tree, true, "check box")
		return button != nil && box != nil
	})
	t.Logf("insensitive button %q at %+v, check box %q at %+v", button.Name, *button.Bounds, box.Name, *box.Bounds)
	var entry *bridge.A11yNode
	waitFor(t, "the zenity entry in its tree", 60*time.Second, func() bool {
		tree, err := c.A11yTree(ctx, bridge.A11yTreeRequest{PID: dlg.PID})
		if err == nil {
			entry = findNode(tree, true, "text")
		}
		return entry != nil
	})

	e := gatedServer(t, d, nil, "--allow", "gtk3-widget-factory=full", "--allow", "zenity=full", "--hide-unapproved=false", "--format", "png")
	e.access([]string{"gtk3-widget-factory", "zenity"})
	e.screenshot("screenshot", nil)
	boxOf := func(b *bridge.A11yRect) [4]int {
		p, q := e.at(b.X, b.Y), e.at(b.X+b.Width, b.Y+b.Height)
		return [4]int{p[0], p[1], q[0], q[1]}
	}
	centre := func(b *bridge.A11yRect) []int { return e.at(b.X+b.Width/2, b.Y+b.Height/2) }

	// Park the pointer on the window's quiet background first, so the
	// clicks below change no hover state but their own.
	park := e.at(w.Client.X+w.Client.Width-5, w.Client.Y+w.Client.Height-5)
	e.ok("mouse_move", map[string]any{"coordinate": park})
	e.ok("wait", map[string]any{"duration": 1})
	e.screenshot("screenshot", nil)

	res := e.ok("left_click", map[string]any{"coordinate": centre(box.Bounds)})
	got := effectOf(t, res)
	if got.Screen != "changed" || len(got.Regions) == 0 {
		t.Fatalf("click on the check box %q: effect %+v, want a changed region (%s)", box.Name, got, resultText(res))
	}
	hit := false
	for _, r := range got.Regions {
		// The box's indicator lies inside the check button's bounds; the
		// region holds it, to the helper's 16-pixel cells.
		hit = hit || overlaps(r.Region, boxOf(box.Bounds)) && inside(r.Region, boxOf(box.Bounds), 16)
	}
	if !hit {
		t.Errorf("click on the check box at %v: regions %+v, none inside it", boxOf(box.Bounds), got.Regions)
	}
	t.Logf("check box click (settled in %d ms): %s", got.SettledMS, resultText(res))

	// The insensitive button, with the pointer parked again (and the
	// check box's hover highlight given time to fade): the factory's own
	// animations were seen changing by themselves by now.
	e.ok("mouse_move", map[string]any{"coordinate": park})
	e.ok("wait", map[string]any{"duration": 1})
	// What faded in the wait the model has not seen: a click there is
	// stale until it looks again, as a model would.
	e.screenshot("screenshot", nil)
	res = e.ok("left_click", map[string]any{"coordinate": centre(button.Bounds)})
	if got := effectOf(t, res); got.Screen != "no visible change" {
		t.Errorf("click on the insensitive button %q: effect %+v, want no visible change (%s)", button.Name, got, resultText(res))
	}
	if !strings.Contains(resultText(res), "no visible change") {
		t.Errorf("the click's text does not say so: %s", resultText(res))
	}

	// A batch, after the pointer is parked again (leaving the check box,
	// which unhighlights it, as a wait lets it finish) and a new look: the
	// insensitive button (no change), the check box again (a change); each
	// step says so, and the second, asking for it, shows what it changed.
	e.ok("mouse_move", map[string]any{"coordinate": park})
	e.ok("wait", map[string]any{"duration": 1})
	e.screenshot("screenshot", nil)
	res = e.ok("computer_batch", map[string]any{"actions": []map[string]any{
		{"action": "left_click", "coordinate": centre(button.Bounds)},
		{"action": "left_click", "coordinate": centre(box.Bounds), "show_change": true},
	}})
	var batch struct {
		Completed []struct {
			Effect effectData `json:"effect"`
		} `json:"completed"`
	}
	var raw []byte
	var images []image.Rectangle
	var caption string
	for i, c := range res.Content {
		switch c := c.(type) {
		case *mcp.ImageContent:
			img, _, err := image.Decode(bytes.NewReader(c.Data))
			if err != nil {
				t.Fatalf("decoding a batch image: %v", err)
			}
			images = append(images, img.Bounds())
			if tc, ok := res.Content[max(i-1, 0)].(*mcp.TextContent); ok {
				caption = tc.Text
			}
		case *mcp.TextContent:
			raw = []byte(c.Text)
		}
	}
	if err := json.Unmarshal(raw, &batch); err != nil || len(batch.Completed) != 2 {
		t.Fatalf("batch result %s: %v", raw, err)
	}
	if len(images) != 1 || !strings.HasPrefix(caption, "Action 2 (left_click)") || images[0].Dx() >= e.shot.Image.Width/4 {
		t.Errorf("the batch shows images %v (the last captioned %q), want one crop of what action 2 changed", images, caption)
	}
	t.Logf("batch: %s", resultText(res))
	if s := batch.Completed[0].Effect.Screen; s != "no visible change" {
		t.Errorf("batch step 1 (insensitive button): screen %q, want no visible change", s)
	}
	if s := batch.Completed[1].Effect.Screen; s != "changed" {
		t.Errorf("batch step 2 (check box): screen %q, want changed", s)
	}

	// The crop does not narrow the staleness reference to itself: a click
	// outside it, on the screenshot taken before, is not refused as stale.
	e.ok("left_click", map[string]any{"coordinate": centre(entry.Bounds)})
	res = e.ok("type", map[string]any{"text": "hello effect", "show_change": true})
	got = effectOf(t, res)
	if got.Screen != "changed" || len(got.Regions) == 0 {
		t.Fatalf("typing: effect %+v, want a changed region (%s)", got, resultText(res))
	}
	for _, r := range got.Regions {
		if !inside(r.Region, boxOf(entry.Bounds), 16) {
			t.Errorf("typing into the entry at %v: region %v lies outside it", boxOf(entry.Bounds), r.Region)
		}
	}
	t.Logf("typing (settled in %d ms): %s", got.SettledMS, resultText(res))
	// show_change: an image of just what changed, smaller than the
	// screenshot.
	if b := imageOf(t, res).Bounds(); b.Dx() >= e.shot.Image.Width/4 || b.Dy() >= e.shot.Image.Height/4 {
		t.Errorf("the image of what the typing changed is %dx%d, not a crop of the %dx%d screenshot", b.Dx(), b.Dy(), e.shot.Image.Width, e.shot.Image.Height)
	}
}

// TestEffectOpensDialog: a click that closes an approved xmessage and
// opens another reports the new window and its title; what the closing
// uncovers of an unapproved window behind it (the secret colour, on the
// real screen) is in no reported region, title or crop. The quiet time is
// long, so that a loaded machine starting the second xmessage late does
// not make the test fail.
func TestEffectOpensDialog(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	secret := secretWindow(t, d, 100, 100)
	msg := d.StartApp(t, desktoptest.App{Name: "sh", Class: "Xmessage", Args: []string{"-c",
		`xmessage -geometry 420x200+80+80 -buttons "Open dialog:0" "click to open a dialog" && exec xmessage -geometry 300x100+700+400 -title "Opened by a click" "opened"`}})
	d.Focus(t, msg.ID)
	msg = d.WindowInfo(t, msg.ID)

	e := gatedServer(t, d, nil, "--allow", "xmessage=full", "--hide-unapproved=false", "--format", "png", "--effect-crop",
		"--effect-quiet-ms", "3000", "--effect-cap-ms", "10000")
	e.access([]string{"xmessage"})
	e.screenshot("screenshot", nil)
	// xmessage's button sits at the bottom left of its window.
	res := e.ok("left_click", map[string]any{"coordinate": e.at(msg.Client.X+40, msg.Client.Y+msg.Client.Height-15)})
	text := resultText(res)
	t.Logf("the click: %s", text)
	got := effectOf(t, res)
	opened := false
	for _, w := range got.Windows.Opened {
		opened = opened || w.Title != nil && *w.Title == "Opened by a click"
	}
	if !opened || !strings.Contains(text, `opened "Opened by a click" of`) {
		t.Errorf("the click's effect does not report the dialog it opened: %+v", got.Windows)
	}
	if n := countColor(d.Screenshot(t), secretColor, 0); n < 10000 {
		t.Fatalf("the closing uncovered only %d pixels of the secret window; the test would prove nothing", n)
	}
	// No reported region holds a pixel the real screen shows of the
	// unapproved window.
	screen := d.Screenshot(t)
	for _, r := range got.Regions {
		sx := float64(e.shot.Display.Size.Width) / float64(e.shot.Image.Width)
		sy := float64(e.shot.Display.Size.Height) / float64(e.shot.Image.Height)
		part := screen.SubImage(image.Rect(int(r.Region[0]*sx), int(r.Region[1]*sy), int(r.Region[2]*sx), int(r.Region[3]*sy))).(*image.RGBA)
		if n := countColor(part, secretColor, 0); n > 0 {
			t.Errorf("region %v shows %d pixels of the unapproved window", r.Region, n)
		}
	}
	if secret.Title != "" && strings.Contains(text, secret.Title) {
		t.Errorf("the effect names the unapproved window's title %q: %s", secret.Title, text)
	}
	if len(got.Regions) > 0 {
		if n := countColor(imageOf(t, res), secretColor, 0); n > 0 {
			t.Errorf("the crop of what changed shows the unapproved window's colour in %d pixels", n)
		}
	}
}

// TestEffectElementCheckBox: clicking a GTK check box by its element id
// reports the box's state change in the effect's accessibility diff,
// matching what the tree says after.
func TestEffectElementCheckBox(t *testing.T) {
	desktoptest.Require(t, "gtk3-widget-factory")
	d := a11yDesktop(t)
	w := d.StartApp(t, desktoptest.GTK3WidgetFactory())
	e := elementsServer(t, d, "full")
	e.access([]string{"gtk3-widget-factory"})
	state := e.waitState(w.PID, `check box`)
	m := regexp.MustCompile(`\[(\d+)\] check box "[^"]*"(?: \{checked\})? @`).FindStringSubmatch(state)
	if m == nil {
		t.Fatalf("no enabled, determinate check box in the tree:\n%s", state)
	}
	box := m[1]
	checked := strings.Contains(lineOf(state, box), "{checked}")
	res := e.ok("click", map[string]any{"pid": w.PID, "element_id": box})
	t.Logf("the click: %s", resultText(res))
	var out struct {
		Effect struct {
			Elements struct {
				Target *struct {
					Role      string   `json:"role"`
					StatesOn  []string `json:"states_on"`
					StatesOff []string `json:"states_off"`
				} `json:"target"`
			} `json:"elements"`
		} `json:"effect"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("decoding %s: %v", raw, err)
	}
	after := e.state(w.PID, map[string]any{"disableDiff": true})
	if now := strings.Contains(lineOf(after, box), "{checked}"); now == checked {
		t.Fatalf("the click left the check box as it was: %q", lineOf(after, box))
	}
	target := out.Effect.Elements.Target
	states := map[bool][]string{}
	if target != nil {
		states[true], states[false] = target.StatesOn, target.StatesOff
	}
	if target == nil || target.Role != "check box" || !slices.Contains(states[!checked], "checked") {
		t.Errorf("the effect of checking=%v element %s reports %s, want its \"checked\" state %s", !checked, box, raw, map[bool]string{true: "gained", false: "lost"}[!checked])
	}
	if want := map[bool]string{true: "+checked", false: "-checked"}[!checked]; !strings.Contains(resultText(res), want) {
		t.Errorf("the click's text does not say %s: %s", want, resultText(res))
	}
}
