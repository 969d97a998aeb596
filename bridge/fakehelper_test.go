package bridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// fakeHelperEnv makes the test binary act as a helper (go-plugin style):
// TestMain runs fakeHelper instead of the tests when it is set. Its value
// names the behaviour.
const fakeHelperEnv = "BRIDGE_FAKE_HELPER"

// Fake helper behaviours.
const (
	fakeNormal       = "normal"         // serves the protocol, with fault.* methods
	fakeIgnoreTerm   = "ignore-term"    // ignores SIGTERM and stdin EOF
	fakeGrandchild   = "grandchild"     // spawns a grandchild that ignores SIGTERM
	fakeSleeper      = "sleeper"        // the grandchild: sleeps forever
	fakeNoHandshake  = "no-handshake"   // reads requests, never answers
	fakeIncompatible = "incompatible"   // chooses protocol version 2
	fakeRefuse       = "refuse"         // answers the handshake with incompatible_protocol
	fakeCrashOnStart = "crash-on-start" // logs an error and exits 3 at once
	fakeGarbageStart = "garbage-start"  // writes garbage before any request
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeHelperEnv); mode != "" {
		os.Exit(fakeHelper(mode))
	}
	if helper := os.Getenv(parentOfEnv); helper != "" {
		os.Exit(parentOf(helper))
	}
	os.Exit(m.Run())
}

// The fake screen: small, so images encode fast under the race detector.
const fakeW, fakeH = 320, 200

var fakeDisplays = []Display{
	{ID: 1952369113, Name: "DP-1", Logical: Size{Width: fakeW, Height: fakeH}, Physical: Size{Width: fakeW, Height: fakeH}, Scale: 1, Primary: true, MM: Size{Width: 85, Height: 53}},
	{ID: 42, Name: "HDMI-1", Origin: Point{X: fakeW, Y: 0}, Logical: Size{Width: 160, Height: 100}, Physical: Size{Width: 320, Height: 200}, Scale: 2, MM: Size{Width: 40, Height: 25}},
}

var fakeApp = App{PID: 4242, Name: "XTerm", Instance: "xterm", Class: "XTerm", Exe: "/usr/bin/xterm"}

func fakeWindows(hidden map[uint32]bool) []Window {
	desk := 0
	all := []Window{
		{ID: 0x600007, Title: "xterm", App: fakeApp, Bounds: Rect{X: 10, Y: 10, Width: 100, Height: 80}, Client: Rect{X: 11, Y: 31, Width: 98, Height: 58}, Focused: true, Desktop: &desk},
		{ID: 0x800003, Title: "notes", App: App{Name: "gedit"}, Bounds: Rect{X: 50, Y: 50, Width: 200, Height: 100}, Client: Rect{X: 51, Y: 71, Width: 198, Height: 78}, Desktop: &desk},
		{ID: 0x900001, Title: "minimized", App: App{Name: "zenity"}, Bounds: Rect{X: 0, Y: 0, Width: 50, Height: 50}, Client: Rect{X: 0, Y: 0, Width: 50, Height: 50}, Minimized: true},
	}
	for i := range all {
		if hidden[all[i].ID] {
			all[i].Minimized = true
		}
	}
	return all
}

type fakeRequest struct {
	ID     *json.RawMessage `json:"id"`
	Method string           `json:"method"`
	Params json.RawMessage  `json:"params"`
}

type fakeError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

type fakeResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *fakeError      `json:"error,omitempty"`
}

func fakeFail(code int, name, msg, hint string) *fakeError {
	return &fakeError{Code: code, Message: msg, Data: map[string]string{"code": name, "hint": hint}}
}

// fakeState is what the normal fake remembers between calls.
type fakeState struct {
	mode       string
	grandchild int
	clipboard  string
	captures   uint64
	hidden     map[uint32]bool
	out        *bufio.Writer
	codec      FrameCodec
}

func fakeHelper(mode string) int {
	logf := func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }
	st := &fakeState{mode: mode, hidden: map[uint32]bool{}, out: bufio.NewWriter(os.Stdout), codec: FrameCodec{MaxWriteBytes: DefaultMaxResponseBytes * 2}}
	switch mode {
	case fakeCrashOnStart:
		logf("INFO starting")
		logf("ERROR cannot open display :99: connection refused")
		return 3
	case fakeSleeper:
		signal.Ignore(syscall.SIGTERM)
		blockForever()
	case fakeIgnoreTerm:
		signal.Ignore(syscall.SIGTERM)
	case fakeGrandchild:
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), fakeHelperEnv+"="+fakeSleeper)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr // holds the pipes open
		if err := cmd.Start(); err != nil {
			logf("ERROR spawning grandchild: %v", err)
			return 1
		}
		st.grandchild = cmd.Process.Pid
	case fakeGarbageStart:
		os.Stdout.WriteString("Segmentation fault? no: just garbage\n")
		blockForever()
	}
	logf("INFO fake helper %s ready", mode)

	in := bufio.NewReader(os.Stdin)
	for {
		var req fakeRequest
		if err := (FrameCodec{}).ReadObject(in, &req); err != nil {
			if mode == fakeIgnoreTerm {
				blockForever() // stays until SIGKILL
			}
			if errors.Is(err, io.EOF) {
				return 0
			}
			logf("ERROR reading request: %v", err)
			return 2
		}
		if req.ID == nil {
			continue // notification
		}
		if mode == fakeNoHandshake {
			continue
		}
		result, ferr := st.serve(req)
		if err := st.codec.WriteObject(st.out, fakeResponse{JSONRPC: "2.0", ID: *req.ID, Result: result, Error: ferr}); err != nil {
			logf("ERROR writing response: %v", err)
			return 2
		}
		if err := st.out.Flush(); err != nil {
			return 2
		}
	}
}

func (st *fakeState) serve(req fakeRequest) (any, *fakeError) {
	var p map[string]json.RawMessage
	if len(req.Params) > 0 {
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, fakeFail(CodeInvalidParams, "invalid_params", "params must be an object", "")
		}
	}
	intParam := func(name string, def int) int {
		v := def
		if raw, ok := p[name]; ok {
			json.Unmarshal(raw, &v)
		}
		return v
	}
	switch req.Method {
	case "handshake":
		var offer []int
		json.Unmarshal(p["protocol_versions"], &offer)
		if st.mode == fakeRefuse || !slices.Contains(offer, 1) {
			return nil, fakeFail(CodeIncompatibleProtocol, "incompatible_protocol", "this helper speaks protocol version 1 only",
				"Install the helper from the same deskhand release.")
		}
		version := 1
		if st.mode == fakeIncompatible {
			version = 2
		}
		ext := map[string]any{"fake": true}
		if st.grandchild != 0 {
			ext["grandchild"] = st.grandchild
		}
		return map[string]any{
			"protocol_version": version,
			"helper_version":   "0.0.0-fake",
			"platform":         "fake",
			"capabilities":     []string{"displays", "capture", "capture.png", "capture.jpeg", "windows", "clipboard", "hide"},
			"display":          ":fake",
			"extensions":       ext,
		}, nil
	case "displays":
		return map[string]any{"displays": fakeDisplays}, nil
	case "capture":
		return st.capture(p)
	case "a11y_tree":
		// Without a11y.capture: a capture member is ignored, as an
		// older helper would.
		return map[string]any{"window": map[string]any{"ref": "w", "title": "fake"}, "nodes": []any{}, "elapsed_ms": 1}, nil
	case "windows":
		var includeHidden bool
		json.Unmarshal(p["include_hidden"], &includeHidden)
		var list []Window
		for _, w := range fakeWindows(st.hidden) {
			if includeHidden || !w.Minimized {
				list = append(list, w)
			}
		}
		focused := uint32(0x600007)
		return WindowList{Windows: list, Focused: &focused, Frontmost: &fakeApp}, nil
	case "window_at":
		pt := Point{X: intParam("x", -1), Y: intParam("y", -1)}
		for _, w := range fakeWindows(st.hidden) {
			if !w.Minimized && w.Bounds.Contains(pt) {
				return WindowAt{Window: &w, App: &w.App}, nil
			}
		}
		return WindowAt{}, nil
	case "patch_check":
		if st.captures == 0 {
			return nil, fakeFail(CodeNoCapture, "no_capture", "no capture has been taken yet", "Call capture first.")
		}
		return PatchCheck{Changed: intParam("x", 0) > 100, DifferingPixels: 3, MaxDelta: 40, CaptureID: st.captures}, nil
	case "clipboard_read":
		if st.clipboard == "" {
			return nil, fakeFail(CodeClipboardUnavailable, "clipboard_unavailable", "the clipboard holds no text", "Copy some text first.")
		}
		return map[string]string{"text": st.clipboard}, nil
	case "clipboard_write":
		json.Unmarshal(p["text"], &st.clipboard)
		return map[string]bool{"ok": true}, nil
	case "hide", "restore":
		var ids []uint32
		json.Unmarshal(p["windows"], &ids)
		known := map[uint32]bool{}
		for _, w := range fakeWindows(nil) {
			known[w.ID] = true
		}
		for _, id := range ids {
			if !known[id] {
				return nil, fakeFail(CodeNoSuchWindow, "no_such_window", fmt.Sprintf("window %d does not exist", id), "Call windows for the current ids.")
			}
		}
		changed := []uint32{}
		for _, id := range ids {
			if st.hidden[id] == (req.Method == "restore") {
				changed = append(changed, id)
				st.hidden[id] = req.Method == "hide"
			}
		}
		if req.Method == "hide" {
			return map[string][]uint32{"hidden": changed}, nil
		}
		return map[string][]uint32{"restored": changed}, nil
	case "fault.sleep":
		time.Sleep(time.Duration(intParam("ms", 0)) * time.Millisecond)
		return struct{}{}, nil
	case "fault.exit":
		code := intParam("code", 1)
		fmt.Fprintf(os.Stderr, "ERROR exiting with status %d as asked\n", code)
		os.Exit(code)
	case "fault.garbage":
		st.out.WriteString("hello from a stray println\n")
		st.out.Flush()
		blockForever() // the client must notice the garbage, not a timeout
	case "fault.truncate":
		st.out.WriteString("Content-Length: 100\r\n\r\n{\"jsonrpc\":")
		st.out.Flush()
		fmt.Fprintln(os.Stderr, "ERROR dying mid-frame")
		os.Exit(4)
	case "fault.closestdout":
		st.out.Flush()
		os.Stdout.Close()
		blockForever()
	case "fault.big":
		return map[string]string{"blob": strings.Repeat("x", intParam("bytes", 0))}, nil
	case "fault.notify":
		// Notifications before the answer, as the macOS helper's Escape
		// watch writes them; "ask" adds a request, which the protocol
		// does not have.
		var method string
		json.Unmarshal(p["method"], &method)
		for i := range intParam("count", 1) {
			st.codec.WriteObject(st.out, map[string]any{"jsonrpc": "2.0", "method": method, "params": map[string]int{"n": i}})
		}
		if intParam("ask", 0) != 0 {
			st.codec.WriteObject(st.out, map[string]any{"jsonrpc": "2.0", "id": 777, "method": "supervisor.anything"})
		}
		return struct{}{}, nil
	case "fault.log":
		for _, line := range []string{"DEBUG fake debug line", "INFO fake info line", "WARN fake warn line", "ERROR fake error line", "thread 'main' panicked at fake.rs:1:1"} {
			fmt.Fprintln(os.Stderr, line)
		}
		return struct{}{}, nil
	}
	return nil, fakeFail(CodeMethodNotFound, "method_not_found", fmt.Sprintf("unknown method %q", req.Method), "")
}

func (st *fakeState) capture(p map[string]json.RawMessage) (any, *fakeError) {
	src := fakeDisplays[0].Bounds()
	var display *uint32
	if raw, ok := p["rect"]; ok {
		json.Unmarshal(raw, &src)
		if src.X < 0 || src.Y < 0 || src.Width <= 0 || src.Height <= 0 || src.X+src.Width > fakeW || src.Y+src.Height > fakeH {
			return nil, fakeFail(CodeOutOfBounds, "out_of_bounds",
				fmt.Sprintf("rectangle %d,%d %dx%d is outside the screen (%dx%d)", src.X, src.Y, src.Width, src.Height, fakeW, fakeH),
				"Use a rectangle inside the screen; call displays for the geometry.")
		}
	} else {
		id := fakeDisplays[0].ID
		display = &id
	}
	w, h := src.Width, src.Height
	json.Unmarshal(p["width"], &w)
	json.Unmarshal(p["height"], &h)
	format := "jpeg"
	json.Unmarshal(p["format"], &format)
	var mask []uint32
	json.Unmarshal(p["mask"], &mask)

	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), 128, 255})
		}
	}
	var buf bytes.Buffer
	switch format {
	case "png":
		png.Encode(&buf, img)
	case "jpeg":
		jpeg.Encode(&buf, img, &jpeg.Options{Quality: 80})
	default:
		return nil, fakeFail(CodeInvalidParams, "invalid_params", fmt.Sprintf("format %q is not jpeg or png", format), "")
	}
	st.captures++
	if mask == nil {
		mask = []uint32{}
	}
	return map[string]any{"format": format, "data": buf.Bytes(), "width": w, "height": h, "source": src,
		"display": display, "masked": mask, "method": "fake", "capture_id": st.captures}, nil
}

// blockForever parks the fake without tripping the runtime's deadlock
// detector (a bare select{} in a process with no other goroutine is fatal).
func blockForever() {
	for {
		time.Sleep(time.Hour)
	}
}

// parentOfEnv makes the test binary a deskhand stand-in that starts the
// real helper named by the variable, prints the helper's pid and then
// either exits without closing the client or waits to be killed, as the
// variable parentModeEnv says.
const (
	parentOfEnv   = "BRIDGE_PARENT_OF"
	parentModeEnv = "BRIDGE_PARENT_MODE"
)

func parentOf(helper string) int {
	c := New(Options{Path: helper, Env: []string{"DISPLAY=:987"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("%d\n", c.PID())
	if os.Getenv(parentModeEnv) == "wait" {
		select {}
	}
	// Exit, with the helper still running and no Close, once the test has
	// seen the helper alive and closes our stdin.
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}
