package keycodes

import (
	"context"
	"runtime"
	"syscall"
	"testing"
)

func timerSlack(t *testing.T) uintptr {
	t.Helper()
	v, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_GET_TIMERSLACK, 0, 0)
	if errno != 0 {
		t.Fatalf("reading the timer slack: %v", errno)
	}
	return v
}

// TestTightenTimerSlack: the input thread's holds end within holdSlack,
// and the thread gets its own slack back when the worker is done with it.
func TestTightenTimerSlack(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := timerSlack(t)
	restore := tightenTimerSlack()
	if got := timerSlack(t); got != uintptr(holdSlack) {
		t.Errorf("timer slack after tightenTimerSlack = %d ns, want %d", got, holdSlack)
	}
	restore()
	if got := timerSlack(t); got != before {
		t.Errorf("timer slack after restore = %d ns, want %d", got, before)
	}
}

// TestWorkerTimerSlack: the worker thread, which sleeps a click's hold,
// runs with holdSlack.
func TestWorkerTimerSlack(t *testing.T) {
	in, _ := newFakeInput(t)
	var got uintptr
	err := in.do(t.Context(), func(_ context.Context, _ *op) error {
		got = timerSlack(t)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != uintptr(holdSlack) {
		t.Errorf("the input thread's timer slack = %d ns, want %d", got, holdSlack)
	}
}
