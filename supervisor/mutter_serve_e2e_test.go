//go:build mutter && unix

package supervisor_test

// End-to-end tests of `deskhand serve` in a GNOME session: headless
// mutter, the GTK 3 probe, the real helper and a real MCP client. Mutter
// gives no client a window list, so serve refuses every screenshot and
// input action there; the evidence that nothing reached the desktop is
// the file the probe writes on each click.

import (
	"context"
	"encoding/json"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// gnomeReason is the start of serve's refusal in a GNOME session
// (wayland.ErrGNOMENoWindows) and what it tells the model to do.
var gnomeReason = []string{
	"GNOME (mutter) gives apps no window list, no window under a point and no clipboard",
	"refuses every screenshot and every input action in a GNOME session",
	"restart deskhand with --virtual-display WIDTHxHEIGHT",
}

// mutterServe starts `deskhand serve` in m's GNOME session (DISPLAY
// unset), with extra arguments, and connects an MCP client.
func mutterServe(t *testing.T, m *desktoptest.Mutter, args ...string) *e2e {
	t.Helper()
	bin := deskhandBinary(t)
	logs := &testLog{t: t}
	t.Cleanup(logs.stop)
	config := t.TempDir()
	full := append([]string{"serve", "--state-dir", t.TempDir(), "--log-level", "debug"}, args...)
	cmd := exec.Command(bin, full...)
	cmd.Env = append(m.Env(), "DISPLAY=", "DESKHAND_HELPER="+desktoptest.HelperPath(t), "XDG_CONFIG_HOME="+config,
		"DESKHAND_POLICY_FILE="+filepath.Join(config, "policy.json"), "HOME="+t.TempDir())
	cmd.Stderr = logs
	client := mcp.NewClient(&mcp.Implementation{Name: "deskhand-mutter-e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("starting %s %v in the GNOME session: %v", bin, full, err)
	}
	t.Cleanup(func() { cs.Close() })
	return &e2e{t: t, cs: cs, cmd: cmd, configHome: config}
}

// TestMutterServeRefusesWithTheGNOMEReason: in a GNOME session serve
// answers the handshake and tools/list, and refuses a screenshot, a click
// on the probe's button and typing with the true reason and what to do.
// The probe records no click until the test's own helper clicks the same
// point, which shows a click there would have been seen.
func TestMutterServeRefusesWithTheGNOMEReason(t *testing.T) {
	m := desktoptest.StartMutter(t, desktoptest.MutterOptions{Width: 1280, Height: 720})
	c := mutterHelper(t, m)
	out, _, button := shownProbe(t, m, c)
	target := image.Pt((button.Min.X+button.Max.X)/2, (button.Min.Y+button.Max.Y)/2)

	// In normalized coordinates a click needs no screenshot first, so it
	// reaches the gates (in pixels too the GNOME reason comes first rather
	// than "call screenshot first"; checked below).
	e := mutterServe(t, m, "--allow", "python3=full", "--format", "png", "--coordinates", "normalized_0_100")
	at := []float64{float64(target.X) * 100 / 1280, float64(target.Y) * 100 / 720}
	if got := e.cs.InitializeResult().ServerInfo.Name; got == "" {
		t.Errorf("the handshake names no server")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	tools, err := e.cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range []string{"screenshot", "left_click", "type", "request_access"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	// The helper serve runs is the gnome-mutter one, and it reaches the
	// session: the refusal is the reason alone.
	if msg := e.bad("screenshot", nil, gnomeReason...); !strings.HasPrefix(msg, "display: "+gnomeReason[0]) {
		t.Errorf("the screenshot refusal %q does not begin with the GNOME reason", msg)
	}
	e.bad("type", map[string]any{"text": "refused"}, gnomeReason...)
	e.bad("key", map[string]any{"text": "Return"}, gnomeReason...)
	for _, msg := range []string{"use a wlroots compositor", "wlr-", "compositor lacks"} {
		if got := e.bad("left_click", map[string]any{"coordinate": at}, gnomeReason...); strings.Contains(got, msg) {
			t.Errorf("the GNOME refusal speaks of %s: %q", msg, got)
		}
	}
	// Nothing else gets through: not a click inside a batch, not the
	// tools that only look or open an app.
	e.bad("computer_batch", map[string]any{"actions": []any{map[string]any{"action": "left_click", "coordinate": at}}}, gnomeReason...)
	e.bad("cursor_position", nil, gnomeReason...)
	e.bad("open_application", map[string]any{"app": "python3"}, gnomeReason...)
	// In pixels, with no screenshot yet, the click gives the reason too:
	// asking for a screenshot first would only send the model to another
	// refusal.
	px := mutterServe(t, m, "--allow", "python3=full")
	for _, msg := range []string{
		px.bad("left_click", map[string]any{"coordinate": []int{target.X, target.Y}}, gnomeReason...),
		px.bad("computer_batch", map[string]any{"actions": []any{map[string]any{"action": "left_click", "coordinate": []int{target.X, target.Y}}}}, gnomeReason...),
	} {
		if strings.Contains(msg, "screenshot first") {
			t.Errorf("the pixel click's refusal %q asks for a screenshot before the GNOME reason", msg)
		}
	}
	px.bad("screenshot", nil, gnomeReason...)
	if b, _ := os.ReadFile(out); strings.Contains(string(b), "clicked") {
		t.Fatalf("the probe recorded a click serve refused: %q", b)
	}
	// The control: a click at the same point through the test's own
	// helper reaches the probe, and it is the only one it saw.
	wlCall(t, c, "pointer_move", map[string]any{"x": target.X, "y": target.Y}, &json.RawMessage{})
	wlCall(t, c, "pointer_button", map[string]any{"button": "left", "action": "click"}, &json.RawMessage{})
	got := wlWaitFile(t, out, func(s string) bool { return strings.Contains(s, "clicked") })
	if k := strings.Count(got, "clicked"); k != 1 {
		t.Fatalf("the probe recorded %d clicks, want only the test's own: %q", k, got)
	}
}

// TestMutterServeVirtualDisplay: in a GNOME session, --virtual-display
// still gives a private desktop that works (as root, sway refuses to run,
// so it is Xvfb).
func TestMutterServeVirtualDisplay(t *testing.T) {
	desktoptest.Require(t, "Xvfb", "openbox")
	if os.Geteuid() != 0 {
		t.Skip("the test runs deskhand as root, where the private desktop is Xvfb")
	}
	// The user's monitor is of another size than the private desktop.
	m := desktoptest.StartMutter(t, desktoptest.MutterOptions{Width: 1024, Height: 768})
	e := mutterServe(t, m, "--virtual-display", "1280x720", "--allow", "xterm=full")
	e.access([]string{"xterm"})
	img, _ := e.screenshot("screenshot", nil)
	if e.shot.Display.Size.Width != 1280 || e.shot.Display.Size.Height != 720 || img.Bounds().Dx() != 1280 {
		t.Errorf("the screenshot reports the display as %+v (image %v), want the private 1280x720 one", e.shot.Display, img.Bounds())
	}
}

// TestMutterServeVirtualSway: in a GNOME session, `deskhand serve
// --virtual-display 1280x720` run as the session's own (unprivileged)
// user starts a private headless sway and works on it, as on any Wayland
// host.
func TestMutterServeVirtualSway(t *testing.T) {
	requireWaylandTools(t, "foot")
	// The user's monitor is of another size than the private desktop.
	m := desktoptest.StartMutter(t, desktoptest.MutterOptions{Width: 1024, Height: 768})
	bin, helper := userBins(t)
	home := userHome(t, m)
	cmd := userCommand(m, append(m.Env(), "DISPLAY="), bin, helper, home,
		"serve", "--virtual-display", "1280x720", "--state-dir", filepath.Join(home, "state"), "--log-level", "debug",
		"--allow", "foot=full", "--format", "png")
	logs := &testLog{t: t}
	t.Cleanup(logs.stop)
	cmd.Stderr = logs
	cs := connectAsUser(t, cmd, "deskhand-gnome-sway-e2e")
	e := &e2e{t: t, cs: cs, cmd: cmd, configHome: filepath.Join(home, "config")}
	e.access([]string{"foot"})
	img, _ := e.screenshot("screenshot", nil)
	if e.shot.Display.Size.Width != 1280 || e.shot.Display.Size.Height != 720 || img.Bounds().Dx() != 1280 {
		t.Errorf("the screenshot reports the display as %+v (image %v), want the private sway's 1280x720 output", e.shot.Display, img.Bounds())
	}
}
