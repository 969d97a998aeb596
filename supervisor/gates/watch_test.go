package gates

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

func TestWatchStopsWhenTheFrontAppChanges(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	ctx, stop := f.g.watch(context.Background(), mcpserver.Action{Tool: "type", Text: "x"})
	defer stop()
	// A quiet desktop: the watch goes on.
	select {
	case <-ctx.Done():
		t.Fatalf("watch stopped on an unchanged desktop: %v", context.Cause(ctx))
	case <-time.After(5 * watchInterval):
	}
	f.d.mu.Lock()
	f.d.focused = 1 // the click-tier terminal
	f.d.mu.Unlock()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not stop when a click-tier app came to the front")
	}
	var changed *ChangedError
	if err := context.Cause(ctx); !errors.As(err, &changed) || !strings.Contains(err.Error(), "while typing") || !strings.Contains(err.Error(), "XTerm") {
		t.Fatalf("cause = %v", err)
	}
}

func TestWatchStopsWhenTheDragTargetChanges(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	from, to := *onZenity, *onZenity
	to.X += 50
	ctx, stop := f.g.watch(context.Background(), mcpserver.Action{Tool: "left_click_drag", From: &from, Target: &to})
	defer stop()
	// The terminal moves under the drag's end.
	f.d.mu.Lock()
	f.d.windows[0].Bounds.X, f.d.windows[0].Bounds.Y = to.X-10, to.Y-10
	f.d.mu.Unlock()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("watch did not stop when a click-tier window came under the drag")
	}
	if err := context.Cause(ctx); !strings.Contains(err.Error(), "dragging") {
		t.Fatalf("cause = %v", err)
	}
}

func TestKeyGuardAllowsFullTierWindows(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	g := f.g.keyGuard(mcpserver.Action{Tool: "type"})
	allowed, err := g.Check(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(allowed, []uint32{3}) {
		t.Errorf("allowed windows %v, want only zenity's (3)", allowed)
	}
	f.d.mu.Lock()
	f.d.focused = 2 // the read-tier browser
	f.d.mu.Unlock()
	if _, err := g.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "Firefox") {
		t.Errorf("check with the browser in front = %v", err)
	}
}

// TestKeyGuardPassesTheWatchCauseOn: when the watch stops an action, a
// guard check in flight fails on the cancelled context; its error is the
// watch's cause, which names what changed, not a change of its own that
// names the cancelled listing.
func TestKeyGuardPassesTheWatchCauseOn(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	g := f.g.keyGuard(mcpserver.Action{Tool: "hold_key", Keys: "a"})
	cause := &ChangedError{What: "holding keys", Err: errors.New("the focused window belongs to XTerm")}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(cause)
	if _, err := g.Check(ctx); !errors.Is(err, cause) {
		t.Errorf("guard check after the watch stopped the action = %v, want the watch's cause %v", err, cause)
	}
}
