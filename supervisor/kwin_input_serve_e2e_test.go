package supervisor_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// kwinServe starts `deskhand serve` on k's session and connects a real MCP
// client. The server runs as root like the sway tests' one; its helper runs
// as the session's user through setpriv (which execs it, so KWin reads the
// authorized executable from /proc/PID/exe), as in a real Plasma session
// where both are the user's.
func kwinServe(t *testing.T, k *desktoptest.KWin, args ...string) *e2e {
	t.Helper()
	bin := deskhandBinary(t)
	helper := desktoptest.HelperPath(t)
	wrapper := filepath.Join(k.Dir(), "helper-as-user")
	script := "#!/bin/sh\nexec " + strings.Join(k.AsUser(helper), " ") + " \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	logs := &testLog{t: t}
	t.Cleanup(logs.stop)
	config := t.TempDir()
	full := append([]string{"serve", "--state-dir", t.TempDir(), "--log-level", "debug"}, args...)
	cmd := exec.Command(bin, full...)
	cmd.Env = append(k.UserEnv(), "DISPLAY=", "DESKHAND_HELPER="+wrapper, "XDG_CONFIG_HOME="+config,
		"DESKHAND_POLICY_FILE="+filepath.Join(config, "policy.json"))
	cmd.Stderr = logs
	client := mcp.NewClient(&mcp.Implementation{Name: "deskhand-kwin-e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("starting %s %v: %v", bin, full, err)
	}
	t.Cleanup(func() { cs.Close() })
	return &e2e{t: t, cs: cs, cmd: cmd, configHome: config}
}

// kwinProbeApp is the app_id KWin gives the probe, for --allow.
func kwinProbeApp(t *testing.T, k *desktoptest.KWin) string {
	t.Helper()
	for _, w := range k.Windows(t) {
		if strings.HasPrefix(w.Caption, "deskhand kwin probe") {
			return w.AppID
		}
	}
	t.Fatal("KWin lists no probe window")
	return ""
}

// TestKWinServeClickAndType: through serve and a real MCP client, with
// every gate live on KWin's window list, left_click triggers the approved
// GTK probe's button, and type arrives exactly under KWin's de layout.
func TestKWinServeClickAndType(t *testing.T) {
	t.Run("left_click", func(t *testing.T) {
		k := startKWinInput(t, "")
		out := startKWinProbe(t, k, "button")
		app := kwinProbeApp(t, k)
		e := kwinServe(t, k, "--allow", app+"=full")
		e.access([]string{app})
		e.screenshot("screenshot", nil)
		e.ok("left_click", map[string]any{"coordinate": e.at(kwinScreenW/2, kwinScreenH/2)})
		wlWaitFile(t, out, func(s string) bool { return s == "clicked\n" })
	})
	t.Run("type", func(t *testing.T) {
		k := startKWinInput(t, "de")
		out := startKWinProbe(t, k, "entry")
		wlWaitFile(t, out+".focus", func(s string) bool { return s == "focused\n" })
		app := kwinProbeApp(t, k)
		e := kwinServe(t, k, "--allow", app+"=full")
		e.access([]string{app})
		e.screenshot("screenshot", nil)
		typable := "Grüße, ! yz ~|\\ @€"
		e.ok("type", map[string]any{"text": typable})
		wlWaitFile(t, out, func(s string) bool { return s == typable })
		// What de cannot make is refused with the characters named, and
		// nothing of it typed.
		e.bad("type", map[string]any{"text": "世界"}, "世", "界")
		e.ok("type", map[string]any{"text": "#"})
		if got := wlWaitFile(t, out, func(s string) bool { return strings.HasSuffix(s, "#") }); got != typable+"#" {
			t.Fatalf("after the refusal the entry holds %q, want %q", got, typable+"#")
		}
	})
}
