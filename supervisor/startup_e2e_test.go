//go:build unix

package supervisor_test

// End-to-end test of "errors a client can show": a problem serve finds
// before the MCP handshake (here, no display at all) no longer ends the
// process before the client connects. The client completes the handshake,
// sees the tools, and every call returns the problem and its fix as a
// tool error; when the client leaves, serve exits 1 with the reason on
// stderr.
//
//	go test ./supervisor -run StartupProblem -v

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestStartupProblemIsAToolError(t *testing.T) {
	bin := deskhandBinary(t)
	home := t.TempDir()
	cmd := exec.Command(bin, "serve", "--virtual-display", "off", "--state-dir", t.TempDir())
	// No display of any kind: the environment has neither DISPLAY nor
	// WAYLAND_DISPLAY, as for a client started from a service or over ssh.
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "DISPLAY=") || strings.HasPrefix(kv, "WAYLAND_DISPLAY=") {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = append(env, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_RUNTIME_DIR="+t.TempDir())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "deskhand-startup-e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Second}, nil)
	if err != nil {
		t.Fatalf("connecting to serve without a display: %v (before this fix serve exited before the handshake)\nstderr:\n%s", err, stderr.String())
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	for _, want := range []string{"screenshot", "left_click", "request_access"} {
		if !names[want] {
			t.Errorf("tools/list lacks %s; got %d tools", want, len(tools.Tools))
		}
	}
	for _, call := range []mcp.CallToolParams{
		{Name: "screenshot", Arguments: map[string]any{}},
		{Name: "request_access", Arguments: map[string]any{"apps": []string{"xterm"}, "reason": "test"}},
	} {
		res, err := cs.CallTool(ctx, &call)
		if err != nil {
			t.Fatalf("CallTool(%s): %v (want a tool error, not a protocol error)", call.Name, err)
		}
		text := resultText(res)
		if !res.IsError || !strings.Contains(text, "no display") || !strings.Contains(text, "DISPLAY") || !strings.Contains(text, "deskhand doctor") {
			t.Errorf("CallTool(%s) = error %v, %q; want a tool error naming the missing display, its fix and doctor", call.Name, res.IsError, text)
		}
	}
	cs.Close() // closes serve's stdin and waits for it to exit
	if st := cmd.ProcessState; st == nil || st.ExitCode() != 1 {
		t.Errorf("serve's exit after the client left: %v; want exit status 1\nstderr:\n%s", st, stderr.String())
	}
	if !strings.Contains(stderr.String(), "no display") {
		t.Errorf("stderr does not carry the reason:\n%s", stderr.String())
	}
}
