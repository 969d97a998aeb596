//go:build unix

package supervisor_test

// End-to-end test of the staleness settling's cheap path: the helper's
// patch_baseline skips re-reading the capture's area when the DAMAGE
// extension says nothing was drawn there, and still sees what an app
// draws (inside its own window) or the window manager moves. Real Xvfb,
// openbox, xterm and the release helper, through the Go bridge.
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run SettleBaseline -v

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

func TestSettleBaselineSeesDrawingAndSkipsQuiet(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	trigger := filepath.Join(t.TempDir(), "go")
	// The xterm prints a screenful once the file exists; its cursor does
	// not blink, so nothing else draws.
	xterm := d.StartApp(t, desktoptest.App{Name: "xterm", Class: "DeskhandSettle", Args: []string{
		"-class", "DeskhandSettle", "+bc", "-geometry", "80x24+40+40", "-e", "sh", "-c",
		`while [ ! -e "$1" ]; do sleep 0.05; done; i=0; while [ $i -lt 30 ]; do echo "settle test line $i: the quick brown fox"; i=$((i+1)); done; exec sleep 2147483647`,
		"sh", trigger,
	}})
	c := bridge.New(bridge.Options{Path: desktoptest.HelperPath(t), Env: []string{"DISPLAY=" + d.Display()}})
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := c.Capture(ctx, bridge.CaptureRequest{Format: "jpeg"}); err != nil {
		t.Fatal(err)
	}
	baseline := func() int {
		t.Helper()
		res, err := c.PatchBaseline(ctx, 0)
		if err != nil {
			t.Fatalf("patch_baseline: %v", err)
		}
		return res.DifferingPixels
	}
	// Quiet: once whatever was still drawing stopped, nothing differs.
	waitFor(t, "a quiet screen", 30*time.Second, func() bool { return baseline() == 0 })

	// The app draws in its window: the re-read sees it.
	if err := os.WriteFile(trigger, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	seen := 0
	waitFor(t, "patch_baseline to see the xterm's text", 30*time.Second, func() bool {
		seen += baseline()
		return seen > 500
	})
	waitFor(t, "a quiet screen after the text", 30*time.Second, func() bool { return baseline() == 0 })

	// The window manager moves the window: seen too.
	d.Run(t, "xdotool", "windowmove", strconv.FormatUint(uint64(xterm.ID), 10), "400", "300")
	seen = 0
	waitFor(t, "patch_baseline to see the moved window", 30*time.Second, func() bool {
		seen += baseline()
		return seen > 500
	})

	// The stored pixels are the screen as it is now: a patch over the
	// moved window's text matches.
	waitFor(t, "a quiet screen after the move", 30*time.Second, func() bool { return baseline() == 0 })
	res, err := c.PatchCheck(ctx, bridge.PatchCheckRequest{X: 500, Y: 400, Size: 15})
	if err != nil {
		t.Fatal(err)
	}
	if res.Changed {
		t.Fatalf("patch_check right after a quiet patch_baseline found %d pixels changed", res.DifferingPixels)
	}
}
