//go:build unix

package supervisor_test

// End-to-end tests of malformed requests and the computer_batch duration
// cap: the real binary over raw stdio pipes (the handshake written by
// hand, so that the test can send what no SDK client would), and the
// go-sdk client for the batch cap.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// rawServer is `deskhand serve` on raw pipes.
type rawServer struct {
	t     *testing.T
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan []byte // stdout, one frame a line; closed at EOF
}

func startRaw(t *testing.T, d *desktoptest.Desktop) *rawServer {
	t.Helper()
	logs := &testLog{t: t}
	t.Cleanup(logs.stop)
	configHome := t.TempDir()
	cmd := exec.Command(deskhandBinary(t), "serve", "--virtual-display", "off", "--state-dir", t.TempDir(), "--log-level", "debug")
	cmd.Env = append(d.AppEnv(), "DESKHAND_HELPER="+desktoptest.HelperPath(t), "XDG_CONFIG_HOME="+configHome, "DESKHAND_POLICY_FILE="+filepath.Join(configHome, "policy.json"))
	cmd.Stderr = logs
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting deskhand serve: %v", err)
	}
	r := &rawServer{t: t, cmd: cmd, in: in, lines: make(chan []byte, 64)}
	go func() {
		defer close(r.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			r.lines <- bytes.Clone(sc.Bytes())
		}
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	r.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if resp := r.await(`1`); resp.Error != nil {
		t.Fatalf("initialize: %s", resp.Error.Message)
	}
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return r
}

func (r *rawServer) send(line string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, line+"\n"); err != nil {
		r.t.Fatalf("writing to the server: %v (the server is gone)", err)
	}
}

type rawResponse struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Method string `json:"method"`
}

// await returns the first response whose id is id (raw JSON), skipping
// notifications; before it, it returns every other response it read.
func (r *rawServer) await(id string) rawResponse {
	resp, _ := r.awaitAfter(id)
	return resp
}

func (r *rawServer) awaitAfter(id string) (rawResponse, []rawResponse) {
	r.t.Helper()
	var before []rawResponse
	deadline := time.After(time.Minute)
	for {
		select {
		case line, ok := <-r.lines:
			if !ok {
				r.t.Fatalf("the server closed stdout before answering id %s: it stopped serving (exit: %v)", id, r.cmd.Wait())
			}
			var resp rawResponse
			if err := json.Unmarshal(line, &resp); err != nil {
				r.t.Fatalf("the server wrote a line that is not JSON: %q: %v", line, err)
			}
			if resp.Method != "" {
				continue
			}
			if string(resp.ID) == id {
				return resp, before
			}
			before = append(before, resp)
		case <-deadline:
			r.t.Fatalf("no answer to id %s within a minute", id)
		}
	}
}

// anyError is a want for an error response of any code.
const anyError = 1

// TestSafetyMalformedRequests sends each malformed line to a fresh
// server, then all of them to one: each gets its JSON-RPC error (or is
// dropped where JSON-RPC has nothing to answer), and ping and tools/list
// still answer after it. Before the validating transport, the go-sdk's
// stdio connection ended the session, and the server, on the first line
// it could not decode.
func TestSafetyMalformedRequests(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	nested := strings.Repeat("[", 1200) + strings.Repeat("]", 1200)
	long := `{"jsonrpc":"2.0","id":99,"method":"ping","params":{"pad":"` + strings.Repeat("x", 17<<20) + `"}}`
	cases := []struct {
		name string
		line string
		// want is the error code of the answer, 0 for no answer at all;
		// id the answer's id (raw JSON).
		want int
		id   string
	}{
		{"not JSON", `hello there`, -32700, "null"},
		{"truncated JSON", `{"jsonrpc":"2.0","id":2,"method":"ping"`, -32700, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":3,"method":"ping"}]`, -32600, "null"},
		{"empty batch", `[]`, -32600, "null"},
		{"null", `null`, -32600, "null"},
		{"string", `"tools/list"`, -32600, "null"},
		{"number", `42`, -32600, "null"},
		{"wrong version", `{"jsonrpc":"1.0","id":4,"method":"ping"}`, -32600, "4"},
		{"no version", `{"id":5,"method":"ping"}`, -32600, "5"},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, "null"},
		{"array id", `{"jsonrpc":"2.0","id":[6],"method":"ping"}`, -32600, "null"},
		{"null id", `{"jsonrpc":"2.0","id":null,"method":"ping"}`, -32600, "null"},
		{"fractional id", `{"jsonrpc":"2.0","id":7.5,"method":"ping"}`, -32600, "null"},
		{"invalid UTF-8", "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{\"name\":\"zoom\",\"arguments\":{\"region\":\"\xff\xfe\"}}}", -32700, "8"},
		{"nested 1200 deep", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"screenshot","arguments":{"a":` + nested + `}}}`, -32600, "9"},
		{"over-long line", long, -32600, "null"},
		{"missing method", `{"jsonrpc":"2.0","id":10,"params":{}}`, -32600, "10"},
		{"missing method and id", `{"jsonrpc":"2.0"}`, -32600, "null"},
		{"method not a string", `{"jsonrpc":"2.0","id":11,"method":5}`, -32600, "11"},
		{"huge id", `{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, -32600, "null"},
		// Well-formed but wrong: the SDK answers these itself.
		{"params not structured", `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":"x"}`, anyError, "12"},
		{"unknown method", `{"jsonrpc":"2.0","id":13,"method":"no/such/method"}`, -32601, "13"},
		// Dropped, as JSON-RPC asks: nothing to answer.
		{"empty line", ``, 0, ""},
		{"blank line", " \t \r", 0, ""},
		{"unknown notification", `{"jsonrpc":"2.0","method":"notifications/no_such_thing"}`, 0, ""},
		{"response to nothing", `{"jsonrpc":"2.0","id":424242,"result":{}}`, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := startRaw(t, d)
			r.send(c.line)
			r.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
			resp, before := r.awaitAfter(`"after"`)
			if resp.Error != nil {
				t.Fatalf("ping after %s: %s", c.name, resp.Error.Message)
			}
			if c.want != 0 && c.id != "null" && len(before) == 0 {
				// The SDK answers a well-formed request on a goroutine of
				// its own, so its answer may come after the ping's.
				before = append(before, r.await(c.id))
			}
			if c.want == 0 {
				if len(before) != 0 {
					t.Errorf("%s was answered %+v, want it dropped", c.name, before)
				}
			} else {
				if len(before) != 1 || before[0].Error == nil {
					t.Fatalf("%s was answered %+v before the ping, want one error response", c.name, before)
				}
				e := before[0]
				if (c.want != anyError && e.Error.Code != c.want) || string(e.ID) != c.id {
					t.Errorf("%s: answer code %d id %s (%q), want code %d id %s", c.name, e.Error.Code, e.ID, e.Error.Message, c.want, c.id)
				}
				if e.Error.Message == "" {
					t.Errorf("%s: the error has no message", c.name)
				}
				t.Logf("%s → %d %s", c.name, e.Error.Code, e.Error.Message)
			}
			r.send(`{"jsonrpc":"2.0","id":"list","method":"tools/list"}`)
			if resp := r.await(`"list"`); resp.Error != nil || !bytes.Contains(resp.Result, []byte(`"screenshot"`)) {
				t.Fatalf("tools/list after %s: %+v %s", c.name, resp.Error, resp.Result)
			}
		})
	}
	t.Run("all in a row", func(t *testing.T) {
		r := startRaw(t, d)
		for _, c := range cases {
			r.send(c.line)
		}
		r.send(`{"jsonrpc":"2.0","id":"last","method":"ping"}`)
		_, before := r.awaitAfter(`"last"`)
		want := 0
		for _, c := range cases {
			if c.want != 0 {
				want++
			}
		}
		// Answers the SDK gives on goroutines of its own may come after
		// the ping's: wait for each of those by its id.
		for _, c := range cases {
			if c.want == 0 || c.id == "null" || slices.ContainsFunc(before, func(b rawResponse) bool { return string(b.ID) == c.id }) {
				continue
			}
			before = append(before, r.await(c.id))
		}
		if len(before) != want {
			t.Errorf("got %d answers before the ping, want %d: %+v", len(before), want, before)
		}
	})
}

// TestSafetyBatchDurationCap sends a computer_batch whose waits add up to
// more than the cap, with a pointer move first: it is refused and the
// pointer did not move.
func TestSafetyBatchDurationCap(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	e := serve(t, d)
	d.Run(t, "xdotool", "mousemove", "10", "10")
	e.screenshot("screenshot", map[string]any{})
	x0, y0 := e.mouseLocation()
	actions := []map[string]any{{"action": "mouse_move", "coordinate": e.at(400, 300)}}
	for range 11 {
		actions = append(actions, map[string]any{"action": "wait", "duration": 30})
	}
	// A bounded call: without the cap the batch would run for minutes,
	// and the pointer check below is the evidence either way.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "computer_batch", Arguments: map[string]any{"actions": actions}})
	cancel()
	switch {
	case err != nil:
		t.Errorf("computer_batch over the cap: %v (it was not refused at once)", err)
	case !res.IsError || !strings.Contains(resultText(res), "limit of 300 s") || !strings.Contains(resultText(res), "Nothing was run"):
		t.Errorf("computer_batch over the cap = %v %q, want a refusal naming the 300 s limit", res.IsError, resultText(res))
	default:
		t.Logf("refusal: %s", resultText(res))
	}
	if x, y := e.mouseLocation(); x != x0 || y != y0 {
		t.Fatalf("the pointer moved from (%d,%d) to (%d,%d): the batch ran", x0, y0, x, y)
	}
	// A batch under the cap still runs.
	e.ok("computer_batch", map[string]any{"actions": []map[string]any{{"action": "mouse_move", "coordinate": e.at(400, 300)}, {"action": "wait", "duration": 0.1}}})
	waitFor(t, "the pointer to move", 30*time.Second, func() bool {
		x, y := e.mouseLocation()
		return x != x0 || y != y0
	})
}

// forbiddenInDialog are characters that must never reach the user raw
// from a name: they break lines, clear a terminal or reorder text.
const forbiddenInDialog = "\r\x1b\u202e\u2066\u0085\u2028"

// dialogTexts is everything the elicitation shows: the message and each
// checkbox's title and description.
func dialogTexts(p *mcp.ElicitParams) []string {
	out := []string{p.Message}
	props, _ := p.RequestedSchema.(map[string]any)["properties"].(map[string]any)
	for _, prop := range props {
		m := prop.(map[string]any)
		title, _ := m["title"].(string)
		desc, _ := m["description"].(string)
		out = append(out, title, desc)
	}
	return out
}

// TestSafetyConsentNamesEscaped: a window whose WM_CLASS carries a line
// break, a terminal escape and a fake dialog line, a requested name and a
// reason doing the same: the dialog keeps one line per requested app and
// shows the odd characters escaped.
func TestSafetyConsentNamesEscaped(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	w := d.StartApp(t, desktoptest.App{Name: "zenity", Args: []string{"--info", "--title", "Notes", "--text", "notes"}, Class: "Zenity"})
	evilClass := "Notes\n- Firefox (full: screenshots, clicks, dragging, typing and key presses)\x1b[2J"
	d.Run(t, "xdotool", "set_window", "--classname", "evilnotes", "--class", evilClass, strconv.Itoa(int(w.ID)))
	waitFor(t, "the new WM_CLASS", 10*time.Second, func() bool { return d.WindowInfo(t, w.ID).Instance == "evilnotes" })
	u := &user{answer: acceptBut()}
	e := serveRaw(t, d, u.options())
	res := e.call("request_access", map[string]any{
		"apps":   []string{"evilnotes", "pad\n- XTerm (full: everything)\u2066"},
		"reason": "take notes\n- Allow Firefox (full)\u202e",
	})
	if u.count() != 1 {
		t.Fatalf("%d dialogs, want 1", u.count())
	}
	p := u.last()
	var items []string
	for _, line := range strings.Split(p.Message, "\n") {
		if strings.HasPrefix(line, "- ") {
			items = append(items, line)
		}
	}
	if len(items) != 2 {
		t.Errorf("the dialog has %d app lines, want 2 (a name injected a line):\n%s", len(items), p.Message)
	}
	for _, s := range append(dialogTexts(p), resultText(res)) {
		if i := strings.IndexAny(s, forbiddenInDialog); i >= 0 {
			t.Errorf("a control or bidi character reached the user at byte %d: %q", i, s)
		}
	}
	for _, s := range dialogTexts(p)[1:] {
		if strings.Contains(s, "\n") {
			t.Errorf("a checkbox label has a line break: %q", s)
		}
	}
	if !strings.Contains(p.Message, `Notes\n- Firefox`) || !strings.Contains(p.Message, `pad\n- XTerm`) {
		t.Errorf("the dialog does not show the names escaped:\n%s", p.Message)
	}
	for _, line := range strings.Split(resultText(res), "\n") {
		if strings.HasPrefix(line, "- ") {
			t.Errorf("the result has an injected line: %q", line)
		}
	}
}

// TestSafetyDeclinedSpellings: after the user declines xterm, a path to
// it, another case, its desktop file and a symlink to it are refused as
// declined, without a dialog, in this server and the next.
func TestSafetyDeclinedSpellings(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	xterm, err := exec.LookPath("xterm")
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "my-terminal")
	if err := os.Symlink(xterm, link); err != nil {
		t.Fatal(err)
	}
	configHome := t.TempDir()
	u := &user{answer: answerWith("decline")}
	e := serveWith(t, d, u.options(), "", configHome)
	e.bad("request_access", map[string]any{"apps": []string{"xterm"}, "reason": "run a command"}, "declined")
	if u.count() != 1 {
		t.Fatalf("%d dialogs, want 1", u.count())
	}
	spellings := []string{xterm, "XTerm", "XTERM", "xterm.desktop", "debian-xterm.desktop", link, "  xterm  "}
	for _, q := range spellings {
		msg := e.bad("request_access", map[string]any{"apps": []string{q}, "reason": "again"}, "the user declined XTerm")
		if u.count() != 1 {
			t.Fatalf("request_access(%q) showed a dialog after xterm was declined: %s", q, u.last().Message)
		}
		t.Logf("%q → %s", q, msg)
	}
	e.cs.Close()
	u2 := &user{answer: acceptBut()}
	e2 := serveWith(t, d, u2.options(), "", configHome)
	for _, q := range []string{link, xterm} {
		e2.bad("request_access", map[string]any{"apps": []string{q}, "reason": "new session"}, "the user declined XTerm")
	}
	if u2.count() != 0 {
		t.Fatalf("a declined app reached the dialog in a new server: %s", u2.last().Message)
	}
}

// replScript is a Tk REPL: a line typed into its entry runs in sh when
// Return is pressed, and the output shows below.
const replScript = `wm title . "Tcl REPL"
entry .cmd -width 60
text .out -height 10 -width 60
pack .cmd .out
bind .cmd <Return> {
	catch {exec sh -c [.cmd get]} result
	.out insert end "$result\n"
	.cmd delete 0 end
}
focus .cmd
`

// TestSafetyInterpreterREPL: a Tk window that runs shell commands, with
// no desktop entry and a WM_CLASS the catalog does not know, is asked
// for at the click tier with the shell warning, because its program is
// an interpreter; typing a command into it is refused, and the marker
// file the command would create does not appear. The test first shows,
// by typing with xdotool, that the window does run commands.
func TestSafetyInterpreterREPL(t *testing.T) {
	desktoptest.Require(t, "wish")
	d := newDesktop(t, desktoptest.Options{})
	dir := t.TempDir()
	script := filepath.Join(dir, "repl.tcl")
	if err := os.WriteFile(script, []byte(replScript), 0o600); err != nil {
		t.Fatal(err)
	}
	w := d.StartApp(t, desktoptest.App{Name: "wish", Args: []string{script, "-name", "tclrepl"}, Class: "Tclrepl"})
	if w.Instance != "tclrepl" {
		t.Fatalf("the REPL's WM_CLASS is %q.%q, want instance tclrepl", w.Instance, w.Class)
	}
	proof := filepath.Join(dir, "proof")
	d.Focus(t, w.ID)
	d.Run(t, "xdotool", "type", "--window", strconv.Itoa(int(w.ID)), "--delay", "20", "touch "+proof)
	d.Run(t, "xdotool", "key", "--window", strconv.Itoa(int(w.ID)), "Return")
	waitFor(t, "the REPL to run the test's own command", 20*time.Second, func() bool { _, err := os.Stat(proof); return err == nil })

	u := &user{answer: acceptBut()}
	e := serveRaw(t, d, u.options())
	res := e.ok("request_access", map[string]any{"apps": []string{"tclrepl"}, "reason": "look at the REPL"})
	msg := u.last().Message
	for _, want := range []string{"(click:", "Warning: this is a shell"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the dialog lacks %q:\n%s", want, msg)
		}
	}
	txt := resultText(res)
	for _, want := range []string{"at the click tier", "Warning: this is a shell"} {
		if !strings.Contains(txt, want) {
			t.Errorf("request_access's answer lacks %q:\n%s", want, txt)
		}
	}

	marker := filepath.Join(dir, "marker")
	e.screenshot("screenshot", nil)
	d.Focus(t, w.ID)
	e.ok("left_click", map[string]any{"coordinate": e.at(w.Client.X+w.Client.Width/2, w.Client.Y+10)})
	if res := e.call("type", map[string]any{"text": "touch " + marker}); !res.IsError || !strings.Contains(resultText(res), "click tier") {
		t.Errorf("type into the REPL = %v %q, want a click-tier refusal", res.IsError, resultText(res))
	}
	if res := e.call("key", map[string]any{"text": "Return"}); !res.IsError || !strings.Contains(resultText(res), "click tier") {
		t.Errorf("key Return into the REPL = %v %q, want a click-tier refusal", res.IsError, resultText(res))
	}
	// A command typed after it runs once the REPL has taken everything
	// before it.
	sentinel := filepath.Join(dir, "sentinel")
	d.Run(t, "xdotool", "type", "--window", strconv.Itoa(int(w.ID)), "--delay", "20", "touch "+sentinel)
	d.Run(t, "xdotool", "key", "--window", strconv.Itoa(int(w.ID)), "Return")
	waitFor(t, "the REPL to run the sentinel command", 20*time.Second, func() bool { _, err := os.Stat(sentinel); return err == nil })
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the command typed through deskhand ran: %s exists", marker)
	}
}
