//go:build unix

package supervisor_test

// End-to-end tests of `deskhand serve`: the go-sdk MCP client over a
// command transport spawns the built binary, which drives the real capture
// helper (desktoptest.HelperPath) and real input on a private Xvfb desktop
// with real applications (xterm, zenity/GTK 3). Results are checked with
// independent X tools (xwd, xdotool, xinput, xclip, xmodmap). They skip
// without Xvfb, the applications or the helper, and fail instead under CI.
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run Serve -v

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg"
	_ "image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/desktop/x11/vdisplay"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

var (
	buildOnce sync.Once
	binDir    string
	binPath   string
	buildErr  error

	wmOnce   sync.Once
	wmDir    string
	wmScript string
	wmErr    error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if wmDir != "" {
		os.RemoveAll(wmDir)
	}
	os.Exit(code)
}

// deskhandBinary builds ./cmd/deskhand once per test run, or returns
// $DESKHAND_BIN when it is set. It builds with -race under `go test -race`
// or with DESKHAND_E2E_RACE set: `make go-race` runs these tests without
// -race (their PNG decoding and pixel counts cost more than the rest) and
// races the server they drive.
func deskhandBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if p := os.Getenv("DESKHAND_BIN"); p != "" {
			binPath = p
			return
		}
		root, err := desktoptest.RepoRoot()
		if err != nil {
			buildErr = err
			return
		}
		if binDir, err = os.MkdirTemp("", "deskhand-e2e-"); err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(binDir, "deskhand")
		args := []string{"build", "-o", binPath}
		if raceEnabled || os.Getenv("DESKHAND_E2E_RACE") != "" {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, "./cmd/deskhand")...)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/deskhand: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// e2e is one test's desktop and server.
type e2e struct {
	t    *testing.T
	d    *desktoptest.Desktop
	cs   *mcp.ClientSession
	cmd  *exec.Cmd
	shot shotInfo // the latest screenshot's geometry, from its result
	// configHome is the server's XDG_CONFIG_HOME; policy the managed
	// policy file it reads besides the system one.
	configHome string
	policy     string
}

type shotInfo struct {
	Display struct {
		ID     uint32         `json:"id"`
		Name   string         `json:"name"`
		Origin geometry.Point `json:"origin"`
		Size   geometry.Size  `json:"size"`
	} `json:"display"`
	Image struct {
		Width  int    `json:"width"`
		Height int    `json:"height"`
		Format string `json:"format"`
	} `json:"image"`
	OtherDisplays []struct {
		Name string `json:"name"`
	} `json:"other_displays"`
}

// openboxWrapper returns a script that runs openbox with the configuration
// `deskhand serve --virtual-display` gives it, so these tests run on the
// same window manager setup as the product. (desktoptest's own openbox
// configuration binds the left button in the "Frame" context, which
// swallows clicks in client areas.)
func openboxWrapper(t *testing.T) string {
	t.Helper()
	wmOnce.Do(func() {
		if wmDir, wmErr = os.MkdirTemp("", "deskhand-e2e-wm-"); wmErr != nil {
			return
		}
		rc := filepath.Join(wmDir, "rc.xml")
		if wmErr = os.WriteFile(rc, []byte(vdisplay.OpenboxConfig), 0o600); wmErr != nil {
			return
		}
		wmScript = filepath.Join(wmDir, "openbox-deskhand")
		wmErr = os.WriteFile(wmScript, []byte("#!/bin/sh\nexec openbox --sm-disable --config-file '"+rc+"'\n"), 0o700)
	})
	if wmErr != nil {
		t.Fatal(wmErr)
	}
	return wmScript
}

func newDesktop(t *testing.T, opts desktoptest.Options) *desktoptest.Desktop {
	t.Helper()
	desktoptest.Require(t, "Xvfb", "openbox", "xterm", "zenity", "xdotool", "xinput", "xclip", "xmodmap", "xwd", "xwininfo", "xprop", "wmctrl")
	desktoptest.HelperPath(t) // skip (or fail under CI) before building anything
	opts.WindowManager = openboxWrapper(t)
	return desktoptest.Start(t, opts)
}

// testApps are the apps the end-to-end tests use, pre-approved at the full
// tier (xterm is click-tier in the catalog: these tests type into it), with
// the clipboard flags.
var testApps = []string{"xterm", "zenity", "xwud"}

func preapproveTestApps() []string {
	args := []string{"--grant", "clipboardRead,clipboardWrite"}
	for _, app := range testApps {
		args = append(args, "--allow", app+"=full")
	}
	return args
}

// serve starts `deskhand serve` on d with the test apps pre-approved,
// connects an MCP client to it and calls request_access for them.
func serve(t *testing.T, d *desktoptest.Desktop, args ...string) *e2e {
	t.Helper()
	e := serveRaw(t, d, nil, append(preapproveTestApps(), args...)...)
	e.requestTestApps()
	return e
}

// requestTestApps calls request_access for the pre-approved test apps.
func (e *e2e) requestTestApps() {
	e.t.Helper()
	e.ok("request_access", map[string]any{"apps": testApps, "reason": "end-to-end test", "clipboardRead": true, "clipboardWrite": true})
}

// serveRaw starts `deskhand serve` on d and connects an MCP client with
// opts (nil: no elicitation) to it, without asking for access. The server
// keeps its consent files in a fresh config directory, and reads no
// managed policy but the one the test may write to e.policy.
func serveRaw(t *testing.T, d *desktoptest.Desktop, opts *mcp.ClientOptions, args ...string) *e2e {
	t.Helper()
	return serveWith(t, d, opts, "", t.TempDir(), args...)
}

// serveWith is serveRaw with the MCP protocol version ("" for the latest)
// and the config directory given, so that two server processes can share
// remembered denials.
func serveWith(t *testing.T, d *desktoptest.Desktop, opts *mcp.ClientOptions, version, configHome string, args ...string) *e2e {
	t.Helper()
	bin := deskhandBinary(t)
	helper := desktoptest.HelperPath(t)
	logs := desktoptest.NewServerLog(t, nil) // its Stop registered first: runs after the server is gone
	full := append([]string{"serve", "--virtual-display", "off", "--state-dir", t.TempDir(), "--log-level", "debug"}, args...)
	cmd := exec.Command(bin, full...)
	policy := filepath.Join(configHome, "policy.json")
	cmd.Env = append(d.AppEnv(), "DESKHAND_HELPER="+helper, "XDG_CONFIG_HOME="+configHome, "DESKHAND_POLICY_FILE="+policy)
	cmd.Stderr = logs
	client := mcp.NewClient(&mcp.Implementation{Name: "deskhand-e2e", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("starting %s %v: %v", bin, full, err)
	}
	t.Cleanup(func() { cs.Close() })
	return &e2e{t: t, d: d, cs: cs, cmd: cmd, configHome: configHome, policy: policy}
}

// testLog passes the server's stderr to the test log until the test ends
// (desktoptest.ServerLog), for the tests that build it as a literal,
// &testLog{t: t}, and register stop themselves.
type testLog struct {
	t    *testing.T
	once sync.Once
	log  desktoptest.ServerLog
}

func (w *testLog) server() *desktoptest.ServerLog {
	w.once.Do(func() { w.log.T = w.t })
	return &w.log
}

func (w *testLog) Write(p []byte) (int, error) { return w.server().Write(p) }

func (w *testLog) stop() { w.server().Stop() }

func (e *e2e) call(name string, args any) *mcp.CallToolResult {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		e.t.Fatalf("%s(%.200v): protocol error: %v", name, args, err)
	}
	return res
}

func (e *e2e) ok(name string, args any) *mcp.CallToolResult {
	e.t.Helper()
	res := e.call(name, args)
	if res.IsError {
		e.t.Fatalf("%s(%.200v) failed: %s", name, args, resultText(res))
	}
	return res
}

func (e *e2e) bad(name string, args any, want ...string) string {
	e.t.Helper()
	res := e.call(name, args)
	msg := resultText(res)
	if !res.IsError {
		e.t.Fatalf("%s(%.200v) = %q, want an error", name, args, msg)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			e.t.Errorf("%s(%.200v) error %q lacks %q", name, args, msg, w)
		}
	}
	return msg
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// screenshot calls tool (screenshot or switch_display), records the
// geometry it reports and returns the decoded image.
func (e *e2e) screenshot(tool string, args any) (*image.RGBA, *mcp.ImageContent) {
	e.t.Helper()
	res := e.ok(tool, args)
	var ic *mcp.ImageContent
	for _, c := range res.Content {
		if img, ok := c.(*mcp.ImageContent); ok {
			ic = img
		}
	}
	if ic == nil {
		e.t.Fatalf("%s returned no image: %s", tool, resultText(res))
	}
	last, _ := res.Content[len(res.Content)-1].(*mcp.TextContent)
	if last == nil {
		e.t.Fatalf("%s result lacks its JSON block", tool)
	}
	var info shotInfo
	if err := json.Unmarshal([]byte(last.Text), &info); err != nil {
		e.t.Fatalf("%s JSON block %q: %v", tool, last.Text, err)
	}
	img, _, err := image.Decode(bytes.NewReader(ic.Data))
	if err != nil {
		e.t.Fatalf("decoding the %s screenshot: %v", ic.MIMEType, err)
	}
	if b := img.Bounds(); b.Dx() != info.Image.Width || b.Dy() != info.Image.Height {
		e.t.Fatalf("the image is %dx%d but the result says %dx%d", b.Dx(), b.Dy(), info.Image.Width, info.Image.Height)
	}
	e.shot = info
	return desktoptest.ToRGBA(img), ic
}

// at converts a screen point to [x, y] in the latest screenshot, the way
// a model reads a position off the image.
func (e *e2e) at(x, y int) []int {
	s := e.shot
	return []int{
		(x - s.Display.Origin.X) * s.Image.Width / s.Display.Size.Width,
		(y - s.Display.Origin.Y) * s.Image.Height / s.Display.Size.Height,
	}
}

func (e *e2e) mouseLocation() (int, int) {
	e.t.Helper()
	out := e.d.Run(e.t, "xdotool", "getmouselocation")
	m := regexp.MustCompile(`x:(\d+) y:(\d+)`).FindStringSubmatch(out)
	if m == nil {
		e.t.Fatalf("xdotool getmouselocation: %q", out)
	}
	x, _ := strconv.Atoi(m[1])
	y, _ := strconv.Atoi(m[2])
	return x, y
}

// buttonDown reports whether XTEST holds mouse button b down.
func (e *e2e) buttonDown(b int) bool {
	e.t.Helper()
	out := e.d.Run(e.t, "xinput", "--query-state", "Virtual core XTEST pointer")
	return strings.Contains(out, fmt.Sprintf("button[%d]=down", b))
}

func waitFor(t *testing.T, what string, timeout time.Duration, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// stableReference returns an xwd capture of the screen taken around fn
// when the screen did not change meanwhile.
func stableReference(t *testing.T, d *desktoptest.Desktop, fn func()) *image.RGBA {
	t.Helper()
	for attempt := 1; ; attempt++ {
		before := d.Screenshot(t)
		fn()
		after := d.Screenshot(t)
		if bytes.Equal(before.Pix, after.Pix) {
			return before
		}
		if attempt == 5 {
			t.Fatalf("the screen kept changing around the screenshot (5 attempts)")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// boxScale scales the area r of src to w×h by averaging the source pixels
// each output pixel covers: an independent reference for the helper's
// scaler.
func boxScale(src *image.RGBA, r image.Rectangle, w, h int) *image.RGBA {
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	for oy := 0; oy < h; oy++ {
		y0 := r.Min.Y + oy*r.Dy()/h
		y1 := max(r.Min.Y+(oy+1)*r.Dy()/h, y0+1)
		for ox := 0; ox < w; ox++ {
			x0 := r.Min.X + ox*r.Dx()/w
			x1 := max(r.Min.X+(ox+1)*r.Dx()/w, x0+1)
			var sr, sg, sb, n int
			for y := y0; y < y1; y++ {
				for x := x0; x < x1; x++ {
					c := src.RGBAAt(x, y)
					sr, sg, sb, n = sr+int(c.R), sg+int(c.G), sb+int(c.B), n+1
				}
			}
			out.SetRGBA(ox, oy, color.RGBA{uint8(sr / n), uint8(sg / n), uint8(sb / n), 255})
		}
	}
	return out
}

func meanAbsError(a, b *image.RGBA) float64 {
	var sum, n float64
	for y := 0; y < a.Rect.Dy(); y++ {
		for x := 0; x < a.Rect.Dx(); x++ {
			p, q := a.RGBAAt(a.Rect.Min.X+x, a.Rect.Min.Y+y), b.RGBAAt(b.Rect.Min.X+x, b.Rect.Min.Y+y)
			sum += math.Abs(float64(p.R)-float64(q.R)) + math.Abs(float64(p.G)-float64(q.G)) + math.Abs(float64(p.B)-float64(q.B))
			n += 3
		}
	}
	return sum / n
}

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// putScene puts a coloured xterm with text and a GTK dialog on the screen.
func putScene(t *testing.T, d *desktoptest.Desktop, x, y int) {
	t.Helper()
	d.StartXterm(t, desktoptest.XtermOptions{
		Class: "DeskhandE2E", Title: "e2e xterm", Geometry: fmt.Sprintf("80x24+%d+%d", x, y),
		Background: "#2040A0", Foreground: "#FFE080",
		Text: "deskhand e2e: The quick brown fox jumps over the lazy dog 0123456789",
	})
	gtk := d.StartGTK(t, "e2e gtk")
	d.Move(t, gtk.ID, x+600, y+300, 0, 0)
}

func TestServeToolsAndHelp(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	bin := deskhandBinary(t)
	out, err := exec.Command(bin, "serve", "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("deskhand serve --help: %v\n%s", err, out)
	}
	for _, flag := range []string{"-helper", "-virtual-display", "-coordinates", "-max-long-edge", "-max-tokens", "-format", "-jpeg-quality", "-state-dir", "-log-level"} {
		if !strings.Contains(string(out), flag) {
			t.Errorf("serve --help does not document %s:\n%s", flag, out)
		}
	}
	if err := exec.Command(bin, "serve", "--no-such-flag").Run(); err == nil {
		t.Errorf("deskhand serve --no-such-flag exited 0, want a usage error")
	}

	start := time.Now()
	// The coordinate tools alone (elements_e2e_test.go covers the element
	// family, teach_e2e_test.go the teaching tools).
	e := serve(t, d, "--tools", "coordinates", "--teach", "off")
	res, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("startup to tools/list: %v", time.Since(start))
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	// The registry declares the family's tools (the snapshots of
	// mcpserver's testdata/tools.json holds their surface).
	var want []string
	for _, tool := range mcpserver.Tools(mcpserver.ProfileDefault, mcpserver.ToolsCoordinates) {
		if !tool.Teaching {
			want = append(want, tool.Name)
		}
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("tools = %q, want %q", names, want)
	}
	if got := e.cs.InitializeResult().ServerInfo.Name; got != "deskhand" {
		t.Errorf("server name %q, want deskhand", got)
	}
}

// TestServeScreenshot: the screenshot of a known scene matches an xwd
// reference scaled independently, obeys both size limits, and zoom shows a
// region at native resolution.
func TestServeScreenshot(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	putScene(t, d, 40, 60)
	e := serve(t, d)

	var img *image.RGBA
	var ic *mcp.ImageContent
	ref := stableReference(t, d, func() { img, ic = e.screenshot("screenshot", nil) })
	if ic.MIMEType != "image/jpeg" {
		t.Errorf("MIME type %q, want image/jpeg", ic.MIMEType)
	}
	w, h := img.Rect.Dx(), img.Rect.Dy()
	if w != 1456 || h != 819 {
		t.Errorf("1920x1080 screenshot is %dx%d, want 1456x819", w, h)
	}
	if max(w, h) > 1568 || geometry.Tokens(w, h, 28) > 1568 {
		t.Errorf("%dx%d breaks the limits: long edge %d, %d tokens", w, h, max(w, h), geometry.Tokens(w, h, 28))
	}
	if e.shot.Display.Name != "screen" || e.shot.Display.Size != (geometry.Size{Width: 1920, Height: 1080}) {
		t.Errorf("screenshot reports display %+v", e.shot.Display)
	}
	want := boxScale(ref, ref.Rect, w, h)
	mae := meanAbsError(img, want)
	// The same comparison against the scene moved by 40 px must be far
	// worse, or the check proves nothing.
	shifted := boxScale(ref, image.Rect(40, 40, 1920, 1080), w, h)
	wrong := meanAbsError(img, shifted)
	t.Logf("screenshot vs reference: mean abs error %.2f; vs shifted reference %.2f", mae, wrong)
	if mae > 6 {
		t.Errorf("screenshot differs from the scaled xwd reference: mean absolute error %.2f per channel, want ≤ 6", mae)
	}
	if wrong < 2*mae || wrong < 6 {
		t.Errorf("the comparison does not discriminate: error against a shifted reference %.2f vs %.2f", wrong, mae)
	}

	// zoom: the xterm's top-left area at native resolution.
	region := append(e.at(40, 60), e.at(520, 380)...)
	res := e.ok("zoom", map[string]any{"region": region})
	var zoomed *image.RGBA
	for _, c := range res.Content {
		if zc, ok := c.(*mcp.ImageContent); ok {
			z, _, err := image.Decode(bytes.NewReader(zc.Data))
			if err != nil {
				t.Fatal(err)
			}
			zoomed = desktoptest.ToRGBA(z)
		}
	}
	if zoomed == nil {
		t.Fatalf("zoom returned no image: %s", resultText(res))
	}
	if zoomed.Rect.Dx() < 470 || zoomed.Rect.Dy() < 310 {
		t.Errorf("zoom of a ~480x320 screen region is only %v; want it near native resolution", zoomed.Rect)
	}
	var screenRect struct {
		ScreenRect geometry.Rect `json:"screen_rect"`
	}
	last := res.Content[len(res.Content)-1].(*mcp.TextContent)
	if err := json.Unmarshal([]byte(last.Text), &screenRect); err != nil {
		t.Fatal(err)
	}
	r := screenRect.ScreenRect
	if zoomed.Rect.Dx() == r.Width && zoomed.Rect.Dy() == r.Height {
		if mae := meanAbsError(zoomed, desktoptest.ToRGBA(ref.SubImage(image.Rect(r.X, r.Y, r.X+r.Width, r.Y+r.Height)))); mae > 4 {
			t.Errorf("zoom differs from the xwd reference of %+v: mean absolute error %.2f", r, mae)
		}
	} else {
		t.Errorf("zoom image %v does not match its reported screen rect %+v at native size", zoomed.Rect, r)
	}

	// Both limits are configurable, and PNG on request. The lock is one
	// per display, so the first server gives the desktop back first.
	e.cs.Close()
	e2 := serve(t, d, "--format", "png", "--max-long-edge", "1000", "--max-tokens", "500")
	img, ic = e2.screenshot("screenshot", nil)
	w, h = img.Rect.Dx(), img.Rect.Dy()
	if ic.MIMEType != "image/png" || max(w, h) > 1000 || geometry.Tokens(w, h, 28) > 500 {
		t.Errorf("with --format png --max-long-edge 1000 --max-tokens 500: %s %dx%d (%d tokens)", ic.MIMEType, w, h, geometry.Tokens(w, h, 28))
	}
	if gw, gh := geometry.ScaledSize(1920, 1080, geometry.Limits{MaxLongEdge: 1000, MaxTokens: 500}); w != gw || h != gh {
		t.Errorf("screenshot %dx%d, want %dx%d", w, h, gw, gh)
	}
}

// TestServeTwoMonitors: each monitor is shown through switch_display and
// coordinates land on the monitor the latest screenshot shows.
func TestServeTwoMonitors(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{Width: 3200, Height: 1080, Monitors: []desktoptest.Monitor{
		{Name: "LEFT", X: 0, Y: 0, Width: 1920, Height: 1080, Primary: true},
		{Name: "RIGHT", X: 1920, Y: 0, Width: 1280, Height: 1024},
	}})
	putScene(t, d, 1960, 100) // on the right monitor
	e := serve(t, d)

	e.screenshot("screenshot", nil)
	if e.shot.Display.Name != "LEFT" || len(e.shot.OtherDisplays) != 1 || e.shot.OtherDisplays[0].Name != "RIGHT" {
		t.Fatalf("first screenshot shows %q, others %+v; want the primary LEFT, listing RIGHT", e.shot.Display.Name, e.shot.OtherDisplays)
	}
	e.ok("mouse_move", map[string]any{"coordinate": []int{728, 409}})
	if x, y := e.mouseLocation(); x != 960 || y != 540 {
		t.Errorf("mouse_move [728, 409] on LEFT went to %d,%d, want 960,540", x, y)
	}

	var img *image.RGBA
	ref := stableReference(t, d, func() { img, _ = e.screenshot("switch_display", map[string]any{"display": "RIGHT"}) })
	if e.shot.Display.Name != "RIGHT" || e.shot.Display.Origin != (geometry.Point{X: 1920, Y: 0}) {
		t.Fatalf("switch_display RIGHT shows %+v", e.shot.Display)
	}
	want := boxScale(ref, image.Rect(1920, 0, 3200, 1024), img.Rect.Dx(), img.Rect.Dy())
	if mae := meanAbsError(img, want); mae > 6 {
		t.Errorf("RIGHT screenshot differs from xwd's view of 1280x1024+1920+0: mean absolute error %.2f", mae)
	}
	wrong := boxScale(ref, image.Rect(0, 0, 1280, 1024), img.Rect.Dx(), img.Rect.Dy())
	if mae := meanAbsError(img, wrong); mae < 10 {
		t.Errorf("RIGHT screenshot looks like the left monitor (error %.2f against it)", mae)
	}
	for _, c := range []struct{ x, y int }{{0, 0}, {612, 490}, {img.Rect.Dx() - 1, img.Rect.Dy() - 1}} {
		e.ok("mouse_move", map[string]any{"coordinate": []int{c.x, c.y}})
		wantX := 1920 + int(math.Floor((float64(c.x)+0.5)*1280/float64(img.Rect.Dx())))
		wantY := int(math.Floor((float64(c.y) + 0.5) * 1024 / float64(img.Rect.Dy())))
		if x, y := e.mouseLocation(); x != wantX || y != wantY {
			t.Errorf("mouse_move [%d, %d] on RIGHT went to %d,%d, want %d,%d", c.x, c.y, x, y, wantX, wantY)
		}
		res := e.ok("cursor_position", nil)
		if !strings.Contains(resultText(res), fmt.Sprintf("[%d, %d]", c.x, c.y)) {
			t.Errorf("cursor_position after mouse_move [%d, %d] = %q", c.x, c.y, resultText(res))
		}
	}
	// Back by id.
	e.screenshot("switch_display", map[string]any{"display": strconv.FormatUint(uint64(fnv32("LEFT")), 10)})
	if e.shot.Display.Name != "LEFT" {
		t.Fatalf("switch_display by LEFT's id shows %q", e.shot.Display.Name)
	}
	e.ok("mouse_move", map[string]any{"coordinate": []int{10, 10}})
	if x, y := e.mouseLocation(); x >= 1920 || x != 13 || y != 13 {
		t.Errorf("mouse_move [10, 10] on LEFT went to %d,%d, want 13,13", x, y)
	}
	e.bad("switch_display", map[string]any{"display": "CENTER"}, `no display "CENTER"`, `"LEFT"`, `"RIGHT"`)
}

// shellApp starts a zenity dialog through sh so the test can read what it
// printed and its exit status from files.
func shellApp(t *testing.T, d *desktoptest.Desktop, zenityArgs string) (w *desktoptest.Window, out, code string) {
	t.Helper()
	dir := t.TempDir()
	out, code = filepath.Join(dir, "out"), filepath.Join(dir, "code")
	script := fmt.Sprintf("zenity %s > %s; echo $? > %s.tmp; mv %s.tmp %s", zenityArgs, out, code, code, code)
	w = d.StartApp(t, desktoptest.App{Name: "sh", Args: []string{"-c", script}, Class: "Zenity"})
	d.Focus(t, w.ID)
	return w, out, code
}

// waitGone waits until the window manager no longer lists window id. X
// servers reuse a departed client's ids, so a window started before the
// old one is unlisted can carry its id.
func waitGone(t *testing.T, d *desktoptest.Desktop, id uint32) {
	t.Helper()
	waitFor(t, fmt.Sprintf("window %#x to be unlisted", id), 5*time.Second, func() bool {
		return !slices.Contains(d.ClientList(t), id)
	})
}

func waitExit(t *testing.T, code string) int {
	t.Helper()
	var status []byte
	waitFor(t, "the dialog to exit", 10*time.Second, func() bool {
		var err error
		status, err = os.ReadFile(code)
		return err == nil
	})
	n, err := strconv.Atoi(strings.TrimSpace(string(status)))
	if err != nil {
		t.Fatalf("exit status file: %q", status)
	}
	return n
}

// TestServeClickGTKButton: a click at the Yes button's position, read off
// the screenshot, triggers it in a real GTK application.
func TestServeClickGTKButton(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	w, _, code := shellApp(t, d, `--question --title "Proceed?" --text "Continue with the test?" --ok-label Yes --cancel-label No --width 400`)
	e := serve(t, d)
	e.screenshot("screenshot", nil)
	// GTK 3 (Debian's default theme) puts the buttons at the dialog's
	// bottom right, Yes rightmost: an 84x32 button whose centre is 50 px
	// from the right and 24 px from the bottom of the client area.
	c := d.WindowInfo(t, w.ID).Client
	yes := e.at(c.X+c.Width-50, c.Y+c.Height-24)
	e.ok("left_click", map[string]any{"coordinate": yes})
	if status := waitExit(t, code); status != 0 {
		t.Errorf("zenity --question exited %d after a click on Yes, want 0", status)
	}
}

// TestServeTypeAndKeys: type produces the exact text (Unicode, under a US
// and a German layout, leaving the keymap as it was), and key combos reach
// the focused application (select all, copy, read back).
func TestServeTypeAndKeys(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	e := serve(t, d)
	keymap := d.Run(t, "xmodmap", "-pke")

	for _, tc := range []struct{ layout, text string }{
		{"us", "Grüße aus Köln: 日本語 🙂 ok!"},
		{"de", "yz YZ @€{[]}~ äöüß Ærø ñ 日本 🙂 #'+*"},
	} {
		if tc.layout != "us" {
			desktoptest.Require(t, "setxkbmap")
			d.Run(t, "setxkbmap", tc.layout)
			keymap = d.Run(t, "xmodmap", "-pke")
		}
		w, out, code := shellApp(t, d, `--entry --title "Type here" --text "Type here"`)
		e.ok("type", map[string]any{"text": tc.text})
		e.ok("key", map[string]any{"text": "Return"})
		if status := waitExit(t, code); status != 0 {
			t.Fatalf("%s layout: zenity --entry exited %d", tc.layout, status)
		}
		waitGone(t, d, w.ID)
		got, _ := os.ReadFile(out)
		if string(got) != tc.text+"\n" {
			t.Errorf("%s layout: typed %q, zenity read %q", tc.layout, tc.text, got)
		}
		if after := d.Run(t, "xmodmap", "-pke"); after != keymap {
			t.Errorf("%s layout: the keyboard mapping changed after typing", tc.layout)
		}
	}
	d.Run(t, "setxkbmap", "us")

	// Key combos: select all and copy in a GTK entry, read it back through
	// read_clipboard and xclip.
	w, out, code := shellApp(t, d, `--entry --title "Keys" --text "Keys" --entry-text "select me please"`)
	e.ok("key", map[string]any{"text": "ctrl+a ctrl+c"})
	var clip string
	waitFor(t, "the copied text on the clipboard", 5*time.Second, func() bool {
		res := e.call("read_clipboard", nil)
		clip = resultText(res)
		return !res.IsError && clip == "select me please"
	})
	if x := strings.TrimRight(d.Run(t, "xclip", "-o", "-selection", "clipboard"), "\n"); x != "select me please" {
		t.Errorf("xclip reads %q from the clipboard, want %q", x, "select me please")
	}
	e.ok("key", map[string]any{"text": "End"})
	e.ok("type", map[string]any{"text": " more"})
	e.ok("key", map[string]any{"text": "shift+Home BackSpace"})
	e.ok("type", map[string]any{"text": "replaced"})
	e.ok("key", map[string]any{"text": "Return"})
	waitExit(t, code)
	waitGone(t, d, w.ID)
	if got, _ := os.ReadFile(out); string(got) != "replaced\n" {
		t.Errorf("after End, type, shift+Home BackSpace, type: zenity read %q, want %q", got, "replaced\n")
	}

	// write_clipboard, then paste with a key combo.
	w, out, code = shellApp(t, d, `--entry --title "Paste" --text "Paste"`)
	e.ok("write_clipboard", map[string]any{"text": "from the clipboard ✓"})
	e.ok("key", map[string]any{"text": "ctrl+v"})
	e.ok("key", map[string]any{"text": "Return"})
	waitExit(t, code)
	if got, _ := os.ReadFile(out); string(got) != "from the clipboard ✓\n" {
		t.Errorf("pasted %q, want %q", got, "from the clipboard ✓\n")
	}
}

// TestServeXtermMouse: double, triple, drag, right and middle clicks have
// their xterm effects, checked through the PRIMARY selection and what the
// terminal reads; scroll scrolls the scrollback.
func TestServeXtermMouse(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	dir := t.TempDir()
	pasted := filepath.Join(dir, "pasted")
	// 200 numbered lines of scrollback, then a known line, then cat
	// reading what is pasted.
	script := fmt.Sprintf(`seq 1 200; printf 'alpha beta gamma delta\n'; exec cat > %s`, pasted)
	w := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"+sb", "-bw", "0", "-class", "DeskhandMouse",
		"-geometry", "80x24+100+100", "-xrm", "XTerm*saveLines: 1000", "-e", "sh", "-c", script}, Class: "DeskhandMouse"})
	d.Focus(t, w.ID)
	e := serve(t, d)
	e.screenshot("screenshot", nil)
	// The default font is 6x13 with a 2 px inner border; the known line
	// is the 22nd row (0-based 21) once 200+1 lines have scrolled.
	cell := func(col, row int) []int {
		return e.at(w.Client.X+2+col*6+3, w.Client.Y+2+row*13+6)
	}
	primary := func() string {
		out, _ := d.Command("xclip", "-o", "-selection", "primary").Output()
		return string(out)
	}
	waitPrimary := func(what, want string) {
		t.Helper()
		deadline := time.Now().Add(3 * time.Second)
		for got := primary(); got != want; got = primary() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: PRIMARY is %q, want %q", what, got, want)
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
	// xterm counts clicks within its multi-click time (250 ms) as one
	// gesture: a pause separates gestures, as a model's think time does.
	pause := func() { e.ok("wait", map[string]any{"duration": 0.4}) }
	// Find the row holding the known line (the last rows hold it and
	// cat's empty input line): triple-click candidate rows, bottom up,
	// and read PRIMARY.
	row := 23
	for ; row >= 18; row-- {
		pause()
		e.ok("triple_click", map[string]any{"coordinate": cell(3, row)})
		if strings.HasPrefix(strings.TrimSpace(primary()), "alpha beta gamma delta") {
			break
		}
	}
	if row < 18 {
		t.Fatalf("triple_click found no row selecting the line %q; PRIMARY is %q", "alpha beta gamma delta", primary())
	}

	pause()
	e.ok("double_click", map[string]any{"coordinate": cell(8, row)}) // in "beta"
	waitPrimary(`double click selecting "beta"`, "beta")

	pause()
	e.ok("left_click_drag", map[string]any{"start_coordinate": cell(0, row), "coordinate": cell(9, row)})
	// Where the drag ends within the last character (the image is scaled)
	// decides whether xterm includes it.
	waitFor(t, `a drag selecting "alpha bet(a)"`, 3*time.Second, func() bool {
		p := primary()
		return p == "alpha bet" || p == "alpha beta"
	})

	// Right click extends the selection to the clicked word.
	pause()
	e.ok("double_click", map[string]any{"coordinate": cell(1, row)})
	waitPrimary(`double click selecting "alpha"`, "alpha")
	pause()
	e.ok("right_click", map[string]any{"coordinate": cell(13, row)}) // in "gamma"
	waitPrimary(`right click extending the selection to "alpha beta gamma"`, "alpha beta gamma")

	// Middle click pastes PRIMARY into the terminal; Return hands the
	// line to cat.
	pause()
	e.ok("middle_click", map[string]any{"coordinate": cell(40, row+1)})
	e.ok("key", map[string]any{"text": "Return"})
	waitFor(t, "the pasted line in cat's file", 5*time.Second, func() bool {
		b, _ := os.ReadFile(pasted)
		return string(b) == "alpha beta gamma\n"
	})

	// Scrolling up shows earlier lines; scrolling back down restores the
	// view.
	region := image.Rect(w.Client.X, w.Client.Y, w.Client.X+w.Client.Width, w.Client.Y+w.Client.Height)
	before := desktoptest.ToRGBA(d.Screenshot(t).SubImage(region))
	e.ok("scroll", map[string]any{"coordinate": cell(40, 10), "scroll_direction": "up", "scroll_amount": 5})
	var scrolled *image.RGBA
	waitFor(t, "the xterm to scroll up", 3*time.Second, func() bool {
		scrolled = desktoptest.ToRGBA(d.Screenshot(t).SubImage(region))
		return !bytes.Equal(scrolled.Pix, before.Pix)
	})
	e.ok("scroll", map[string]any{"coordinate": cell(40, 10), "scroll_direction": "down", "scroll_amount": 5})
	waitFor(t, "the xterm to scroll back down", 3*time.Second, func() bool {
		return bytes.Equal(desktoptest.ToRGBA(d.Screenshot(t).SubImage(region)).Pix, before.Pix)
	})
}

// TestServeDragMovesWindow: left_click_drag on a title bar moves the
// window.
func TestServeDragMovesWindow(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	w := d.StartGTK(t, "drag me")
	d.Move(t, w.ID, 200, 200, 0, 0)
	w = d.WindowInfo(t, w.ID)
	e := serve(t, d)
	e.screenshot("screenshot", nil)
	title := e.at(w.Frame.X+w.Frame.Width/2, w.Frame.Y+8)
	to := e.at(w.Frame.X+w.Frame.Width/2+300, w.Frame.Y+8+150)
	e.ok("left_click_drag", map[string]any{"start_coordinate": title, "coordinate": to})
	var moved *desktoptest.Window
	waitFor(t, "the window to move", 3*time.Second, func() bool {
		moved = d.WindowInfo(t, w.ID)
		return moved.Frame.X != w.Frame.X
	})
	dx, dy := moved.Frame.X-w.Frame.X, moved.Frame.Y-w.Frame.Y
	if math.Abs(float64(dx-300)) > 3 || math.Abs(float64(dy-150)) > 3 {
		t.Errorf("dragging the title bar by (300, 150) moved the window by (%d, %d)", dx, dy)
	}
}

// fillSpareKeycodes maps every keycode without a symbol to F35 so that a
// character the layout lacks cannot be typed, and returns a function that
// empties them again.
func fillSpareKeycodes(t *testing.T, d *desktoptest.Desktop) func() {
	t.Helper()
	var codes []string
	for _, line := range strings.Split(d.Run(t, "xmodmap", "-pke"), "\n") {
		f := strings.Fields(line)
		if len(f) == 3 && f[0] == "keycode" && f[2] == "=" {
			codes = append(codes, f[1])
		}
	}
	if len(codes) == 0 {
		t.Fatal("no spare keycodes to fill")
	}
	var fill, empty []string
	for _, c := range codes {
		fill = append(fill, "-e", "keycode "+c+" = F35")
		empty = append(empty, "-e", "keycode "+c+" =")
	}
	d.Run(t, "xmodmap", fill...)
	return func() { d.Run(t, "xmodmap", empty...) }
}

// TestServeBatch: an invalid third action runs nothing; a third action
// that fails on the desktop stops the batch after two, reporting the rest.
func TestServeBatch(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	e := serve(t, d)
	_, out, code := shellApp(t, d, `--entry --title "Batch" --text "Batch"`)
	e.screenshot("screenshot", nil)

	res := e.call("computer_batch", map[string]any{"actions": []any{
		map[string]any{"action": "type", "text": "ab"},
		map[string]any{"action": "type", "text": "cd"},
		map[string]any{"action": "key", "text": "ctrl+nosuchkey"},
		map[string]any{"action": "type", "text": "ef"},
	}})
	if !res.IsError || !strings.Contains(resultText(res), "Nothing was run") || !strings.Contains(resultText(res), `unknown key "nosuchkey"`) {
		t.Errorf("batch with an invalid third action: isError=%v %q", res.IsError, resultText(res))
	}

	restore := fillSpareKeycodes(t, d)
	res = e.call("computer_batch", map[string]any{"actions": []any{
		map[string]any{"action": "type", "text": "ab"},
		map[string]any{"action": "type", "text": "cd"},
		map[string]any{"action": "type", "text": "🙂"}, // needs a spare keycode: there is none
		map[string]any{"action": "type", "text": "ef"},
		map[string]any{"action": "key", "text": "Return"},
	}})
	restore()
	data, _ := res.StructuredContent.(map[string]any)
	if !res.IsError || data == nil {
		t.Fatalf("batch with a failing third action: isError=%v %q", res.IsError, resultText(res))
	}
	completed, _ := data["completed"].([]any)
	remaining, _ := data["remaining"].([]any)
	failed, _ := data["failed"].(map[string]any)
	if len(completed) != 2 || failed == nil || failed["index"] != 2.0 || len(remaining) != 2 ||
		!strings.Contains(fmt.Sprint(failed["error"]), "keycode") {
		t.Errorf("batch report: completed %v, failed %v, remaining %v", completed, failed, remaining)
	}
	// Only the first two ran: the entry holds "abcd".
	e.ok("computer_batch", map[string]any{"actions": []any{
		map[string]any{"action": "key", "text": "Return"},
	}})
	waitExit(t, code)
	if got, _ := os.ReadFile(out); string(got) != "abcd\n" {
		t.Errorf("the entry read %q after the batches, want %q", got, "abcd\n")
	}

	// A batch ending with a screenshot returns it.
	res = e.ok("computer_batch", map[string]any{"actions": []any{
		map[string]any{"action": "mouse_move", "coordinate": []int{100, 100}},
		map[string]any{"action": "wait", "duration": 0.1},
		map[string]any{"action": "screenshot"},
	}})
	hasImage := slices.ContainsFunc(res.Content, func(c mcp.Content) bool { _, ok := c.(*mcp.ImageContent); return ok })
	if !hasImage {
		t.Errorf("a batch ending with screenshot returned no image: %s", resultText(res))
	}
}

// TestServeBadInput: bad arguments are tool errors that say what is wrong,
// and the server keeps serving.
func TestServeBadInput(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	e := serve(t, d)
	e.screenshot("screenshot", nil)
	huge := strings.Repeat("x", 1<<20)
	e.bad("left_click", map[string]any{"coordinate": []int{1456, 100}}, "outside the 1456x819 screenshot")
	e.bad("left_click", map[string]any{"coordinate": []any{"NaN", 100}}, "not a finite number")
	e.bad("mouse_move", map[string]any{"coordinate": []int{-5, 100}}, "outside")
	e.bad("wait", map[string]any{"duration": -1}, "out of range")
	e.bad("hold_key", map[string]any{"text": "shift", "duration": -2}, "out of range")
	e.bad("key", map[string]any{"text": "ctrl+frobnicate"}, `unknown key "frobnicate"`)
	e.bad("type", map[string]any{"text": huge}, "over the limit")
	e.bad("write_clipboard", map[string]any{"text": huge}, "over the limit")
	e.bad("key", map[string]any{"text": huge}, "over the limit")
	e.bad("switch_display", map[string]any{"display": "HDMI-7"}, `no display "HDMI-7"`, `"screen"`)
	e.bad("zoom", map[string]any{"region": []int{100, 100, 50, 50}}, "is empty")
	e.bad("open_application", map[string]any{"app": "no-such-application-xyz"}, "no installed application")
	// Still serving, and still acting.
	e.ok("mouse_move", map[string]any{"coordinate": []int{728, 409}})
	if x, y := e.mouseLocation(); x != 960 || y != 540 {
		t.Errorf("after the bad calls, mouse_move went to %d,%d", x, y)
	}
	e.screenshot("screenshot", nil)
}

// TestServeHeldButtonReleased: a button held with left_mouse_down is
// released when a later action fails and when the client disconnects.
func TestServeHeldButtonReleased(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	e := serve(t, d)
	e.screenshot("screenshot", nil)

	e.ok("left_mouse_down", map[string]any{"coordinate": []int{100, 100}})
	if !e.buttonDown(1) {
		t.Fatal("button 1 is not down after left_mouse_down")
	}
	e.ok("mouse_move", map[string]any{"coordinate": []int{200, 200}})
	if !e.buttonDown(1) {
		t.Fatal("button 1 was released by mouse_move")
	}
	e.bad("left_click", map[string]any{"coordinate": []int{5000, 5000}}, "outside")
	if e.buttonDown(1) {
		t.Errorf("button 1 still down after a failed action")
	}

	// A failure on the desktop itself releases it too. (Typing needs an
	// approved app with the keyboard focus.)
	w := d.StartGTK(t, "typing target")
	d.Move(t, w.ID, 900, 500, 0, 0)
	d.Focus(t, w.ID)
	// The model sees the new window: drawn after its screenshot, it would
	// make the second press below stale.
	e.screenshot("screenshot", nil)
	e.ok("left_mouse_down", nil)
	restore := fillSpareKeycodes(t, d)
	e.bad("type", map[string]any{"text": "🙂"}, "keycode")
	restore()
	if e.buttonDown(1) {
		t.Errorf("button 1 still down after type failed on the desktop")
	}

	e.ok("left_mouse_down", nil)
	if !e.buttonDown(1) {
		t.Fatal("button 1 is not down after the second left_mouse_down")
	}
	// Closing stdin is a disconnect; Close returns once the server exited
	// (it is killed if it takes over 5 s, which the exit code would show).
	e.cs.Close()
	if st := e.cmd.ProcessState; st == nil || !st.Success() {
		t.Errorf("the server did not exit cleanly after the disconnect: %v", st)
	}
	if e.buttonDown(1) {
		t.Errorf("button 1 still down after the client disconnected")
	}
}

// TestServeOpenApplication launches a desktop entry and reports its window.
func TestServeOpenApplication(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	apps := filepath.Join(d.Dir(), "data", "applications")
	if err := os.MkdirAll(apps, 0o755); err != nil {
		t.Fatal(err)
	}
	entry := "[Desktop Entry]\nType=Application\nName=Deskhand Test Dialog\n" +
		"Exec=zenity --info --title \"Opened by deskhand\" --text hello\nStartupWMClass=Zenity\n"
	if err := os.WriteFile(filepath.Join(apps, "org.deskhand.TestDialog.desktop"), []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	e := serve(t, d)
	res := e.ok("open_application", map[string]any{"app": "TestDialog"})
	data, _ := res.StructuredContent.(map[string]any)
	win, _ := data["window"].(map[string]any)
	if data["desktop_id"] != "org.deskhand.TestDialog" || win == nil || win["title"] != "Opened by deskhand" {
		t.Errorf("open_application reported %v", data)
	}
	if id, ok := win["id"].(float64); ok {
		info := d.WindowInfo(t, uint32(id))
		if !info.Viewable || info.Title != "Opened by deskhand" {
			t.Errorf("the reported window %#x: %+v", uint32(id), info)
		}
	}
	e.bad("open_application", map[string]any{"app": "TestDialg"}, "close matches", "org.deskhand.TestDialog")
}

// TestServeVirtualDisplay: without DISPLAY, deskhand starts its own
// private desktop, works on it, and stops it when the client disconnects.
func TestServeVirtualDisplay(t *testing.T) {
	desktoptest.Require(t, "Xvfb", "openbox", "xdpyinfo")
	helper := desktoptest.HelperPath(t)
	bin := deskhandBinary(t)
	logs := &testLog{t: t}
	t.Cleanup(logs.stop)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DISPLAY=") && !strings.HasPrefix(kv, "WAYLAND_DISPLAY=") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(bin, append([]string{"serve", "--virtual-display", "1280x800", "--state-dir", "none", "--log-level", "debug"}, preapproveTestApps()...)...)
	cmd.Env = append(env, "DESKHAND_HELPER="+helper, "XDG_CONFIG_HOME="+t.TempDir())
	cmd.Stderr = logs
	client := mcp.NewClient(&mcp.Implementation{Name: "deskhand-e2e", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("starting deskhand serve --virtual-display 1280x800: %v", err)
	}
	e := &e2e{t: t, cs: cs, cmd: cmd}
	e.requestTestApps()
	img, _ := e.screenshot("screenshot", nil)
	if e.shot.Display.Size != (geometry.Size{Width: 1280, Height: 800}) || img.Rect.Dx() != 1280 || img.Rect.Dy() != 800 {
		t.Errorf("virtual display screenshot: display %+v, image %v; want 1280x800 at native size", e.shot.Display, img.Rect)
	}
	// Find the private server's display among deskhand's children.
	var xvfbPids []int
	for _, pid := range childPids(cmd.Process.Pid) {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.HasPrefix(string(b), "Xvfb\x00") {
			xvfbPids = append(xvfbPids, pid)
		}
	}
	if len(xvfbPids) != 1 {
		t.Fatalf("deskhand runs %d Xvfb children, want 1", len(xvfbPids))
	}
	e.ok("mouse_move", map[string]any{"coordinate": []int{640, 400}})
	res := e.ok("cursor_position", nil)
	if !strings.Contains(resultText(res), "[640, 400]") {
		t.Errorf("cursor_position on the virtual display = %q", resultText(res))
	}
	cs.Close()
	if st := cmd.ProcessState; st == nil || !st.Success() {
		t.Errorf("deskhand did not exit cleanly: %v", st)
	}
	waitFor(t, "the private Xvfb to stop", 10*time.Second, func() bool {
		return syscallKill0(xvfbPids[0]) != nil
	})
}

// childPids lists the processes whose parent is pid.
func childPids(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

func syscallKill0(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	if err := p.Signal(syscall.Signal(0)); err != nil {
		return err
	}
	// A zombie still answers signal 0; it counts as stopped.
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && strings.HasPrefix(strings.TrimSpace(s[i+1:]), "Z") {
			return fmt.Errorf("zombie")
		}
	}
	return nil
}

// inspectorVersion is the MCP Inspector release the interoperability test
// runs: the last whose CLI mode runs on Debian 12's Node.js 20 (later ones
// need Node 22; the standalone @modelcontextprotocol/inspector-cli
// packages do not start on their own, so the CLI is reached through the
// inspector's --cli mode, which runs it).
const inspectorVersion = "0.15.0"

// TestServeInspectorCLI: the official MCP Inspector's CLI lists the tools
// and calls request_access and screenshot against the binary, on a virtual
// display of its own.
func TestServeInspectorCLI(t *testing.T) {
	desktoptest.Require(t, "npx", "Xvfb", "openbox")
	helper := desktoptest.HelperPath(t)
	bin := deskhandBinary(t)
	configHome := t.TempDir()
	run := func(args ...string) []byte {
		t.Helper()
		full := append([]string{"-y", "@modelcontextprotocol/inspector@" + inspectorVersion, "-e", "XDG_CONFIG_HOME=" + configHome, "--cli",
			bin, "serve", "--virtual-display", "1280x800", "--state-dir", "none", "--helper", helper, "--allow", "xterm",
			"--tools", "coordinates", "--teach", "off"}, args...)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "npx", full...)
		cmd.Dir = t.TempDir()
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			msg := fmt.Sprintf("npx %s: %v\nstderr: %s\nstdout: %.2000s", strings.Join(full, " "), err, stderr.Bytes(), out)
			if strings.Contains(stderr.String(), "ENOTFOUND") || strings.Contains(stderr.String(), "EAI_AGAIN") || strings.Contains(stderr.String(), "ECONNREFUSED") {
				if desktoptest.InCI() {
					t.Fatalf("the npm registry is unreachable under CI: %s", msg)
				}
				t.Skipf("the npm registry is unreachable: %s", msg)
			}
			t.Fatal(msg)
		}
		return out
	}

	var list struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
	}
	out := run("--method", "tools/list")
	if err := json.Unmarshal(out, &list); err != nil {
		t.Fatalf("inspector tools/list output is not JSON: %v\n%.2000s", err, out)
	}
	if len(list.Tools) != 24 {
		t.Errorf("the inspector lists %d tools, want the 24 coordinate tools", len(list.Tools))
	}

	var call struct {
		Content []struct {
			Type     string `json:"type"`
			Data     string `json:"data"`
			MimeType string `json:"mimeType"`
			Text     string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	// The inspector cannot show the approval dialog: the pre-approved
	// app is granted, the other is refused with instructions.
	out = run("--method", "tools/call", "--tool-name", "request_access", "--tool-arg", "apps=xterm", "--tool-arg", "reason=inspector interoperability")
	if err := json.Unmarshal(out, &call); err != nil {
		t.Fatalf("inspector tools/call output is not JSON: %v\n%.2000s", err, out)
	}
	if call.IsError || len(call.Content) == 0 || !strings.Contains(call.Content[0].Text, "Granted: XTerm") {
		t.Errorf("inspector request_access: isError %v, %.2000s", call.IsError, out)
	}
	call.Content, call.IsError = nil, false
	out = run("--method", "tools/call", "--tool-name", "request_access", "--tool-arg", "apps=zenity", "--tool-arg", "reason=inspector interoperability")
	if err := json.Unmarshal(out, &call); err != nil {
		t.Fatalf("inspector tools/call output is not JSON: %v\n%.2000s", err, out)
	}
	if !call.IsError || len(call.Content) == 0 || !strings.Contains(call.Content[0].Text, "--allow zenity") {
		t.Errorf("inspector request_access for an app that is not pre-approved: isError %v, %.2000s", call.IsError, out)
	}
	// Each inspector call is a new session: its screenshot is refused
	// until request_access.
	call.Content, call.IsError = nil, false
	out = run("--method", "tools/call", "--tool-name", "screenshot")
	if err := json.Unmarshal(out, &call); err != nil {
		t.Fatalf("inspector tools/call output is not JSON: %v\n%.2000s", err, out)
	}
	if !call.IsError || len(call.Content) == 0 || call.Content[0].Type != "text" || !strings.Contains(call.Content[0].Text, "request_access") {
		t.Errorf("inspector screenshot before request_access: isError %v, %.2000s", call.IsError, out)
	}
}
