//go:build linux

package bridge

// Fault tests against the real capture helper (helpers/linux), using its
// test-only fault.* methods (DESKHAND_HELPER_FAULTS=1). The helper answers
// the handshake without a display, so these need no X server: DISPLAY
// points at a display that does not exist. They skip when the helper is not
// built (and fail under CI); build it with
//
//	cargo build --release -p deskhand-helper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// realHelper returns a Client for the real helper with faults enabled.
func realHelper(t *testing.T, opts Options) (*Client, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	opts.Path = desktoptest.HelperPath(t)
	opts.Env = append(opts.Env, "DESKHAND_HELPER_FAULTS=1", "DISPLAY=:987", "DESKHAND_HELPER_LOG=debug")
	opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if opts.BackoffBase == 0 {
		opts.BackoffBase = 10 * time.Millisecond
	}
	c := New(opts)
	t.Cleanup(func() {
		c.Close()
		if t.Failed() {
			t.Logf("client log:\n%s", logs)
		}
	})
	if err := c.Start(testContext(t)); err != nil {
		t.Fatalf("starting the real helper: %v", err)
	}
	return c, logs
}

func sleepParams(ms int) map[string]int { return map[string]int{"ms": ms} }

func TestRealHelperHandshake(t *testing.T) {
	c, _ := realHelper(t, Options{})
	info := c.HandshakeInfo()
	if info.ProtocolVersion != 1 || info.Platform != "linux-x11" || info.HelperVersion == "" {
		t.Errorf("HandshakeInfo() = %+v, want protocol 1 from a linux-x11 helper", info)
	}
	// Without a display, X methods fail with the protocol's error and hint.
	_, err := c.Displays(testContext(t))
	t.Logf("displays without a display: %v", err)
	var herr *Error
	if !errors.As(err, &herr) || herr.Code != CodeDisplayUnavailable || herr.Name != "display_unavailable" || herr.Hint == "" {
		t.Errorf("Displays without a display = %v, want display_unavailable with a hint", err)
	}
	if err := c.Call(testContext(t), "fault.sleep", sleepParams(1), nil); err != nil {
		t.Errorf("Call(fault.sleep 1ms) = %v", err)
	}
}

func TestRealHelperKilledDuringCall(t *testing.T) {
	c, _ := realHelper(t, Options{})
	ctx := testContext(t)
	pid := c.PID()
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "fault.sleep", sleepParams(30000), nil) }()
	waitInCall(t, c)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %d: %v", pid, err)
	}
	var err error
	select {
	case err = <-errc:
	case <-time.After(5 * time.Second):
		t.Fatal("the pending call did not fail within 5s of the helper's death")
	}
	t.Logf("pending call: %v", err)
	if !errors.Is(err, ErrHelperExited) || !strings.Contains(err.Error(), "killed by signal 9") ||
		!strings.Contains(err.Error(), "during fault.sleep") {
		t.Errorf("pending Call = %v, want ErrHelperExited naming signal 9 during fault.sleep", err)
	}
	requireGroupGone(t, pid)
	if err := c.Call(ctx, "fault.sleep", sleepParams(1), nil); err != nil {
		t.Fatalf("Call after the kill = %v, want success on a restarted helper", err)
	}
	if got := c.PID(); got == 0 || got == pid {
		t.Errorf("PID() after the restart = %d, want a new helper (old %d)", got, pid)
	}
}

func TestRealHelperHungCall(t *testing.T) {
	c, _ := realHelper(t, Options{CallTimeout: 500 * time.Millisecond})
	ctx := testContext(t)
	pid := c.PID()
	start := time.Now()
	err := c.Call(ctx, "fault.sleep", sleepParams(5000), nil)
	t.Logf("hung call: %v", err)
	if !errors.Is(err, ErrHelperHung) || !strings.Contains(err.Error(), "killed pid") {
		t.Fatalf("Call(fault.sleep 5s) with a 500ms CallTimeout = %v, want ErrHelperHung", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("hung call returned after %v, want about 500ms", d)
	}
	requireGroupGone(t, pid)
	if err := c.Call(ctx, "fault.sleep", sleepParams(1), nil); err != nil {
		t.Fatalf("Call after the hang = %v, want success on a new helper", err)
	}
	if got := c.PID(); got == 0 || got == pid {
		t.Errorf("PID() after the hang = %d, want a new helper (old %d)", got, pid)
	}
}

func TestRealHelperGarbage(t *testing.T) {
	c, _ := realHelper(t, Options{CallTimeout: 30 * time.Second})
	ctx := testContext(t)
	pid := c.PID()
	start := time.Now()
	err := c.Call(ctx, "fault.garbage", nil, nil)
	t.Logf("garbage call: %v", err)
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "fault.garbage") {
		t.Fatalf("Call(fault.garbage) = %v, want ErrProtocol quoting the bytes", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("garbage noticed after %v, want at once", d)
	}
	requireGroupGone(t, pid)
	if err := c.Call(ctx, "fault.sleep", sleepParams(1), nil); err != nil {
		t.Fatalf("Call after the garbage = %v, want success on a new helper", err)
	}
	if got := c.PID(); got == 0 || got == pid {
		t.Errorf("PID() after the garbage = %d, want a new helper (old %d)", got, pid)
	}
}

func TestRealHelperExit(t *testing.T) {
	c, _ := realHelper(t, Options{})
	ctx := testContext(t)
	pid := c.PID()
	err := c.Call(ctx, "fault.exit", map[string]int{"code": 7}, nil)
	t.Logf("exit call: %v", err)
	if !errors.Is(err, ErrHelperExited) || !strings.Contains(err.Error(), "exited with status 7") {
		t.Fatalf("Call(fault.exit 7) = %v, want ErrHelperExited with status 7", err)
	}
	requireGroupGone(t, pid)
	if err := c.Call(ctx, "fault.sleep", sleepParams(1), nil); err != nil {
		t.Fatalf("Call after the exit = %v, want success on a new helper", err)
	}
}

func TestRealHelperClose(t *testing.T) {
	t.Run("Idle", func(t *testing.T) {
		c, logs := realHelper(t, Options{})
		pid := c.PID()
		start := time.Now()
		c.Close()
		if d := time.Since(start); d > 900*time.Millisecond {
			t.Errorf("Close took %v; the helper should exit on stdin EOF within 100ms", d)
		}
		if strings.Contains(logs.String(), "SIGTERM") {
			t.Errorf("Close needed signals for an idle helper:\n%s", logs)
		}
		requireGroupGone(t, pid)
		if alive(pid) {
			t.Errorf("helper %d still runs after Close", pid)
		}
	})
	t.Run("DuringCall", func(t *testing.T) {
		c, _ := realHelper(t, Options{})
		pid := c.PID()
		errc := make(chan error, 1)
		go func() { errc <- c.Call(context.Background(), "fault.sleep", sleepParams(30000), nil) }()
		waitInCall(t, c)
		c.Close()
		select {
		case err := <-errc:
			if !errors.Is(err, ErrClosed) {
				t.Errorf("call in flight during Close = %v, want ErrClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the call in flight did not return after Close")
		}
		requireGroupGone(t, pid)
	})
}

// After the Go process is gone — exited without Close, or SIGKILLed — no
// helper process may remain.
func TestRealHelperGoneAfterParentExits(t *testing.T) {
	helper := desktoptest.HelperPath(t)
	for _, mode := range []string{"exit", "wait"} {
		t.Run(mode, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), parentOfEnv+"="+helper, parentModeEnv+"="+mode)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			release, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			var pid int
			if _, err := fmt.Fscan(out, &pid); err != nil || pid <= 0 {
				cmd.Process.Kill()
				t.Fatalf("reading the helper pid from the parent: %v", err)
			}
			if !alive(pid) {
				t.Fatalf("helper %d is not running while its parent is", pid)
			}
			if mode == "wait" {
				cmd.Process.Signal(syscall.SIGKILL)
			} else {
				release.Close()
			}
			cmd.Wait()
			waitFor(t, fmt.Sprintf("helper %d to exit after its parent", pid), func() bool { return !alive(pid) })
			requireGroupGone(t, pid)
		})
	}
}
