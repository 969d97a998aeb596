//go:build unix

package supervisor_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestBenchMCP measures deskhand through a real MCP client over stdio,
// beside the same jobs done the way shell-based computer-use servers do
// them (an import+convert pipeline per screenshot, one xdotool process per
// action). It runs only under `make bench` (DESKHAND_BENCH=1) and prints
// `BENCH <name> <value> <unit>` lines (medians); it asserts no timings.
func TestBenchMCP(t *testing.T) {
	if os.Getenv("DESKHAND_BENCH") == "" {
		t.Skip("benchmarks run under `make bench` (DESKHAND_BENCH=1)")
	}
	desktoptest.Require(t, "import", "convert", "xdotool")
	d := newDesktop(t, desktoptest.Options{Width: 1920, Height: 1080, Depth: 24})
	putScene(t, d, 40, 60)
	sink := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"+sb", "-class", "DeskhandBench", "-geometry", "80x10+900+600",
		"-e", "sh", "-c", "stty -echo; exec cat > /dev/null"}, Class: "DeskhandBench"})

	// Startup: spawn, initialize, tools/list.
	var startups []time.Duration
	for range 10 {
		start := time.Now()
		e := serveRaw(t, d, nil, "--log-level", "warn")
		if _, err := e.cs.ListTools(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		startups = append(startups, time.Since(start))
		e.cs.Close()
	}
	report("mcp_startup_to_tools_list_ms", ms(median(startups)), "ms")

	// Without the effect's settling, which would dominate these
	// transport figures.
	e := serve(t, d, "--log-level", "warn", "--no-effect")
	call := e.benchCall
	shell := func(name string, args ...string) {
		cmd := d.Command(name, args...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v: %s", name, args, err, out)
		}
	}
	pair := func(name string, mcpTime, shellTime time.Duration) {
		report("mcp_"+name+"_ms", ms(mcpTime), "ms")
		report("shell_"+name+"_ms", ms(shellTime), "ms")
		report("shell_over_mcp_"+name, float64(shellTime)/float64(mcpTime), "x")
	}

	for range 5 {
		call("screenshot", nil) // warm up the helper and its buffers
	}
	mcpShot := timeIt(50, func(int) { call("screenshot", nil) })
	shellShot := timeIt(8, func(int) {
		shell("sh", "-c", "import -window root jpeg:- | convert - -resize 1456x819 -quality 80 jpeg:- > /dev/null")
	})
	pair("screenshot_1080p", mcpShot, shellShot)

	// Pointer actions over the bare desktop area at the bottom left.
	spot := func(i int) []int { return []int{100 + i%200, 700 + i%50} }
	mcpMove := timeIt(300, func(i int) { call("mouse_move", map[string]any{"coordinate": spot(i)}) })
	shellMove := timeIt(30, func(i int) {
		p := e.screenToGlobal(spot(i))
		shell("xdotool", "mousemove", strconv.Itoa(p[0]), strconv.Itoa(p[1]))
	})
	pair("mouse_move", mcpMove, shellMove)

	mcpClick := timeIt(100, func(i int) { call("left_click", map[string]any{"coordinate": spot(i)}) })
	shellClick := timeIt(30, func(i int) {
		p := e.screenToGlobal(spot(i))
		shell("xdotool", "mousemove", strconv.Itoa(p[0]), strconv.Itoa(p[1]), "click", "1")
	})
	pair("left_click", mcpClick, shellClick)

	// Typing into an xterm running cat.
	d.Focus(t, sink.ID)
	text := strings.Repeat("abcdefghij", 10)
	mcpType := timeIt(10, func(int) { call("type", map[string]any{"text": text}) })
	shellType := timeIt(3, func(int) { shell("xdotool", "type", text) })
	pair("type_100_ascii", mcpType, shellType)

	var moves []any
	for i := range 20 {
		moves = append(moves, map[string]any{"action": "mouse_move", "coordinate": spot(i)})
	}
	mcpBatch := timeIt(20, func(int) { call("computer_batch", map[string]any{"actions": moves}) })
	shellBatch := timeIt(3, func(int) {
		for i := range 20 {
			p := e.screenToGlobal(spot(i))
			shell("xdotool", "mousemove", strconv.Itoa(p[0]), strconv.Itoa(p[1]))
		}
	})
	pair("batch_20_moves", mcpBatch, shellBatch)

	// Memory after 1000 screenshots: the server and its helper.
	for range 1000 {
		call("screenshot", nil)
	}
	server := e.cmd.Process.Pid
	rss := rssKiB(t, server)
	helperRSS := rssKiB(t, helperPid(t, e))
	report("helper_rss_after_1000_screenshots_mib", float64(helperRSS)/1024, "MiB")
	rss += helperRSS
	report("mcp_server_plus_helper_rss_after_1000_screenshots_mib", float64(rss)/1024, "MiB")

	// The computer-use lock passes to the next server once this one is gone.
	e.cs.Close()
	benchBreakdown(t, d, spot)
}

// benchBreakdown splits an action's time into the server's share (from
// its debug records: the whole call, and each gate) and the rest, which
// is the MCP transport: JSON-RPC encoding and the stdio pipes, client
// side included. The debug records cost a little, so these run on a
// server of their own.
func benchBreakdown(t *testing.T, d *desktoptest.Desktop, spot func(int) []int) {
	logs := &benchLog{}
	e := serveLogged(t, d, logs, preapproveTestApps()...)
	e.requestTestApps()
	client := map[string][]time.Duration{}
	run := func(name string, n int, args func(i int) any) {
		for i := range n {
			start := time.Now()
			res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args(i)})
			if err != nil || res.IsError {
				t.Fatalf("%s: %v %s", name, err, resultText(res))
			}
			client[name] = append(client[name], time.Since(start))
		}
	}
	for range 5 {
		run("screenshot", 1, func(int) any { return nil })
	}
	client = map[string][]time.Duration{}
	run("screenshot", 30, func(int) any { return nil })
	run("mouse_move", 200, func(i int) any { return map[string]any{"coordinate": spot(i)} })
	run("left_click", 50, func(i int) any { return map[string]any{"coordinate": spot(i)} })
	// The floor under every tool call: an MCP ping is the same stdio
	// round trip and JSON-RPC dispatch with no tool, gate or helper.
	var pings []time.Duration
	for range 200 {
		start := time.Now()
		if err := e.cs.Ping(context.Background(), nil); err != nil {
			t.Fatalf("ping: %v", err)
		}
		pings = append(pings, time.Since(start))
	}
	report("breakdown_ping_ms", ms(median(pings)), "ms")
	calls, gates := logs.parse(t)
	inputs := logs.inputs(t)
	inputOf := map[string]string{"mouse_move": "mouse_move", "left_click": "click"}
	for _, tool := range []string{"screenshot", "mouse_move", "left_click"} {
		server := median(calls[tool])
		report("breakdown_"+tool+"_client_ms", ms(median(client[tool])), "ms")
		report("breakdown_"+tool+"_server_ms", ms(server), "ms")
		report("breakdown_"+tool+"_transport_ms", ms(median(client[tool])-server), "ms")
		var names []string
		for name := range gates[tool] {
			names = append(names, name)
		}
		sort.Strings(names)
		var all time.Duration
		for _, name := range names {
			m := median(gates[tool][name])
			all += m
			report("breakdown_"+tool+"_gate_"+name+"_ms", ms(m), "ms")
		}
		report("breakdown_"+tool+"_gates_ms", ms(all), "ms")
		report("breakdown_"+tool+"_action_ms", ms(server-all), "ms")
		// The action's share in the executor: the input (with a click's
		// press time) and what the gates do after it.
		if took := inputs[inputOf[tool]]; len(took) > 0 {
			report("breakdown_"+tool+"_input_ms", ms(median(took)), "ms")
		}
	}
}

// inputs reads the "input sent" records: the executor's time per input
// action, by kind.
func (l *benchLog) inputs(t *testing.T) map[string][]time.Duration {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string][]time.Duration{}
	for _, line := range strings.Split(l.buf.String(), "\n") {
		if !strings.Contains(line, `msg="input sent"`) {
			continue
		}
		fields := map[string]string{}
		for _, f := range strings.Fields(line) {
			if k, v, ok := strings.Cut(f, "="); ok {
				fields[k] = v
			}
		}
		d, err := time.ParseDuration(fields["took"])
		if err != nil {
			t.Fatalf("reading the time of %q: %v", line, err)
		}
		out[fields["what"]] = append(out[fields["what"]], d)
	}
	return out
}

// serveLogged is serveRaw at debug level with the server's records kept
// in logs rather than passed to the test log (there are thousands).
func serveLogged(t *testing.T, d *desktoptest.Desktop, logs *benchLog, args ...string) *e2e {
	t.Helper()
	bin := deskhandBinary(t)
	config := t.TempDir()
	full := append([]string{"serve", "--virtual-display", "off", "--state-dir", t.TempDir(), "--log-level", "debug"}, args...)
	cmd := exec.Command(bin, full...)
	cmd.Env = append(d.AppEnv(), "DESKHAND_HELPER="+desktoptest.HelperPath(t), "XDG_CONFIG_HOME="+config,
		"DESKHAND_POLICY_FILE="+filepath.Join(config, "policy.json"))
	cmd.Stderr = logs
	client := mcp.NewClient(&mcp.Implementation{Name: "deskhand-bench", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("starting %s %v: %v", bin, full, err)
	}
	t.Cleanup(func() { cs.Close() })
	return &e2e{t: t, d: d, cs: cs, cmd: cmd, configHome: config}
}

// benchLog keeps the server's stderr.
type benchLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *benchLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// parse reads the "tool call" records (the server's time per call, by
// tool) and the "gates passed" ones (each gate's time, by tool and gate).
func (l *benchLog) parse(t *testing.T) (calls map[string][]time.Duration, gates map[string]map[string][]time.Duration) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	calls, gates = map[string][]time.Duration{}, map[string]map[string][]time.Duration{}
	for _, line := range strings.Split(l.buf.String(), "\n") {
		fields := map[string]string{}
		for _, f := range strings.Fields(line) {
			if k, v, ok := strings.Cut(f, "="); ok {
				fields[k] = v
			}
		}
		tool := fields["tool"]
		switch {
		case strings.Contains(line, `msg="tool call"`):
			d, err := time.ParseDuration(fields["took"])
			if err != nil {
				t.Fatalf("reading the time of %q: %v", line, err)
			}
			calls[tool] = append(calls[tool], d)
		case strings.Contains(line, `msg="gates passed"`):
			if gates[tool] == nil {
				gates[tool] = map[string][]time.Duration{}
			}
			for k, v := range fields {
				if d, err := time.ParseDuration(v); err == nil && k != "time" {
					gates[tool][k] = append(gates[tool][k], d)
				}
			}
		}
	}
	return calls, gates
}

// screenToGlobal converts screenshot coordinates back to screen pixels,
// for the shell tools, the way the server does.
func (e *e2e) screenToGlobal(c []int) []int {
	s := e.shot
	if s.Image.Width == 0 {
		e.screenshot("screenshot", nil)
		s = e.shot
	}
	return []int{
		s.Display.Origin.X + (2*c[0]+1)*s.Display.Size.Width/(2*s.Image.Width),
		s.Display.Origin.Y + (2*c[1]+1)*s.Display.Size.Height/(2*s.Image.Height),
	}
}

func report(name string, value float64, unit string) {
	fmt.Printf("BENCH %s %s %s\n", name, strconv.FormatFloat(value, 'f', 3, 64), unit)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// timeIt is the median time of n runs of fn.
func timeIt(n int, fn func(i int)) time.Duration {
	samples := make([]time.Duration, n)
	for i := range n {
		start := time.Now()
		fn(i)
		samples[i] = time.Since(start)
	}
	return median(samples)
}

// benchCall calls a tool for a benchmark, which fails on any error.
func (e *e2e) benchCall(name string, args any) {
	e.t.Helper()
	res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		e.t.Fatalf("%s: %v %s", name, err, resultText(res))
	}
}

func median(s []time.Duration) time.Duration {
	c := append([]time.Duration(nil), s...)
	sort.Slice(c, func(i, j int) bool { return c[i] < c[j] })
	return c[len(c)/2]
}

func rssKiB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("reading the memory of pid %d: %v", pid, err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Fatalf("no VmRSS for pid %d", pid)
	return 0
}
