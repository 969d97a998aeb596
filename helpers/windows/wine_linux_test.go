package main

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestWine runs the real helper under Wine on one Xvfb + openbox desktop:
// every platform-neutral transcript, then capture, the window list,
// masking and the clipboard checked against X's own tools.
func TestWine(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a desktop and Wine")
	}
	desktoptest.Require(t, "xclip", "import", "convert")
	d := desktoptest.Start(t, desktoptest.Options{Width: 1024, Height: 768})
	w := d.StartWine(t)
	exe := desktoptest.BuildWindows(t, "./helpers/windows")

	t.Run("transcripts", func(t *testing.T) { replayTranscripts(t, w, exe) })

	h := startHelper(t, w, exe, nil)
	h.result(t, "handshake", map[string]any{"protocol_versions": []int{1}})

	t.Run("capture matches import", func(t *testing.T) {
		res := h.result(t, "capture", map[string]any{"format": "png"})
		got := decodePNG(t, res)
		want := importRoot(t, d)
		if got.Bounds().Size() != want.Bounds().Size() {
			t.Fatalf("capture is %v, import -window root is %v", got.Bounds().Size(), want.Bounds().Size())
		}
		differ := 0
		for y := 0; y < want.Bounds().Dy(); y++ {
			for x := 0; x < want.Bounds().Dx(); x++ {
				r1, g1, b1, _ := got.At(x, y).RGBA()
				r2, g2, b2, _ := want.At(x, y).RGBA()
				if r1>>8 != r2>>8 || g1>>8 != g2>>8 || b1>>8 != b2>>8 {
					differ++
				}
			}
		}
		total := want.Bounds().Dx() * want.Bounds().Dy()
		// The two reads are not atomic: a caret may blink in between.
		if frac := float64(differ) / float64(total); frac > 0.001 {
			t.Errorf("capture differs from import -window root in %d of %d pixels (%.4f)", differ, total, frac)
		}
	})

	// A window whose colour only it has, so pixel counts are evidence.
	colour := [3]int{201, 13, 177}
	colorExe := desktoptest.BuildWindows(t, "./helpers/windows/testdata/colorwin")
	title := "deskhand colour window"
	pid := startColorwin(t, w, colorExe, title)
	win := waitWindow(t, h, title)

	t.Run("windows", func(t *testing.T) {
		if win.App.PID == nil || *win.App.PID != pid {
			t.Errorf("window %q has pid %v, want %d (the Windows pid the program printed)", title, win.App.PID, pid)
		}
		if win.App.Exe == nil || !strings.HasSuffix(strings.ToLower(*win.App.Exe), "colorwin.exe") {
			t.Errorf("window %q has exe %v, want colorwin.exe", title, win.App.Exe)
		}
		cx, cy := win.Client.X+win.Client.Width/2, win.Client.Y+win.Client.Height/2
		var at struct{ Window *window }
		h.into(t, "window_at", map[string]any{"x": cx, "y": cy}, &at)
		if at.Window == nil || at.Window.ID != win.ID {
			t.Errorf("window_at(%d,%d) = %+v, want window %d", cx, cy, at.Window, win.ID)
		}
		notepad := w.StartApp(t, "notepad.exe", "notepad")
		nw := waitWindow(t, h, notepad.Title)
		if nw.App.Exe == nil || !strings.HasSuffix(strings.ToLower(*nw.App.Exe), `\notepad.exe`) {
			t.Errorf("notepad's window %q has exe %v, want ...\\notepad.exe", nw.Title, nw.App.Exe)
		}
		h.result(t, "hide", map[string]any{"windows": []uint32{nw.ID}})
	})

	t.Run("mask", func(t *testing.T) {
		count := func(params map[string]any) (int, []any) {
			res := h.result(t, "capture", params)
			return countColour(decodePNG(t, res), colour), res["masked"].([]any)
		}
		// Notepad, hidden just before, may still be going from over it.
		n, _ := count(map[string]any{"format": "png"})
		for start := time.Now(); n < 1000 && time.Since(start) < 10*time.Second; n, _ = count(map[string]any{"format": "png"}) {
			time.Sleep(100 * time.Millisecond)
		}
		if n < 1000 {
			t.Fatalf("the unmasked capture shows %d pixels of the window's colour, want its client area", n)
		}
		if n, masked := count(map[string]any{"format": "png", "mask": []uint32{win.ID}}); n != 0 || len(masked) != 1 {
			t.Errorf("masking window %d left %d pixels of its colour (masked %v), want 0", win.ID, n, masked)
		}
		if n, _ := count(map[string]any{"format": "png", "mask_others": true, "keep": []uint32{}}); n != 0 {
			t.Errorf("mask_others with nothing kept left %d pixels of the window's colour, want 0", n)
		}
	})

	t.Run("hide and restore", func(t *testing.T) {
		res := h.result(t, "hide", map[string]any{"windows": []uint32{win.ID}})
		if fmt.Sprint(res["hidden"]) != fmt.Sprintf("[%d]", win.ID) {
			t.Errorf("hide = %v, want [%d]", res["hidden"], win.ID)
		}
		if n := countColour(importRoot(t, d), colour); n != 0 {
			t.Errorf("after hide X shows %d pixels of the window's colour, want 0", n)
		}
		h.result(t, "restore", map[string]any{"windows": []uint32{win.ID}})
		if n := countColour(importRoot(t, d), colour); n == 0 {
			t.Error("after restore X shows none of the window's colour")
		}
	})

	// ShowWindow waits on the window's own thread; a program that stopped
	// answering must not stop the helper with it.
	t.Run("a hung window does not stop hide", func(t *testing.T) {
		hungTitle := "deskhand hung window"
		startColorwin(t, w, colorExe, hungTitle, "hang")
		hung := waitWindow(t, h, hungTitle)
		res := h.result(t, "hide", map[string]any{"windows": []uint32{hung.ID, win.ID}})
		if fmt.Sprint(res["hidden"]) != fmt.Sprintf("[%d]", win.ID) {
			t.Errorf("hide = %v, want [%d] (the answering window only)", res["hidden"], win.ID)
		}
		h.result(t, "restore", map[string]any{"windows": []uint32{win.ID}})
	})

	t.Run("clipboard crosses to X", func(t *testing.T) {
		text := "deskhand ünïcödé ✓ " + strconv.Itoa(os.Getpid())
		h.result(t, "clipboard_write", map[string]any{"text": text})
		if got := d.Run(t, "xclip", "-selection", "clipboard", "-o"); got != text {
			t.Errorf("xclip -o after clipboard_write = %q, want %q", got, text)
		}
		back := "from X " + strconv.Itoa(os.Getpid())
		var got any
		w.OfferXClipboard(t, back, func() bool {
			// Meanwhile Wine's own clipboard window may hold the
			// clipboard open (clipboard_unavailable).
			h.id++
			h.send(t, map[string]any{"jsonrpc": "2.0", "id": h.id, "method": "clipboard_read"})
			resp, _ := h.next(60 * time.Second).(map[string]any)
			if res, ok := resp["result"].(map[string]any); ok {
				got = res["text"]
			} else {
				got = resp["error"]
			}
			return got == back
		})
		if got != back {
			t.Logf("clipboard_read's last answer: %v", got)
		}
	})
}

// startColorwin starts the colour window program and returns the Windows
// pid it prints.
func startColorwin(t *testing.T, w *desktoptest.Wine, exe, title string, extra ...string) int {
	t.Helper()
	cw := w.Command(exe, append([]string{title, "201", "13", "177"}, extra...)...)
	out, err := cw.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cw.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cw.Process.Kill(); cw.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the colour window's pid: %v", err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(line))
	return pid
}

func waitWindow(t *testing.T, h *helperProc, title string) window {
	t.Helper()
	for start := time.Now(); time.Since(start) < 30*time.Second; time.Sleep(50 * time.Millisecond) {
		var res struct{ Windows []window }
		h.into(t, "windows", nil, &res)
		for _, w := range res.Windows {
			if w.Title == title {
				return w
			}
		}
	}
	t.Fatalf("no window titled %q within 30s", title)
	return window{}
}

func decodePNG(t *testing.T, res map[string]any) image.Image {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(res["data"].(string))
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func importRoot(t *testing.T, d *desktoptest.Desktop) image.Image {
	t.Helper()
	path := filepath.Join(t.TempDir(), "root.png")
	d.Run(t, "import", "-window", "root", "png24:"+path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func countColour(img image.Image, c [3]int) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if int(r>>8) == c[0] && int(g>>8) == c[1] && int(bl>>8) == c[2] {
				n++
			}
		}
	}
	return n
}

// helperProc is the helper under Wine with strict frame reading.
type helperProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	frames chan any // a decoded frame, or an error, or io.EOF
	stderr *bytes.Buffer
	id     int
}

func startHelper(t *testing.T, w *desktoptest.Wine, exe string, env map[string]string) *helperProc {
	t.Helper()
	cmd := w.Command(exe)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	h := &helperProc{cmd: cmd, frames: make(chan any, 16), stderr: &bytes.Buffer{}}
	cmd.Stderr = h.stderr
	var err error
	if h.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go readFrames(bufio.NewReader(out), h.frames)
	t.Cleanup(func() {
		h.stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	return h
}

var contentLength = regexp.MustCompile(`^Content-Length: (\d+)\r\n$`)

func readFrames(r *bufio.Reader, out chan<- any) {
	for {
		line, err := r.ReadString('\n')
		if err == io.EOF && line == "" {
			out <- io.EOF
			return
		}
		m := contentLength.FindStringSubmatch(line)
		if m == nil {
			rest, _ := io.ReadAll(r)
			out <- fmt.Errorf("not a frame header: %q", line+string(rest))
			return
		}
		blank := make([]byte, 2)
		n, _ := strconv.Atoi(m[1])
		body := make([]byte, n)
		if _, err := io.ReadFull(r, blank); err != nil || string(blank) != "\r\n" {
			out <- fmt.Errorf("frame header not followed by a blank line")
			return
		}
		if _, err := io.ReadFull(r, body); err != nil {
			out <- fmt.Errorf("frame body cut short: %v", err)
			return
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			out <- fmt.Errorf("frame body is not JSON: %q", body)
			return
		}
		out <- v
	}
}

func (h *helperProc) next(timeout time.Duration) any {
	select {
	case v := <-h.frames:
		return v
	case <-time.After(timeout):
		return nil
	}
}

func (h *helperProc) send(t *testing.T, v any) {
	t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fmt.Fprintf(h.stdin, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		t.Fatalf("writing to the helper: %v", err)
	}
}

// result calls a method and returns its result, failing on an error.
func (h *helperProc) result(t *testing.T, method string, params any) map[string]any {
	t.Helper()
	h.id++
	h.send(t, map[string]any{"jsonrpc": "2.0", "id": h.id, "method": method, "params": params})
	v := h.next(60 * time.Second)
	resp, ok := v.(map[string]any)
	if !ok || resp["result"] == nil {
		t.Fatalf("%s: got %v, want a result\nhelper stderr:\n%s", method, shorten(v), h.stderr)
	}
	return resp["result"].(map[string]any)
}

func (h *helperProc) into(t *testing.T, method string, params, v any) {
	t.Helper()
	b, _ := json.Marshal(h.result(t, method, params))
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// replayTranscripts replays helpers/testdata/transcripts (format: its
// README.md). Transcripts whose platforms leave out "windows" are
// skipped: they test X11's PRIMARY, cut buffer, window_state, desktop
// entries and the windows epoch, or macOS's, which Windows does not have.
func replayTranscripts(t *testing.T, w *desktoptest.Wine, exe string) {
	files, err := filepath.Glob("../testdata/transcripts/*.json")
	if err != nil || len(files) < 20 {
		t.Fatalf("found %d transcripts (%v), want the set", len(files), err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		var tr struct {
			Platforms []string          `json:"platforms"`
			Env       map[string]string `json:"env"`
			Steps     []map[string]any  `json:"steps"`
		}
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if tr.Platforms != nil && !slices.Contains(tr.Platforms, "windows") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			// Each runs its own helper, and only clipboard.json touches
			// shared state, so they wait on Wine's start-up together.
			t.Parallel()
			replay(t, w, exe, tr.Env, tr.Steps)
		})
	}
}

func replay(t *testing.T, w *desktoptest.Wine, exe string, env map[string]string, steps []map[string]any) {
	h := startHelper(t, w, exe, env)
	exited := false
	for i, step := range steps {
		if msg, ok := step["send"]; ok {
			h.send(t, msg)
		}
		if raw, ok := step["send_raw"].(string); ok {
			if _, err := io.WriteString(h.stdin, raw); err != nil {
				t.Fatalf("step %d: writing: %v", i, err)
			}
		}
		if step["close_stdin"] == true {
			h.stdin.Close()
		}
		if pattern, ok := step["expect"]; ok {
			got := h.next(60 * time.Second)
			if err := match(pattern, got, "$"); err != nil {
				t.Fatalf("step %d: %v\nresponse: %s\nhelper stderr:\n%s", i, err, shorten(got), h.stderr)
			}
		}
		if code, ok := step["expect_exit"].(float64); ok {
			h.stdin.Close()
			expectExit(t, h, int(code))
			exited = true
		}
	}
	if !exited {
		h.stdin.Close()
		expectExit(t, h, 0)
	}
}

func expectExit(t *testing.T, h *helperProc, code int) {
	t.Helper()
	if v := h.next(30 * time.Second); v != io.EOF {
		t.Fatalf("output after the last expected response: %s\nhelper stderr:\n%s", shorten(v), h.stderr)
	}
	err := h.cmd.Wait()
	got := 0
	if ee, ok := err.(*exec.ExitError); ok {
		got = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if got != code {
		t.Fatalf("helper exited with %d, want %d\nhelper stderr:\n%s", got, code, h.stderr)
	}
}
