package mcpserver

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestActionContextStopsBatch: cancelling the context ActionContext gave a
// call stops a running batch mid-way; the result shows the cause and what
// completed and what did not run.
func TestActionContextStopsBatch(t *testing.T) {
	stop := errors.New("the user pressed Escape")
	var mu sync.Mutex
	var cancels []context.CancelCauseFunc
	var finished int
	opts := Options{ActionContext: func(ctx context.Context) (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancelCause(ctx)
		mu.Lock()
		cancels = append(cancels, cancel)
		mu.Unlock()
		return ctx, func() {
			mu.Lock()
			finished++
			mu.Unlock()
			cancel(context.Canceled)
		}
	}}
	h := start(t, newFake(), opts)
	h.ok("screenshot", nil)
	go func() {
		time.Sleep(350 * time.Millisecond)
		mu.Lock()
		last := cancels[len(cancels)-1]
		mu.Unlock()
		last(stop)
	}()
	actions := []map[string]any{}
	for range 10 {
		actions = append(actions, map[string]any{"action": "wait", "duration": 0.1})
	}
	res := h.call("computer_batch", map[string]any{"actions": actions})
	if !res.IsError {
		t.Fatalf("batch = %q; want it stopped", text(res))
	}
	data := structured(t, res)
	done, _ := data["completed"].([]any)
	left, _ := data["remaining"].([]any)
	if len(done) < 2 || len(done) > 5 || len(done)+len(left)+1 != 10 {
		t.Fatalf("completed %d, remaining %d of 10: %s", len(done), len(left), text(res))
	}
	for _, want := range []string{"the user pressed Escape", "Completed:", "Not run:"} {
		if !strings.Contains(text(res), want) {
			t.Errorf("batch result %q lacks %q", text(res), want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if finished != 2 {
		t.Errorf("ActionContext's done ran %d times for 2 calls", finished)
	}
}
