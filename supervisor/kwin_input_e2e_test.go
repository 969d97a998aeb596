//go:build unix

package supervisor_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// The KWin input tests drive the real helper on headless KWin, authorized
// for fake input by the harness's desktop entry, against a fullscreen GTK 3
// probe (testdata/wayland/gtkprobe.py, as on sway) that records what
// arrived.

// kwinScreen is the virtual output's size; the probes are fullscreen on it.
const kwinScreenW, kwinScreenH = 1280, 720

// startKWinInput starts KWin with the given keyboard layout ("" keeps
// KWin's default, us) and the helper (or the given copy of it) authorized.
func startKWinInput(t *testing.T, layout string, helper ...string) *desktoptest.KWin {
	t.Helper()
	requireGTKProbe(t)
	if len(helper) == 0 {
		helper = []string{desktoptest.HelperPath(t)}
	}
	k := desktoptest.StartKWin(t, desktoptest.KWinOptions{Width: kwinScreenW, Height: kwinScreenH, Authorize: helper})
	// KWin takes its bus name before it registers /Scripting, which
	// the harness's window list needs.
	wlWaitFor(t, "KWin's scripting service", func() bool {
		return exec.Command("gdbus", "introspect", "--address", k.Bus(), "--dest", "org.kde.KWin",
			"--object-path", "/Scripting").Run() == nil
	})
	if layout != "" {
		kwinSetLayout(t, k, layout)
	}
	return k
}

// kwinSetLayout sets KWin's layout as a Plasma session does: kxkbrc in the
// user's config, then the reloadConfig signal that System Settings sends.
func kwinSetLayout(t *testing.T, k *desktoptest.KWin, layout string) {
	t.Helper()
	dir := filepath.Join(k.Dir(), "home", ".config")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "kxkbrc")
	if err := os.WriteFile(p, []byte("[Layout]\nLayoutList="+layout+"\nUse=true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{dir, p} {
		if err := os.Chown(f, k.UID(), k.GID()); err != nil {
			t.Fatal(err)
		}
	}
	k.RunAsUser(t, "gdbus", "emit", "--session", "--object-path", "/Layouts", "--signal", "org.kde.keyboard.reloadConfig")
}

// kwinSwitchLayout switches KWin to its layout number i, as the layout
// switcher applet does, and waits until KWin reports it active.
func kwinSwitchLayout(t *testing.T, k *desktoptest.KWin, i int) {
	t.Helper()
	call := func(method string, args ...string) (string, error) {
		argv := append([]string{"call", "--session", "--dest", "org.kde.keyboard", "--object-path", "/Layouts",
			"--method", "org.kde.KeyboardLayouts." + method}, args...)
		out, err := k.UserCommand("gdbus", argv...).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	want := fmt.Sprintf("(uint32 %d,)", i)
	wlWaitFor(t, "KWin to switch to layout "+want, func() bool {
		if got, err := call("getLayout"); err == nil && got == want {
			return true
		}
		_, _ = call("setLayout", fmt.Sprint(i))
		return false
	})
}

// kwinInputHelper starts the real helper as the session's user, as KWin
// must see its executable to grant it fake input.
func kwinInputHelper(t *testing.T, k *desktoptest.KWin) *bridge.Client {
	t.Helper()
	argv := k.AsUser(desktoptest.HelperPath(t))
	env := append(k.UserEnv(), "DISPLAY=", "DESKHAND_HELPER_BACKEND=wayland")
	c := bridge.New(bridge.Options{Path: argv[0], Args: argv[1:], Env: env})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("starting the helper on KWin: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	info := c.HandshakeInfo()
	for _, want := range []string{"input.pointer", "input.keyboard"} {
		found := false
		for _, got := range info.Capabilities {
			found = found || got == want
		}
		if !found {
			t.Fatalf("the helper on KWin lacks %s (capabilities %v)", want, info.Capabilities)
		}
	}
	return c
}

// startKWinProbe starts the fullscreen probe in mode and waits until KWin shows
// it over the whole screen, active.
func startKWinProbe(t *testing.T, k *desktoptest.KWin, mode string) string {
	t.Helper()
	probe := copyTestdata(t, "wayland/gtkprobe.py", filepath.Join(k.Dir(), "gtkprobe.py"))
	out := filepath.Join(k.Dir(), mode+".out")
	pid := k.StartApp(t, "/usr/bin/python3", probe, mode, out, "fullscreen")
	wlWaitFor(t, "the "+mode+" probe fullscreen and active on KWin", func() bool {
		for _, w := range k.Windows(t) {
			if w.PID == pid && w.Active && w.X == 0 && w.Y == 0 && w.Width == kwinScreenW && w.Height == kwinScreenH {
				return true
			}
		}
		return false
	})
	return out
}

func TestKWinClickGTKButton(t *testing.T) {
	k := startKWinInput(t, "")
	out := startKWinProbe(t, k, "button")
	c := kwinInputHelper(t, k)
	wlMove(t, c, kwinScreenW/2, kwinScreenH/2)
	// A probe KWin shows may not take input yet on a loaded machine: click
	// until one lands, and every click must land as one "clicked".
	clicks := 0
	wlWaitFor(t, "a click on the button", func() bool {
		if b, _ := os.ReadFile(out); len(b) > 0 {
			if n := strings.Count(string(b), "clicked\n"); n > clicks || string(b) != strings.Repeat("clicked\n", n) {
				t.Fatalf("after %d clicks the probe recorded %q", clicks, b)
			}
			return true
		}
		wlCall(t, c, "pointer_button", map[string]any{"button": "left", "action": "click"}, &json.RawMessage{})
		clicks++
		time.Sleep(time.Second)
		b, _ := os.ReadFile(out)
		return len(b) > 0
	})
}

func TestKWinScrollAndDrag(t *testing.T) {
	t.Run("scroll", func(t *testing.T) {
		k := startKWinInput(t, "")
		out := startKWinProbe(t, k, "scroll")
		c := kwinInputHelper(t, k)
		wlMove(t, c, kwinScreenW/2, kwinScreenH/2)
		// The list moves down (a growing offset) by the wheel, and back up.
		offset := func() int {
			b, _ := os.ReadFile(out)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			var v int
			if _, err := fmt.Sscanf(lines[len(lines)-1], "scrolled %d", &v); err != nil {
				return 0
			}
			return v
		}
		wlWaitFor(t, "the list to scroll down", func() bool {
			wlCall(t, c, "pointer_scroll", map[string]any{"dy": 3}, &json.RawMessage{})
			time.Sleep(200 * time.Millisecond)
			return offset() > 0
		})
		down := offset()
		wlCall(t, c, "pointer_scroll", map[string]any{"dy": -1}, &json.RawMessage{})
		wlWaitFor(t, "the list to scroll back up", func() bool { return offset() < down })
	})
	t.Run("drag", func(t *testing.T) {
		k := startKWinInput(t, "")
		out := startKWinProbe(t, k, "drag")
		c := kwinInputHelper(t, k)
		// Fullscreen: the probe's coordinates are the screen's.
		wlDragProbe(t, c, out, 100, 100, 300, 250, "drag 100 100 300 250\n")
	})
}

// TestKWinHelperExitReleasesButton holds the left button down (a drag under
// way) and ends the helper: the probe sees the release, so no button stays
// held in the user's session.
func TestKWinHelperExitReleasesButton(t *testing.T) {
	k := startKWinInput(t, "")
	out := startKWinProbe(t, k, "drag")
	const want = "drag 100 100 200 150\n"
	for seen := 0; ; {
		c := kwinInputHelper(t, k)
		wlMove(t, c, 100, 100)
		wlCall(t, c, "pointer_button", map[string]any{"action": "press"}, &json.RawMessage{})
		wlMove(t, c, 200, 150)
		if err := c.Close(); err != nil {
			t.Fatalf("closing the helper: %v", err)
		}
		got := wlWaitFile(t, out, func(s string) bool { return strings.Count(s, "\n") > seen })
		lines := strings.SplitAfter(got, "\n")
		last := lines[len(lines)-2]
		if last == want {
			return
		}
		// A press the probe missed (not taking input yet) shows as
		// "drag -1 -1 …": hold and exit again.
		if !strings.HasPrefix(last, "drag -1 -1 ") {
			t.Fatalf("after the helper exited with the button down the probe recorded %q, want %q", last, want)
		}
		seen = strings.Count(got, "\n")
	}
}

// kwinLayouts are the layouts typing is tested under, with the characters
// of wlTyped each cannot make (so the helper must refuse them) and the
// hardware keycode (evdev + 8) of the key that types "z" there.
// With several layouts, active is the one KWin is switched to.
var kwinLayouts = []struct {
	layout, cannot string
	active         int
	zKey           int
}{
	{"us", "üß世界", 0, 52},
	{"de", "世界", 0, 29},
	{"us,de", "世界", 1, 29},
}

func TestKWinKeyCombosAndTyping(t *testing.T) {
	for _, tc := range kwinLayouts {
		t.Run(tc.layout, func(t *testing.T) {
			k := startKWinInput(t, tc.layout)
			if tc.active > 0 {
				kwinSwitchLayout(t, k, tc.active)
			}
			out := startKWinProbe(t, k, "entry")
			wlWaitFile(t, out+".focus", func(s string) bool { return s == "focused\n" })
			c := kwinInputHelper(t, k)
			typable := strings.Map(func(r rune) rune {
				if strings.ContainsRune(tc.cannot, r) {
					return -1
				}
				return r
			}, wlTyped)

			// ctrl+a selects what is there, so the typing replaces it: the
			// combo took effect as a combo, not as the letter a.
			wlCall(t, c, "key_type", map[string]any{"text": "discard me"}, &json.RawMessage{})
			wlWaitFile(t, out, func(s string) bool { return s == "discard me" })
			wlCall(t, c, "key_combo", map[string]any{"keys": []uint32{0xffe3, 'a'}}, &json.RawMessage{})
			wlCall(t, c, "key_type", map[string]any{"text": typable}, &json.RawMessage{})
			wlWaitFile(t, out, func(s string) bool { return s == typable })

			// KWin, not the helper, decides what a key makes: its layout
			// gave "z" the key the layout has it on.
			keys, _ := os.ReadFile(out + ".keys")
			if want := fmt.Sprintf("press %d z\n", tc.zKey); !strings.Contains(string(keys), want) {
				t.Fatalf("the probe saw no %q under %s; it saw:\n%s", want, tc.layout, keys)
			}

			// The whole text holds characters this layout cannot make:
			// refused, naming each, and nothing of it typed.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			err := c.Call(ctx, "key_type", map[string]any{"text": wlTyped}, &json.RawMessage{})
			var re *bridge.Error
			if !errors.As(err, &re) || re.Name != "unsupported" {
				t.Fatalf("key_type(%q) under %s = %v, want an unsupported refusal", wlTyped, tc.layout, err)
			}
			for _, r := range tc.cannot {
				if !strings.Contains(re.Message, fmt.Sprintf("%q", r)) {
					t.Errorf("the refusal %q does not name %q", re.Message, r)
				}
			}
			if n := strings.Count(re.Message, "(U+"); n != len([]rune(tc.cannot)) {
				t.Errorf("the refusal %q names %d characters, want %d (%s)", re.Message, n, len([]rune(tc.cannot)), tc.cannot)
			}
			// What follows arrives right after the text typed before: the
			// refused call typed nothing.
			wlCall(t, c, "key_type", map[string]any{"text": "#"}, &json.RawMessage{})
			if got := wlWaitFile(t, out, func(s string) bool { return strings.HasSuffix(s, "#") }); got != typable+"#" {
				t.Fatalf("after the refusal the entry holds %q, want %q", got, typable+"#")
			}

			// A long text, sent in several bursts, arrives whole and in order.
			long := ""
			for i := 0; len(long) < 2000; i++ {
				long += fmt.Sprintf("%d:%s ", i, typable)
			}
			wlCall(t, c, "key_combo", map[string]any{"keys": []uint32{0xffe3, 'a'}}, &json.RawMessage{})
			wlCall(t, c, "key_type", map[string]any{"text": long}, &json.RawMessage{})
			wlWaitFile(t, out, func(s string) bool { return s == long })
		})
	}
}

// TestKWinUnauthorizedInputSaysWhy: without the desktop entry KWin grants
// no fake input; the handshake says so, each input call is refused naming
// the entry, and the button under the pointer is not clicked.
func TestKWinUnauthorizedInputSaysWhy(t *testing.T) {
	requireGTKProbe(t)
	k, helper := startKWin(t, false)
	wlWaitFor(t, "KWin's scripting service", func() bool {
		return exec.Command("gdbus", "introspect", "--address", k.Bus(), "--dest", "org.kde.KWin",
			"--object-path", "/Scripting").Run() == nil
	})
	out := startKWinProbe(t, k, "button")
	c, hello := kwinHelper(t, k, helper)
	for _, cap := range []string{"input.pointer", "input.keyboard"} {
		if contains(hello.Capabilities, cap) {
			t.Errorf("an unauthorized helper claims %s: %q", cap, hello.Capabilities)
		}
	}
	if all := strings.Join(hello.Missing, "\n"); !strings.Contains(all, "org_kde_kwin_fake_input") || !strings.Contains(all, "deskhand-helper.desktop") {
		t.Errorf("missing %q does not say fake input needs the desktop entry", hello.Missing)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	calls := []struct {
		method string
		params map[string]any
	}{
		{"pointer_move", map[string]any{"x": kwinScreenW / 2, "y": kwinScreenH / 2}},
		{"pointer_button", map[string]any{"action": "click"}},
		{"key_type", map[string]any{"text": "x"}},
		{"key_combo", map[string]any{"keys": []uint32{0xff0d}}},
	}
	for _, call := range calls {
		err := c.Call(ctx, call.method, call.params, &json.RawMessage{})
		var re *bridge.Error
		if !errors.As(err, &re) || re.Name != "unsupported" || !strings.Contains(re.Message+re.Hint, "deskhand-helper.desktop") {
			t.Errorf("unauthorized %s = %v, want an unsupported refusal naming the desktop entry", call.method, err)
		}
	}
	if b, _ := os.ReadFile(out); len(b) != 0 {
		t.Fatalf("an unauthorized helper clicked the button: %q", b)
	}
}
