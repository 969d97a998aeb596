package bridge

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWatchDeliversTheHelpersNotifications: a watch gets its
// notifications in the order the helper wrote them; another name's
// notifications and a request from the helper are logged (the request is
// refused), and the calls go on. After stop nothing more is delivered.
func TestWatchDeliversTheHelpersNotifications(t *testing.T) {
	c, logs := newFake(t, fakeNormal, Options{})
	ctx := testContext(t)
	var mu sync.Mutex
	var got []int
	arrived := make(chan struct{}, 256)
	stop, err := c.Watch(ctx, "fault.sleep", map[string]int{"ms": 0}, "tick", func(params json.RawMessage) {
		var p struct{ N int }
		if err := json.Unmarshal(params, &p); err != nil {
			t.Errorf("tick params %s: %v", params, err)
		}
		mu.Lock()
		got = append(got, p.N)
		mu.Unlock()
		arrived <- struct{}{}
	})
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	if err := c.Call(ctx, "fault.notify", map[string]any{"method": "other", "count": 3, "ask": 1}, nil); err != nil {
		t.Fatalf("fault.notify other: %v", err)
	}
	if err := c.Call(ctx, "fault.notify", map[string]any{"method": "tick", "count": 50}, nil); err != nil {
		t.Fatalf("fault.notify tick: %v", err)
	}
	deadline := time.After(30 * time.Second)
	for {
		mu.Lock()
		n := len(got)
		mu.Unlock()
		if n >= 50 {
			break
		}
		select {
		case <-arrived:
		case <-deadline:
			t.Fatalf("%d of 50 notifications arrived within 30s", n)
		}
	}
	mu.Lock()
	want := make([]int, 50)
	for i := range want {
		want[i] = i
	}
	if !slices.Equal(got, want) {
		t.Errorf("notifications arrived as %v, want 0..49 in order", got)
	}
	mu.Unlock()
	if _, err := c.Displays(ctx); err != nil {
		t.Fatalf("a call after the notifications: %v", err)
	}
	for _, line := range []string{"helper sent a notification nothing watches", "method=other", "helper sent a request; the protocol has none"} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("client log lacks %q:\n%s", line, logs)
		}
	}

	stop()
	if err := c.Call(ctx, "fault.notify", map[string]any{"method": "tick", "count": 1}, nil); err != nil {
		t.Fatal(err)
	}
	// The log line for the stray tick is written on the connection's
	// reading goroutine before the answer is read.
	if n := strings.Count(logs.String(), "method=tick"); n != 1 {
		t.Errorf("after stop, %d log lines name the tick, want 1 (it was not delivered)", n)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 50 {
		t.Errorf("after stop, %d notifications were delivered, want still 50", len(got))
	}
}
