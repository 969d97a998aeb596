package check

import (
	"bytes"
	"context"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// repoRoot is the deskhand checkout this module sits in.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// need skips the test when something it needs is missing, or fails it
// under CI=true, where a missing tool must not pass unnoticed.
func need(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format+" (CI=true: a missing tool is a failure)", args...)
	}
	t.Skipf(format, args...)
}

// requireTool returns the path of a command, or skips or fails (see need).
func requireTool(t *testing.T, name, how string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		need(t, "%s is not installed: %s", name, how)
	}
	return p
}

// mcpbCLI is the mcpb CLI pinned in packaging/tools.
func mcpbCLI(t *testing.T) string {
	t.Helper()
	p := filepath.Join(repoRoot(t), "packaging", "tools", "node_modules", ".bin", "mcpb")
	if _, err := os.Stat(p); err != nil {
		need(t, "the pinned mcpb CLI is not installed at %s: run `make package-tools`", p)
	}
	return p
}

// dist is the output of packaging/build.sh; the tests that need it skip
// (or fail under CI) until `make package` has run.
func dist(t *testing.T) string {
	t.Helper()
	d := os.Getenv("DESKHAND_DIST")
	if d == "" {
		d = filepath.Join(repoRoot(t), "dist")
	}
	if _, err := os.Stat(filepath.Join(d, "npm")); err != nil {
		need(t, "no packages in %s: run `make package` first", d)
	}
	return d
}

// version is supervisor.Version, the one source of the version every
// package carries.
func version(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot(t), "supervisor", "supervisor.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^var Version = "([^"]+)"$`).FindSubmatch(src)
	if m == nil {
		t.Fatal(`supervisor/supervisor.go has no 'var Version = "..."' line`)
	}
	return string(m[1])
}

// run runs a command and returns its combined output, failing the test
// when it exits non-zero.
func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// isolatedEnv is the environment for a packaged deskhand: its own config,
// state and data directories, no DISPLAY (so --virtual-display decides),
// no DESKHAND_HELPER (which the Makefile sets for the other tests, and
// which would hide the helper the package carries) and no download, so
// the helper can only come from the package itself.
func isolatedEnv(t *testing.T) []string {
	t.Helper()
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "DISPLAY", k == "WAYLAND_DISPLAY", k == "HOME", strings.HasPrefix(k, "XDG_"), strings.HasPrefix(k, "DESKHAND_"):
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, "config"),
		"XDG_STATE_HOME="+filepath.Join(home, "state"),
		"XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_RUNTIME_DIR="+t.TempDir(),
		"DESKHAND_NO_DOWNLOAD=1",
		"npm_config_update_notifier=false",
	)
}

// checkDoctorHelper runs `deskhand doctor` through cmd and checks that it
// finds the helper the package carries, beside deskhand and verified
// against the package's SHA256SUMS. Doctor fails here (there is no
// display), so only its helper line is read.
func checkDoctorHelper(t *testing.T, cmd *exec.Cmd, helperDir string) {
	t.Helper()
	out, _ := cmd.CombinedOutput()
	want := filepath.Join(helperDir, "deskhand-helper") + " (beside the deskhand executable, verified against SHA256SUMS)"
	if !strings.Contains(string(out), want) {
		t.Errorf("deskhand doctor does not report %q:\n%s", want, out)
	}
}

// requireDesktopTools stops a test that lets deskhand start its own
// private desktop when Xvfb or openbox is missing.
func requireDesktopTools(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" || runtime.GOARCH != "amd64" {
		t.Skipf("the packaged Linux x64 build cannot run on %s/%s", runtime.GOOS, runtime.GOARCH)
	}
	for _, tool := range []string{"Xvfb", "openbox"} {
		requireTool(t, tool, "run `make deps`")
	}
}

// checkServes connects a real MCP client to cmd over stdio, lists the
// tools and takes a screenshot of the private desktop deskhand starts,
// which must be wantW x wantH (cmd must pre-approve xterm with --allow): the screenshot needs the capture helper,
// so it shows that the package's own helper was found and verified.
func checkServes(t *testing.T, cmd *exec.Cmd, wantW, wantH int) {
	t.Helper()
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	defer func() {
		if t.Failed() {
			t.Logf("deskhand stderr:\n%s", stderr.String())
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "deskhand-packaging-check", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connecting to %v: %v", cmd.Args, err)
	}
	defer cs.Close()
	if got := cs.InitializeResult().ServerInfo.Name; got != "deskhand" {
		t.Errorf("server name %q, want deskhand", got)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	for _, want := range []string{"request_access", "screenshot", "left_click", "type", "key"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s (has %d tools)", want, len(tools.Tools))
		}
	}
	// The client has no elicitation, so only a pre-approved app (the
	// caller's --allow) can be granted; nothing is visible before one is.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "request_access", Arguments: map[string]any{
		"apps": []string{"xterm"}, "reason": "checking the package"}})
	if err != nil || res.IsError {
		t.Fatalf("request_access: %v %s", err, resultText(res))
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "screenshot", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("calling screenshot: %v", err)
	}
	var shot *mcp.ImageContent
	for _, c := range res.Content {
		if ic, ok := c.(*mcp.ImageContent); ok {
			shot = ic
		}
	}
	if res.IsError || shot == nil {
		t.Fatalf("screenshot gave no image (IsError %v): %s", res.IsError, resultText(res))
	}
	img, _, err := image.Decode(bytes.NewReader(shot.Data))
	if err != nil {
		t.Fatalf("decoding the %s screenshot: %v", shot.MIMEType, err)
	}
	if b := img.Bounds(); b.Dx() != wantW || b.Dy() != wantH {
		t.Errorf("screenshot is %dx%d, want the %dx%d private desktop", b.Dx(), b.Dy(), wantW, wantH)
	}
}

// resultText is the text content of a tool result.
func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return text.String()
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
