package gates

import (
	"context"
	"testing"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

const (
	userClip    = "the user's clipboard"
	userPrimary = "the user's selection"
)

func (f *fixture) wantSelections(when, clip, primary string) {
	f.t.Helper()
	if got := f.d.text(bridge.SelectionClipboard); got != clip {
		f.t.Errorf("%s: clipboard = %q, want %q", when, got, clip)
	}
	if got := f.d.text(bridge.SelectionPrimary); got != primary {
		f.t.Errorf("%s: PRIMARY = %q, want %q", when, got, primary)
	}
}

func (f *fixture) mustCheck(a mcpserver.Action) {
	f.t.Helper()
	if err := f.check(a); err != nil {
		f.t.Fatalf("%s: %v", a.Tool, err)
	}
}

func withPrimary(f *fixture) *fixture {
	f.d.WriteSelection(context.Background(), bridge.SelectionPrimary, userPrimary)
	return f
}

// The cut buffer, which xterm pastes from when PRIMARY yields nothing, is
// cleared and put back with the selections.
func TestClipboardGuardCoversTheCutBuffer(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	ctx := context.Background()
	f.d.WriteSelection(ctx, bridge.SelectionCutBuffer, "the user's cut buffer")
	f.mustCheck(mcpserver.Action{Tool: "left_click", Target: onZenity})
	if got := f.d.text(bridge.SelectionCutBuffer); got != "" {
		t.Fatalf("cut buffer during a turn without clipboardRead = %q, want cleared", got)
	}
	f.d.focus(1)
	f.mustCheck(mcpserver.Action{Tool: "left_click", Target: onXterm})
	f.d.WriteSelection(ctx, bridge.SelectionCutBuffer, "selected in the terminal")
	if err := f.exec.Click(ctx, geometry.Point{X: 200, Y: 200}, mcpserver.ButtonLeft, 3, ""); err != nil {
		t.Fatal(err)
	}
	if got := f.d.text(bridge.SelectionCutBuffer); got != "" {
		t.Fatalf("cut buffer after a triple click in the terminal = %q, want cleared", got)
	}
	f.turns.End(cleanup.ReasonExit)
	if got := f.d.text(bridge.SelectionCutBuffer); got != "the user's cut buffer" {
		t.Fatalf("cut buffer after the turn = %q", got)
	}
}

// PRIMARY is guarded with the clipboard while a click-tier app is in
// play, and both come back when it leaves.
func TestClipboardGuardCoversPrimary(t *testing.T) {
	f := withPrimary(newFixture(t, consent.Flags{ClipboardRead: true, ClipboardWrite: true}))
	ctx := context.Background()
	f.mustCheck(mcpserver.Action{Tool: "left_click", Target: onZenity})
	f.wantSelections("full-tier app", userClip, userPrimary)
	f.mustCheck(mcpserver.Action{Tool: "left_click", Target: onXterm})
	f.wantSelections("click on the terminal", "", "")
	// A click selects text: cleared after the action.
	f.d.focus(1)
	f.d.WriteSelection(ctx, bridge.SelectionPrimary, "rm -rf ~")
	if err := f.exec.Click(ctx, geometry.Point{X: 200, Y: 200}, mcpserver.ButtonLeft, 3, ""); err != nil {
		t.Fatal(err)
	}
	f.wantSelections("after a triple click in the terminal", "", "")
	f.d.focus(3)
	f.mustCheck(mcpserver.Action{Tool: "screenshot"})
	f.wantSelections("the terminal left the front", userClip, userPrimary)
}

// Without clipboardRead the user's text is gone from the first input on,
// the model's own copy survives between actions, and the turn's end
// brings the user's text back.
func TestClipboardGuardWithoutRead(t *testing.T) {
	f := withPrimary(newFixture(t, consent.Flags{ClipboardWrite: true}))
	ctx := context.Background()
	f.mustCheck(mcpserver.Action{Tool: "screenshot"})
	f.wantSelections("a screenshot", userClip, userPrimary)
	f.mustCheck(mcpserver.Action{Tool: "left_click", Target: onZenity})
	f.wantSelections("the first input", "", "")
	// The model copies and selects in zenity, then pastes.
	f.d.WriteClipboard(ctx, "model's copy")
	f.d.WriteSelection(ctx, bridge.SelectionPrimary, "model's selection")
	if err := f.exec.Key(ctx, "ctrl+c"); err != nil {
		t.Fatal(err)
	}
	f.mustCheck(mcpserver.Action{Tool: "key", Keys: "ctrl+v"})
	f.wantSelections("the model's own copy", "model's copy", "model's selection")
	// Through the terminal and back: nothing of the user's comes back.
	f.mustCheck(mcpserver.Action{Tool: "left_click", Target: onXterm})
	f.wantSelections("the terminal", "", "")
	f.mustCheck(mcpserver.Action{Tool: "left_click", Target: onZenity})
	f.wantSelections("back in zenity", "", "")
	f.turns.End(cleanup.ReasonEscape)
	f.wantSelections("after the turn", userClip, userPrimary)
}

// Without clipboardWrite what a copy chord or a selection put there is
// undone when the turn ends, also where the user had no text.
func TestClipboardGuardWithoutWrite(t *testing.T) {
	f := withPrimary(newFixture(t, consent.Flags{ClipboardRead: true}))
	ctx := context.Background()
	f.mustCheck(mcpserver.Action{Tool: "left_click", Target: onZenity})
	f.wantSelections("the first input", userClip, userPrimary)
	f.d.WriteClipboard(ctx, "planted by ctrl+c")
	f.d.WriteSelection(ctx, bridge.SelectionPrimary, "planted by a selection")
	f.mustCheck(mcpserver.Action{Tool: "read_clipboard"})
	f.wantSelections("the model's copy", "planted by ctrl+c", "planted by a selection")
	f.turns.End(cleanup.ReasonIdle)
	f.wantSelections("after the turn", userClip, userPrimary)

	// The user had no text: none afterwards either.
	f.d.clipboard, f.d.primary = nil, nil
	f.mustCheck(mcpserver.Action{Tool: "left_click", Target: onZenity})
	f.d.WriteClipboard(ctx, "planted")
	f.d.WriteSelection(ctx, bridge.SelectionPrimary, "planted")
	f.turns.End(cleanup.ReasonIdle)
	f.wantSelections("after a turn from nothing", "", "")
}

// An action still running when the turn ends does not clear the text
// the turn's end put back.
func TestClipboardGuardAfterTurnEnd(t *testing.T) {
	f := withPrimary(newFixture(t, consent.Flags{ClipboardRead: true, ClipboardWrite: true}))
	ctx := context.Background()
	f.d.focus(1)
	f.mustCheck(mcpserver.Action{Tool: "left_click", Target: onXterm})
	f.wantSelections("the terminal", "", "")
	f.turns.End(cleanup.ReasonEscape)
	f.wantSelections("after the turn", userClip, userPrimary)
	if err := f.exec.Click(ctx, geometry.Point{X: 200, Y: 200}, mcpserver.ButtonLeft, 1, ""); err != nil {
		t.Fatal(err)
	}
	f.wantSelections("after a late action", userClip, userPrimary)
}

// A platform without PRIMARY (macOS) answers "unsupported": the guard
// goes on with the clipboard alone.
func TestClipboardGuardWithoutPrimary(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	f.d.noPrimary = true
	f.mustCheck(mcpserver.Action{Tool: "left_click", Target: onZenity})
	if got := f.d.clip(); got != "" {
		t.Fatalf("clipboard = %q, want cleared", got)
	}
	f.turns.End(cleanup.ReasonIdle)
	if got := f.d.clip(); got != userClip {
		t.Fatalf("clipboard after the turn = %q", got)
	}
}
