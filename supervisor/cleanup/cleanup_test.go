package cleanup

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
)

// recorder is a fake desktop that records what a turn's end does.
type recorder struct {
	mu        sync.Mutex
	events    []string
	restored  []uint32
	clipboard string
	primary   *string
	unlocked  []string
	notes     []string
	slowRest  time.Duration
}

func (r *recorder) add(e string) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) options() Options {
	return Options{
		Release: func(ctx context.Context) error { r.add("release"); return nil },
		Restore: func(ctx context.Context, ids []uint32) ([]uint32, error) {
			r.add("restore")
			if r.slowRest > 0 {
				select {
				case <-time.After(r.slowRest):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			r.mu.Lock()
			r.restored = append(r.restored, ids...)
			r.mu.Unlock()
			return ids, nil
		},
		Selections: r,
		Unlock: func(session string) error {
			r.add("unlock")
			r.mu.Lock()
			r.unlocked = append(r.unlocked, session)
			r.mu.Unlock()
			return nil
		},
		Notify: func(ctx context.Context, summary, body string) error {
			r.add("notify")
			r.mu.Lock()
			r.notes = append(r.notes, summary+": "+body)
			r.mu.Unlock()
			return nil
		},
		Indicate: func(ctx context.Context, on bool) error {
			r.add(map[bool]string{true: "indicator on", false: "indicator off"}[on])
			return nil
		},
		IdleTimeout: -1,
	}
}

// ReadSelection: the clipboard always holds the text last written (a
// cleared one, until the end puts the stash back); PRIMARY what was set;
// the cut buffer nothing.
func (r *recorder) ReadSelection(ctx context.Context, sel bridge.Selection) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sel == bridge.SelectionCutBuffer {
		return "", &bridge.Error{Name: "clipboard_unavailable"}
	}
	if sel == bridge.SelectionPrimary {
		if r.primary == nil {
			return "", &bridge.Error{Name: "clipboard_unavailable"}
		}
		return *r.primary, nil
	}
	return r.clipboard, nil
}

func (r *recorder) WriteSelection(ctx context.Context, sel bridge.Selection, text string) error {
	r.add(string(sel))
	r.mu.Lock()
	defer r.mu.Unlock()
	if sel == bridge.SelectionPrimary {
		r.primary = &text
	} else {
		r.clipboard = text
	}
	return nil
}

// stash holds s as the clipboard guard does, with the selections cleared.
func stash(t *testing.T, c *Controller, s Stash) {
	t.Helper()
	err := c.Clipboard(func(g *ClipGuard) error {
		if !g.Held {
			g.Held, g.Stash, g.Hidden, g.Wrote = true, s, true, true
		}
		return nil
	})
	if err != nil {
		t.Fatalf("Clipboard: %v", err)
	}
}

func userText(text string) Stash { return Stash{Clipboard: Clip{Text: text, Had: true}} }

func (r *recorder) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

func TestEndGivesEverythingBack(t *testing.T) {
	r := &recorder{}
	c := New(r.options())
	if c.End(ReasonDisconnect) {
		t.Fatal("End with no turn reported a turn")
	}
	if got := r.snapshot(); len(got) != 0 {
		t.Fatalf("End with no turn did %v", got)
	}
	fresh, err := c.Begin("s1")
	if err != nil || !fresh {
		t.Fatalf("Begin = %v, %v", fresh, err)
	}
	if fresh, _ := c.Begin("s1"); fresh {
		t.Fatalf("second Begin of the same session began a new turn")
	}
	if _, err := c.Begin("s2"); err == nil {
		t.Fatalf("Begin of another session while s1's turn is current: no error")
	}
	c.AddHidden([]uint32{7, 9})
	c.AddHidden([]uint32{9, 11})
	if got := c.Hidden(); !slices.Equal(got, []uint32{7, 9, 11}) {
		t.Fatalf("Hidden = %v", got)
	}
	stash(t, c, userText("user's text"))
	stash(t, c, userText("cleared"))
	if !c.End(ReasonDisconnect) {
		t.Fatal("End reported no turn")
	}
	// The sign of control: up once for the turn, down first at its end.
	want := []string{"indicator on", "indicator off", "release", "restore", "clipboard", "unlock", "notify"}
	if got := r.snapshot(); !slices.Equal(got, want) {
		t.Fatalf("End did %v, want %v", got, want)
	}
	if !slices.Equal(r.restored, []uint32{7, 9, 11}) || r.clipboard != "user's text" || !slices.Equal(r.unlocked, []string{"s1"}) {
		t.Fatalf("restored %v, clipboard %q, unlocked %v", r.restored, r.clipboard, r.unlocked)
	}
	if len(r.notes) != 1 || !strings.HasPrefix(r.notes[0], Summary) || !strings.Contains(r.notes[0], "disconnected") || !strings.Contains(r.notes[0], "3 windows") {
		t.Fatalf("notification %q", r.notes)
	}
	if _, ok := c.Active(); ok {
		t.Fatal("a turn is still active after End")
	}
	// A new turn starts clean.
	if fresh, err := c.Begin("s2"); err != nil || !fresh {
		t.Fatalf("Begin after End = %v, %v", fresh, err)
	}
	held := false
	c.Clipboard(func(g *ClipGuard) error { held = g.Held; return nil })
	if len(c.Hidden()) != 0 || held {
		t.Fatal("new turn inherited the old turn's state")
	}
}

// TestPutBack: the end of a turn writes back only what changed; where the
// user had no text it takes away text that appeared; no turn, no guard.
func TestPutBack(t *testing.T) {
	r := &recorder{clipboard: "user's text"}
	c := New(r.options())
	if err := c.Clipboard(func(*ClipGuard) error { return nil }); !errors.Is(err, ErrTurnEnded) {
		t.Fatalf("Clipboard with no turn = %v, want ErrTurnEnded", err)
	}
	c.Begin("s")
	c.Clipboard(func(g *ClipGuard) error { g.Held, g.Stash = true, userText("user's text"); return nil })
	c.End(ReasonIdle)
	if got := r.snapshot(); slices.Contains(got, "clipboard") || slices.Contains(got, "primary") {
		t.Fatalf("End rewrote selections that were unchanged: %v", got)
	}

	planted := "planted"
	r = &recorder{clipboard: "planted", primary: &planted}
	c = New(r.options())
	c.Begin("s")
	c.Clipboard(func(g *ClipGuard) error { g.Held = true; return nil }) // the user had no text
	c.End(ReasonEscape)
	if r.clipboard != "" || r.primary == nil || *r.primary != "" {
		t.Fatalf("after End: clipboard %q, PRIMARY %v; want both cleared", r.clipboard, r.primary)
	}
	if err := c.Clipboard(func(*ClipGuard) error { return nil }); !errors.Is(err, ErrTurnEnded) {
		t.Fatalf("Clipboard after End = %v, want ErrTurnEnded", err)
	}
}

func TestIdleEndsTurn(t *testing.T) {
	r := &recorder{}
	opts := r.options()
	// The idle period is far longer than the gaps between touches, so a
	// loaded machine that oversleeps does not end the turn early.
	opts.IdleTimeout = time.Second
	c := New(opts)
	c.Begin("s")
	// Activity keeps the turn alive.
	for range 4 {
		time.Sleep(50 * time.Millisecond)
		c.Touch()
	}
	if _, ok := c.Active(); !ok {
		t.Fatal("turn ended while it was active")
	}
	// A long call is not idleness either.
	ctx, done := c.ActionContext(context.Background())
	time.Sleep(1500 * time.Millisecond)
	if _, ok := c.Active(); !ok || ctx.Err() != nil {
		t.Fatal("turn ended during a call")
	}
	done()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, ok := c.Active(); !ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("idle turn did not end")
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitEvents(t, r, "notify")
	if !strings.Contains(r.notes[0], "nothing to do") {
		t.Fatalf("idle notification %q", r.notes)
	}
}

func waitEvents(t *testing.T, r *recorder, last string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for !slices.Contains(r.snapshot(), last) {
		if time.Now().After(deadline) {
			t.Fatalf("no %q after the turn ended: %v", last, r.snapshot())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestInterruptCancelsCalls(t *testing.T) {
	r := &recorder{}
	c := New(r.options())
	if c.Interrupt() {
		t.Fatal("Interrupt with no turn reported one")
	}
	c.Begin("s")
	running, done := c.ActionContext(context.Background())
	defer done()
	waiting, done2 := c.ActionContext(context.Background())
	defer done2()
	if !c.Interrupt() {
		t.Fatal("Interrupt found no turn")
	}
	for _, ctx := range []context.Context{running, waiting} {
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
			t.Fatal("call not cancelled")
		}
		if !errors.Is(context.Cause(ctx), ErrInterrupted) {
			t.Fatalf("cause = %v, want ErrInterrupted", context.Cause(ctx))
		}
	}
	waitEvents(t, r, "notify")
	if !strings.Contains(r.notes[0], "Escape") {
		t.Fatalf("notification %q", r.notes)
	}
	// A call made after the turn ended is not cancelled.
	ctx, done3 := c.ActionContext(context.Background())
	defer done3()
	if ctx.Err() != nil {
		t.Fatal("new call born cancelled")
	}
}

func TestRestoreCeiling(t *testing.T) {
	r := &recorder{slowRest: time.Hour}
	opts := r.options()
	opts.RestoreTimeout = 200 * time.Millisecond
	c := New(opts)
	c.Begin("s")
	c.AddHidden([]uint32{1})
	start := time.Now()
	c.End(ReasonIdle)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("End took %v with a restore that hangs; the ceiling is 200ms", took)
	}
	if !slices.Contains(r.snapshot(), "unlock") {
		t.Fatal("a hanging restore kept the lock")
	}
}

// TestBeginWaitsForEnd: a new turn does not start while the old one is
// still being given back.
func TestBeginWaitsForEnd(t *testing.T) {
	r := &recorder{slowRest: 300 * time.Millisecond}
	c := New(r.options())
	c.Begin("s")
	c.AddHidden([]uint32{1})
	go c.End(ReasonEscape)
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	if fresh, err := c.Begin("s2"); err != nil || !fresh {
		t.Fatalf("Begin = %v, %v", fresh, err)
	}
	if time.Since(start) < 150*time.Millisecond {
		t.Fatal("Begin did not wait for the ending turn")
	}
	if !slices.Contains(r.snapshot(), "notify") {
		t.Fatal("new turn began before the old one finished ending")
	}
}

func TestClose(t *testing.T) {
	r := &recorder{}
	c := New(r.options())
	c.Begin("s")
	ctx, done := c.ActionContext(context.Background())
	defer done()
	c.Close()
	if ctx.Err() == nil || !errors.Is(context.Cause(ctx), ErrTurnEnded) {
		t.Fatalf("call after Close: %v", context.Cause(ctx))
	}
	if _, err := c.Begin("s"); err == nil {
		t.Fatal("Begin after Close: no error")
	}
	if !strings.Contains(strings.Join(r.notes, ""), "exiting") {
		t.Fatalf("notes %q", r.notes)
	}
}

// TestKeepClipboardOnExit: a turn that ends because deskhand goes away
// hands the clipboard to KeepClipboard; other ends write it back directly.
func TestKeepClipboardOnExit(t *testing.T) {
	for _, tc := range []struct {
		reason Reason
		kept   bool
	}{{ReasonExit, true}, {ReasonDisconnect, true}, {ReasonIdle, false}, {ReasonEscape, false}} {
		r := &recorder{}
		opts := r.options()
		var kept []Stash
		opts.KeepClipboard = func(ctx context.Context, s Stash) error {
			kept = append(kept, s)
			return nil
		}
		c := New(opts)
		c.Begin("s")
		user := Stash{Clipboard: Clip{Text: "user text", Had: true}, Primary: Clip{Text: "user selection", Had: true}}
		stash(t, c, user)
		c.End(tc.reason)
		wrote := slices.Contains(r.snapshot(), "clipboard") || slices.Contains(r.snapshot(), "primary")
		if tc.kept != (len(kept) == 1 && kept[0] == user) || tc.kept == wrote {
			t.Errorf("%v: kept %+v, wrote %v", tc.reason, kept, wrote)
		}
	}
}

// TestOnlyEscapeRevokes: the user's Escape withdraws the approvals before
// the turn's cleanup; an idle period, a disconnect and an exit do not.
func TestOnlyEscapeRevokes(t *testing.T) {
	r := &recorder{}
	opts := r.options()
	var revoked []string
	opts.Revoke = func(session string) { r.add("revoke"); revoked = append(revoked, session) }
	opts.IdleTimeout = 50 * time.Millisecond
	c := New(opts)
	if _, err := c.Begin("idle"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !slices.Contains(r.snapshot(), "notify") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	for _, reason := range []Reason{ReasonDisconnect, ReasonExit} {
		if _, err := c.Begin("s-" + reason.String()); err != nil {
			t.Fatal(err)
		}
		c.End(reason)
	}
	if len(revoked) != 0 {
		t.Fatalf("revoked by %v", revoked)
	}
	if c.Interrupt() {
		t.Fatal("Interrupt without a turn reported one")
	}
	if _, err := c.Begin("escape"); err != nil {
		t.Fatal(err)
	}
	before := len(r.snapshot())
	if !c.Interrupt() {
		t.Fatal("Interrupt found no turn")
	}
	if ev := r.snapshot(); len(ev) <= before || ev[before] != "revoke" || !slices.Equal(revoked, []string{"escape"}) {
		t.Fatalf("after Interrupt: events %v, revoked %v; want revoke first", ev[before:], revoked)
	}
	c.Close()
}
