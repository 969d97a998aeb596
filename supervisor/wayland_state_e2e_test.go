//go:build unix

package supervisor_test

// End-to-end tests of what the Wayland backend keeps track of between
// calls, on a headless sway with the real helper: the clipboard keeper
// that outlives deskhand (checked with wl-paste and wl-copy), the windows
// epoch and its windows_changed pushes (checked against changes made with
// swaymsg and real apps), and patch_baseline (checked against a window
// drawn by foot).

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/desktop/wayland"
)

// keepers lists the pids of clipboard keepers serving w's session, from
// /proc (the keeper is detached, so the test finds it as a user would).
func keepers(t *testing.T, w *desktoptest.Wayland) []int {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var out []int
	for _, d := range dirs {
		cmdline, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !strings.Contains(string(cmdline), wayland.KeepFlag) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !strings.Contains(string(env), "XDG_RUNTIME_DIR="+w.Dir()+"\x00") {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join(d, "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(d))
		out = append(out, pid)
	}
	return out
}

// TestWaylandClipboardKeeperOutlivesHelper: the text deskhand puts back
// as it exits is handed to the keeper (the seam's KeepClipboard); once the
// helper that wrote the clipboard is gone, wl-paste still reads it, in
// every UTF-8 text type, megabytes of it, and the primary selection too;
// a later wl-copy replaces it and the keeper exits.
func TestWaylandClipboardKeeperOutlivesHelper(t *testing.T) {
	requireWaylandTools(t, "wl-copy", "wl-paste")
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	c := wlHelper(t, w)
	wlCall(t, c, "clipboard_write", map[string]any{"text": "the model's text"}, &json.RawMessage{})

	// The user's text, as the clipboard guard stashed it: over 3 MB, so
	// readers get it through many pipe writes.
	big := strings.Repeat("Grüße, 世界! line of the user's clipboard\n", 70000)
	const primary = "the user's selection ¡€!"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stash := cleanup.Stash{}
	stash.Clipboard.Had, stash.Clipboard.Text = true, big
	stash.Primary.Had, stash.Primary.Text = true, primary
	if err := wayland.Keep(ctx, desktoptest.HelperPath(t), w.Env(), stash); err != nil {
		t.Fatalf("keeping the clipboard: %v", err)
	}
	pids := keepers(t, w)
	if len(pids) != 1 {
		t.Fatalf("keepers of the session after Keep: %v, want one", pids)
	}
	t.Cleanup(func() {
		for _, pid := range keepers(t, w) {
			if p, err := os.FindProcess(pid); err == nil {
				_ = p.Kill()
			}
		}
	})
	if err := c.Close(); err != nil {
		t.Logf("closing the helper: %v", err)
	}

	for _, mime := range []string{"text/plain;charset=utf-8", "UTF8_STRING", "text/plain", "TEXT", "STRING"} {
		got := w.Run(t, "wl-paste", "--no-newline", "--type", mime)
		if got != big {
			t.Fatalf("wl-paste --type %s after the helper exited read %d bytes, want the %d kept", mime, len(got), len(big))
		}
	}
	if got := w.Run(t, "wl-paste", "--no-newline", "--primary"); got != primary {
		t.Fatalf("wl-paste --primary after the helper exited = %q, want %q", got, primary)
	}

	// Someone copies: the keeper lets go of that selection, and exits once
	// the other is taken too.
	// wl-copy runs in the foreground: it owns the clipboard only once
	// wl-paste reads its text.
	wlCopy(t, w, "copied later")
	wlWaitFor(t, "wl-copy's text to replace the kept clipboard", func() bool { return wlPaste(w) == "copied later" })
	if got := keepers(t, w); len(got) != 1 {
		t.Fatalf("keepers while it still owns the primary selection: %v, want one", got)
	}
	wlCopy(t, w, "--primary", "selected later")
	wlWaitFor(t, "the keeper to exit once both selections are taken", func() bool { return len(keepers(t, w)) == 0 })
	if got := w.Run(t, "wl-paste", "--no-newline", "--primary"); got != "selected later" {
		t.Fatalf("wl-paste --primary after wl-copy = %q", got)
	}
}

// wlCopy runs wl-copy in the foreground (it serves what it copied until
// replaced) for the rest of the test.
func wlCopy(t *testing.T, w *desktoptest.Wayland, args ...string) {
	t.Helper()
	cmd := w.Command("wl-copy", append([]string{"--foreground"}, args...)...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
}

type wlEpoch struct {
	Stream string `json:"stream"`
	Epoch  uint64 `json:"epoch"`
}

func readEpoch(t *testing.T, c *bridge.Client) wlEpoch {
	t.Helper()
	var e wlEpoch
	wlCall(t, c, "windows_epoch", nil, &e)
	if e.Stream == "" {
		t.Fatalf("windows_epoch has no stream: %+v", e)
	}
	return e
}

// settledEpoch waits until two reads in a row agree (apps starting up
// still retitle and resize), and returns it.
func settledEpoch(t *testing.T, c *bridge.Client) wlEpoch {
	t.Helper()
	var last wlEpoch
	wlWaitFor(t, "the windows epoch to settle", func() bool {
		e := readEpoch(t, c)
		same := e == last
		last = e
		if same {
			time.Sleep(300 * time.Millisecond)
			return readEpoch(t, c) == e
		}
		return false
	})
	return last
}

// TestWaylandWindowsEpoch: the epoch stands still while nothing changes,
// and moves on when, between two reads, a window opens, the focus moves,
// a floating window moves, a window is resized (sway sends no event for
// that), is retitled or closes; each change is seen by the window list
// too.
func TestWaylandWindowsEpoch(t *testing.T) {
	requireWaylandTools(t, "foot")
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	w.StartApp(t, "foot", "--app-id", "epoch.one", "--title", "one", "sh", "-c", "sleep 600")
	w.WaitView(t, "epoch.one")
	c := wlHelper(t, w)
	if !c.HandshakeInfo().Has("windows_epoch") || !c.HandshakeInfo().Has("windows_push") {
		t.Fatalf("handshake capabilities %v lack windows_epoch or windows_push", c.HandshakeInfo().Capabilities)
	}
	before := settledEpoch(t, c)
	if again := readEpoch(t, c); again != before {
		t.Fatalf("the epoch moved on with nothing changing: %+v then %+v", before, again)
	}
	changes := []struct {
		what string
		do   func()
	}{
		{"a window opens", func() {
			w.StartApp(t, "foot", "--app-id", "epoch.two", "--title", "two", "sh", "-c", "sleep 600")
			w.WaitView(t, "epoch.two")
		}},
		{"the focus moves", func() { w.Run(t, "swaymsg", "[app_id=epoch.one] focus") }},
		{"a window floats", func() { w.Run(t, "swaymsg", "[app_id=epoch.one] floating enable") }},
		{"a window is resized", func() { w.Run(t, "swaymsg", "[app_id=epoch.one] resize set 400 300") }},
		{"a floating window moves", func() { w.Run(t, "swaymsg", "[app_id=epoch.one] move position 40 50") }},
		{"a window closes", func() {
			// kill only asks foot to close; the view goes a moment later.
			w.Run(t, "swaymsg", "[app_id=epoch.two] kill")
			w.WaitViewGone(t, "epoch.two")
		}},
	}
	for _, ch := range changes {
		prev := settledEpoch(t, c)
		ch.do()
		// No waiting for the change to show: sway has done it when
		// swaymsg returns (or, for a close, when sway stops listing the
		// view), and the epoch must say so at once.
		if now := readEpoch(t, c); now == prev {
			t.Fatalf("%s, yet the epoch stood still at %+v", ch.what, now)
		}
	}
	var list wlWindows
	wlCall(t, c, "windows", map[string]any{}, &list)
	for _, win := range list.Windows {
		if win.App.Name == "epoch.two" {
			t.Errorf("the closed window is still listed: %+v", win)
		}
		if win.App.Name == "epoch.one" && (win.Bounds.X != 40 || win.Bounds.Y != 50) {
			t.Errorf("the moved window is listed at %+v, want 40,50", win.Bounds)
		}
	}
}

// rawHelper runs the helper on w with its stdio in the test's hands, to
// see the notifications a bridge.Client does not surface.
type rawHelper struct {
	in  io.WriteCloser
	out *bufio.Reader
	cmd *exec.Cmd
}

func startRawHelper(t *testing.T, w *desktoptest.Wayland) *rawHelper {
	t.Helper()
	cmd := exec.Command(desktoptest.HelperPath(t))
	cmd.Env = append(w.Env(), "DISPLAY=", "DESKHAND_HELPER_BACKEND=wayland", "DESKHAND_HELPER_LOG=debug")
	logs := &testLog{t: t}
	t.Cleanup(logs.stop)
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
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
	return &rawHelper{in: in, out: bufio.NewReader(out), cmd: cmd}
}

func (h *rawHelper) send(t *testing.T, body string) {
	t.Helper()
	if _, err := fmt.Fprintf(h.in, "Content-Length: %d\r\n\r\n%s", len(body), body); err != nil {
		t.Fatal(err)
	}
}

// next reads one frame's body.
func (h *rawHelper) next(t *testing.T) map[string]any {
	t.Helper()
	m, err := h.read()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func (h *rawHelper) read() (map[string]any, error) {
	n := -1
	for {
		line, err := h.out.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("reading a frame header: %w", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			n, _ = strconv.Atoi(v)
		}
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(h.out, body); err != nil {
		return nil, fmt.Errorf("reading a frame body: %w", err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, fmt.Errorf("frame %q: %w", body, err)
	}
	return m, nil
}

// TestWaylandWindowsChangedPush: with no request pending, a window that
// opens makes the helper push windows_changed with the new epoch, which
// windows_epoch then answers too.
func TestWaylandWindowsChangedPush(t *testing.T) {
	requireWaylandTools(t, "foot")
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	h := startRawHelper(t, w)
	h.send(t, `{"jsonrpc":"2.0","id":1,"method":"handshake","params":{"protocol_versions":[1],"notifications":["windows_changed"]}}`)
	if m := h.next(t); m["id"] != 1.0 || m["result"] == nil {
		t.Fatalf("handshake answer %v", m)
	}
	w.StartApp(t, "foot", "--app-id", "pushed", "sh", "-c", "sleep 600")
	w.WaitView(t, "pushed")
	frames := make(chan map[string]any)
	go func() {
		defer close(frames)
		for {
			m, err := h.read()
			if err != nil {
				return // the helper's stdout closed at cleanup
			}
			select {
			case frames <- m:
			case <-time.After(2 * time.Minute):
				return
			}
		}
	}()
	var pushed map[string]any
	select {
	case m, ok := <-frames:
		if !ok {
			t.Fatal("the helper stopped before pushing windows_changed")
		}
		if m["method"] != "windows_changed" || m["id"] != nil {
			t.Fatalf("first frame after the window opened = %v, want a windows_changed notification", m)
		}
		pushed, _ = m["params"].(map[string]any)
	case <-time.After(time.Minute):
		t.Fatal("no windows_changed push within a minute of a window opening")
	}
	if pushed["stream"] == "" || pushed["epoch"] == nil {
		t.Fatalf("windows_changed params %v lack stream or epoch", pushed)
	}
	h.send(t, `{"jsonrpc":"2.0","id":2,"method":"windows_epoch"}`)
	for m := range frames {
		if m["id"] != 2.0 {
			continue // more pushes while the app settles
		}
		got, _ := m["result"].(map[string]any)
		if got["stream"] != pushed["stream"] || got["epoch"].(float64) < pushed["epoch"].(float64) {
			t.Fatalf("windows_epoch %v after the push %v", got, pushed)
		}
		return
	}
	t.Fatal("the helper stopped before answering windows_epoch")
}

// TestWaylandPatchBaseline: patch_baseline re-reads the last capture's
// area: with nothing drawn it finds no difference; after a window with a
// colour of its own opens it counts the changed pixels and stores them
// under the same capture id, so patch_check then sees no change where it
// saw one before.
func TestWaylandPatchBaseline(t *testing.T) {
	requireWaylandTools(t, "foot")
	w := desktoptest.StartWayland(t, desktoptest.WaylandOptions{})
	c := wlHelper(t, w)
	var shot struct {
		CaptureID uint64 `json:"capture_id"`
	}
	wlCall(t, c, "capture", map[string]any{"format": "png"}, &shot)
	type baseline struct {
		DifferingPixels int    `json:"differing_pixels"`
		CaptureID       uint64 `json:"capture_id"`
	}
	var b baseline
	wlCall(t, c, "patch_baseline", map[string]any{}, &b)
	if b.DifferingPixels != 0 || b.CaptureID != shot.CaptureID {
		t.Fatalf("patch_baseline on an empty, quiet desktop = %+v, want 0 differing for capture %d", b, shot.CaptureID)
	}
	w.StartApp(t, "foot", "--app-id", "painted", "-o", "colors.background=d01c8b", "sh", "-c", "sleep 600")
	v := w.WaitView(t, "painted")
	cx, cy := v.Rect.X+v.Rect.Width/2, v.Rect.Y+v.Rect.Height/2
	type check struct {
		Changed bool `json:"changed"`
	}
	var pc check
	wlWaitFor(t, "the window to be drawn", func() bool {
		wlCall(t, c, "patch_check", map[string]any{"x": cx, "y": cy}, &pc)
		return pc.Changed
	})
	wlCall(t, c, "patch_baseline", map[string]any{}, &b)
	if b.DifferingPixels < v.Rect.Width*v.Rect.Height/2 || b.CaptureID != shot.CaptureID {
		t.Fatalf("patch_baseline after a %dx%d window opened = %+v, want most of its pixels, capture %d", v.Rect.Width, v.Rect.Height, b, shot.CaptureID)
	}
	// foot may still draw a frame or two as it settles: each baseline
	// stores what is there, until one finds nothing new.
	wlWaitFor(t, "a patch_baseline that finds nothing drawn since the last", func() bool {
		wlCall(t, c, "patch_baseline", map[string]any{}, &b)
		return b.DifferingPixels == 0
	})
	wlCall(t, c, "patch_check", map[string]any{"x": cx, "y": cy}, &pc)
	if pc.Changed {
		t.Fatal("patch_check still sees a change after patch_baseline stored the screen")
	}
}
