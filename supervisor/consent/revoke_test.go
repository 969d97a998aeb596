package consent

import (
	"context"
	"strings"
	"testing"
)

// TestRevokeAsksAgain: after the user's Escape nothing stays granted, and
// request_access grants nothing, pre-approved or not, without a new
// answer in the dialog; the dialog says why it is back; an approval
// there resumes the session, a dismissal does not.
func TestRevokeAsksAgain(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, []string{"xterm=full"}, []string{"clipboardRead"})
	ctx := context.Background()
	req := Request{Apps: []string{"xterm", "zenity"}, Flags: []string{"clipboardRead"}, Reason: "test"}
	first := &recorder{answer: acceptExcept()}
	if _, err := m.RequestAccess(ctx, req, first.ask); err != nil {
		t.Fatal(err)
	}
	if len(first.dialogs) != 1 || strings.Contains(first.dialogs[0].Message, "XTerm") {
		t.Fatalf("first request: dialogs %d, want one for zenity only", len(first.dialogs))
	}
	s := m.Session()
	if !s.Granted() || !s.Flags().ClipboardRead || s.Stopped() {
		t.Fatalf("before Escape: granted %v, flags %+v, stopped %v", s.Granted(), s.Flags(), s.Stopped())
	}

	s.Revoke()
	if s.Granted() || s.Flags().ClipboardRead || !s.Stopped() || s.Tier(xtermWin) != 0 {
		t.Fatalf("after Revoke: granted %v, flags %+v, stopped %v, xterm tier %v", s.Granted(), s.Flags(), s.Stopped(), s.Tier(xtermWin))
	}

	// A client that cannot ask gets nothing back, not even pre-approvals.
	out, err := m.RequestAccess(ctx, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Granted) != 0 || len(out.FlagsGranted) != 0 || kinds(out.Refused)["xterm"] != RefusedStopped || !strings.Contains(out.Text(), "restart") {
		t.Fatalf("stopped, without a dialog: %+v\n%s", out, out.Text())
	}
	if !s.Stopped() || s.Granted() {
		t.Fatalf("a request without a dialog resumed the session")
	}

	// Dismissing the dialog keeps it stopped.
	cancel := &recorder{answer: func(*Dialog) Answer { return Answer{Action: ActionCancel} }}
	if _, err := m.RequestAccess(ctx, req, cancel.ask); err != nil {
		t.Fatal(err)
	}
	if !s.Stopped() || s.Granted() {
		t.Fatalf("a dismissed dialog resumed the session")
	}

	// The dialog asks for the pre-approved app and flag too.
	again := &recorder{answer: acceptExcept()}
	out, err = m.RequestAccess(ctx, req, again.ask)
	if err != nil {
		t.Fatal(err)
	}
	msg := again.dialogs[0].Message
	for _, want := range []string{"pressed Escape", "XTerm", "Zenity", "clipboard"} {
		if !strings.Contains(msg, want) {
			t.Errorf("dialog after Escape lacks %q:\n%s", want, msg)
		}
	}
	if got := names(out.Granted); len(got) != 2 || s.Stopped() || !s.Flags().ClipboardRead {
		t.Fatalf("after the new approval: granted %v, stopped %v, flags %+v", got, s.Stopped(), s.Flags())
	}
	for _, g := range out.Granted {
		if g.Source != SourceUser {
			t.Errorf("%s granted from %q after Escape, want the user's dialog", g.Name, g.Source)
		}
	}
}

// TestRevokeVoidsOpenDialog: an answer to a dialog shown before the
// user's Escape grants nothing.
func TestRevokeVoidsOpenDialog(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil, nil)
	_, p, err := m.Begin(context.Background(), Request{Apps: []string{"zenity"}, Reason: "test"}, true)
	if err != nil || p == nil {
		t.Fatalf("Begin: %v, %v", p, err)
	}
	m.Session().Revoke()
	out, err := m.Finish(p, acceptExcept()(p.Dialog))
	if err == nil || !strings.Contains(err.Error(), "pressed Escape") {
		t.Fatalf("Finish after Revoke = %+v, %v", out, err)
	}
	if m.Session().Granted() || !m.Session().Stopped() {
		t.Fatalf("the void answer granted something")
	}
}

// TestRevokerEverySession: the user's Escape withdraws the grants of every
// session on the display, not only the one whose turn it was, and a
// session made after it starts stopped: its pre-approvals grant nothing
// without the dialog.
func TestRevokerEverySession(t *testing.T) {
	e := newEnv(t)
	var r Revoker
	ctx := context.Background()
	req := Request{Apps: []string{"xterm"}, Reason: "test"}
	a, b := e.manager(t, []string{"xterm=full"}, nil), e.manager(t, []string{"xterm=full"}, nil)
	for _, m := range []*Manager{a, b} {
		r.Join(m.Session())
		if _, err := m.RequestAccess(ctx, req, nil); err != nil || m.Session().Tier(xtermWin) == 0 {
			t.Fatalf("before Escape: xterm not granted by pre-approval (%v)", err)
		}
	}
	r.Revoke()
	c := e.manager(t, []string{"xterm=full"}, nil)
	r.Join(c.Session())
	for name, m := range map[string]*Manager{"a": a, "b": b, "c (new)": c} {
		out, err := m.RequestAccess(ctx, req, nil)
		if err != nil || len(out.Granted) != 0 || m.Session().Tier(xtermWin) != 0 || kinds(out.Refused)["xterm"] != RefusedStopped {
			t.Errorf("session %s after Escape, without a dialog: granted %+v, refused %+v, %v", name, out.Granted, out.Refused, err)
		}
	}
	ask := &recorder{answer: acceptExcept()}
	if _, err := c.RequestAccess(ctx, req, ask.ask); err != nil || len(ask.dialogs) != 1 || c.Session().Tier(xtermWin) == 0 {
		t.Fatalf("the new session after Escape: %d dialogs, xterm tier %v, %v; want the dialog, then the grant", len(ask.dialogs), c.Session().Tier(xtermWin), err)
	}
}
