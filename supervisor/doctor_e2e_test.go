//go:build unix

package supervisor

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/desktop/x11"
)

// xvfbWithout starts a bare Xvfb with the extension ext disabled and
// returns its display.
func xvfbWithout(t *testing.T, ext string) string {
	t.Helper()
	desktoptest.Require(t, "Xvfb")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("Xvfb", "-displayfd", "3", "-extension", ext, "-screen", "0", "640x480x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case n := <-line:
		if n == "" {
			t.Fatal("Xvfb exited without naming its display")
		}
		return ":" + n
	case <-time.After(30 * time.Second):
		t.Fatal("Xvfb did not name its display within 30s")
	}
	return ""
}

// TestDoctorWithoutDisplayWorks: with DISPLAY unset and a working helper,
// doctor reports the private desktop serve would start and passes; the
// helper's "no display" is expected then, not a failure.
func TestDoctorWithoutDisplayWorks(t *testing.T) {
	desktoptest.Require(t, "Xvfb", "openbox")
	e := newInstallEnv(t, "")
	code, out, errOut := e.run([]string{"DESKHAND_VIRTUAL_DISPLAY=auto", "DESKHAND_HELPER=" + desktoptest.HelperPath(t)}, "doctor")
	if code != 0 {
		t.Fatalf("doctor without DISPLAY exited %d, want 0 (serve would start its own desktop):\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"ok    display", "DISPLAY is not set, so `deskhand serve` starts its own private 1920x1080 desktop", "ok    helper", "each private virtual desktop deskhand starts has its own lock"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "FAIL") || strings.Contains(out, "cannot use the display") {
		t.Errorf("doctor without DISPLAY reports a failure:\n%s", out)
	}
}

// TestDoctorWithoutDisplayFails: where serve could not start its own
// desktop (--virtual-display off, or no Xvfb), doctor fails the display
// with what to do.
func TestDoctorWithoutDisplayFails(t *testing.T) {
	e := newInstallEnv(t, "")
	helper := "DESKHAND_HELPER=" + desktoptest.HelperPath(t)
	code, out, _ := e.run([]string{"DESKHAND_VIRTUAL_DISPLAY=off", helper}, "doctor")
	if code == 0 || !strings.Contains(out, "FAIL  display") || !strings.Contains(out, "--virtual-display is off") || !strings.Contains(out, "fix:") {
		t.Errorf("doctor with --virtual-display off and no DISPLAY exited %d:\n%s", code, out)
	}
	// A PATH with no Xvfb on it (but the tools doctor itself needs).
	bin := t.TempDir()
	code, out, _ = e.run([]string{"DESKHAND_VIRTUAL_DISPLAY=auto", helper, "PATH=" + bin}, "doctor")
	if code == 0 || !strings.Contains(out, "FAIL  display") || !strings.Contains(out, "Xvfb is not installed") {
		t.Errorf("doctor without DISPLAY or Xvfb exited %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(bin, "Xvfb")); err == nil {
		t.Fatal("Xvfb appeared in the empty PATH")
	}
}

// TestDoctorAndDisplayGateShareTheProbe: on an X server without XTEST,
// doctor's display report is the display gate's refusal word for word,
// and both pass a working server.
func TestDoctorAndDisplayGateShareTheProbe(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	display := xvfbWithout(t, "XTEST")
	check := x11.NewDisplayCheck(display)
	defer check.Close()
	refusal := check.Check(ctx)
	if refusal == nil || !strings.Contains(refusal.Error(), "no XTEST") {
		t.Fatalf("display gate on a server without XTEST = %v, want a refusal", refusal)
	}
	e := newInstallEnv(t, display)
	helper := "DESKHAND_HELPER=" + desktoptest.HelperPath(t)
	code, out, _ := e.run([]string{helper}, "doctor")
	if code == 0 || !strings.Contains(out, "FAIL  display     "+refusal.Error()) || !strings.Contains(out, "FAIL  XTEST") {
		t.Errorf("doctor on a server without XTEST exited %d, want its display line to be the gate's refusal %q:\n%s", code, refusal, out)
	}

	d := desktoptest.Start(t, desktoptest.Options{WindowManager: "none"})
	good := x11.NewDisplayCheck(d.Display())
	defer good.Close()
	if err := good.Check(ctx); err != nil {
		t.Fatalf("display gate on Xvfb: %v", err)
	}
	e = newInstallEnv(t, d.Display())
	if _, out, _ := e.run([]string{helper}, "doctor"); !strings.Contains(out, "ok    display     X11 at "+d.Display()) || !strings.Contains(out, "ok    XTEST") {
		t.Errorf("doctor on Xvfb:\n%s", out)
	}
}
