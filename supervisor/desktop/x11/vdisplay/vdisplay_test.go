//go:build unix

package vdisplay

import (
	"context"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	good := map[string][2]int{"1920x1080": {1920, 1080}, " 800X600 ": {800, 600}, "1x1": {1, 1}}
	for in, want := range good {
		w, h, err := ParseSize(in)
		if err != nil || w != want[0] || h != want[1] {
			t.Errorf("ParseSize(%q) = %d, %d, %v, want %d, %d", in, w, h, err, want[0], want[1])
		}
	}
	for _, in := range []string{"", "1920", "1920x", "x1080", "0x10", "-5x10", "axb", "99999x10"} {
		if _, _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = nil error, want one", in)
		}
	}
}

func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (required under CI)", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
}

func alive(pid int) bool {
	if pid == 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	// A zombie is dead for our purpose.
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// TestStartAndClose starts a real virtual desktop, checks its size and its
// window manager with independent X tools, and that Close leaves nothing
// running.
func TestStartAndClose(t *testing.T) {
	requireTools(t, "Xvfb", "openbox", "xdpyinfo", "xprop")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d, err := Start(ctx, Options{Width: 1280, Height: 720})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer d.Close()
	if !strings.HasPrefix(d.Name(), ":") {
		t.Fatalf("Name() = %q, want :N", d.Name())
	}
	run := func(name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Env = d.Env(os.Environ())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v: %s", name, args, err, out)
		}
		return string(out)
	}
	if out := run("xdpyinfo"); !strings.Contains(out, "dimensions:    1280x720 pixels") {
		t.Errorf("xdpyinfo on %s does not show 1280x720:\n%s", d.Name(), out)
	}
	if out := run("xprop", "-root", "_NET_SUPPORTING_WM_CHECK"); !strings.Contains(out, "window id #") {
		t.Errorf("no window manager announced on %s: %s", d.Name(), out)
	}
	xvfb, wm := d.Pids()
	if !alive(xvfb) || !alive(wm) {
		t.Fatalf("Xvfb (%d) or openbox (%d) not running", xvfb, wm)
	}
	dir := d.dir
	if err := d.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if alive(xvfb) || alive(wm) {
		t.Errorf("after Close: Xvfb alive %v, openbox alive %v", alive(xvfb), alive(wm))
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("private directory %s still exists after Close", dir)
	}
	if err := d.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// The display is gone.
	cmd := exec.Command("xdpyinfo")
	cmd.Env = d.Env(os.Environ())
	if err := cmd.Run(); err == nil {
		t.Errorf("xdpyinfo still reaches %s after Close", d.Name())
	}
}

func TestStartWithoutWindowManager(t *testing.T) {
	requireTools(t, "Xvfb")
	d, err := Start(context.Background(), Options{Width: 640, Height: 480, WindowManager: "none"})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer d.Close()
	if _, wm := d.Pids(); wm != 0 {
		t.Errorf("window manager pid = %d, want none", wm)
	}
}

func TestStartReportsMissingWindowManager(t *testing.T) {
	requireTools(t, "Xvfb")
	_, err := Start(context.Background(), Options{Width: 640, Height: 480, WindowManager: "no-such-wm-deskhand"})
	if err == nil || !strings.Contains(err.Error(), "not installed") {
		t.Errorf("Start with a missing window manager = %v, want a 'not installed' error", err)
	}
}
