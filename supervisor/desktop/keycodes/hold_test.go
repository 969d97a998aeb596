package keycodes

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestHoldCtxNeverEndsEarly: a click's hold lasts at least the press
// time, whichever way it waits.
func TestHoldCtxNeverEndsEarly(t *testing.T) {
	for _, d := range []time.Duration{0, 500 * time.Microsecond, holdTail, 5 * time.Millisecond, 20 * time.Millisecond} {
		start := time.Now()
		if err := holdCtx(context.Background(), d, nil); err != nil {
			t.Fatalf("holdCtx(%v) = %v", d, err)
		}
		if took := time.Since(start); took < d {
			t.Errorf("holdCtx(%v) ended after %v", d, took)
		}
	}
}

// TestHoldCtxCancel: a cancel (Escape) ends the hold with the context's
// error.
func TestHoldCtxCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- holdCtx(ctx, time.Hour, nil) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("holdCtx after cancel = %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("holdCtx did not return after its context was cancelled")
	}
	// Cancelled during the precise tail: the error still comes back.
	ctx, cancel = context.WithCancel(context.Background())
	go func() { done <- holdCtx(ctx, holdTail/2, nil) }()
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Errorf("holdCtx cancelled in its tail = %v", err)
	}
}

// TestHoldCtxWakes: a hold long enough to sleep calls wake once before
// it ends; a shorter one does not.
func TestHoldCtxWakes(t *testing.T) {
	for _, tc := range []struct {
		d     time.Duration
		wakes int
	}{{0, 0}, {holdTail / 2, 0}, {holdTail, 1}, {5 * time.Millisecond, 1}} {
		wakes := 0
		if err := holdCtx(context.Background(), tc.d, func() { wakes++ }); err != nil {
			t.Fatalf("holdCtx(%v) = %v", tc.d, err)
		}
		if wakes != tc.wakes {
			t.Errorf("holdCtx(%v) woke %d times, want %d", tc.d, wakes, tc.wakes)
		}
	}
}
