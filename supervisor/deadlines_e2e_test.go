//go:build linux

package supervisor_test

// End-to-end tests of deadlines: an X server that stops answering (SIGSTOP
// on the test's Xvfb) must give every tool a clear error instead of
// freezing the server, must not keep it from exiting, and must not leave a
// button pressed once it answers again.

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// pipedServer is `deskhand serve` on pipes the test holds, so that it can
// send EOF or SIGTERM itself and see whether the server exits on its own.
type pipedServer struct {
	*e2e
	stdin   io.WriteCloser
	exited  chan struct{}
	waitErr error
}

func startPipedServer(t *testing.T, d *desktoptest.Desktop, args ...string) *pipedServer {
	t.Helper()
	bin := deskhandBinary(t)
	helper := desktoptest.HelperPath(t)
	logs := &testLog{t: t}
	t.Cleanup(logs.stop)
	config := t.TempDir()
	full := append([]string{"serve", "--virtual-display", "off", "--state-dir", t.TempDir(), "--log-level", "debug"}, args...)
	cmd := exec.Command(bin, full...)
	cmd.Env = append(d.AppEnv(), "DESKHAND_HELPER="+helper, "XDG_CONFIG_HOME="+config,
		"DESKHAND_POLICY_FILE="+filepath.Join(config, "policy.json"))
	cmd.Stderr = logs
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s %v: %v", bin, full, err)
	}
	s := &pipedServer{stdin: stdin, exited: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-s.exited
	})
	client := mcp.NewClient(&mcp.Implementation{Name: "deskhand-deadlines-e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connecting to %s %v: %v", bin, full, err)
	}
	t.Cleanup(func() { cs.Close() })
	s.e2e = &e2e{t: t, d: d, cs: cs, cmd: cmd, configHome: config}
	return s
}

// waitExit fails the test unless the server exits, on its own, within a
// generous bound. A -race build is held to it too: it used to hang in
// robotgo's atexit handler (see input's abandon), and exits in about the
// same 10 s as the normal build now.
func (s *pipedServer) waitExit(after string) {
	s.t.Helper()
	bound := 2 * time.Minute
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-s.exited:
		if s.waitErr != nil {
			s.t.Errorf("deskhand serve after %s: %v, want a clean exit", after, s.waitErr)
		}
	case <-t.C:
		s.t.Fatalf("deskhand serve did not exit after %s while the X server was stopped", after)
	}
}

// stopX stops the desktop's X server (SIGSTOP: it keeps its connections
// but answers nothing) until the returned function continues it; the test's
// end continues it too.
func stopX(t *testing.T, d *desktoptest.Desktop) (resume func()) {
	t.Helper()
	xvfb, _, _ := d.Pids()
	if xvfb == 0 {
		t.Fatal("the desktop has no Xvfb process")
	}
	resume = func() {
		if err := syscall.Kill(xvfb, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.Errorf("continuing Xvfb (pid %d): %v", xvfb, err)
		}
	}
	t.Cleanup(resume)
	if err := syscall.Kill(xvfb, syscall.SIGSTOP); err != nil {
		t.Fatalf("stopping Xvfb (pid %d): %v", xvfb, err)
	}
	return resume
}

// heldButtonScene starts a server with an approved GTK window and presses
// the left button on it through left_mouse_down.
func heldButtonScene(t *testing.T) (*desktoptest.Desktop, *pipedServer, *desktoptest.Window) {
	d := newDesktop(t, desktoptest.Options{})
	app := d.StartGTK(t, "approved")
	d.Move(t, app.ID, 100, 100, 0, 0)
	d.Focus(t, app.ID)
	app = d.WindowInfo(t, app.ID)
	s := startPipedServer(t, d, "--allow", "zenity")
	s.access([]string{"zenity"})
	s.screenshot("screenshot", nil)
	x, y := center(app, 0, -20)
	s.ok("left_mouse_down", map[string]any{"coordinate": s.at(x, y)})
	if !s.buttonDown(1) {
		t.Fatal("left_mouse_down did not press button 1")
	}
	return d, s, app
}

// TestDeadlinesStoppedXServer: with the X server stopped, every tool
// answers with an error that names the display and says it does not
// answer, the consent tools keep answering, and once the server runs again
// the button held before the stall is released and the tools work again.
func TestDeadlinesStoppedXServer(t *testing.T) {
	d, s, app := heldButtonScene(t)
	x, y := center(app, 0, -20)
	monitor := d.Monitors(t)[0].Name
	resume := stopX(t, d)

	at := map[string]any{"coordinate": s.at(x, y)}
	calls := []struct {
		tool string
		args any
	}{
		{"screenshot", nil}, {"zoom", map[string]any{"region": []int{0, 0, 100, 100}}}, {"cursor_position", nil},
		{"switch_display", map[string]any{"display": monitor}},
		{"left_click", nil}, {"left_click", at}, {"double_click", at}, {"triple_click", at},
		{"right_click", at}, {"middle_click", at}, {"mouse_move", at},
		{"left_click_drag", at}, {"left_mouse_down", nil}, {"left_mouse_up", nil},
		{"scroll", map[string]any{"scroll_direction": "down", "coordinate": s.at(x, y)}}, {"type", map[string]any{"text": "typed"}},
		{"key", map[string]any{"text": "Return"}}, {"hold_key", map[string]any{"text": "shift", "duration": 0.1}},
		{"open_application", map[string]any{"app": "zenity"}},
		{"read_clipboard", nil}, {"write_clipboard", map[string]any{"text": "after"}},
		{"computer_batch", map[string]any{"actions": []any{map[string]any{"action": "key", "text": "a"}, map[string]any{"action": "screenshot"}}}},
	}
	for _, c := range calls {
		msg := s.bad(c.tool, c.args)
		// switch_display lists the displays before any gate runs, so it
		// is the capture helper's deadline that answers it.
		if !strings.Contains(msg, d.Display()) && !strings.Contains(msg, "capture helper stopped answering") || !strings.Contains(msg, "answer") {
			t.Errorf("%s with the X server stopped: %q, want it to say the display (or the helper on it) does not answer", c.tool, msg)
		}
	}
	// The consent tools need no display.
	if got := resultText(s.ok("list_granted_applications", nil)); !strings.Contains(strings.ToLower(got), "zenity") {
		t.Errorf("list_granted_applications during the stall = %q, want it to list zenity", got)
	}

	resume()
	waitFor(t, "button 1 to be released once the X server answers", time.Minute, func() bool { return !s.buttonDown(1) })
	waitFor(t, "the tools to work again", time.Minute, func() bool {
		return !s.call("mouse_move", map[string]any{"coordinate": s.at(x+10, y)}).IsError
	})
	s.screenshot("screenshot", nil)
}

// TestDeadlinesExitOnEOF: a server whose X server stopped mid-turn, with
// a button held that it must try to release, exits when the client closes
// stdin.
func TestDeadlinesExitOnEOF(t *testing.T) {
	d, s, _ := heldButtonScene(t)
	stopX(t, d)
	s.stdin.Close()
	s.waitExit("EOF on stdin")
}

// TestDeadlinesExitOnSIGTERM is TestDeadlinesExitOnEOF with SIGTERM.
func TestDeadlinesExitOnSIGTERM(t *testing.T) {
	d, s, _ := heldButtonScene(t)
	stopX(t, d)
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	s.waitExit("SIGTERM")
}

// TestDeadlinesHelperStuckInX: a capture helper that blocks inside an X
// call is killed at its call deadline, and a fresh one answers once the X
// server runs again.
func TestDeadlinesHelperStuckInX(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	c := bridge.New(bridge.Options{
		Path:        desktoptest.HelperPath(t),
		Env:         []string{"DISPLAY=" + d.Display()},
		CallTimeout: 2 * time.Second,
		BackoffBase: 10 * time.Millisecond,
	})
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.Windows(ctx, false); err != nil {
		t.Fatalf("Windows before the stall: %v", err)
	}
	pid := c.PID()
	resume := stopX(t, d)
	_, err := c.Windows(ctx, false)
	if !errors.Is(err, bridge.ErrHelperHung) || !strings.Contains(err.Error(), "killed pid") {
		t.Fatalf("Windows with the X server stopped = %v, want ErrHelperHung naming the killed helper", err)
	}
	resume()
	waitFor(t, "a new helper to list the windows", time.Minute, func() bool {
		_, err := c.Windows(ctx, false)
		return err == nil
	})
	if got := c.PID(); got == pid {
		t.Errorf("the helper that hung (pid %d) still serves", pid)
	}
}
