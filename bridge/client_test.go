//go:build unix

package bridge

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestStartHandshakes(t *testing.T) {
	c, _ := newFake(t, fakeNormal, Options{})
	if pid := c.PID(); pid != 0 {
		t.Fatalf("PID() before Start = %d, want 0", pid)
	}
	if err := c.Start(testContext(t)); err != nil {
		t.Fatalf("Start: %v", err)
	}
	if c.PID() == 0 {
		t.Fatalf("PID() after Start = 0, want the helper's pid")
	}
	info := c.HandshakeInfo()
	if info.ProtocolVersion != 1 || info.Platform != "fake" || info.HelperVersion != "0.0.0-fake" || info.Display != ":fake" {
		t.Errorf("HandshakeInfo() = %+v, want version 1 from the fake", info)
	}
	if !info.Has("capture.png") || info.Has("a11y") {
		t.Errorf("HandshakeInfo().Has: capabilities %v read wrong", info.Capabilities)
	}
	pid := c.PID()
	if err := c.Start(testContext(t)); err != nil || c.PID() != pid {
		t.Errorf("second Start = %v, pid %d; want nil and the same pid %d", err, c.PID(), pid)
	}
}

func TestCrashMidCallThenRestart(t *testing.T) {
	c, _ := newFake(t, fakeNormal, Options{BackoffBase: 10 * time.Millisecond})
	ctx := testContext(t)
	if err := c.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	pid := c.PID()

	err := c.Call(ctx, "fault.exit", map[string]int{"code": 3}, nil)
	if !errors.Is(err, ErrHelperExited) {
		t.Fatalf("Call(fault.exit) = %v, want ErrHelperExited", err)
	}
	for _, want := range []string{"exited with status 3", "during fault.exit", `"ERROR exiting with status 3 as asked"`, "pid " + itoa(pid)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Call(fault.exit) error %q does not contain %q", err, want)
		}
	}
	if got := c.PID(); got != 0 {
		t.Errorf("PID() after the crash = %d, want 0", got)
	}
	requireGroupGone(t, pid)

	displays, err := c.Displays(ctx)
	if err != nil {
		t.Fatalf("Displays after the crash: %v", err)
	}
	if len(displays) != len(fakeDisplays) {
		t.Errorf("Displays after the crash = %d displays, want %d", len(displays), len(fakeDisplays))
	}
	if got := c.PID(); got == 0 || got == pid {
		t.Errorf("PID() after the restart = %d, want a new pid (old %d)", got, pid)
	}
}

func TestKilledDuringCall(t *testing.T) {
	c, _ := newFake(t, fakeNormal, Options{BackoffBase: 10 * time.Millisecond})
	ctx := testContext(t)
	if err := c.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	pid := c.PID()
	errc := make(chan error, 1)
	go func() { errc <- c.Call(ctx, "fault.sleep", map[string]int{"ms": 30000}, nil) }()
	waitInCall(t, c)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill: %v", err)
	}
	killed := time.Now()
	var err error
	select {
	case err = <-errc:
	case <-time.After(5 * time.Second):
		t.Fatal("the pending call did not fail within 5s of the helper's death")
	}
	if !errors.Is(err, ErrHelperExited) || !strings.Contains(err.Error(), "killed by signal 9") || !strings.Contains(err.Error(), "during fault.sleep") {
		t.Errorf("pending Call = %v, want ErrHelperExited naming signal 9 and fault.sleep", err)
	}
	if d := time.Since(killed); d > 2*time.Second {
		t.Errorf("pending call failed %v after the kill, want at once", d)
	}
	if _, err := c.Displays(ctx); err != nil {
		t.Fatalf("Displays after the kill: %v", err)
	}
	if got := c.PID(); got == pid || got == 0 {
		t.Errorf("PID() after the restart = %d, want a new pid (old %d)", got, pid)
	}
}

func TestDeathWhileIdleRestartsQuietly(t *testing.T) {
	c, logs := newFake(t, fakeNormal, Options{BackoffBase: 10 * time.Millisecond})
	ctx := testContext(t)
	if err := c.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	pid := c.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill: %v", err)
	}
	waitFor(t, "PID() to drop the dead helper", func() bool { return c.PID() == 0 })
	if _, err := c.Displays(ctx); err != nil {
		t.Fatalf("Displays after the helper died while idle = %v, want a transparent restart", err)
	}
	if got := c.PID(); got == 0 || got == pid {
		t.Errorf("PID() after the restart = %d, want a new pid (old %d)", got, pid)
	}
	if !strings.Contains(logs.String(), "killed by signal 9 (killed) while idle") {
		t.Errorf("the idle death was not logged:\n%s", logs)
	}
}

func TestHungCallKillsHelper(t *testing.T) {
	tests := []struct {
		name        string
		callTimeout time.Duration
		ctxTimeout  time.Duration
	}{
		{"CallTimeout", 300 * time.Millisecond, time.Minute},
		{"ContextDeadlineSooner", time.Minute, 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newFake(t, fakeNormal, Options{CallTimeout: tt.callTimeout, BackoffBase: 10 * time.Millisecond})
			if err := c.Start(testContext(t)); err != nil {
				t.Fatalf("Start: %v", err)
			}
			pid := c.PID()
			ctx, cancel := context.WithTimeout(context.Background(), tt.ctxTimeout)
			defer cancel()
			start := time.Now()
			err := c.Call(ctx, "fault.sleep", map[string]int{"ms": 30000}, nil)
			if !errors.Is(err, ErrHelperHung) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("Call(fault.sleep) = %v, want ErrHelperHung and context.DeadlineExceeded", err)
			}
			if !strings.Contains(err.Error(), "no answer to fault.sleep") || !strings.Contains(err.Error(), "killed pid "+itoa(pid)) {
				t.Errorf("Call(fault.sleep) error %q should name the method and the killed pid %d", err, pid)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("hung call returned after %v, want about 300ms", d)
			}
			requireGroupGone(t, pid)
			if _, err := c.Displays(testContext(t)); err != nil {
				t.Fatalf("Displays after the hang: %v", err)
			}
			if got := c.PID(); got == pid || got == 0 {
				t.Errorf("PID() after the restart = %d, want a new pid (old %d)", got, pid)
			}
		})
	}
}

func TestCancelledCallLeavesHelperRunning(t *testing.T) {
	c, _ := newFake(t, fakeNormal, Options{})
	if err := c.Start(testContext(t)); err != nil {
		t.Fatalf("Start: %v", err)
	}
	pid := c.PID()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	err := c.Call(ctx, "fault.sleep", map[string]int{"ms": 700}, nil)
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrHelperHung) {
		t.Fatalf("cancelled Call = %v, want context.Canceled only", err)
	}
	// The next call queues behind the abandoned one in the helper.
	if _, err := c.Displays(testContext(t)); err != nil {
		t.Fatalf("Displays after a cancelled call: %v", err)
	}
	if got := c.PID(); got != pid {
		t.Errorf("PID() after a cancelled call = %d, want the same helper %d", got, pid)
	}
}

func TestGarbageOnStdout(t *testing.T) {
	c, _ := newFake(t, fakeNormal, Options{CallTimeout: 30 * time.Second, BackoffBase: 10 * time.Millisecond})
	ctx := testContext(t)
	if err := c.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	pid := c.PID()
	start := time.Now()
	err := c.Call(ctx, "fault.garbage", nil, nil)
	if !errors.Is(err, ErrProtocol) {
		t.Fatalf("Call(fault.garbage) = %v, want ErrProtocol", err)
	}
	if !strings.Contains(err.Error(), "hello from a stray println") || !strings.Contains(err.Error(), "killed pid "+itoa(pid)) {
		t.Errorf("Call(fault.garbage) error %q should quote the garbage and name the killed pid", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("garbage was noticed after %v, want at once (not at the 30s call timeout)", d)
	}
	requireGroupGone(t, pid)
	if _, err := c.Displays(ctx); err != nil {
		t.Fatalf("Displays after the garbage: %v", err)
	}
	if got := c.PID(); got == pid || got == 0 {
		t.Errorf("PID() after the restart = %d, want a new pid (old %d)", got, pid)
	}
}

func TestBrokenOutputs(t *testing.T) {
	tests := []struct {
		method string
		params any
		opts   Options
		want   error
		text   string
	}{
		{"fault.truncate", nil, Options{}, ErrHelperExited, "exited with status 4"},
		{"fault.closestdout", nil, Options{}, ErrProtocol, "closed its stdout"},
		{"fault.big", map[string]int{"bytes": 5000}, Options{MaxMessageBytes: 1000}, ErrProtocol, "over the 1000-byte cap"},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			c, _ := newFake(t, fakeNormal, tt.opts)
			ctx := testContext(t)
			if err := c.Start(ctx); err != nil {
				t.Fatalf("Start: %v", err)
			}
			pid := c.PID()
			err := c.Call(ctx, tt.method, tt.params, nil)
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("Call(%s) = %v, want %v containing %q", tt.method, err, tt.want, tt.text)
			}
			requireGroupGone(t, pid)
			if _, err := c.Displays(ctx); err != nil {
				t.Fatalf("Displays after %s: %v", tt.method, err)
			}
		})
	}
}

func TestGarbageBeforeHandshake(t *testing.T) {
	c, _ := newFake(t, fakeGarbageStart, Options{})
	err := c.Start(testContext(t))
	if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "just garbage") {
		t.Fatalf("Start = %v, want ErrProtocol quoting the garbage", err)
	}
	requireGroupGone(t, killedPID(t, err))
}

func TestHandshakeTimeout(t *testing.T) {
	c, _ := newFake(t, fakeNoHandshake, Options{HandshakeTimeout: 300 * time.Millisecond})
	start := time.Now()
	err := c.Start(testContext(t))
	if !errors.Is(err, ErrHelperHung) || !strings.Contains(err.Error(), "no answer to handshake") {
		t.Fatalf("Start = %v, want ErrHelperHung for the handshake", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Start gave up after %v, want about 300ms", d)
	}
	if c.PID() != 0 {
		t.Errorf("PID() after a failed handshake = %d, want 0", c.PID())
	}
	requireGroupGone(t, killedPID(t, err))
}

func TestIncompatibleHelper(t *testing.T) {
	tests := []struct {
		mode, text string
	}{
		{fakeIncompatible, "chose protocol version 2"},
		{fakeRefuse, "refused them"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			c, logs := newFake(t, tt.mode, Options{})
			err := c.Start(testContext(t))
			if !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), tt.text) {
				t.Fatalf("Start = %v, want ErrIncompatible containing %q", err, tt.text)
			}
			if c.PID() != 0 {
				t.Errorf("PID() after an incompatible handshake = %d, want 0", c.PID())
			}
			waitFor(t, "the incompatible helper to be reaped", func() bool { return strings.Contains(logs.String(), "helper exited") })
		})
	}
	t.Run("ErrorDetail", func(t *testing.T) {
		c, _ := newFake(t, fakeRefuse, Options{})
		var herr *Error
		if err := c.Start(testContext(t)); !errors.As(err, &herr) || herr.Name != "incompatible_protocol" {
			t.Errorf("Start = %v, want it to wrap the helper's incompatible_protocol *Error", err)
		}
	})
}

func TestCrashLoopCap(t *testing.T) {
	c, _ := newFake(t, fakeCrashOnStart, Options{
		// A window long enough that a loaded machine's slow restarts all
		// fall inside it; the test moves the recorded restarts back to
		// show the window moving on, rather than sleeping.
		MaxRestarts: 3, RestartWindow: time.Minute,
		BackoffBase: time.Millisecond, BackoffMax: 4 * time.Millisecond,
	})
	ctx := testContext(t)
	// The first start and three restarts run the helper, and fail.
	for i := 0; i < 4; i++ {
		err := c.Start(ctx)
		if !errors.Is(err, ErrHelperExited) || !strings.Contains(err.Error(), "exited with status 3") ||
			!strings.Contains(err.Error(), "cannot open display :99") {
			t.Fatalf("Start #%d = %v, want ErrHelperExited with status 3 and the helper's error line", i+1, err)
		}
	}
	err := c.Start(ctx)
	if !errors.Is(err, ErrCrashLoop) {
		t.Fatalf("Start #5 = %v, want ErrCrashLoop", err)
	}
	for _, want := range []string{"restarted 3 times within 1m0s", "cannot open display :99", "fix the cause"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("crash-loop error %q does not contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), restartNote) {
		t.Errorf("crash-loop error %q promises a restart that will not come", err)
	}
	if c.failures != 4 {
		t.Errorf("after the cap, failures = %d, want 4 (the capped start spawns nothing)", c.failures)
	}
	// Once the window has moved on, a restart is allowed again.
	c.mu.Lock()
	for i := range c.restarts {
		c.restarts[i] = c.restarts[i].Add(-time.Minute)
	}
	c.mu.Unlock()
	if err := c.Start(ctx); !errors.Is(err, ErrHelperExited) {
		t.Errorf("Start after the window = %v, want another real attempt (ErrHelperExited)", err)
	}
}

func TestBackoffDelay(t *testing.T) {
	const base, max = 100 * time.Millisecond, 5 * time.Second
	tests := []struct {
		failures int
		want     time.Duration
	}{
		{0, 0},
		{-1, 0},
		{1, 100 * time.Millisecond},
		{2, 200 * time.Millisecond},
		{3, 400 * time.Millisecond},
		{6, 3200 * time.Millisecond},
		{7, max},
		{8, max},
		{1000, max},
		{1 << 40, max},
	}
	for _, tt := range tests {
		if got := backoffDelay(tt.failures, base, max); got != tt.want {
			t.Errorf("backoffDelay(%d, %v, %v) = %v, want %v", tt.failures, base, max, got, tt.want)
		}
	}
	// Grows monotonically to the cap, for odd settings too.
	for _, b := range []time.Duration{time.Nanosecond, 3 * time.Millisecond, 7 * time.Second} {
		prev := time.Duration(0)
		for n := 1; n < 100; n++ {
			got := backoffDelay(n, b, max)
			if got < prev || got > max {
				t.Fatalf("backoffDelay(%d, %v, %v) = %v after %v: not growing to the cap", n, b, max, got, prev)
			}
			prev = got
		}
	}
}

func TestRestartGateUsesBackoff(t *testing.T) {
	c := New(Options{Path: "/nonexistent"})
	now := time.Now()
	if d, err := c.restartGate(now); d != 0 || err != nil {
		t.Errorf("restartGate with no failures = %v, %v; want 0, nil", d, err)
	}
	c.failures, c.lastFailureAt = 3, now
	if d, err := c.restartGate(now); d != 400*time.Millisecond || err != nil {
		t.Errorf("restartGate after 3 failures = %v, %v; want 400ms, nil", d, err)
	}
	if d, _ := c.restartGate(now.Add(time.Second)); d > 0 {
		t.Errorf("restartGate once the backoff has passed = %v, want <= 0", d)
	}
}

func TestMissingHelperBinary(t *testing.T) {
	c := New(Options{Path: "/nonexistent/deskhand-helper"})
	defer c.Close()
	err := c.Start(testContext(t))
	if err == nil || !strings.Contains(err.Error(), "starting helper /nonexistent/deskhand-helper") {
		t.Fatalf("Start = %v, want an error naming the missing path", err)
	}
	if err := New(Options{}).Start(testContext(t)); err == nil || !strings.Contains(err.Error(), "Options.Path is empty") {
		t.Errorf("Start with no path = %v, want an error saying the path is empty", err)
	}
}

func TestCloseStopsHelper(t *testing.T) {
	c, logs := newFake(t, fakeNormal, Options{})
	if err := c.Start(testContext(t)); err != nil {
		t.Fatalf("Start: %v", err)
	}
	pid := c.PID()
	start := time.Now()
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("Close took %v; a helper that exits on stdin EOF should stop at once", d)
	}
	requireGroupGone(t, pid)
	if strings.Contains(logs.String(), "SIGTERM") {
		t.Errorf("Close escalated to signals for a well-behaved helper:\n%s", logs)
	}
	if err := c.Call(testContext(t), "displays", nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Call after Close = %v, want ErrClosed", err)
	}
	if err := c.Start(testContext(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close = %v, want ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
}

func TestCloseEscalatesToSIGKILL(t *testing.T) {
	defer func(a, b time.Duration) { stdinCloseWait, sigtermWait = a, b }(stdinCloseWait, sigtermWait)
	stdinCloseWait, sigtermWait = 200*time.Millisecond, 200*time.Millisecond

	c, logs := newFake(t, fakeIgnoreTerm, Options{})
	if err := c.Start(testContext(t)); err != nil {
		t.Fatalf("Start: %v", err)
	}
	pid := c.PID()
	start := time.Now()
	c.Close()
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Errorf("Close returned after %v, before both waits (400ms) passed", d)
	}
	requireGroupGone(t, pid)
	for _, want := range []string{"sending SIGTERM", "ignored SIGTERM; sending SIGKILL"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("client log lacks %q:\n%s", want, logs)
		}
	}
}

func TestGrandchildDiesWithHelper(t *testing.T) {
	tests := []struct {
		name string
		end  func(*Client) error
	}{
		{"Close", func(c *Client) error { return c.Close() }},
		{"Crash", func(c *Client) error {
			return c.Call(context.Background(), "fault.exit", map[string]int{"code": 1}, nil)
		}},
		{"Hang", func(c *Client) error {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			return c.Call(ctx, "fault.sleep", map[string]int{"ms": 30000}, nil)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, _ := newFake(t, fakeGrandchild, Options{})
			if err := c.Start(testContext(t)); err != nil {
				t.Fatalf("Start: %v", err)
			}
			pid := c.PID()
			gc, ok := c.HandshakeInfo().Extensions["grandchild"].(float64)
			if !ok {
				t.Fatalf("the fake reported no grandchild: %v", c.HandshakeInfo().Extensions)
			}
			grandchild := int(gc)
			if info, ok := readProc(grandchild); !ok || info.pgrp != pid {
				t.Fatalf("grandchild %d: %+v, want a live process in group %d", grandchild, info, pid)
			}
			err := tt.end(c)
			t.Logf("end: %v", err)
			requireGroupGone(t, pid)
			if alive(grandchild) {
				t.Errorf("grandchild %d still runs", grandchild)
			}
		})
	}
}

func TestCloseDuringCall(t *testing.T) {
	c, _ := newFake(t, fakeNormal, Options{})
	if err := c.Start(testContext(t)); err != nil {
		t.Fatalf("Start: %v", err)
	}
	errc := make(chan error, 1)
	go func() { errc <- c.Call(context.Background(), "fault.sleep", map[string]int{"ms": 30000}, nil) }()
	waitInCall(t, c)
	start := time.Now()
	c.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, ErrClosed) {
			t.Errorf("call in flight during Close = %v, want ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the call in flight did not return after Close")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Close with a call in flight took %v", d)
	}
}

func TestConcurrentCallsAndClose(t *testing.T) {
	c, _ := newFake(t, fakeNormal, Options{})
	ctx := testContext(t)
	if err := c.Start(ctx); err != nil {
		t.Fatalf("Start: %v", err)
	}
	pid := c.PID()

	// Concurrent calls all succeed on one helper.
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 8; i++ {
		wg.Go(func() {
			for j := 0; j < 5; j++ {
				if _, err := c.Windows(ctx, j%2 == 0); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Windows: %v", err)
	}
	if c.PID() != pid {
		t.Errorf("PID() changed from %d to %d under concurrent calls", pid, c.PID())
	}

	// Calls racing with several Closes end in success or ErrClosed.
	stop := make(chan struct{})
	results := make(chan error, 1024)
	for i := 0; i < 6; i++ {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				_, err := c.Displays(ctx)
				results <- err
				if err != nil {
					return
				}
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	for i := 0; i < 4; i++ {
		wg.Go(func() {
			if err := c.Close(); err != nil {
				t.Errorf("concurrent Close = %v", err)
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(results)
	for err := range results {
		if err != nil && !errors.Is(err, ErrClosed) {
			t.Errorf("call racing Close = %v, want nil or ErrClosed", err)
		}
	}
	requireGroupGone(t, pid)
	if c.PID() != 0 {
		t.Errorf("PID() after Close = %d, want 0", c.PID())
	}
}

// recordingHandler keeps every record it handles.
type recordingHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

func (h *recordingHandler) level(msg string) (slog.Level, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.records {
		if r.Message == msg {
			return r.Level, true
		}
	}
	return 0, false
}

func TestHelperStderrIsLogged(t *testing.T) {
	h := &recordingHandler{}
	c, _ := newFake(t, fakeNormal, Options{Logger: slog.New(h)})
	ctx := testContext(t)
	if err := c.Call(ctx, "fault.log", nil, nil); err != nil {
		t.Fatalf("Call(fault.log): %v", err)
	}
	tests := []struct {
		msg  string
		want slog.Level
	}{
		{"fake debug line", slog.LevelDebug},
		{"fake info line", slog.LevelInfo},
		{"fake warn line", slog.LevelWarn},
		{"fake error line", slog.LevelError},
		{"thread 'main' panicked at fake.rs:1:1", slog.LevelWarn},
	}
	for _, tt := range tests {
		waitFor(t, "log line "+tt.msg, func() bool { _, ok := h.level(tt.msg); return ok })
		if got, _ := h.level(tt.msg); got != tt.want {
			t.Errorf("helper line %q logged at %v, want %v", tt.msg, got, tt.want)
		}
	}
}

func TestLogTailPicksTheCause(t *testing.T) {
	tests := []struct {
		lines []string
		want  string
	}{
		{nil, ""},
		{[]string{"INFO a", "DEBUG b"}, "DEBUG b"},
		{[]string{"ERROR boom", "INFO shutting down"}, "ERROR boom"},
		{[]string{"INFO x", "thread 'main' panicked at src/main.rs:3:5:", "index out of bounds", "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"}, "index out of bounds"},
	}
	for _, tt := range tests {
		tail := &logTail{}
		for _, l := range tt.lines {
			tail.add(l)
		}
		if got := tail.last(); got != tt.want {
			t.Errorf("last() of %q = %q, want %q", tt.lines, got, tt.want)
		}
	}
	tail := &logTail{}
	for i := 0; i < 50; i++ {
		tail.add("INFO line " + itoa(i))
	}
	if lines := tail.Lines(); len(lines) != stderrTailLines || lines[0] != "INFO line 30" || lines[19] != "INFO line 49" {
		t.Errorf("Lines() after 50 adds = %q, want the last %d", lines, stderrTailLines)
	}
}
