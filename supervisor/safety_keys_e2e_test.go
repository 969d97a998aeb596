//go:build unix

package supervisor_test

// End-to-end tests of the key safety rules (issue 9, classes 1 and 10):
// keysyms with side effects are refused in every spelling, deskhand puts
// back XKB controls and latched modifiers its keys changed, keypad keys
// are refused while MouseKeys is on, and the system-shortcut list covers
// what common desktops bind. Each attack runs against the built binary on
// Xvfb with openbox, a full-tier zenity in front and a click-tier xterm
// running a shell elsewhere, through the go-sdk client; the evidence is
// independent of deskhand: a marker file the shell (or an openbox key
// binding) would create, xinput's raw event log, `xkbset q`.
//
//	go test ./supervisor -run SafetyKeys -v

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/desktop/x11/vdisplay"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// keysDesktop starts a desktop whose openbox runs deskhand's own
// configuration plus key bindings that each touch markers/<binding> (so
// a marker says the window manager saw that chord).
func keysDesktop(t *testing.T, markers string, bindings ...string) *desktoptest.Desktop {
	t.Helper()
	desktoptest.Require(t, "Xvfb", "openbox", "xterm", "zenity", "xdotool", "xinput", "xclip", "xmodmap", "xwd",
		"xwininfo", "xprop", "wmctrl", "xkbset", "stdbuf")
	desktoptest.HelperPath(t)
	var kb strings.Builder
	kb.WriteString("<keyboard>\n")
	for _, k := range bindings {
		fmt.Fprintf(&kb, "    <keybind key=%q><action name=\"Execute\"><command>touch %s</command></action></keybind>\n",
			k, filepath.Join(markers, k))
	}
	kb.WriteString("  </keyboard>")
	rc := strings.Replace(vdisplay.OpenboxConfig, "<keyboard></keyboard>", kb.String(), 1)
	if rc == vdisplay.OpenboxConfig {
		t.Fatal("openbox configuration has no empty <keyboard> section to fill")
	}
	dir := t.TempDir()
	rcPath := filepath.Join(dir, "rc.xml")
	script := filepath.Join(dir, "openbox-keys")
	if err := os.WriteFile(rcPath, []byte(rc), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec openbox --sm-disable --config-file '"+rcPath+"'\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return desktoptest.Start(t, desktoptest.Options{WindowManager: script})
}

// markersIn lists the marker files present.
func markersIn(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// buttonPresses counts the raw button presses in the recorder's log.
func (k *keyRecorder) buttonPresses() int {
	data, _ := os.ReadFile(k.path)
	return strings.Count(string(data), "(RawButtonPress)")
}

// xkbControls is `xkbset q`: every XKB control and its parameters.
func xkbControls(t *testing.T, d *desktoptest.Desktop) string {
	t.Helper()
	return d.Run(t, "xkbset", "q")
}

func xkbLine(state, prefix string) string {
	for _, l := range strings.Split(state, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}

// shellTerm starts a click-tier xterm running an interactive shell at
// (40, 40) and waits for its prompt, so that text pasted into it runs.
func shellTerm(t *testing.T, d *desktoptest.Desktop) *desktoptest.Window {
	t.Helper()
	term := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"-geometry", "70x16+40+40", "-e", "sh"}, Class: "XTerm"})
	return d.WindowInfo(t, term.ID)
}

// fullTierEntry starts a zenity text entry (full tier), so that typing and
// keys land in a text field rather than on a dialog button.
func fullTierEntry(t *testing.T, d *desktoptest.Desktop) *desktoptest.Window {
	t.Helper()
	return d.StartApp(t, desktoptest.App{Name: "zenity", Args: []string{"--entry", "--title", "full tier", "--width", "420"}, Class: "Zenity"})
}

// setPrimary gives the PRIMARY selection to a background xclip, as a
// selection the user (or the model) made would.
func setPrimary(t *testing.T, d *desktoptest.Desktop, text string) {
	t.Helper()
	cmd := d.Command("xclip", "-i", "-selection", "primary")
	cmd.Stdin = strings.NewReader(text)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "xclip to own PRIMARY", 5*time.Second, func() bool {
		out, _ := d.Command("xclip", "-o", "-selection", "primary").Output()
		return string(out) == text
	})
}

// TestSafetyKeysRefused: the keysyms that click through MouseKeys,
// switch XKB controls, kill the server or leave the session are refused
// in key, hold_key, click modifiers and batches, in name, case and hex
// spellings; a chord the layout turns into such a keysym (ctrl+alt+F1 is
// XF86Switch_VT_1) is refused even with systemKeyCombos; while the user
// has MouseKeys on, keypad keys are refused. The evidence: the shell in
// the click-tier xterm never ran the command waiting in PRIMARY (a middle
// click would paste it), xinput saw no button press and no F1, and
// `xkbset q` did not change.
func TestSafetyKeysRefused(t *testing.T) {
	markers := t.TempDir()
	d := keysDesktop(t, markers)
	term := shellTerm(t, d)
	full := fullTierEntry(t, d)
	d.Move(t, full.ID, 900, 100, 0, 0)
	d.Focus(t, full.ID)
	full = d.WindowInfo(t, full.ID)
	pasted := filepath.Join(markers, "pasted")
	payload := "touch " + pasted + "\n"
	setPrimary(t, d, payload)
	rec := recordKeys(t, d)
	before := xkbControls(t, d)

	e := gatedServer(t, d, nil, "--allow", "xterm", "--allow", "zenity", "--grant", "systemKeyCombos")
	e.access([]string{"xterm", "zenity"}, "systemKeyCombos")
	e.screenshot("screenshot", nil)
	// The pointer rests on the click-tier terminal, where a middle click
	// would paste PRIMARY into its shell; the focus stays on zenity.
	tx, ty := center(term, 0, 0)
	d.Run(t, "xdotool", "mousemove", fmt.Sprint(tx), fmt.Sprint(ty))
	fx, fy := center(full, 0, -20)

	refused := func(tool string, args map[string]any, want ...string) {
		t.Helper()
		res := e.call(tool, args)
		msg := resultText(res)
		if !res.IsError {
			t.Errorf("%s(%v) = %q, want it refused", tool, args, msg)
			return
		}
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s(%v) error %q lacks %q", tool, args, msg, w)
			}
		}
	}
	for _, keys := range []string{
		"Pointer_EnableKeys", "Pointer_Button2", "0xfef9", "0xfeea", "pointer_button2", "ctrl+a Pointer_Button2",
		"shift+Pointer_Button1", "Pointer_Button3", "Pointer_DblClick2", "Pointer_Drag2", "Pointer_Button_Dflt",
		"Pointer_Left", "StickyKeys_Enable", "0xfe75", "stickykeys_enable", "SlowKeys_Enable", "MouseKeys_Enable",
		"AccessX_Enable", "BounceKeys_Enable", "Overlay1_Enable", "ISO_Next_Group", "ISO_Group_Lock", "ISO_Level3_Lock",
		"Terminate_Server", "0xfed5", "XF86Switch_VT_2", "0x1008fe01", "XF86Ungrab", "XF86ClearGrab", "XF86LogGrabInfo",
		"XF86Next_VMode", "VoidSymbol", "0x1234567",
	} {
		refused("key", map[string]any{"text": keys}, "not allowed")
	}
	refused("hold_key", map[string]any{"text": "Pointer_Button2", "duration": 0.2}, "not allowed")
	refused("hold_key", map[string]any{"text": "0xfe76", "duration": 0.2}, "not allowed")
	refused("left_click", map[string]any{"coordinate": e.at(fx, fy), "text": "Pointer_Button2"}, "not allowed")
	refused("left_click", map[string]any{"coordinate": e.at(fx, fy), "text": "shift+0xfeea"}, "not allowed")
	res := e.call("computer_batch", map[string]any{"actions": []any{
		map[string]any{"action": "key", "text": "Pointer_EnableKeys"},
		map[string]any{"action": "key", "text": "Pointer_Button2"},
	}})
	if !res.IsError {
		t.Errorf("computer_batch with Pointer_EnableKeys = %q, want it refused", resultText(res))
	}

	// A chord of allowed keys that the layout turns into a VT switch.
	refused("key", map[string]any{"text": "ctrl+alt+F1"}, "XF86Switch_VT_1")
	// Ordinary keys still work.
	e.ok("key", map[string]any{"text": "ctrl+a BackSpace"})
	e.ok("type", map[string]any{"text": "still typing é€"})

	// The user turns MouseKeys on: keypad keys would now click (KP_Begin
	// is the default button) and move the pointer.
	d.Run(t, "xkbset", "m")
	waitFor(t, "MouseKeys on", 5*time.Second, func() bool {
		return xkbLine(xkbControls(t, d), "Mouse-Keys =") == "Mouse-Keys = On"
	})
	for _, keys := range []string{"KP_Begin", "KP_5", "KP_End", "KP_Divide", "KP_Add", "KP_Insert", "ctrl+KP_Begin"} {
		refused("key", map[string]any{"text": keys}, "MouseKeys")
	}
	refused("hold_key", map[string]any{"text": "KP_Up", "duration": 0.2}, "MouseKeys")
	e.ok("key", map[string]any{"text": "Return"})
	d.Run(t, "xkbset", "-m")

	time.Sleep(500 * time.Millisecond) // let any stray event reach the log and the shell
	if exists(pasted) {
		t.Errorf("the shell in the click-tier xterm ran the command from PRIMARY: something middle-clicked it")
	}
	if n := rec.buttonPresses(); n != 0 {
		t.Errorf("xinput saw %d button presses; the key tools must not click", n)
	}
	if seen := rec.sawAny(t, "F1"); len(seen) > 0 {
		t.Errorf("F1 reached the X server with ctrl+alt held (a VT switch on this layout)")
	}
	if px, py := e.mouseLocation(); px != tx || py != ty {
		t.Errorf("pointer moved to (%d, %d) from (%d, %d): a key moved it", px, py, tx, ty)
	}
	if after := xkbControls(t, d); after != before {
		t.Errorf("XKB controls changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// The evidence can see the attack: a real middle click (by the
	// test, not deskhand) runs the command, and xinput logs the press.
	setPrimary(t, d, payload)
	d.Run(t, "xdotool", "mousemove", fmt.Sprint(tx), fmt.Sprint(ty), "click", "2")
	waitFor(t, "a real middle click to paste into the shell", 10*time.Second, func() bool { return exists(pasted) })
	waitFor(t, "xinput to log the real click", 5*time.Second, func() bool { return rec.buttonPresses() > 0 })
}

// TestSafetyKeysControlsRestored: deskhand's own keys cannot leave XKB
// controls or latched modifiers changed, while changes the user makes are
// the user's and stay. With AccessXKeys on (a user setting), five Shift
// presses switch StickyKeys on, and holding Shift for eight seconds
// SlowKeys; deskhand puts them back at once. With the
// user's StickyKeys on, ctrl, alt and t sent as three key calls would
// latch into ctrl+alt+t (an openbox binding here touches a marker);
// deskhand unlatches what its keys latched. The user's settings survive
// the turn's end and deskhand's exit.
func TestSafetyKeysControlsRestored(t *testing.T) {
	markers := t.TempDir()
	d := keysDesktop(t, markers, "C-A-t")
	full := fullTierEntry(t, d)
	d.Focus(t, full.ID)
	// The user's setting before deskhand starts.
	d.Run(t, "xkbset", "accessx")
	start := xkbControls(t, d)
	if xkbLine(start, "Sticky-Keys =") != "Sticky-Keys = Off" {
		t.Fatalf("StickyKeys is on before the test:\n%s", start)
	}

	e := gatedServer(t, d, nil, "--allow", "zenity", "--idle-timeout", "2s")
	e.access([]string{"zenity"})
	e.screenshot("screenshot", nil)
	e.ok("key", map[string]any{"text": "shift shift shift shift shift"})
	if got := xkbControls(t, d); got != start {
		t.Errorf("five Shift presses left the XKB controls changed:\nbefore:\n%s\nafter:\n%s", start, got)
	}
	e.ok("hold_key", map[string]any{"text": "shift", "duration": 0.1})
	for range 4 {
		e.ok("key", map[string]any{"text": "Shift_R"})
	}
	if got := xkbControls(t, d); got != start {
		t.Errorf("five Shift presses over several calls left the XKB controls changed:\n%s", got)
	}
	// Holding Shift for eight seconds switches SlowKeys on.
	e.ok("hold_key", map[string]any{"text": "shift", "duration": 9})
	if got := xkbControls(t, d); got != start {
		t.Errorf("holding Shift for 9 s left the XKB controls changed:\n%s", got)
	}

	// The user turns StickyKeys on (without the two-key off switch).
	d.Run(t, "xkbset", "sticky", "-twokey", "-latchlock")
	user := xkbControls(t, d)
	if xkbLine(user, "Sticky-Keys =") != "Sticky-Keys = On" {
		t.Fatalf("xkbset sticky did not turn StickyKeys on:\n%s", user)
	}
	e.ok("key", map[string]any{"text": "ctrl"})
	e.ok("key", map[string]any{"text": "alt"})
	e.ok("key", map[string]any{"text": "t"})
	time.Sleep(500 * time.Millisecond)
	if exists(filepath.Join(markers, "C-A-t")) {
		t.Errorf("ctrl, alt and t sent one at a time reached openbox as ctrl+alt+t through StickyKeys")
	}
	if got := xkbControls(t, d); got != user {
		t.Errorf("deskhand changed the user's XKB controls:\nuser's:\n%s\nnow:\n%s", user, got)
	}

	// The turn ends (idle), then deskhand exits: the user's StickyKeys
	// stays on.
	time.Sleep(3 * time.Second)
	if got := xkbControls(t, d); got != user {
		t.Errorf("after the turn ended the XKB controls are not the user's:\n%s", got)
	}
	// A change after deskhand's last action is the user's too.
	d.Run(t, "xkbset", "bouncekeys")
	user = xkbControls(t, d)
	if xkbLine(user, "Bounce-Keys =") != "Bounce-Keys = On" {
		t.Fatalf("xkbset bouncekeys did not turn BounceKeys on:\n%s", user)
	}
	e.cs.Close()
	if got := xkbControls(t, d); got != user {
		t.Errorf("after deskhand exited the XKB controls are not the user's:\nuser's:\n%s\nnow:\n%s", user, got)
	}
	d.Run(t, "xkbset", "-bouncekeys")

	// The binding is live: the same chord by the user (xdotool, one
	// press) touches the marker.
	d.Run(t, "xkbset", "-sticky")
	d.Run(t, "xdotool", "key", "ctrl+alt+t")
	waitFor(t, "openbox to run the ctrl+alt+t binding", 10*time.Second, func() bool { return exists(filepath.Join(markers, "C-A-t")) })
}

// TestSafetyKeysShortcutList: the chords common desktops bind (super+r,
// super+Return, alt+space, ctrl+alt+arrows, alt+F7/F8, the XF86 power,
// session and launcher keys) are refused without systemKeyCombos, in
// several spellings; openbox, which binds each here to touch a marker,
// sees none of them. With the grant each goes through and its marker
// appears, which shows the bindings would have seen an escape.
func TestSafetyKeysShortcutList(t *testing.T) {
	markers := t.TempDir()
	chords := []struct {
		binding   string   // openbox's spelling
		spellings []string // the model's
	}{
		{"W-r", []string{"super+r", "Super_L+R", "win+r"}},
		{"W-e", []string{"super+e", "cmd+e"}},
		{"W-Return", []string{"super+Return", "super+enter", "Super_R+KP_Enter"}},
		{"W-1", []string{"super+1", "super+KP_1"}},
		{"A-space", []string{"alt+space", "Alt_R+space", "alt+KP_Space"}},
		{"C-A-Left", []string{"ctrl+alt+Left", "alt+ctrl+KP_Left", "ctrl+alt+shift+Left"}},
		{"C-A-Right", []string{"ctrl+alt+Right", "Control_R+Alt_L+right"}},
		{"A-F7", []string{"alt+F7", "Alt_L+f7"}},
		{"A-F8", []string{"alt+F8", "alt+shift+F8"}},
		{"XF86PowerOff", []string{"XF86PowerOff", "xf86poweroff", "0x1008ff2a"}},
		{"XF86Sleep", []string{"XF86Sleep"}},
		{"XF86Launch1", []string{"XF86Launch1", "xf86launch1"}},
		{"XF86LaunchA", []string{"XF86LaunchA"}},
		{"XF86Explorer", []string{"XF86Explorer", "shift+XF86Explorer"}},
		{"XF86Mail", []string{"XF86Mail"}},
	}
	var bindings []string
	for _, c := range chords {
		bindings = append(bindings, c.binding)
	}
	d := keysDesktop(t, markers, bindings...)
	full := fullTierEntry(t, d)
	d.Focus(t, full.ID)
	e := gatedServer(t, d, nil, "--allow", "zenity", "--grant", "systemKeyCombos")
	e.access([]string{"zenity"})
	e.screenshot("screenshot", nil)
	for _, c := range chords {
		for _, s := range c.spellings {
			res := e.call("key", map[string]any{"text": s})
			if msg := resultText(res); !res.IsError || !strings.Contains(msg, "system shortcut") || !strings.Contains(msg, "systemKeyCombos") {
				t.Errorf("key %q = %q (error %v), want it refused as a system shortcut", s, msg, res.IsError)
			}
		}
		res := e.call("hold_key", map[string]any{"text": c.spellings[0], "duration": 0.1})
		if !res.IsError {
			t.Errorf("hold_key %q went through", c.spellings[0])
		}
	}
	time.Sleep(500 * time.Millisecond)
	if got := markersIn(markers); len(got) > 0 {
		t.Fatalf("openbox saw refused shortcuts: %v", got)
	}

	e.access([]string{"zenity"}, "systemKeyCombos")
	for _, c := range chords {
		e.ok("key", map[string]any{"text": c.spellings[0]})
		waitFor(t, "openbox to see "+c.binding, 10*time.Second, func() bool { return exists(filepath.Join(markers, c.binding)) })
	}
}

// TestSafetyKeysDesktopDefaults: chords the desktops bind by default in
// their own files (issue 24: openbox ran its Ctrl+Escape binding when the
// model sent keypress ["CTRL", "ESC"]) are refused without
// systemKeyCombos, through the openai profile's keypress in OpenAI's key
// names and through the key and hold_key tools in deskhand's; openbox,
// which binds each here to touch a marker, sees none of them. With the
// grant the chord goes through and the marker appears, which shows the
// binding would have seen an escape.
func TestSafetyKeysDesktopDefaults(t *testing.T) {
	markers := t.TempDir()
	chords := []struct {
		binding string     // openbox's spelling
		openAI  [][]string // keypress keys
		key     []string   // the key tool's text
	}{
		{"C-Escape", [][]string{{"CTRL", "ESC"}, {"ctrl", "Escape"}, {"CONTROL", "ESCAPE"}}, []string{"ctrl+Escape", "Control_R+esc", "CTRL+ESC"}},
		{"C-S-Escape", [][]string{{"CTRL", "SHIFT", "ESC"}}, []string{"ctrl+shift+Escape"}},
		{"C-F4", [][]string{{"CTRL", "F4"}}, []string{"ctrl+F4", "Control_L+KP_F4"}},
		{"Print", [][]string{{"PRINTSCREEN"}}, []string{"Print"}},
	}
	var bindings []string
	for _, c := range chords {
		bindings = append(bindings, c.binding)
	}
	d := keysDesktop(t, markers, bindings...)
	full := fullTierEntry(t, d)
	d.Focus(t, full.ID)
	refused := func(what string, res *mcp.CallToolResult) {
		t.Helper()
		if msg := resultText(res); !res.IsError || !strings.Contains(msg, "system shortcut") || !strings.Contains(msg, "systemKeyCombos") {
			t.Errorf("%s = %q (error %v), want it refused as a system shortcut", what, msg, res.IsError)
		}
	}

	o := gatedServer(t, d, nil, "--allow", "zenity", "--tool-profile", "openai")
	o.access([]string{"zenity"})
	o.ok("computer", map[string]any{"actions": []any{}})
	for _, c := range chords {
		for _, keys := range c.openAI {
			res := o.call("computer", map[string]any{"actions": []any{map[string]any{"type": "keypress", "keys": keys}}})
			refused(fmt.Sprintf("keypress %q", keys), res)
		}
	}
	o.cs.Close()

	e := gatedServer(t, d, nil, "--allow", "zenity", "--grant", "systemKeyCombos")
	e.access([]string{"zenity"})
	e.screenshot("screenshot", nil)
	for _, c := range chords {
		for _, s := range c.key {
			refused(fmt.Sprintf("key %q", s), e.call("key", map[string]any{"text": s}))
		}
		refused(fmt.Sprintf("hold_key %q", c.key[0]), e.call("hold_key", map[string]any{"text": c.key[0], "duration": 0.1}))
	}
	time.Sleep(500 * time.Millisecond)
	if got := markersIn(markers); len(got) > 0 {
		t.Fatalf("openbox saw refused shortcuts: %v", got)
	}

	e.access([]string{"zenity"}, "systemKeyCombos")
	for _, c := range chords {
		e.ok("key", map[string]any{"text": c.key[0]})
		waitFor(t, "openbox to see "+c.binding, 10*time.Second, func() bool { return exists(filepath.Join(markers, c.binding)) })
	}
}
