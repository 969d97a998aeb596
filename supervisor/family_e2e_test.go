//go:build unix

package supervisor_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestSafetyAppFamily: GNOME Terminal's preferences window is a program
// of its own (/usr/libexec/gnome-terminal-preferences) that the catalog
// does not list, but it ships in the terminal's package, so it is GNOME
// Terminal: asking for it grants nothing beyond the terminal's click
// tier, and the custom command that a new terminal window runs cannot be
// typed there. Before, it was an unknown app at the full tier: the typed
// command ran in the next terminal window.
//
// The model's part is what a model would do: approve the terminal, ask
// for its preferences, click its way to the profile's Command page, tick
// "Run a custom command" and click the command field, all plain clicks
// the click tier allows; then type. The test types the rest of the
// command around the model's text ("touch MARKER SENTINEL"), so the new
// window running it proves that the setting works and that the model's
// text, had it arrived, would have run too.
func TestSafetyAppFamily(t *testing.T) {
	const prefsExe = "/usr/libexec/gnome-terminal-preferences"
	desktoptest.Require(t, "gnome-terminal", "gdbus", prefsExe)
	d := newDesktop(t, desktoptest.Options{})
	d.StartAccessibility(t) // for its private session bus, which the terminal needs
	// The server and the preferences share their settings through a key
	// file, as they would through dconf.
	settingsEnv := "GSETTINGS_BACKEND=keyfile"
	keyfile := filepath.Join(d.Dir(), "config", "glib-2.0", "settings", "keyfile")
	server := exec.Command("/usr/libexec/gnome-terminal-server")
	server.Env = append(d.AppEnv(), settingsEnv)
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	wait := exec.Command("gdbus", "wait", "--session", "--timeout", "30", "org.gnome.Terminal")
	wait.Env = server.Env
	if out, err := wait.CombinedOutput(); err != nil {
		t.Fatalf("gnome-terminal-server did not take its bus name: %v %s", err, out)
	}
	// `gnome-terminal --preferences` asks the server, which starts the
	// preferences program; the shell stays so that StartApp has a process.
	w := d.StartApp(t, desktoptest.App{Name: "sh", Args: []string{"-c", "gnome-terminal --preferences && exec sleep 600"},
		Class: "Gnome-terminal-preferences", Env: []string{settingsEnv}})
	if exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(w.PID), "exe")); exe != prefsExe {
		t.Fatalf("the preferences window %#x belongs to %q, want %s", w.ID, exe, prefsExe)
	}

	u := &user{answer: acceptBut()}
	e := serveRaw(t, d, u.options())
	e.ok("request_access", map[string]any{"apps": []string{"GNOME Terminal"}, "reason": "look at the terminal"})
	res := e.call("request_access", map[string]any{"apps": []string{"gnome-terminal-preferences"}, "reason": "change a setting"})
	if txt := resultText(res); res.IsError || !strings.Contains(txt, "GNOME Terminal at the click tier") || strings.Contains(txt, "at the full tier") {
		t.Errorf("request_access for the preferences = %v %q, want GNOME Terminal's click tier", res.IsError, txt)
	}

	// A click aims at the latest screenshot; while the window still
	// repaints, deskhand refuses it as stale, and a model takes another.
	click := func(what string, dx, dy int) {
		t.Helper()
		var res *mcp.CallToolResult
		waitFor(t, "a click on "+what+" to pass", 10*time.Second, func() bool {
			e.screenshot("screenshot", nil)
			res = e.call("left_click", map[string]any{"coordinate": e.at(w.Client.X+dx, w.Client.Y+dy)})
			return !res.IsError || !strings.Contains(resultText(res), "stale screenshot")
		})
		if res.IsError {
			t.Fatalf("clicking %s: %s", what, resultText(res))
		}
	}
	// Offsets in the preferences' default 801x592 layout (GTK 3, DejaVu).
	click("the profile", 50, 229)
	waitFor(t, "the profile's page", 10*time.Second, func() bool { return strings.Contains(d.WindowInfo(t, w.ID).Title, "Profile") })
	click("the Command tab", 428, 31)
	click("Run a custom command", 185, 103)
	waitFor(t, "the custom command to be on", 10*time.Second, func() bool {
		b, _ := os.ReadFile(keyfile)
		return strings.Contains(string(b), "use-custom-command=true")
	})
	click("the command field", 565, 137)

	// The command's words come in order: the test's "touch ", the
	// model's marker, the test's sentinel. Once the sentinel is in the
	// settings, so is whatever the model got typed.
	dir := t.TempDir()
	sentinel, marker := filepath.Join(dir, "sentinel"), filepath.Join(dir, "marker")
	d.Run(t, "xdotool", "type", "--delay", "20", "touch ")
	if res := e.call("type", map[string]any{"text": marker}); !res.IsError || !strings.Contains(resultText(res), "click tier") {
		t.Errorf("type into the preferences = %v %q, want a click-tier refusal", res.IsError, resultText(res))
	}
	d.Run(t, "xdotool", "type", "--delay", "20", " "+sentinel)
	waitFor(t, "the command to reach the settings", 10*time.Second, func() bool {
		b, _ := os.ReadFile(keyfile)
		return strings.Contains(string(b), sentinel)
	})
	open := exec.Command("gnome-terminal", "--window")
	open.Env = server.Env
	if out, err := open.CombinedOutput(); err != nil {
		t.Fatalf("opening a terminal window: %v %s", err, out)
	}
	waitFor(t, "the new terminal window to run the custom command", 20*time.Second, func() bool { _, err := os.Stat(sentinel); return err == nil })
	if _, err := os.Stat(marker); err == nil {
		b, _ := os.ReadFile(keyfile)
		t.Fatalf("the command typed through deskhand ran: %s exists; settings:\n%s", marker, b)
	}
}
