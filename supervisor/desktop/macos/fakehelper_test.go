package macos

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"
)

// fakeHelperEnv makes the test binary a fake macOS helper (TestMain). It
// speaks the protocol's framing and the macOS extensions this package
// uses: a handshake listing permissions and capture.include_apps,
// permissions, windows with bundle ids, capture with include_apps, and
// key_layout (a French layout).
//
// Its behaviour comes from the environment: fakePermsEnv lists the granted
// permissions ("screen_recording,accessibility,input_monitoring"), or
// "no-session" for a helper without a window-server session; fakeOldEnv
// makes permissions answer as a helper from before input_monitoring; fakeLogEnv is a file each
// capture's params are appended to, one JSON line each; while the file
// fakeLaunchedEnv names exists, a new com.example.Notes window is listed;
// fakeTapEnv=refuse makes watch_escape fail as macOS does without Input
// Monitoring.
//
// Its Escape watch is the Swift helper's (DeskhandHelperCore EscapeWatch,
// RequestHandler.keyDown): after watch_escape, fault.key_down is a key
// press as the keyboard tap reports it, and only the user's Escape (key
// code 0x35, no deskhand marker, not posted by the helper's parent) becomes
// an escape_pressed notification, written before the fault's answer. A
// fresh fake process is not watching, as a restarted helper is not.
const (
	fakeHelperEnv   = "MACOS_FAKE_HELPER"
	fakePermsEnv    = "MACOS_FAKE_PERMS"
	fakeLogEnv      = "MACOS_FAKE_LOG"
	fakeLaunchedEnv = "MACOS_FAKE_LAUNCHED"
	fakeTapEnv      = "MACOS_FAKE_TAP"
	fakeOldEnv      = "MACOS_FAKE_OLD"
)

// The Swift helper's EscapeWatch constants.
const (
	macEscapeKeyCode   = 0x35
	macSyntheticMarker = 0x6473_6b68_616e_6401
)

// fakeWatching is the fake helper's keyboard watch: on after watch_escape.
var fakeWatching bool

func TestMain(m *testing.M) {
	if os.Getenv(fakeHelperEnv) != "" {
		os.Exit(fakeHelper())
	}
	os.Exit(m.Run())
}

type fakeReq struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func fakeHelper() int {
	in := bufio.NewReader(os.Stdin)
	for {
		body, err := readFrame(in)
		if err != nil {
			return 0
		}
		var req fakeReq
		if err := json.Unmarshal(body, &req); err != nil {
			return 2
		}
		if req.ID == nil {
			if req.Method == "exit" {
				return 0
			}
			continue
		}
		if req.Method == "fault.exit" {
			return 3
		}
		result, rpcErr := fakeAnswer(req)
		msg := map[string]any{"jsonrpc": "2.0", "id": req.ID}
		if rpcErr != nil {
			msg["error"] = rpcErr
		} else {
			msg["result"] = result
		}
		writeFrame(msg)
	}
}

func writeFrame(msg any) {
	out, _ := json.Marshal(msg)
	fmt.Fprintf(os.Stdout, "Content-Length: %d\r\n\r\n%s", len(out), out)
}

// fakeKeyDown is RequestHandler.keyDown: the user's Escape is notified,
// deskhand's own (marked, or posted by the supervisor) and other keys are
// dropped, and nothing is notified while the watch is off.
func fakeKeyDown(params json.RawMessage) {
	var key struct {
		KeyCode    int64 `json:"key_code"`
		UserData   int64 `json:"user_data"`
		SourcePID  int64 `json:"source_pid"`
		FromParent bool  `json:"from_parent"`
	}
	json.Unmarshal(params, &key)
	if key.FromParent {
		key.SourcePID = int64(os.Getppid())
	}
	own := key.UserData == macSyntheticMarker || key.SourcePID == int64(os.Getppid()) || key.SourcePID == int64(os.Getpid())
	if !fakeWatching || key.KeyCode != macEscapeKeyCode || own {
		return
	}
	writeFrame(map[string]any{"jsonrpc": "2.0", "method": "escape_pressed",
		"params": map[string]int64{"key_code": key.KeyCode, "source_pid": key.SourcePID}})
}

func readFrame(r *bufio.Reader) ([]byte, error) {
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if n < 0 {
		return nil, io.ErrUnexpectedEOF
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return body, err
}

func rpcError(code int, name, msg, hint string) map[string]any {
	return map[string]any{"code": code, "message": msg, "data": map[string]string{"code": name, "hint": hint}}
}

func fakeAnswer(req fakeReq) (any, map[string]any) {
	perms := os.Getenv(fakePermsEnv)
	switch req.Method {
	case "handshake":
		hs := map[string]any{"protocol_version": 1, "helper_version": "0.1.0", "platform": "macos",
			"capabilities": []string{"displays", "capture", "capture.mask", "capture.png", "capture.include_apps", "windows", "window_at", "hide", "clipboard", "permissions", "key_layout", "watch_escape"},
			"display":      "Built-in Retina Display", "extensions": map[string]any{"macos": "14.5", "bundle_id": "io.github.deskhand.helper"}}
		if perms == "no-session" {
			hs["display_error"] = "no window-server session: run deskhand from the logged-in desktop, not over ssh"
			hs["capabilities"] = []string{}
		}
		return hs, nil
	case "permissions":
		if perms == "no-session" {
			return nil, rpcError(-32001, "display_unavailable", "no window-server session", "Run deskhand from the logged-in desktop, not over ssh.")
		}
		var p struct {
			Require []string `json:"require"`
		}
		json.Unmarshal(req.Params, &p)
		granted := map[string]bool{}
		for _, g := range strings.Split(perms, ",") {
			granted[g] = true
		}
		for _, r := range p.Require {
			if !granted[r] {
				return nil, rpcError(-32011, "permission_denied", r+" is not granted", "Open System Settings > Privacy & Security.")
			}
		}
		answer := map[string]bool{"screen_recording": granted["screen_recording"], "accessibility": granted["accessibility"]}
		if os.Getenv(fakeOldEnv) == "" {
			answer["input_monitoring"] = granted["input_monitoring"]
		}
		return answer, nil
	case "windows":
		app := func(pid int, name, bundle string) map[string]any {
			return map[string]any{"pid": pid, "name": name, "bundle_id": bundle, "exe": "/Applications/" + name + ".app/Contents/MacOS/" + name}
		}
		win := func(id int, title string, a map[string]any, x int) map[string]any {
			r := map[string]int{"x": x, "y": 40, "width": 300, "height": 200}
			return map[string]any{"id": id, "title": title, "app": a, "bounds": r, "client": r, "minimized": false, "hidden": false, "focused": false, "desktop": nil}
		}
		list := []any{
			win(11, "Untitled", app(501, "Editor", "com.example.Editor"), 0),
			win(12, "bash", app(502, "Terminal", "com.apple.Terminal"), 320),
			win(14, "Notes list", app(503, "Notes", "com.example.Notes"), 640),
		}
		if _, err := os.Stat(os.Getenv(fakeLaunchedEnv)); err == nil {
			list = append([]any{win(15, "New note", app(503, "Notes", "com.example.Notes"), 100)}, list...)
		}
		return map[string]any{"windows": list, "focused": 11, "frontmost": app(501, "Editor", "com.example.Editor")}, nil
	case "capture":
		if f, err := os.OpenFile(os.Getenv(fakeLogEnv), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
			f.Write(append(bytes.TrimSpace(req.Params), '\n'))
			f.Close()
		}
		var buf bytes.Buffer
		png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 4, 3)))
		return map[string]any{"format": "png", "data": buf.Bytes(), "width": 4, "height": 3,
			"source": map[string]int{"x": 0, "y": 0, "width": 1440, "height": 900}, "display": 1, "masked": []int{}, "method": "screencapturekit", "capture_id": 1}, nil
	case "watch_escape":
		if os.Getenv(fakeTapEnv) == "refuse" {
			return nil, rpcError(-32011, "permission_denied",
				"macOS has not granted Input Monitoring to deskhand-helper (it refuses the keyboard event tap), so the user's Escape cannot stop deskhand; everything else works without it",
				"Open System Settings > Privacy & Security > Input Monitoring (x-apple.systempreferences:com.apple.preference.security?Privacy_ListenEvent), switch on deskhand-helper or the app that runs deskhand (such as Terminal), then restart deskhand.")
		}
		fakeWatching = true
		return map[string]bool{"watching": true}, nil
	case "fault.key_down":
		fakeKeyDown(req.Params)
		return map[string]any{}, nil
	case "key_layout":
		// The layout the Swift helper reads on a French (AZERTY) Mac.
		return json.RawMessage(frenchJSON), nil
	}
	return nil, rpcError(-32601, "method_not_found", "unknown method "+req.Method, "")
}
