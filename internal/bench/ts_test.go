//go:build unix

package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestBenchTypeScript drives `deskhand serve` through the TypeScript MCP
// SDK client (ts/bench.mjs), which most MCP clients are built on, on a
// busy scene: a plasma-fractal root background, two xterms full of text
// and a zenity dialog. The peer computer-use-mcp is measured in the same
// run when npm can install it. Node and npm are needed; without them the
// benchmark is skipped with a message (it is not part of `make test`).
func TestBenchTypeScript(t *testing.T) {
	if os.Getenv("DESKHAND_BENCH") == "" {
		t.Skip("benchmarks run under `make bench` (DESKHAND_BENCH=1)")
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the TypeScript SDK benchmark needs %s (Node 20 or later), which is not on PATH: install Node.js to run it", tool)
		}
	}
	desktoptest.Require(t, "convert", "display", "xterm", "zenity")
	dir := installTSBench(t)
	bin := deskhandBin(t)

	d := desktoptest.Start(t, desktoptest.Options{Width: 1920, Height: 1080, Depth: 24})
	paintBusyScene(t, d)

	config := t.TempDir()
	apps := []string{"xterm", "zenity"}
	cmdline := []string{bin, "serve", "--virtual-display", "off", "--state-dir", t.TempDir(), "--log-level", "warn"}
	for _, app := range apps {
		cmdline = append(cmdline, "--allow", app+"=full")
	}
	cmdJSON, _ := json.Marshal(cmdline)
	appsJSON, _ := json.Marshal(apps)
	env := append(d.AppEnv(), "DESKHAND_HELPER="+desktoptest.HelperPath(t), "XDG_CONFIG_HOME="+config,
		"DESKHAND_POLICY_FILE="+filepath.Join(config, "policy.json"),
		"DESKHAND_CMD="+string(cmdJSON), "DESKHAND_APPS="+string(appsJSON))
	if peer := filepath.Join(dir, "node_modules", "computer-use-mcp", "dist", "main.js"); fileExists(peer) {
		env = append(env, "PEER_MAIN="+peer)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join(dir, "bench.mjs"))
	cmd.Dir, cmd.Env = dir, append(env, "CHANGE_PIPES=1")
	cmd.ExtraFiles = changePipes(t, d.ChangingWindow(t, 1200, 200, 240, 120))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "BENCH "):
			fmt.Println(line)
		case strings.HasPrefix(line, "NOTE "):
			fmt.Println(line)
		default:
			t.Log(line)
		}
	}
	if err != nil {
		t.Fatalf("node bench.mjs: %v\n%s", err, stderr.String())
	}
}

// changePipes returns the two pipe ends bench.mjs gets as file
// descriptors 3 and 4 (see CHANGE_PIPES there): each byte it writes to 3
// runs change, and a byte back on 4 says the change is drawn.
func changePipes(t *testing.T, change func(int)) []*os.File {
	t.Helper()
	askR, askW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ackR, ackW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, f := range []*os.File{askR, askW, ackR, ackW} {
			f.Close()
		}
	})
	go func() {
		b := make([]byte, 1)
		for i := 0; ; i++ {
			if _, err := askR.Read(b); err != nil {
				return // the script exited and the test closed its end
			}
			change(i)
			if _, err := ackW.Write(b); err != nil {
				return
			}
		}
	}()
	return []*os.File{askW, ackR}
}

// installTSBench copies ts/ into a temporary directory and installs its
// packages there with npm; a failed install skips the benchmark.
func installTSBench(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"package.json", "bench.mjs"} {
		b, err := os.ReadFile(filepath.Join("ts", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--loglevel", "error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("the TypeScript SDK benchmark is skipped: npm could not install @modelcontextprotocol/sdk (is the npm registry reachable?): %v\n%s", err, out)
	}
	return dir
}

// deskhandBin is $DESKHAND_BIN (make bench sets it), or a fresh build.
func deskhandBin(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("DESKHAND_BIN"); p != "" {
		return p
	}
	root, err := desktoptest.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "deskhand")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/deskhand")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building deskhand: %v\n%s", err, out)
	}
	return bin
}

// paintBusyScene sets a seeded plasma fractal as the root background and
// opens two xterms full of text and a zenity dialog over it.
func paintBusyScene(t *testing.T, d *desktoptest.Desktop) {
	t.Helper()
	bg := filepath.Join(t.TempDir(), "bg.png")
	if b, err := exec.Command("convert", "-seed", "7", "-size", "1920x1080", "plasma:fractal", bg).CombinedOutput(); err != nil {
		t.Fatalf("making the background: %v\n%s", err, b)
	}
	// display sets the root window's background and exits; it reports a
	// failure to find a window manager's virtual root, which is harmless.
	_ = d.Command("display", "-window", "root", bg).Run()
	var text strings.Builder
	for i := range 60 {
		fmt.Fprintf(&text, "%03d The quick brown fox jumps over the lazy dog; Pack my box with five dozen liquor jugs. 0123456789\r\n", i)
	}
	d.StartXterm(t, desktoptest.XtermOptions{Title: "bench-a", Geometry: "100x40+40+40", Background: "#202840", Foreground: "#e0e0ff", Text: text.String()})
	d.StartXterm(t, desktoptest.XtermOptions{Title: "bench-b", Geometry: "90x30+900+400", Background: "#f4f0e0", Foreground: "#202020", Text: text.String()})
	d.StartGTK(t, "bench dialog")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
