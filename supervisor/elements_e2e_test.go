//go:build unix

package supervisor_test

// End-to-end tests of the element tools (list_apps, get_app_state, click
// by element id, type_text, set_value, perform_action, wait_for) through
// the built binary and the real helper, on a private Xvfb desktop with a
// private session bus and at-spi2-core, against real GTK apps (zenity
// dialogs whose output tells what the user's click did, and
// gtk3-widget-factory), checked with independent evidence: what zenity
// prints when it closes, xdotool's pointer position and active window.
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run Elements -v

import (
	"context"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// a11yDesktop is a desktop with the AT-SPI stack up before any app.
func a11yDesktop(t *testing.T) *desktoptest.Desktop {
	t.Helper()
	desktoptest.Require(t, "dbus-daemon", "gdbus")
	d := newDesktop(t, desktoptest.Options{Width: 1600, Height: 1000})
	d.StartAccessibility(t)
	return d
}

// elementsServer serves d with zenity approved at tier and xterm at full.
func elementsServer(t *testing.T, d *desktoptest.Desktop, tier string, args ...string) *e2e {
	t.Helper()
	e := gatedServer(t, d, nil, append([]string{"--allow", "zenity=" + tier, "--allow", "xterm=full", "--allow", "gtk3-widget-factory=full"}, args...)...)
	e.access([]string{"zenity", "xterm"})
	return e
}

// zenity starts `zenity args...` with its standard output in a file, and
// returns its window and that file.
func zenity(t *testing.T, d *desktoptest.Desktop, args ...string) (*desktoptest.Window, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "zenity.out")
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	w := d.StartApp(t, desktoptest.App{Name: "sh", Args: []string{"-c", "exec zenity " + strings.Join(quoted, " ") + " > '" + out + "'"}, Class: "Zenity"})
	info := d.WindowInfo(t, w.ID)
	info.Cmd = w.Cmd
	return info, out
}

// waitProcessExit waits until the process of w has exited.
func waitProcessExit(t *testing.T, w *desktoptest.Window) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for w.Cmd.Process.Signal(syscall.Signal(0)) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("pid %d still runs after 20s", w.Cmd.Process.Pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// state calls get_app_state and returns its text.
func (e *e2e) state(pid int, extra map[string]any) string {
	e.t.Helper()
	args := map[string]any{"pid": pid}
	for k, v := range extra {
		args[k] = v
	}
	return resultText(e.ok("get_app_state", args))
}

// waitState calls get_app_state (whole trees) until one has a line
// matching re, as an app registers its tree after it maps.
func (e *e2e) waitState(pid int, re string) string {
	e.t.Helper()
	return e.waitStateWithin(pid, re, 30*time.Second)
}

// waitStateWithin is waitState with its deadline given.
func (e *e2e) waitStateWithin(pid int, re string, within time.Duration) string {
	e.t.Helper()
	match := regexp.MustCompile(re)
	deadline := time.Now().Add(within)
	for {
		res := e.call("get_app_state", map[string]any{"pid": pid, "disableDiff": true})
		text := resultText(res)
		if !res.IsError && match.MatchString(text) {
			return text
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("after %v no state of pid %d matches %q; the last:\n%s", within, pid, re, text)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// elementID returns the id on the first line with role (and a name
// containing name) of a state's text.
func elementID(t *testing.T, state, role, name string) string {
	t.Helper()
	re := regexp.MustCompile(`\[(\d+)\] ` + regexp.QuoteMeta(role) + `(?: "([^"]*)")?`)
	for _, m := range re.FindAllStringSubmatch(state, -1) {
		if strings.Contains(m[2], name) {
			return m[1]
		}
	}
	t.Fatalf("no %s named %q in the state:\n%s", role, name, state)
	return ""
}

// lineOf returns the state's line of element id.
func lineOf(state, id string) string {
	for _, l := range strings.Split(state, "\n") {
		if strings.Contains(l, "["+id+"] ") {
			return l
		}
	}
	return ""
}

// waitFile waits until path holds want (zenity writes it as it exits).
func waitFile(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if strings.TrimSpace(string(b)) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %q after 20s, want %q", path, b, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestElementsBackground: on a zenity entry dialog behind an xterm,
// type_text and set_value change the entry (read back from the tree), and
// a click by element id presses OK: zenity prints the text and exits. The
// pointer never moves and the xterm keeps the focus (xdotool), because
// all of it ran through the accessibility API.
func TestElementsBackground(t *testing.T) {
	d := a11yDesktop(t)
	dlg, out := zenity(t, d, "--entry", "--title", "element entry", "--text", "Your name:", "--width", "500")
	d.Move(t, dlg.ID, 100, 100, 0, 0)
	term := d.StartXterm(t, desktoptest.XtermOptions{Geometry: "60x10+300+120"})
	d.Focus(t, term.ID)
	e := elementsServer(t, d, "full")

	apps := resultText(e.ok("list_apps", nil))
	if !strings.Contains(apps, "pid "+strconv.Itoa(dlg.PID)) || !strings.Contains(apps, "element entry") {
		t.Fatalf("list_apps lacks zenity (pid %d):\n%s", dlg.PID, apps)
	}
	state := e.waitState(dlg.PID, `push button "OK"`)
	entry := elementID(t, state, "text", "")
	ok := elementID(t, state, "push button", "OK")
	// The screenshot is the window's frame as xwininfo has it, and the
	// element bounds lie inside its client area.
	frame := d.WindowInfo(t, dlg.ID).Frame
	if want := fmt.Sprintf(`"screen_rect":{"x":%d,"y":%d,"width":%d,"height":%d}`, frame.X, frame.Y, frame.Width, frame.Height); !strings.Contains(state, want) {
		t.Errorf("the state's screenshot is not the window's frame %s (xwininfo):\n%s", frame, state)
	}
	m := regexp.MustCompile(`\[` + ok + `\] push button "OK"[^@]*@\((\d+),(\d+) (\d+)x(\d+)\)`).FindStringSubmatch(state)
	if m == nil {
		t.Fatalf("OK has no bounds: %q", lineOf(state, ok))
	}
	bx, _ := strconv.Atoi(m[1])
	by, _ := strconv.Atoi(m[2])
	client := d.WindowInfo(t, dlg.ID).Client
	if !client.Contains(frame.X+bx+2, frame.Y+by+2) {
		t.Errorf("OK at (%d, %d) of the screenshot lies outside the client area %s", bx, by, client)
	}
	d.Run(t, "xdotool", "mousemove", "20", "900")
	px, py := e.mouseLocation()

	e.ok("type_text", map[string]any{"pid": dlg.PID, "element_id": entry, "text": "Ada"})
	state = e.state(dlg.PID, nil)
	if l := lineOf(state, entry); !strings.Contains(l, `value="Ada"`) {
		t.Errorf("after type_text the entry is %q; the diff:\n%s", l, state)
	}
	e.ok("set_value", map[string]any{"pid": dlg.PID, "element_id": entry, "value": "Ada Lovelace"})
	state = e.state(dlg.PID, nil)
	if l := lineOf(state, entry); !strings.Contains(l, `value="Ada Lovelace"`) {
		t.Errorf("after set_value the entry is %q; the diff:\n%s", l, state)
	}
	res := e.ok("click", map[string]any{"pid": dlg.PID, "element_id": ok})
	if !strings.Contains(resultText(res), "in the background") {
		t.Errorf("click by id did not run through the accessibility API: %s", resultText(res))
	}
	waitFile(t, out, "Ada Lovelace")
	if x, y := e.mouseLocation(); x != px || y != py {
		t.Errorf("the pointer moved from (%d, %d) to (%d, %d)", px, py, x, y)
	}
	if active := d.ActiveWindow(t); active != term.ID {
		t.Errorf("the active window is %#x, want the xterm %#x still", active, term.ID)
	}
}

// TestElementsSliderAndTiers: set_value with a number moves a zenity
// slider (zenity prints the value on OK); on a click-tier zenity,
// type_text is refused and nothing reaches the entry (the OK that the click
// tier allows prints an empty line); on a read-tier one the click on OK is
// refused and zenity keeps running.
func TestElementsSliderAndTiers(t *testing.T) {
	t.Run("slider", func(t *testing.T) {
		d := a11yDesktop(t)
		dlg, out := zenity(t, d, "--scale", "--title", "element scale", "--min-value", "0", "--max-value", "100", "--value", "10")
		e := elementsServer(t, d, "full")
		state := e.waitState(dlg.PID, `slider`)
		slider := elementID(t, state, "slider", "")
		e.bad("set_value", map[string]any{"pid": dlg.PID, "element_id": slider, "value": 250}, "outside the range")
		e.ok("set_value", map[string]any{"pid": dlg.PID, "element_id": slider, "value": 42})
		state = e.state(dlg.PID, nil)
		if l := lineOf(state, slider); !strings.Contains(l, "range=42") {
			t.Errorf("after set_value(42) the slider is %q:\n%s", l, state)
		}
		e.ok("click", map[string]any{"pid": dlg.PID, "element_id": elementID(t, state+e.state(dlg.PID, map[string]any{"disableDiff": true}), "push button", "OK")})
		waitFile(t, out, "42")
	})
	t.Run("click tier refuses type_text", func(t *testing.T) {
		d := a11yDesktop(t)
		dlg, out := zenity(t, d, "--entry", "--title", "click tier entry")
		e := elementsServer(t, d, "click")
		state := e.waitState(dlg.PID, `push button "OK"`)
		entry := elementID(t, state, "text", "")
		e.bad("type_text", map[string]any{"pid": dlg.PID, "element_id": entry, "text": "leak"}, "full", antiSubversion)
		e.bad("set_value", map[string]any{"pid": dlg.PID, "element_id": entry, "value": "leak"}, "full", antiSubversion)
		e.bad("press_key", map[string]any{"pid": dlg.PID, "key": "a"}, "full")
		e.ok("click", map[string]any{"pid": dlg.PID, "element_id": elementID(t, state, "push button", "OK")})
		waitProcessExit(t, dlg)
		if b, _ := os.ReadFile(out); strings.Contains(string(b), "leak") {
			t.Errorf("the refused text reached the entry: zenity printed %q", b)
		}
	})
	t.Run("read tier refuses click", func(t *testing.T) {
		d := a11yDesktop(t)
		dlg, out := zenity(t, d, "--entry", "--title", "read tier entry")
		e := elementsServer(t, d, "read")
		state := e.waitState(dlg.PID, `push button "OK"`)
		e.bad("click", map[string]any{"pid": dlg.PID, "element_id": elementID(t, state, "push button", "OK")}, "read", antiSubversion)
		e.bad("perform_action", map[string]any{"pid": dlg.PID, "element_id": elementID(t, state, "push button", "OK"), "action": "click"}, antiSubversion)
		// Still running a second later: the click did not reach OK.
		time.Sleep(time.Second)
		if err := dlg.Cmd.Process.Signal(syscall.Signal(0)); err != nil {
			t.Errorf("zenity is gone (%v): the refused click pressed OK", err)
		}
		if b, _ := os.ReadFile(out); len(b) != 0 {
			t.Errorf("zenity printed %q: the refused click pressed OK", b)
		}
	})
}

// progress starts a zenity progress dialog fed from a pipe the test
// writes: "# text" lines set its label, numbers its bar.
func progress(t *testing.T, d *desktoptest.Desktop, args ...string) (*desktoptest.Window, *os.File) {
	t.Helper()
	fifo := filepath.Join(t.TempDir(), "progress")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Opened read-write so that the open does not wait for zenity.
	f, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	quoted := "'" + strings.Join(args, "' '") + "'"
	w := d.StartApp(t, desktoptest.App{Name: "sh", Args: []string{"-c", "exec zenity --progress " + quoted + " < '" + fifo + "'"}, Class: "Zenity"})
	info := d.WindowInfo(t, w.ID)
	info.Cmd = w.Cmd
	return info, f
}

// TestElementsStaleAndDiff: a label whose text the app changes is refused
// by its old id until get_app_state is called again, and the diff after
// that one change lists it and not the rest; an id never given out is
// refused too.
func TestElementsStaleAndDiff(t *testing.T) {
	d := a11yDesktop(t)
	dlg, feed := progress(t, d, "--title", "element progress", "--text", "step one")
	e := elementsServer(t, d, "full")
	state := e.waitState(dlg.PID, `label "step one"`)
	label := elementID(t, state, "label", "step one")
	cancel := elementID(t, state, "push button", "Cancel")
	e.state(dlg.PID, nil) // the reference for the diff

	if _, err := feed.WriteString("# step two\n"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	var diff string
	for {
		diff = e.state(dlg.PID, nil)
		if strings.Contains(diff, `"step two"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the label never changed in the diff:\n%s", diff)
		}
	}
	if !strings.Contains(diff, "~ ["+label+`] label "step two"`) || !strings.Contains(diff, `was: [`+label+`] label "step one"`) {
		t.Errorf("the diff does not show the label's change:\n%s", diff)
	}
	if strings.Contains(diff, "["+cancel+"]") {
		t.Errorf("the diff lists the unchanged Cancel button:\n%s", diff)
	}
	if n := strings.Count(diff, "\n~ ") + strings.Count(diff, "\n+ ") + strings.Count(diff, "\n- "); n > 3 {
		t.Errorf("the diff after one change lists %d elements:\n%s", n, diff)
	}
	// The label changes again behind the model's back: its id is refused.
	if _, err := feed.WriteString("# step three\n"); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(20 * time.Second)
	for {
		res := e.call("perform_action", map[string]any{"pid": dlg.PID, "element_id": label, "action": "click"})
		if msg := resultText(res); res.IsError && strings.Contains(msg, "call get_app_state again") {
			if !strings.Contains(msg, `"step two", now "step three"`) {
				t.Errorf("stale refusal %q does not say what changed", msg)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the changed label was never refused: %s", resultText(res))
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.bad("click", map[string]any{"pid": dlg.PID, "element_id": "9999"}, "call get_app_state again")
}

// TestElementsWaitFor: wait_for sees a dialog appear, and a pulsing
// progress bar stop (its region stops changing), and times out while it
// still pulses.
func TestElementsWaitFor(t *testing.T) {
	d := a11yDesktop(t)
	dlg, feed := progress(t, d, "--title", "element pulse", "--text", "working", "--pulsate")
	e := elementsServer(t, d, "full")
	state := e.waitState(dlg.PID, `progress bar`)
	bar := lineOf(state, elementID(t, state, "progress bar", ""))
	m := regexp.MustCompile(`@\((\d+),(\d+) (\d+)x(\d+)\)`).FindStringSubmatch(bar)
	if m == nil {
		t.Fatalf("the progress bar has no bounds: %q", bar)
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	region := []int{n(1), n(2), n(1) + n(3), n(2) + n(4)}
	e.bad("wait_for", map[string]any{"pid": dlg.PID, "region": region, "stable_ms": 1500, "timeout": 3}, "timed out")
	// zenity stops the pulse at the end of its input.
	if _, err := feed.WriteString("100\n"); err != nil {
		t.Fatal(err)
	}
	feed.Close()
	res := e.ok("wait_for", map[string]any{"pid": dlg.PID, "region": region, "stable_ms": 1000, "timeout": 45})
	if !strings.Contains(resultText(res), "has not changed for 1s") {
		t.Errorf("wait_for(stable) = %s", resultText(res))
	}

	cmd := d.Command("sh", "-c", "sleep 1; exec zenity --info --title 'element finished' --text done")
	cmd.Env = d.AppEnv()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	res = e.ok("wait_for", map[string]any{"window_title": "element finished", "timeout": 60})
	text := resultText(res)
	if !strings.Contains(text, `"element finished"`) || !strings.Contains(text, "pid "+strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("wait_for(window_title) = %s", text)
	}
}

// TestElementsWidgetFactory: gtk3-widget-factory's tree lists its
// buttons, entries, check boxes and sliders, with bounds inside its
// window; set_value(true/false) toggles a check box, read back from the
// tree; perform_action opens a menu.
func TestElementsWidgetFactory(t *testing.T) {
	desktoptest.Require(t, "gtk3-widget-factory")
	d := a11yDesktop(t)
	w := d.StartApp(t, desktoptest.GTK3WidgetFactory())
	w = d.WindowInfo(t, w.ID)
	e := elementsServer(t, d, "full")
	e.access([]string{"gtk3-widget-factory"})
	state := e.waitState(w.PID, `check box`)
	for _, role := range []string{"push button", "text", "check box", "slider"} {
		if !strings.Contains(state, "] "+role) {
			t.Errorf("the tree lists no %s", role)
		}
	}
	m := regexp.MustCompile(`\[(\d+)\] check box "[^"]*"(?: \{checked\})? @`).FindStringSubmatch(state)
	if m == nil {
		t.Fatalf("no enabled, determinate check box in the tree:\n%s", state)
	}
	box := m[1]
	checked := strings.Contains(lineOf(state, box), "{checked}")
	e.ok("set_value", map[string]any{"pid": w.PID, "element_id": box, "value": !checked})
	after := e.state(w.PID, map[string]any{"disableDiff": true})
	if now := strings.Contains(lineOf(after, box), "{checked}"); now == checked {
		t.Errorf("set_value(%v) left the check box as it was: %q", !checked, lineOf(after, box))
	}
	// The header bar's menu button opens its popover menu.
	menu := elementID(t, after, "toggle button", "Menu")
	e.bad("perform_action", map[string]any{"pid": w.PID, "element_id": menu, "action": "Show Menu"}, `it exposes: "Click"`)
	e.ok("perform_action", map[string]any{"pid": w.PID, "element_id": menu, "action": "click"})
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := e.state(w.PID, map[string]any{"disableDiff": true})
		if strings.Contains(lineOf(s, menu), "checked") && regexp.MustCompile(`\] push button "About Widget Factory" @\(\d`).MatchString(s) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the menu did not open: %q\n%s", lineOf(s, menu), s)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestElementsToolFamily: --tools elements offers exactly seed 002's
// tools (besides the consent tools).
func TestElementsToolFamily(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	e := gatedServer(t, d, nil, "--tools", "elements")
	res, err := e.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names, want []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	// The consent tools come with the gated server's consent manager.
	for _, tool := range mcpserver.Tools(mcpserver.ProfileDefault, mcpserver.ToolsElements) {
		want = append(want, tool.Name)
	}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("--tools elements lists %v, want the registry's elements family %v", names, want)
	}
}

// maskedEntry starts a zenity entry dialog that an unapproved window
// overlaps, its unique colour shown there on the real screen, and an
// elements server with hiding off, so that only the mask stands between;
// it returns the server and the dialog's pid once its tree is up.
func maskedEntry(t *testing.T) (*e2e, int) {
	t.Helper()
	d := a11yDesktop(t)
	dlg, _ := zenity(t, d, "--entry", "--title", "masked entry", "--width", "600", "--height", "300")
	d.Move(t, dlg.ID, 100, 100, 0, 0)
	secretWindow(t, d, 300, 150)
	f := d.WindowInfo(t, dlg.ID).Frame
	over := d.Screenshot(t).SubImage(image.Rect(f.X, f.Y, f.X+f.Width, f.Y+f.Height)).(*image.RGBA)
	if n := countColor(over, secretColor, 0); n < 300*100 {
		t.Fatalf("the secret colour covers only %d pixels of the entry dialog's frame on the real screen; the test would prove nothing", n)
	}
	e := elementsServer(t, d, "full", "--hide-unapproved=false", "--format", "png")
	e.waitState(dlg.PID, `push button "OK"`)
	return e, dlg.PID
}

// TestElementsMasking: get_app_state's screenshot of a window that an
// unapproved app's window overlaps shows none of that window's unique
// colour (with hiding off, so only the mask stands between), though the
// real screen shows it there.
func TestElementsMasking(t *testing.T) {
	e, pid := maskedEntry(t)
	res := e.ok("get_app_state", map[string]any{"pid": pid, "disableDiff": true})
	img := imageOf(t, res)
	if b := img.Bounds(); b.Dx() < 500 {
		t.Fatalf("the state's screenshot is only %dx%d", b.Dx(), b.Dy())
	}
	if n := countColor(img, secretColor, 0); n > 0 {
		t.Errorf("get_app_state's screenshot shows the unapproved window's colour in %d pixels", n)
	}
}
