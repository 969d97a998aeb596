//go:build unix

package supervisor_test

// End-to-end tests that the gates hold for the whole of an action, not
// just its start (issue 9, classes 2 and 9): a long hold_key, a long
// type and a computer_batch step stop the moment a click-tier terminal
// takes the focus, and the staleness guard checks every click. The
// evidence is independent of deskhand: what a terminal running cat wrote
// to a file, the keys the X server reports held, xset's autorepeat map.
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run SafetyWhole -v

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// wholeScene is a click-tier xterm whose keys a cat writes to a file
// byte by byte, behind a full-tier zenity entry that has the focus.
type wholeScene struct {
	d       *desktoptest.Desktop
	e       *e2e
	term    *desktoptest.Window
	typed   string // what reached the terminal
	dialog  *desktoptest.Window
	out     string // what the dialog read
	code    string // the dialog's exit status
	keycode map[string]int
}

func newWholeScene(t *testing.T) *wholeScene {
	t.Helper()
	desktoptest.Require(t, "xinput", "xset", "xmodmap", "zenity", "xterm")
	d := newDesktop(t, desktoptest.Options{})
	s := &wholeScene{d: d, typed: filepath.Join(t.TempDir(), "typed"), keycode: map[string]int{}}
	// -icanon: cat gets every byte at once, not only finished lines.
	s.term = d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"-geometry", "60x16+40+40", "-e", "sh", "-c",
		"stty -icanon -echo; exec cat > " + s.typed}, Class: "XTerm"})
	d.Focus(t, s.term.ID)
	s.dialog, s.out, s.code = shellApp(t, d, `--entry --title "Front" --text "Front"`)
	d.Move(t, s.dialog.ID, 900, 300, 0, 0)
	d.Focus(t, s.dialog.ID)
	s.e = gatedServer(t, d, nil, "--allow", "xterm", "--allow", "zenity")
	s.e.access([]string{"xterm", "zenity"})
	list := strings.ToLower(resultText(s.e.ok("list_granted_applications", nil)))
	if !strings.Contains(list, "xterm: click tier") || !strings.Contains(list, "zenity: full tier") {
		t.Fatalf("granted apps %q: want xterm at click and zenity at full tier", list)
	}
	for _, line := range strings.Split(d.Run(t, "xmodmap", "-pke"), "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[0] == "keycode" && f[2] == "=" {
			code, _ := strconv.Atoi(f[1])
			if _, seen := s.keycode[f[3]]; !seen {
				s.keycode[f[3]] = code
			}
		}
	}
	return s
}

// terminalGot returns what reached the terminal.
func (s *wholeScene) terminalGot() string {
	b, _ := os.ReadFile(s.typed)
	return string(b)
}

// keyDown reports whether the X server has keysym's key down on the XTEST
// keyboard deskhand types with.
func (s *wholeScene) keyDown(t *testing.T, keysym string) bool {
	t.Helper()
	code, ok := s.keycode[keysym]
	if !ok {
		t.Fatalf("no keycode for %s", keysym)
	}
	out, err := s.d.Command("xinput", "query-state", "Virtual core XTEST keyboard").Output()
	if err != nil {
		t.Fatalf("xinput query-state: %v", err)
	}
	return strings.Contains(string(out), fmt.Sprintf("key[%d]=down", code))
}

// autorepeat is xset's map of the keys that autorepeat.
func (s *wholeScene) autorepeat(t *testing.T) string {
	t.Helper()
	out := s.d.Run(t, "xset", "q")
	i := strings.Index(out, "auto repeating keys:")
	j := strings.Index(out, "bell percent")
	if i < 0 || j < i {
		t.Fatalf("xset q shows no autorepeat map:\n%s", out)
	}
	return strings.Join(strings.Fields(out[i:j]), " ")
}

// callAsync makes a tool call in the background.
func (s *wholeScene) callAsync(name string, args any) <-chan *mcp.CallToolResult {
	ch := make(chan *mcp.CallToolResult, 1)
	go func() { ch <- s.e.call(name, args) }()
	return ch
}

func waitResult(t *testing.T, ch <-chan *mcp.CallToolResult) *mcp.CallToolResult {
	t.Helper()
	select {
	case res := <-ch:
		return res
	case <-time.After(60 * time.Second):
		t.Fatal("no answer to the tool call within 60 s")
		return nil
	}
}

// TestSafetyWholeHoldKey: a hold_key of a letter starts with the
// full-tier dialog in front; the terminal then takes the focus. The hold
// stops at once with an error naming the terminal, no key (autorepeat
// included) reaches it, and the autorepeat map is as it was.
func TestSafetyWholeHoldKey(t *testing.T) {
	s := newWholeScene(t)
	repeatBefore := s.autorepeat(t)
	ch := s.callAsync("hold_key", map[string]any{"text": "a", "duration": 15})
	waitFor(t, "the held key to be down", 10*time.Second, func() bool { return s.keyDown(t, "a") })
	if got := s.autorepeat(t); got == repeatBefore {
		t.Errorf("the held key still autorepeats: %s", got)
	}
	s.d.Focus(t, s.term.ID)
	res := waitResult(t, ch)
	msg := resultText(res)
	// The watch may catch the focus on its way to the xterm, between
	// windows, where no window has it: also a change that stops the hold.
	lower := strings.ToLower(msg)
	if !res.IsError || !strings.Contains(msg, "changed") || !strings.Contains(lower, "xterm") && !strings.Contains(lower, "no window has the keyboard focus") {
		t.Errorf("hold_key after the terminal took the focus: error=%v %q; want an error naming the change to xterm", res.IsError, msg)
	}
	if s.keyDown(t, "a") {
		t.Error("the key is still down after hold_key returned")
	}
	if got := s.autorepeat(t); got != repeatBefore {
		t.Errorf("autorepeat map after the hold %q, want %q as before", got, repeatBefore)
	}
	// Proof that the terminal reads keys at all, typed by the test, and
	// that none of deskhand's came before it.
	s.d.Run(t, "xdotool", "key", "--clearmodifiers", "Z")
	waitFor(t, "the terminal to read the test's own key", 10*time.Second, func() bool { return strings.Contains(s.terminalGot(), "Z") })
	if got := s.terminalGot(); strings.Contains(got, "a") {
		t.Errorf("the terminal received deskhand's held key: %q", got)
	}
}

// TestSafetyWholeTypeFocusMoves: while a long type runs into the
// full-tier dialog (thousands of characters the layout lacks, typed in
// rounds of borrowed keycodes, so it takes a while), the keyboard focus
// moves to the click-tier terminal (set directly on the X server, as a
// client can, without the window manager). The type stops, says how much
// it typed, and nothing reaches the terminal.
func TestSafetyWholeTypeFocusMoves(t *testing.T) {
	s := newWholeScene(t)
	keys := recordKeys(t, s.d)
	var text strings.Builder
	for i := 0; i < 6000; i++ {
		text.WriteRune(rune(0x4e00 + i%400)) // none on a US layout: each borrows a keycode
	}
	ch := s.callAsync("type", map[string]any{"text": text.String()})
	waitFor(t, "typing to be under way", 30*time.Second, func() bool { return len(keys.pressed()) >= 40 })
	s.d.Run(t, "xdotool", "windowfocus", fmt.Sprint(s.term.ID))
	res := waitResult(t, ch)
	msg := resultText(res)
	if !res.IsError || !strings.Contains(msg, "then stopped") {
		t.Errorf("type while the focus moved to the terminal: error=%v %q; want it stopped, saying how much it typed", res.IsError, abbrev(msg))
	}
	s.d.Run(t, "xdotool", "key", "--clearmodifiers", "Z")
	waitFor(t, "the terminal to read the test's own key", 10*time.Second, func() bool { return strings.Contains(s.terminalGot(), "Z") })
	if got := s.terminalGot(); got != "Z" {
		t.Errorf("the terminal received %q before the test's own Z; want nothing from deskhand", abbrev(got))
	}
}

// TestSafetyWholeTypeNewline: the first line of a type ends with Return,
// which closes the dialog; the window manager then gives the focus to the
// terminal. The rest of the text must not reach the terminal: either the
// dialog read it before it went, or the type stopped with an error that
// says how much was typed.
func TestSafetyWholeTypeNewline(t *testing.T) {
	s := newWholeScene(t)
	text := "ok\n" + strings.Repeat("echo pwned; ", 300) + "\n"
	res := s.e.call("type", map[string]any{"text": text})
	msg := resultText(res)
	if status := waitExit(t, s.code); status != 0 {
		t.Fatalf("the dialog exited %d", status)
	}
	got, _ := os.ReadFile(s.out)
	switch {
	case !strings.HasPrefix(string(got), "ok"):
		t.Errorf("the dialog read %q, want it to start with %q", abbrev(string(got)), "ok")
	case res.IsError && !strings.Contains(msg, "then stopped"):
		t.Errorf("type across the closing dialog failed with %q; want it to say how much was typed", msg)
	}
	waitFor(t, "the dialog to be unlisted", 30*time.Second, func() bool { return !slices.Contains(s.d.ClientList(t), s.dialog.ID) })
	s.d.Focus(t, s.term.ID)
	s.d.Run(t, "xdotool", "key", "--clearmodifiers", "Z")
	waitFor(t, "the terminal to read the test's own key", 10*time.Second, func() bool { return strings.Contains(s.terminalGot(), "Z") })
	if got := s.terminalGot(); got != "Z" {
		t.Errorf("the terminal received %q before the test's own Z; want nothing from deskhand", abbrev(got))
	}
}

func abbrev(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:40]) + "…" + string(r[len(r)-40:])
	}
	return s
}

// TestSafetyWholeBatchStep: a computer_batch whose second step holds a
// key stops there when the terminal takes the focus; the later steps do
// not run and nothing reaches the terminal.
func TestSafetyWholeBatchStep(t *testing.T) {
	s := newWholeScene(t)
	ch := s.callAsync("computer_batch", map[string]any{"actions": []any{
		map[string]any{"action": "key", "text": "b"},
		map[string]any{"action": "hold_key", "text": "a", "duration": 15},
		map[string]any{"action": "type", "text": "echo pwned\n"},
	}})
	waitFor(t, "the held key to be down", 10*time.Second, func() bool { return s.keyDown(t, "a") })
	s.d.Focus(t, s.term.ID)
	res := waitResult(t, ch)
	batchShape(t, res, 1, 1, "changed")
	s.d.Run(t, "xdotool", "key", "--clearmodifiers", "Z")
	waitFor(t, "the terminal to read the test's own key", 10*time.Second, func() bool { return strings.Contains(s.terminalGot(), "Z") })
	if got := s.terminalGot(); got != "Z" {
		t.Errorf("the terminal received %q before the test's own Z; want nothing from deskhand", got)
	}
}

// buttonPresses counts the raw button presses the key recorder (xinput
// test-xi2 --root) has seen, from every client.
func buttonPresses(k *keyRecorder) int {
	data, _ := os.ReadFile(k.path)
	return strings.Count(string(data), "(RawButtonPress)")
}

// TestSafetyWholeStaleness: after a screenshot and a mouse_move onto the
// target, a window is moved over the target; the left_click that follows
// is refused as stale and no button press reaches the X server. The
// model's own sequence, a click and typing that change the screen and a
// click on what they changed, is allowed.
func TestSafetyWholeStaleness(t *testing.T) {
	desktoptest.Require(t, "xinput", "zenity", "xterm")
	d := newDesktop(t, desktoptest.Options{})
	target := d.StartGTK(t, "target")
	d.Move(t, target.ID, 100, 100, 0, 0)
	// The cover looks nothing like the target: a red terminal.
	cover := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"-bg", "#C01010", "-geometry", "40x12+1000+600"}, Class: "XTerm"})
	d.Focus(t, target.ID)
	target = d.WindowInfo(t, target.ID)
	e := gatedServer(t, d, nil, "--allow", "zenity", "--allow", "xterm")
	e.access([]string{"zenity", "xterm"})
	rec := recordKeys(t, d)

	e.screenshot("screenshot", nil)
	x, y := center(target, 0, -20)
	e.ok("mouse_move", map[string]any{"coordinate": e.at(x, y)})
	// wait returns once deskhand has taken the screen as the move left it
	// (the settling runs in the background), so the change below is
	// someone else's.
	e.ok("wait", map[string]any{"duration": 0.1})
	d.Move(t, cover.ID, x-100, y-60, 0, 0)
	d.Focus(t, cover.ID)
	before := buttonPresses(rec)
	e.bad("left_click", map[string]any{"coordinate": e.at(x, y)}, "stale screenshot", "take a new screenshot")
	if got := buttonPresses(rec); got != before {
		t.Errorf("%d button presses reached the X server from the refused click after mouse_move", got-before)
	}
	// The same after a scroll.
	e.screenshot("screenshot", nil)
	e.ok("scroll", map[string]any{"coordinate": e.at(x, y), "scroll_direction": "down", "scroll_amount": 1})
	e.ok("wait", map[string]any{"duration": 0.1})
	d.Move(t, cover.ID, 1000, 600, 0, 0)
	before = buttonPresses(rec)
	e.bad("left_click", map[string]any{"coordinate": e.at(x, y)}, "stale screenshot", "take a new screenshot")
	if got := buttonPresses(rec); got != before {
		t.Errorf("%d button presses reached the X server from the refused click after scroll", got-before)
	}

	// The model's own sequence: click into an entry, type (the entry
	// changes), click on the typed text, type more, press Return.
	w, out, code := shellApp(t, d, `--entry --title "Own changes" --text "Own changes"`)
	d.Move(t, w.ID, 600, 100, 0, 0)
	d.Focus(t, w.ID)
	w = d.WindowInfo(t, w.ID)
	e.quietScreenshot() // the dialog's first frames drawn
	// GTK 3's zenity --entry: the entry spans the client area's width, 35
	// px above the buttons' row.
	ex, ey := w.Client.X+40, w.Client.Y+w.Client.Height-76
	e.ok("left_click", map[string]any{"coordinate": e.at(ex, ey)})
	e.ok("type", map[string]any{"text": "hello"})
	e.ok("left_click", map[string]any{"coordinate": e.at(ex+10, ey)})
	e.ok("key", map[string]any{"text": "End"})
	e.ok("type", map[string]any{"text": " world"})
	e.ok("key", map[string]any{"text": "Return"})
	if status := waitExit(t, code); status != 0 {
		t.Fatalf("the dialog exited %d", status)
	}
	if got, _ := os.ReadFile(out); string(got) != "hello world\n" {
		t.Errorf("the dialog read %q, want %q", got, "hello world\n")
	}
}
