//go:build unix

package supervisor_test

// End-to-end test of the action record: through a real MCP client on
// Xvfb + openbox, every tool call leaves one line in actions.jsonl in the
// state directory, with the gates' decisions (a refusal names its gate),
// and what the agent typed is not in it unless the user opted in.
// `deskhand log` shows the same calls.
//
//	go test ./supervisor -run ActionRecord -v

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/record"
)

func TestActionRecord(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	// An entry dialog: typing (spaces included) only fills its field.
	target := d.StartApp(t, desktoptest.App{Name: "zenity", Args: []string{"--entry", "--title", "approved", "--text", "type here"}, Class: "Zenity"})
	d.Move(t, target.ID, 60, 60, 0, 0)
	// Approved at the read tier: a click on it is refused by a gate.
	other := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"-geometry", "40x12+700+400"}, Class: "XTerm"})
	other = d.WindowInfo(t, other.ID)
	d.Focus(t, target.ID)

	const secret = "hunter2 is the password"
	for _, reveal := range []bool{false, true} {
		state := t.TempDir()
		args := []string{"--allow", "zenity=full", "--allow", "xterm=read", "--state-dir", state}
		if reveal {
			args = append(args, "--record-text")
		}
		d.Focus(t, target.ID)
		e := gatedServer(t, d, nil, args...)
		e.access([]string{"zenity", "xterm"})
		e.screenshot("screenshot", nil)
		e.ok("type", map[string]any{"text": secret})
		x, y := center(other, 0, 0)
		if res := e.call("left_click", map[string]any{"coordinate": e.at(x, y)}); !res.IsError {
			t.Fatalf("a click on a read-tier app was allowed: %s", resultText(res))
		}
		e.cs.Close()

		raw, err := os.ReadFile(filepath.Join(state, record.FileName))
		if err != nil {
			t.Fatalf("reading the action record: %v", err)
		}
		var entries []record.Entry
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			var e record.Entry
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("a record line is not an entry: %v: %s", err, sc.Text())
			}
			entries = append(entries, e)
		}
		var tools []string
		for _, e := range entries {
			tools = append(tools, e.Tool+":"+e.Result)
		}
		want := "request_access:ok screenshot:ok type:ok left_click:error"
		if got := strings.Join(tools, " "); got != want {
			t.Fatalf("record (reveal %v) has calls %q, want %q", reveal, got, want)
		}
		typed, click := entries[2], entries[3]
		if len(typed.Gates) == 0 {
			t.Errorf("the type call's record has no gate decisions: %+v", typed)
		}
		for _, g := range typed.Gates {
			if !g.Allow {
				t.Errorf("the allowed type call records a refusal: %+v", g)
			}
		}
		refused := false
		for _, g := range click.Gates {
			if !g.Allow && g.Reason != "" && strings.Contains(click.Error, g.Reason) {
				refused = true
			}
		}
		if !refused || click.Error == "" || click.Session == "" {
			t.Errorf("the refused click's record does not name the refusing gate, the error and the session: %+v", click)
		}
		if has := bytes.Contains(raw, []byte("hunter2")); has != reveal {
			t.Errorf("typed text in the record = %v with --record-text %v:\n%s", has, reveal, raw)
		}
		if !reveal && !strings.Contains(string(typed.Args), "[redacted: 23 characters]") {
			t.Errorf("the type call's arguments are not marked redacted: %s", typed.Args)
		}

		out, err := exec.Command(deskhandBinary(t), "log", "--state-dir", state).CombinedOutput()
		if err != nil {
			t.Fatalf("deskhand log: %v\n%s", err, out)
		}
		if s := string(out); !strings.Contains(s, "left_click") || !strings.Contains(s, "refused by") || strings.Count(s, "\n") < 4 {
			t.Errorf("deskhand log does not show the calls and the refusal:\n%s", s)
		}
	}
}
