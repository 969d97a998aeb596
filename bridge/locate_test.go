package bridge

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Locate runs before every start, so a restart finds the helper again (a
// supervisor re-checks an installed helper's hash there), and its failure
// is the call's error.
func TestLocateRunsBeforeEachStart(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	c, _ := newFake(t, fakeNormal, Options{
		BackoffBase: 10 * time.Millisecond,
		Locate: func(context.Context) (string, *os.File, error) {
			calls.Add(1)
			return exe, nil, nil
		},
	})
	c.opts.Path = "" // only Locate names the binary
	ctx := testContext(t)
	if _, err := c.Displays(ctx); err != nil {
		t.Fatalf("Displays: %v", err)
	}
	if got := calls.Load(); got != 1 {
		t.Errorf("Locate ran %d times for the first start, want 1", got)
	}
	if err := c.Call(ctx, "fault.exit", map[string]int{"code": 3}, nil); !errors.Is(err, ErrHelperExited) {
		t.Fatalf("Call(fault.exit) = %v, want ErrHelperExited", err)
	}
	if _, err := c.Displays(ctx); err != nil {
		t.Fatalf("Displays after the crash: %v", err)
	}
	if got := calls.Load(); got != 2 {
		t.Errorf("Locate ran %d times after a restart, want 2", got)
	}
}

func TestLocateFailureIsTheCallError(t *testing.T) {
	c, _ := newFake(t, fakeNormal, Options{
		Locate: func(context.Context) (string, *os.File, error) {
			return "", nil, errors.New("the installed helper was modified after install")
		},
	})
	_, err := c.Displays(testContext(t))
	if err == nil || !strings.Contains(err.Error(), "finding the capture helper: the installed helper was modified") {
		t.Errorf("Displays with a failing Locate = %v, want the Locate error", err)
	}
	if c.PID() != 0 {
		t.Errorf("a helper runs although Locate failed")
	}
}
