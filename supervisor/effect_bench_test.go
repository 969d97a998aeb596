//go:build unix

package supervisor_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// TestBenchEffect measures what the effect costs and saves on a typical
// step, ticking a GTK check box: the time a click with the effect takes
// beyond its own settling, against the same click on a server run with
// --no-effect (the two interleaved, each after a screenshot as a model
// takes one), and the image tokens of the changed-region crop against a
// full screenshot. Only under `make bench` (DESKHAND_BENCH=1); it prints
// `BENCH <name> <value> <unit>` medians and asserts no timings.
func TestBenchEffect(t *testing.T) {
	if os.Getenv("DESKHAND_BENCH") == "" {
		t.Skip("benchmarks run under `make bench` (DESKHAND_BENCH=1)")
	}
	desktoptest.Require(t, "gtk3-widget-factory")
	// Two desktops alike, one server on each: two sessions on one desktop
	// would refuse each other (the computer-use lock).
	args := []string{"--allow", "gtk3-widget-factory=full", "--hide-unapproved=false", "--log-level", "warn"}
	start := func(extra ...string) (*e2e, []int) {
		d := a11yDesktop(t)
		w := d.StartApp(t, desktoptest.GTK3WidgetFactory())
		d.Move(t, w.ID, 0, 0, 0, 0)
		d.Focus(t, w.ID)
		box := nodeOf(t, d, w.PID, "check box")
		e := gatedServer(t, d, nil, append(args, extra...)...)
		e.access([]string{"gtk3-widget-factory"})
		e.screenshot("screenshot", nil)
		return e, e.at(box.X+box.Width/2, box.Y+box.Height/2)
	}
	with, at := start()
	without, atWithout := start("--no-effect")
	// click times a click after the screenshot a model takes first.
	click := func(e *e2e, at []int) (time.Duration, *mcp.CallToolResult) {
		e.screenshot("screenshot", nil)
		start := time.Now()
		res := e.ok("left_click", map[string]any{"coordinate": at})
		return time.Since(start), res
	}
	for range 3 { // warm up both servers and their helpers
		click(with, at)
		click(without, atWithout)
	}
	var over, settled []time.Duration
	for range 30 {
		tw, res := click(with, at)
		tn, _ := click(without, atWithout)
		s := time.Duration(effectOf(t, res).SettledMS) * time.Millisecond
		over = append(over, tw-s-tn)
		settled = append(settled, s)
	}
	report("effect_settle_check_box_ms", ms(median(settled)), "ms")
	report("effect_overhead_ms", ms(median(over)), "ms")

	// The crop of what the tick changed, against the screenshot a model
	// would otherwise take to see it.
	with.screenshot("screenshot", nil)
	res := with.ok("left_click", map[string]any{"coordinate": at, "show_change": true})
	crop := imageOf(t, res).Bounds()
	full := geometry.Tokens(with.shot.Image.Width, with.shot.Image.Height, geometry.DefaultTokenPx)
	part := geometry.Tokens(crop.Dx(), crop.Dy(), geometry.DefaultTokenPx)
	report("effect_crop_check_box_tokens", float64(part), "tokens")
	report("effect_full_screenshot_tokens", float64(full), "tokens")
	report("effect_crop_tokens_saved", float64(full-part), "tokens")
}

// nodeOf finds a sensitive element of the role in the accessibility tree
// of the app pid, in screen pixels.
func nodeOf(t *testing.T, d *desktoptest.Desktop, pid int, role string) bridge.A11yRect {
	t.Helper()
	c := bridge.New(bridge.Options{Path: desktoptest.HelperPath(t), Env: d.AppEnv()})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var n *bridge.A11yNode
	waitFor(t, "a "+role+" in the app's tree", 60*time.Second, func() bool {
		tree, err := c.A11yTree(ctx, bridge.A11yTreeRequest{PID: pid})
		if err == nil {
			n = findNode(tree, true, role)
		}
		return n != nil
	})
	return *n.Bounds
}

// TestBenchEffectSettle measures how long real apps take to show an
// action's result, which is what the settling defaults
// (effect.DefaultSettle) are chosen by: with a long quiet time and cap,
// the server records when each action's first and last change came and
// the longest quiet between two of its changes. The cap must exceed the
// latest first change (else a slow app reads "no visible change"), the
// quiet time the longest gap (else the result comes before the app is
// done). Only under `make bench`; it prints the maxima per kind of step.
func TestBenchEffectSettle(t *testing.T) {
	if os.Getenv("DESKHAND_BENCH") == "" {
		t.Skip("benchmarks run under `make bench` (DESKHAND_BENCH=1)")
	}
	desktoptest.Require(t, "gtk3-widget-factory", "zenity", "xterm", "xmessage")
	d := a11yDesktop(t)
	gtk := d.StartApp(t, desktoptest.GTK3WidgetFactory())
	d.Move(t, gtk.ID, 0, 0, 0, 0)
	box := nodeOf(t, d, gtk.PID, "check box")
	term := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"-geometry", "60x8+900+40", "-e", "sh", "-c", "stty -echo; exec cat > /dev/null"}, Class: "XTerm"})
	term = d.WindowInfo(t, term.ID)
	entry, _ := zenity(t, d, "--entry", "--title", "settle entry", "--width", "400", "--height", "150")
	d.Move(t, entry.ID, 900, 400, 0, 0)
	field := nodeOf(t, d, entry.PID, "text")

	logs := &benchLog{}
	e := serveLogged(t, d, logs, "--allow", "gtk3-widget-factory=full", "--allow", "zenity=full", "--allow", "xterm=full", "--allow", "xmessage=full",
		"--hide-unapproved=false", "--effect-quiet-ms", "1500", "--effect-cap-ms", "5000")
	e.access([]string{"gtk3-widget-factory", "zenity", "xterm", "xmessage"})
	measure := func(kind string, n int, act func(i int)) {
		logs.mu.Lock()
		logs.buf.Reset()
		logs.mu.Unlock()
		for i := range n {
			e.screenshot("screenshot", nil)
			act(i)
		}
		var first, last, gap time.Duration
		for _, f := range logs.settled(t) {
			first, last, gap = max(first, f[0]), max(last, f[1]), max(gap, f[2])
		}
		report("effect_"+kind+"_first_change_max_ms", ms(first), "ms")
		report("effect_"+kind+"_last_change_max_ms", ms(last), "ms")
		report("effect_"+kind+"_longest_gap_max_ms", ms(gap), "ms")
	}
	e.screenshot("screenshot", nil)
	at := e.at(box.X+box.Width/2, box.Y+box.Height/2)
	measure("gtk_check_box", 6, func(int) { e.ok("left_click", map[string]any{"coordinate": at}) })
	e.screenshot("screenshot", nil)
	e.ok("left_click", map[string]any{"coordinate": e.at(field.X+field.Width/2, field.Y+field.Height/2)})
	measure("zenity_type", 6, func(int) { e.ok("type", map[string]any{"text": "abc"}) })
	x, y := center(term, 0, 0)
	e.screenshot("screenshot", nil)
	e.ok("left_click", map[string]any{"coordinate": e.at(x, y)})
	measure("xterm_type", 6, func(int) { e.ok("type", map[string]any{"text": "abc"}) })
	// A click that opens a window: xmessage's button starts the next one.
	// Each appears where the one before was, once the wait for the click
	// before saw it.
	msg := d.StartApp(t, desktoptest.App{Name: "sh", Class: "Xmessage", Args: []string{"-c",
		`for i in 1 2 3 4; do xmessage -geometry 300x120+300+600 -buttons "Next:0" "dialog $i" || exit; done`}})
	msg = d.WindowInfo(t, msg.ID)
	measure("xmessage_dialog", 3, func(int) {
		e.ok("left_click", map[string]any{"coordinate": e.at(msg.Client.X+30, msg.Client.Y+msg.Client.Height-15)})
	})
}

// settled reads the "effect settled" records: first, last and gap.
func (l *benchLog) settled(t *testing.T) [][3]time.Duration {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out [][3]time.Duration
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if !strings.Contains(line, `msg="effect settled"`) {
			continue
		}
		var f [3]time.Duration
		for _, field := range strings.Fields(line) {
			k, v, _ := strings.Cut(field, "=")
			i := map[string]int{"first": 1, "last": 2, "gap": 3}[k]
			if i == 0 {
				continue
			}
			d, err := time.ParseDuration(v)
			if err != nil {
				t.Fatalf("reading %q: %v", line, err)
			}
			f[i-1] = d
		}
		out = append(out, f)
	}
	return out
}
