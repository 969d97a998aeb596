//go:build linux

package supervisor

import (
	"bytes"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestDoctorStoppedXServer: with the X server stopped (SIGSTOP: it keeps
// its socket and connections but answers nothing), doctor finishes on its
// own, fails the display with the reason and the fix, and still checks
// the helper, without the display, instead of blaming it for the stall.
func TestDoctorStoppedXServer(t *testing.T) {
	d := desktoptest.Start(t, desktoptest.Options{WindowManager: "none"})
	xvfb, _, _ := d.Pids()
	if xvfb == 0 {
		t.Fatal("the desktop has no Xvfb process")
	}
	resume := func() {
		if err := syscall.Kill(xvfb, syscall.SIGCONT); err != nil && !errors.Is(err, syscall.ESRCH) {
			t.Errorf("continuing Xvfb (pid %d): %v", xvfb, err)
		}
	}
	t.Cleanup(resume)
	if err := syscall.Kill(xvfb, syscall.SIGSTOP); err != nil {
		t.Fatalf("stopping Xvfb (pid %d): %v", xvfb, err)
	}

	e := newInstallEnv(t, d.Display())
	cmd := exec.Command(e.bin, "doctor")
	cmd.Env = append(append([]string{}, e.env...), "DESKHAND_HELPER="+desktoptest.HelperPath(t))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// Not a timing assertion: a doctor that waits on the stopped server
	// never finishes, and this bound only keeps the test from hanging too.
	bound := time.NewTimer(2 * time.Minute)
	defer bound.Stop()
	var err error
	select {
	case err = <-done:
	case <-bound.C:
		cmd.Process.Kill()
		<-done
		t.Fatalf("doctor did not finish within 2 minutes with the X server stopped:\n%s%s", stdout.String(), stderr.String())
	}
	out := stdout.String()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("doctor with the X server stopped: %v, want exit status 1:\n%s%s", err, out, stderr.String())
	}
	display := lineOf(out, "FAIL  display")
	if !strings.Contains(display, d.Display()) || !strings.Contains(display, "no answer") {
		t.Errorf("doctor's display line = %q, want a failure that names %s and says it does not answer:\n%s", display, d.Display(), out)
	}
	if fix := lineAfter(out, "FAIL  display"); !strings.Contains(fix, "fix:") || !strings.Contains(fix, "not stopped") {
		t.Errorf("doctor's display fix = %q, want it to say to check that the X server runs and is not stopped:\n%s", fix, out)
	}
	if helper := lineOf(out, "ok    helper"); !strings.Contains(helper, "checked without the display") || !strings.Contains(helper, "protocol 1") {
		t.Errorf("doctor's helper line = %q, want the helper checked without the stopped display:\n%s", helper, out)
	}
	if strings.Contains(out, "FAIL  helper") || strings.Contains(out, "reinstall") {
		t.Errorf("doctor blames the helper for the stopped X server:\n%s", out)
	}
	if strings.Count(out, "FAIL") != 1 {
		t.Errorf("doctor with the X server stopped reports other failures than the display:\n%s", out)
	}

	// The same doctor passes once the server runs again.
	resume()
	code, out, errOut := e.run([]string{"DESKHAND_HELPER=" + desktoptest.HelperPath(t)}, "doctor")
	if code != 0 || !strings.Contains(out, "ok    display     X11 at "+d.Display()) {
		t.Errorf("doctor after the X server continued exited %d:\n%s%s", code, out, errOut)
	}
}

// lineOf returns the first line of out that contains prefix, or "".
func lineOf(out, prefix string) string {
	for line := range strings.Lines(out) {
		if strings.Contains(line, prefix) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// lineAfter returns the line after the first line of out that contains
// prefix, or "".
func lineAfter(out, prefix string) string {
	found := false
	for line := range strings.Lines(out) {
		if found {
			return strings.TrimSpace(line)
		}
		found = strings.Contains(line, prefix)
	}
	return ""
}
