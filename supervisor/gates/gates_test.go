package gates

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/lock"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// Apps of the fake desktop, one per tier.
var (
	xtermApp   = bridge.App{PID: 10, Name: "XTerm", Instance: "xterm", Class: "XTerm", Exe: "/usr/bin/xterm"}
	firefoxApp = bridge.App{PID: 11, Name: "Firefox", Instance: "Navigator", Class: "firefox", Exe: "/usr/lib/firefox/firefox"}
	zenityApp  = bridge.App{PID: 12, Name: "Zenity", Instance: "zenity", Class: "Zenity", Exe: "/usr/bin/zenity"}
	secretApp  = bridge.App{PID: 13, Name: "Secret", Instance: "secret", Class: "Secret", Exe: "/usr/bin/secret"}
)

// fakeDesktop is an imaginary desktop: windows top first, a focus, a
// clipboard, and answers to patch_check set by the test.
type fakeDesktop struct {
	mu        sync.Mutex
	windows   []bridge.Window
	focused   uint32
	clipboard *string
	primary   *string
	cutBuffer *string
	noPrimary bool
	hides     [][]uint32
	patch     bridge.PatchCheck
	patchErr  error
	patches   []bridge.PatchCheckRequest
	captures  []bridge.CaptureRequest
	// appear is added to the windows when a capture is taken.
	appear *bridge.Window
	// excludes makes captures honour MaskOthers, as the Linux helper
	// does; without it the fake is a helper that ignores it.
	excludes bool
}

func win(id uint32, app bridge.App, x, y, w, h int) bridge.Window {
	return bridge.Window{ID: id, Title: app.Name + " window", App: app, Bounds: bridge.Rect{X: x, Y: y, Width: w, Height: h}}
}

func newDesktop() *fakeDesktop {
	text := "the user's clipboard"
	return &fakeDesktop{
		// Side by side: xterm, firefox, zenity, secret (unapproved).
		windows: []bridge.Window{
			win(1, xtermApp, 0, 0, 400, 400),
			win(2, firefoxApp, 500, 0, 400, 400),
			win(3, zenityApp, 1000, 0, 400, 400),
			win(4, secretApp, 1500, 0, 400, 400),
		},
		focused:   3,
		clipboard: &text,
	}
}

func (d *fakeDesktop) Windows(ctx context.Context, includeHidden bool) (*bridge.WindowList, error) {
	if err := ctx.Err(); err != nil {
		return nil, err // as the helper's client fails a call on a done context
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	out := &bridge.WindowList{}
	for _, w := range d.windows {
		if w.Minimized && !includeHidden {
			continue
		}
		w.Focused = w.ID == d.focused
		out.Windows = append(out.Windows, w)
		if w.Focused {
			id, app := w.ID, w.App
			out.Focused, out.Frontmost = &id, &app
		}
	}
	return out, nil
}

func (d *fakeDesktop) PatchCheck(ctx context.Context, req bridge.PatchCheckRequest) (*bridge.PatchCheck, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.patches = append(d.patches, req)
	if d.patchErr != nil {
		return nil, d.patchErr
	}
	p := d.patch
	return &p, nil
}

func (d *fakeDesktop) Hide(ctx context.Context, ids []uint32) ([]uint32, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hides = append(d.hides, ids)
	var out []uint32
	for i := range d.windows {
		if slices.Contains(ids, d.windows[i].ID) && !d.windows[i].Minimized {
			d.windows[i].Minimized = true
			out = append(out, d.windows[i].ID)
			if d.focused == d.windows[i].ID {
				d.focused = 0
			}
		}
	}
	return out, nil
}

func (d *fakeDesktop) restore(ids []uint32) []uint32 {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []uint32
	for i := range d.windows {
		if slices.Contains(ids, d.windows[i].ID) && d.windows[i].Minimized {
			d.windows[i].Minimized = false
			out = append(out, d.windows[i].ID)
		}
	}
	return out
}

func (d *fakeDesktop) selection(sel bridge.Selection) **string {
	switch sel {
	case bridge.SelectionPrimary:
		return &d.primary
	case bridge.SelectionCutBuffer:
		return &d.cutBuffer
	}
	return &d.clipboard
}

func (d *fakeDesktop) ReadSelection(ctx context.Context, sel bridge.Selection) (string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.noPrimary && sel != bridge.SelectionClipboard {
		return "", &bridge.Error{Code: bridge.CodeUnsupported, Name: "unsupported", Message: "no PRIMARY"}
	}
	p := *d.selection(sel)
	if p == nil {
		return "", &bridge.Error{Code: bridge.CodeClipboardUnavailable, Name: "clipboard_unavailable", Message: "empty"}
	}
	return *p, nil
}

func (d *fakeDesktop) WriteSelection(ctx context.Context, sel bridge.Selection, text string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.noPrimary && sel != bridge.SelectionClipboard {
		return &bridge.Error{Code: bridge.CodeUnsupported, Name: "unsupported", Message: "no PRIMARY"}
	}
	*d.selection(sel) = &text
	return nil
}

func (d *fakeDesktop) ReadClipboard(ctx context.Context) (string, error) {
	return d.ReadSelection(ctx, bridge.SelectionClipboard)
}

func (d *fakeDesktop) WriteClipboard(ctx context.Context, text string) error {
	return d.WriteSelection(ctx, bridge.SelectionClipboard, text)
}

func (d *fakeDesktop) clip() string { return d.text(bridge.SelectionClipboard) }

func (d *fakeDesktop) text(sel bridge.Selection) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p := *d.selection(sel); p != nil {
		return *p
	}
	return "<none>"
}

func (d *fakeDesktop) focus(id uint32) {
	d.mu.Lock()
	d.focused = id
	d.mu.Unlock()
}

// Capture makes the fake an executor's capture too, for Wrap.
func (d *fakeDesktop) Capture(ctx context.Context, req bridge.CaptureRequest) (*bridge.Capture, error) {
	d.mu.Lock()
	d.captures = append(d.captures, req)
	if d.appear != nil {
		d.windows = append([]bridge.Window{*d.appear}, d.windows...)
		d.appear = nil
	}
	masked := slices.Clone(req.Mask)
	if d.excludes && req.MaskOthers {
		for _, w := range d.windows {
			if !w.Minimized && !slices.Contains(req.Keep, w.ID) && !slices.Contains(masked, w.ID) {
				masked = append(masked, w.ID)
			}
		}
	}
	d.mu.Unlock()
	src := bridge.Rect{Width: 1920, Height: 1080}
	if req.Rect != nil {
		src = *req.Rect
	}
	return &bridge.Capture{Format: "png", Width: 1920, Height: 1080, Source: src,
		Masked: masked, MaskOthers: d.excludes && req.MaskOthers}, nil
}

// fixture is gates over the fake desktop with xterm, firefox and zenity
// approved (at click, read and full: their catalog tiers).
type fixture struct {
	t       *testing.T
	d       *fakeDesktop
	g       *Gates
	chain   []mcpserver.Gate
	sess    *consent.Session
	turns   *cleanup.Controller
	lock    *lock.Lock
	exec    mcpserver.Executor
	killed  bool
	restore [][]uint32
}

func newFixture(t *testing.T, flags consent.Flags) *fixture {
	t.Helper()
	f := &fixture{t: t, d: newDesktop(), sess: consent.NewSession()}
	f.sess.Add([]consent.Grant{
		{AppRef: consent.AppRef{Name: "XTerm", Identity: catalog.IdentityOf(xtermApp)}, Tier: catalog.TierClick},
		{AppRef: consent.AppRef{Name: "Firefox", Identity: catalog.IdentityOf(firefoxApp)}, Tier: catalog.TierRead},
		{AppRef: consent.AppRef{Name: "Zenity", Identity: catalog.IdentityOf(zenityApp)}, Tier: catalog.TierFull},
	}, flags)
	f.lock = lock.New(filepath.Join(t.TempDir(), "locks", "computer-use-test.lock"), lock.Options{})
	f.turns = cleanup.New(cleanup.Options{
		IdleTimeout: -1,
		Restore: func(ctx context.Context, ids []uint32) ([]uint32, error) {
			f.restore = append(f.restore, ids)
			return f.d.restore(ids), nil
		},
		Selections: f.d,
		Unlock:     f.lock.Release,
	})
	g, err := New(Options{
		Desktop:    f.d,
		Consent:    f.sess,
		Lock:       f.lock,
		Turns:      f.turns,
		KillSwitch: func() (bool, string) { return f.killed, "test switch" },
		ResolveApp: func(name string) (bridge.App, error) {
			for _, a := range []bridge.App{xtermApp, firefoxApp, zenityApp, secretApp} {
				if strings.EqualFold(a.Instance, name) {
					return a, nil
				}
			}
			return bridge.App{}, errors.New("unknown")
		},
		SessionPrefix: "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	f.g = g
	f.chain = g.Chain(mcpserver.AccessGate(f.sess))
	f.exec = g.Wrap(fakeExec{f.d})
	t.Cleanup(func() { f.turns.Close() })
	return f
}

// check runs the chain on a as the server does, and returns the first
// refusal as "<gate>: <error>".
func (f *fixture) check(a mcpserver.Action) error {
	for _, g := range f.chain {
		if err := g.Check(context.Background(), &a); err != nil {
			return fmt.Errorf("%s: %w", g.Name(), err)
		}
	}
	return nil
}

func pt(x, y int) *geometry.Point { return &geometry.Point{X: x, Y: y} }

// The points of the fake desktop's windows.
var (
	onXterm   = pt(200, 200)
	onFirefox = pt(700, 200)
	onZenity  = pt(1200, 200)
	onSecret  = pt(1700, 200)
	onNothing = pt(1000, 900)
)

// TestTierMatrix: every action kind on an app of each tier, with that app
// in front, allowed or refused as the tier table says.
func TestTierMatrix(t *testing.T) {
	type row struct {
		name   string
		action mcpserver.Action
		// allowed on read, click, full.
		read, click, full bool
	}
	at := func(p *geometry.Point) mcpserver.Action { return mcpserver.Action{Target: p} }
	rows := []row{
		{"screenshot", mcpserver.Action{Tool: "screenshot"}, true, true, true},
		{"zoom", mcpserver.Action{Tool: "zoom"}, true, true, true},
		{"cursor_position", mcpserver.Action{Tool: "cursor_position"}, true, true, true},
		{"wait", mcpserver.Action{Tool: "wait"}, true, true, true},
		{"mouse_move", withTool(at(nil), "mouse_move"), true, true, true},
		{"left_click", withTool(at(nil), "left_click"), false, true, true},
		{"double_click", withTool(at(nil), "double_click"), false, true, true},
		{"triple_click", withTool(at(nil), "triple_click"), false, true, true},
		{"scroll", withTool(at(nil), "scroll"), false, true, true},
		{"right_click", withTool(at(nil), "right_click"), false, false, true},
		{"middle_click", withTool(at(nil), "middle_click"), false, false, true},
		{"shift+left_click", withKeys(withTool(at(nil), "left_click"), "shift"), false, false, true},
		{"left_click_drag", withTool(mcpserver.Action{}, "left_click_drag"), false, false, true},
		{"left_mouse_down", withTool(at(nil), "left_mouse_down"), false, false, true},
		{"left_mouse_up", withTool(at(nil), "left_mouse_up"), false, false, true},
		{"type", mcpserver.Action{Tool: "type", Text: "hello"}, false, false, true},
		{"key", mcpserver.Action{Tool: "key", Keys: "ctrl+a"}, false, false, true},
		{"hold_key", mcpserver.Action{Tool: "hold_key", Keys: "shift"}, false, false, true},
	}
	apps := []struct {
		tier  string
		id    uint32
		point *geometry.Point
	}{{"read", 2, onFirefox}, {"click", 1, onXterm}, {"full", 3, onZenity}}
	for _, app := range apps {
		for _, r := range rows {
			t.Run(app.tier+"/"+r.name, func(t *testing.T) {
				f := newFixture(t, consent.Flags{})
				f.d.focus(app.id)
				a := r.action
				if a.Target == nil && (classify(&a).PointTier != catalog.TierNone) {
					a.Target = app.point
				}
				if a.Tool == "left_click_drag" {
					from := *app.point
					from.X += 10
					a.From, a.Target = &from, app.point
				}
				want := map[string]bool{"read": r.read, "click": r.click, "full": r.full}[app.tier]
				err := f.check(a)
				if (err == nil) != want {
					t.Fatalf("%s on the %s-tier app: err = %v, want allowed %v", r.name, app.tier, err, want)
				}
				if err != nil && !strings.Contains(err.Error(), consent.AntiSubversionHint) {
					t.Errorf("tier refusal lacks the anti-subversion hint: %v", err)
				}
			})
		}
	}
}

func withTool(a mcpserver.Action, tool string) mcpserver.Action { a.Tool = tool; return a }
func withKeys(a mcpserver.Action, keys string) mcpserver.Action { a.Keys = keys; return a }

// TestPointOnAnotherApp: the app under the point, not the frontmost one,
// decides pointer actions; the frontmost one decides keys.
func TestPointOnAnotherApp(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	f.d.focus(1) // xterm (click) in front
	for _, tc := range []struct {
		a    mcpserver.Action
		want string // "" for allowed, else part of the refusal
	}{
		{mcpserver.Action{Tool: "right_click", Target: onZenity}, ""},
		{mcpserver.Action{Tool: "left_click_drag", From: onZenity, Target: pt(1250, 250)}, ""},
		{mcpserver.Action{Tool: "left_click", Target: onFirefox}, "target app: the window at screen point (700, 200)"},
		{mcpserver.Action{Tool: "right_click", Target: onXterm}, "needs the full tier"},
		{mcpserver.Action{Tool: "left_click_drag", From: onZenity, Target: onXterm}, "target app"},
		{mcpserver.Action{Tool: "left_click", Target: onZenity, Keys: "ctrl"}, "frontmost app: the keys would go to the focused app"},
		{mcpserver.Action{Tool: "key", Keys: "Return"}, "frontmost app"},
		{mcpserver.Action{Tool: "left_click", Target: onNothing}, ""},
		{mcpserver.Action{Tool: "left_click_drag", From: onZenity, Target: onNothing}, ""},
		{mcpserver.Action{Tool: "right_click", Target: onNothing}, "no window at screen point (1000, 900)"},
		{mcpserver.Action{Tool: "middle_click", Target: onNothing}, "window manager's menus"},
		{mcpserver.Action{Tool: "scroll", Target: onNothing}, "no window at screen point"},
		{mcpserver.Action{Tool: "mouse_move", Target: onNothing}, ""},
	} {
		err := f.check(tc.a)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s at %v: %v; want allowed", tc.a.Tool, tc.a.Target, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s at %v: %v; want a refusal containing %q", tc.a.Tool, tc.a.Target, err, tc.want)
		}
	}
	// The reverse: zenity (full) in front, typing is fine even with the
	// pointer over xterm.
	f.d.focus(3)
	if err := f.check(mcpserver.Action{Tool: "type", Text: "x"}); err != nil {
		t.Errorf("typing with zenity in front: %v", err)
	}
}

func TestNoAccessNoLock(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	empty := consent.NewSession()
	g, _ := New(Options{Desktop: f.d, Consent: empty, Lock: f.lock, Turns: f.turns, SessionPrefix: "x", KillSwitch: func() (bool, string) { return false, "" }})
	chain := g.Chain(mcpserver.AccessGate(empty))
	a := mcpserver.Action{Tool: "screenshot"}
	var err error
	for _, gt := range chain {
		if err = gt.Check(context.Background(), &a); err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "request_access") {
		t.Fatalf("screenshot before request_access: %v", err)
	}
	if o, _ := lock.Read(f.lock.Path()); o != nil {
		t.Fatalf("a session without approvals took the lock: %+v", o)
	}
}

func TestHideAndRestore(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	f.d.focus(4) // the unapproved app in front
	if err := f.check(mcpserver.Action{Tool: "screenshot"}); err != nil {
		t.Fatal(err)
	}
	if len(f.d.hides) != 1 || !slices.Equal(f.d.hides[0], []uint32{4}) {
		t.Fatalf("hides = %v; want [[4]]", f.d.hides)
	}
	if got := f.turns.Hidden(); !slices.Equal(got, []uint32{4}) {
		t.Fatalf("turn's hidden windows = %v", got)
	}
	// The unapproved app lost the focus with its window: a click on an
	// approved app works.
	if err := f.check(mcpserver.Action{Tool: "left_click", Target: onZenity}); err != nil {
		t.Fatalf("click after hiding: %v", err)
	}
	if o, _ := lock.Read(f.lock.Path()); o == nil || o.SessionID != "test" {
		t.Fatalf("lock after the first action: %+v", o)
	}
	f.turns.End(cleanup.ReasonDisconnect)
	if len(f.restore) != 1 || !slices.Equal(f.restore[0], []uint32{4}) {
		t.Fatalf("restored %v", f.restore)
	}
	if o, _ := lock.Read(f.lock.Path()); o != nil {
		t.Fatalf("lock after the turn ended: %+v", o)
	}
}

// TestUnapprovedInFront: when hiding is off (or failed), an unapproved
// app in front stops input but not screenshots.
func TestUnapprovedInFront(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	f.g.opts.KeepUnapprovedVisible = true
	f.d.focus(4)
	if err := f.check(mcpserver.Action{Tool: "screenshot"}); err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	err := f.check(mcpserver.Action{Tool: "left_click", Target: onZenity})
	if err == nil || !strings.Contains(err.Error(), "Secret, which is not approved") {
		t.Fatalf("click with an unapproved app in front: %v", err)
	}
	f.d.focus(3)
	err = f.check(mcpserver.Action{Tool: "left_click", Target: onSecret})
	if err == nil || !strings.Contains(err.Error(), "Secret is not approved") {
		t.Fatalf("click on an unapproved app: %v", err)
	}
	if len(f.d.hides) != 0 {
		t.Fatalf("hid windows with hiding off: %v", f.d.hides)
	}
}

func TestMasking(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	f.g.opts.KeepUnapprovedVisible = true
	late := win(9, secretApp, 100, 500, 50, 50)
	f.d.appear = &late
	img, err := f.exec.Capture(context.Background(), bridge.CaptureRequest{Mask: []uint32{77}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.d.captures) != 2 {
		t.Fatalf("%d captures; want a second one once window 9 appeared", len(f.d.captures))
	}
	if got := f.d.captures[0].Mask; !slices.Equal(got, []uint32{77, 4}) {
		t.Errorf("first capture masks %v; want the caller's 77 and the unapproved 4", got)
	}
	if got := f.d.captures[1].Mask; !slices.Equal(got, []uint32{77, 4, 9}) {
		t.Errorf("second capture masks %v; want 9 too", got)
	}
	if !slices.Contains(img.Masked, 9) {
		t.Errorf("returned capture did not mask the late window: %v", img.Masked)
	}
}

// TestMaskingByExclusion: with a helper that masks every window but the
// approved ones at the moment it reads the pixels, a window that appears
// during the capture is painted in that one capture, and so is a
// minimized unapproved window that came back.
func TestMaskingByExclusion(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	f.g.opts.KeepUnapprovedVisible = true
	f.d.excludes = true
	f.d.windows = append(f.d.windows, win(5, secretApp, 0, 500, 50, 50))
	f.d.windows[4].Minimized = true
	late := win(9, secretApp, 100, 500, 50, 50)
	f.d.appear = &late
	img, err := f.exec.Capture(context.Background(), bridge.CaptureRequest{Mask: []uint32{77}})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.d.captures) != 1 {
		t.Fatalf("%d captures; one is enough when the helper masks by exclusion", len(f.d.captures))
	}
	req := f.d.captures[0]
	if !req.MaskOthers || !slices.Equal(req.Keep, []uint32{1, 2, 3}) {
		t.Errorf("capture asked MaskOthers=%v keep %v; want true and the approved 1, 2, 3", req.MaskOthers, req.Keep)
	}
	if !slices.Equal(req.Mask, []uint32{77, 4, 5}) {
		t.Errorf("capture masks %v; want the caller's 77 and the unapproved 4 and 5 (minimized)", req.Mask)
	}
	if !slices.Contains(img.Masked, 9) {
		t.Errorf("the window that appeared during the capture was not masked: %v", img.Masked)
	}
}

// TestHideSkipsOverrideRedirect: popups cannot be minimized, so the hide
// gate does not ask; a click on one is refused like on any unapproved
// window, even over an approved one.
func TestHideSkipsOverrideRedirect(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	popup := win(8, secretApp, 1050, 50, 100, 100)
	popup.OverrideRedirect = true
	f.d.windows = append([]bridge.Window{popup}, f.d.windows...)
	if err := f.check(mcpserver.Action{Tool: "screenshot"}); err != nil {
		t.Fatal(err)
	}
	if len(f.d.hides) != 1 || !slices.Equal(f.d.hides[0], []uint32{4}) {
		t.Fatalf("hides = %v; want [[4]], without the popup 8", f.d.hides)
	}
	err := f.check(mcpserver.Action{Tool: "left_click", Target: &geometry.Point{X: 1100, Y: 100}})
	if err == nil || !strings.Contains(err.Error(), "Secret") {
		t.Fatalf("click on the unapproved popup over zenity: %v; want a refusal naming Secret", err)
	}
}

// TestUnattributedPopup: a popup no pid, WM_CLASS, transient-for or
// client leader identifies has an empty identity, which no grant matches:
// it is masked and a click on it is refused.
func TestUnattributedPopup(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	f.g.opts.KeepUnapprovedVisible = true
	popup := win(8, bridge.App{}, 1050, 50, 100, 100)
	popup.OverrideRedirect = true
	f.d.windows = append([]bridge.Window{popup}, f.d.windows...)
	if _, err := f.exec.Capture(context.Background(), bridge.CaptureRequest{}); err != nil {
		t.Fatal(err)
	}
	if req := f.d.captures[0]; !slices.Contains(req.Mask, 8) || slices.Contains(req.Keep, 8) {
		t.Errorf("capture mask %v keep %v; want the unidentified popup 8 masked", req.Mask, req.Keep)
	}
	err := f.check(mcpserver.Action{Tool: "left_click", Target: &geometry.Point{X: 1100, Y: 100}})
	if err == nil || !strings.Contains(err.Error(), "unidentified") {
		t.Fatalf("click on the unidentified popup: %v; want a refusal", err)
	}
}

func TestClipboardGuard(t *testing.T) {
	f := newFixture(t, consent.Flags{ClipboardRead: true, ClipboardWrite: true})
	ctx := context.Background()
	// Full-tier app in front: the clipboard is left alone.
	if err := f.check(mcpserver.Action{Tool: "left_click", Target: onZenity}); err != nil {
		t.Fatal(err)
	}
	if got := f.d.clip(); got != "the user's clipboard" {
		t.Fatalf("clipboard = %q", got)
	}
	// A click aimed at the click-tier terminal stashes and clears it.
	if err := f.check(mcpserver.Action{Tool: "left_click", Target: onXterm}); err != nil {
		t.Fatal(err)
	}
	if got := f.d.clip(); got != "" {
		t.Fatalf("clipboard while xterm is targeted = %q, want cleared", got)
	}
	// The terminal is now in front; something lands on the clipboard
	// (a click on a "Copy" item); the next action clears it again, and
	// so does the end of every action.
	f.d.focus(1)
	f.d.WriteClipboard(ctx, "copied in the terminal")
	if err := f.check(mcpserver.Action{Tool: "scroll", Target: onXterm}); err != nil {
		t.Fatal(err)
	}
	if got := f.d.clip(); got != "" {
		t.Fatalf("clipboard = %q, want cleared again", got)
	}
	f.d.WriteClipboard(ctx, "copied by the click")
	if err := f.exec.Click(ctx, geometry.Point{X: 200, Y: 200}, mcpserver.ButtonLeft, 1, ""); err != nil {
		t.Fatal(err)
	}
	if got := f.d.clip(); got != "" {
		t.Fatalf("clipboard after an action = %q, want cleared", got)
	}
	// write_clipboard is refused while the terminal is in front.
	err := f.check(mcpserver.Action{Tool: "write_clipboard", Text: "rm -rf ~"})
	if err == nil || !strings.Contains(err.Error(), "clipboard is locked") {
		t.Fatalf("write_clipboard with the terminal in front: %v", err)
	}
	// Zenity comes to the front: the user's clipboard is back.
	f.d.focus(3)
	if err := f.check(mcpserver.Action{Tool: "screenshot"}); err != nil {
		t.Fatal(err)
	}
	if got := f.d.clip(); got != "the user's clipboard" {
		t.Fatalf("clipboard after the terminal left the front = %q", got)
	}
	// Into the terminal again, then the turn ends: restored too.
	f.d.focus(1)
	if err := f.check(mcpserver.Action{Tool: "left_click", Target: onXterm}); err != nil {
		t.Fatal(err)
	}
	if got := f.d.clip(); got != "" {
		t.Fatalf("clipboard = %q, want cleared", got)
	}
	f.turns.End(cleanup.ReasonIdle)
	if got := f.d.clip(); got != "the user's clipboard" {
		t.Fatalf("clipboard after the turn = %q", got)
	}
}

func TestClipboardFlags(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	for _, tool := range []string{"read_clipboard", "write_clipboard"} {
		err := f.check(mcpserver.Action{Tool: tool})
		flag := map[string]string{"read_clipboard": "clipboardRead", "write_clipboard": "clipboardWrite"}[tool]
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s without %s: %v", tool, flag, err)
		}
	}
	f.sess.Add(nil, consent.Flags{ClipboardRead: true, ClipboardWrite: true})
	for _, tool := range []string{"read_clipboard", "write_clipboard"} {
		if err := f.check(mcpserver.Action{Tool: tool}); err != nil {
			t.Errorf("%s with its flag: %v", tool, err)
		}
	}
}

func TestStaleness(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	ctx := context.Background()
	click := mcpserver.Action{Tool: "left_click", Target: onZenity}
	// Nothing captured yet: nothing to be stale against.
	if err := f.check(click); err != nil {
		t.Fatal(err)
	}
	if len(f.d.patches) != 0 {
		t.Fatalf("patch checks before any capture: %v", f.d.patches)
	}
	if _, err := f.exec.Capture(ctx, bridge.CaptureRequest{}); err != nil {
		t.Fatal(err)
	}
	f.d.patch = bridge.PatchCheck{Changed: true, DifferingPixels: 200}
	err := f.check(click)
	if err == nil || !strings.Contains(err.Error(), "take a new screenshot") {
		t.Fatalf("click on a changed target: %v", err)
	}
	if got := f.d.patches[len(f.d.patches)-1]; got.X != 1200 || got.Y != 200 || got.Size != patchSize {
		t.Errorf("patch check %+v", got)
	}
	// A blinking caret (a few pixels) is not a change.
	f.d.patch = bridge.PatchCheck{Changed: true, DifferingPixels: 12}
	if err := f.check(click); err != nil {
		t.Fatalf("click with a few changed pixels: %v", err)
	}
	// Near the screen's edge the patch shrinks to fit.
	f.d.patch = bridge.PatchCheck{}
	f.check(mcpserver.Action{Tool: "left_click", Target: pt(1002, 3)})
	if got := f.d.patches[len(f.d.patches)-1]; got.Size != 7 {
		t.Errorf("patch at y=3 has size %d, want 7", got.Size)
	}
	// Once input was sent, the screen differs on purpose: not checked
	// until the next capture.
	f.d.patch = bridge.PatchCheck{Changed: true, DifferingPixels: 225}
	if err := f.exec.Click(ctx, *onZenity, mcpserver.ButtonLeft, 1, ""); err != nil {
		t.Fatal(err)
	}
	n := len(f.d.patches)
	if err := f.check(click); err != nil {
		t.Fatalf("click after input since the capture: %v", err)
	}
	if len(f.d.patches) != n {
		t.Fatalf("patch checked after input since the capture")
	}
	if _, err := f.exec.Capture(ctx, bridge.CaptureRequest{}); err != nil {
		t.Fatal(err)
	}
	if err := f.check(click); err == nil {
		t.Fatal("first click after a new capture on a changed target allowed")
	}
	// Errors of the helper.
	f.d.patchErr = &bridge.Error{Name: "out_of_bounds", Message: "outside"}
	if err := f.check(click); err == nil || !strings.Contains(err.Error(), "take a new screenshot") {
		t.Fatalf("out_of_bounds: %v", err)
	}
}

func TestSystemShortcuts(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	for _, a := range []mcpserver.Action{
		{Tool: "key", Keys: "ctrl+a alt+Tab"},
		{Tool: "key", Keys: "CTRL+ALT+f2"},
		{Tool: "hold_key", Keys: "Super_L"},
		{Tool: "left_click", Target: onZenity, Keys: "super"},
	} {
		err := f.check(a)
		if err == nil || !strings.HasPrefix(err.Error(), "system shortcut:") || !strings.Contains(err.Error(), "systemKeyCombos") {
			t.Errorf("%s %q without systemKeyCombos: %v", a.Tool, a.Keys, err)
		}
	}
	f.sess.Add(nil, consent.Flags{SystemKeyCombos: true})
	if err := f.check(mcpserver.Action{Tool: "key", Keys: "alt+Tab"}); err != nil {
		t.Errorf("alt+Tab with systemKeyCombos: %v", err)
	}
}

func TestKillSwitch(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	f.killed = true
	err := f.check(mcpserver.Action{Tool: "screenshot"})
	if err == nil || !strings.HasPrefix(err.Error(), "kill switch: deskhand is switched off (test switch)") {
		t.Fatalf("with the kill switch on: %v", err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, DisabledFile)
	ks := KillSwitch(func(string) string { return "" }, file)
	if off, _ := ks(); off {
		t.Fatal("off without file or variable")
	}
	if off, why := KillSwitch(func(string) string { return "1" })(); !off || !strings.Contains(why, DisabledEnv) {
		t.Fatalf("variable set: %v %q", off, why)
	}
	if off, _ := KillSwitch(func(string) string { return "false" })(); off {
		t.Fatal("DESKHAND_DISABLED=false switched it off")
	}
	writeFile(t, file)
	if off, why := ks(); !off || !strings.Contains(why, file) {
		t.Fatalf("file present: %v %q", off, why)
	}
}

func TestLockHeldElsewhere(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	other := lock.New(f.lock.Path(), lock.Options{})
	_ = other
	// Another session of this process holds the lock.
	if _, err := f.lock.Acquire("someone-else"); err != nil {
		t.Fatal(err)
	}
	err := f.check(mcpserver.Action{Tool: "screenshot"})
	if err == nil || !errors.Is(err, lock.ErrHeld) || !strings.Contains(err.Error(), "cu_lock_held") || !strings.Contains(err.Error(), "someone-else") {
		t.Fatalf("with the lock held elsewhere: %v", err)
	}
}

func TestOpenApplication(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	if err := f.check(mcpserver.Action{Tool: "open_application", App: "zenity"}); err != nil {
		t.Errorf("opening an approved app: %v", err)
	}
	err := f.check(mcpserver.Action{Tool: "open_application", App: "secret"})
	if err == nil || !strings.Contains(err.Error(), "Secret is not approved") {
		t.Errorf("opening an unapproved app: %v", err)
	}
	// An app that does not resolve is refused, not left to the executor.
	err = f.check(mcpserver.Action{Tool: "open_application", App: "nosuchapp"})
	if err == nil || !strings.Contains(err.Error(), "cannot tell which application") {
		t.Errorf("opening an app that does not resolve: %v", err)
	}
	// The executor is handed the exact id of the app the gate approved.
	f.g.opts.ResolveApp = func(string) (bridge.App, error) {
		return bridge.App{Name: "Zenity", Instance: "zenity", Class: "Zenity", DesktopID: "zenity-exact"}, nil
	}
	a := mcpserver.Action{Tool: "open_application", App: "ZENITY"}
	for _, g := range f.chain {
		if err := g.Check(context.Background(), &a); err != nil {
			t.Fatalf("opening an approved app by another spelling: %v", err)
		}
	}
	if a.App != "zenity-exact" {
		t.Errorf("after the launch check the action launches %q, want the resolved id zenity-exact", a.App)
	}
	// Without a way to resolve apps, launching is refused.
	f.g.opts.ResolveApp = nil
	if err := f.check(mcpserver.Action{Tool: "open_application", App: "zenity"}); err == nil {
		t.Error("opening an app with no resolver was allowed")
	}
}

// TestEndedTurnStopsQueuedAction: an action whose context the turn's end
// cancelled is refused with the cause.
func TestEndedTurnStopsQueuedAction(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	if err := f.check(mcpserver.Action{Tool: "screenshot"}); err != nil {
		t.Fatal(err)
	}
	ctx, done := f.turns.ActionContext(context.Background())
	defer done()
	f.turns.Interrupt()
	deadline := time.Now().Add(2 * time.Second)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	a := mcpserver.Action{Tool: "screenshot"}
	err := f.chain[0].Check(ctx, &a)
	if !errors.Is(err, cleanup.ErrInterrupted) {
		t.Fatalf("queued action after Escape: %v", err)
	}
}

// fakeExec is an mcpserver.Executor whose input does nothing and whose
// captures come from the fake desktop.
type fakeExec struct{ d *fakeDesktop }

func (e fakeExec) Displays(ctx context.Context) ([]bridge.Display, error) { return nil, nil }
func (e fakeExec) Capture(ctx context.Context, req bridge.CaptureRequest) (*bridge.Capture, error) {
	return e.d.Capture(ctx, req)
}
func (e fakeExec) CursorPosition(ctx context.Context) (geometry.Point, error) {
	return geometry.Point{}, nil
}
func (e fakeExec) MoveMouse(ctx context.Context, to geometry.Point) error { return nil }
func (e fakeExec) Click(ctx context.Context, at geometry.Point, b mcpserver.Button, n int, m string) error {
	return nil
}
func (e fakeExec) MouseDown(ctx context.Context, b mcpserver.Button) error              { return nil }
func (e fakeExec) MouseUp(ctx context.Context, b mcpserver.Button) error                { return nil }
func (e fakeExec) Drag(ctx context.Context, from, to geometry.Point, mods string) error { return nil }
func (e fakeExec) Scroll(ctx context.Context, at geometry.Point, d string, n int, mods string) error {
	return nil
}
func (e fakeExec) Type(ctx context.Context, text string) error                  { return nil }
func (e fakeExec) Key(ctx context.Context, keys string) error                   { return nil }
func (e fakeExec) HoldKey(ctx context.Context, c string, d time.Duration) error { return nil }
func (e fakeExec) ReleaseAll(ctx context.Context) error                         { return nil }
func (e fakeExec) ReadClipboard(ctx context.Context) (string, error)            { return e.d.ReadClipboard(ctx) }
func (e fakeExec) WriteClipboard(ctx context.Context, text string) error {
	return e.d.WriteClipboard(ctx, text)
}
func (e fakeExec) OpenApplication(ctx context.Context, app string) (*mcpserver.LaunchedApp, error) {
	return &mcpserver.LaunchedApp{Name: app}, nil
}
func (e fakeExec) TeachShow(ctx context.Context, req bridge.TeachShowRequest) (*bridge.TeachShown, error) {
	return &bridge.TeachShown{}, nil
}
func (e fakeExec) TeachPoll(ctx context.Context) (*bridge.TeachState, error) {
	return &bridge.TeachState{}, nil
}
func (e fakeExec) TeachHide(ctx context.Context) error { return nil }

func writeFile(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

func (e fakeExec) Windows(ctx context.Context, includeHidden bool) (*bridge.WindowList, error) {
	return e.d.Windows(ctx, includeHidden)
}
func (e fakeExec) A11yApps(ctx context.Context) (*bridge.A11yApps, error) {
	return &bridge.A11yApps{}, nil
}
func (e fakeExec) A11yTree(ctx context.Context, req bridge.A11yTreeRequest) (*bridge.A11yTree, error) {
	return &bridge.A11yTree{}, nil
}
func (e fakeExec) A11yElement(ctx context.Context, pid int, ref string) (*bridge.A11yNode, error) {
	return &bridge.A11yNode{Ref: ref}, nil
}
func (e fakeExec) A11yAct(ctx context.Context, req bridge.A11yActRequest) error { return nil }
func (e fakeExec) SetWindowState(ctx context.Context, pid int, window uint32, state string) (*bridge.WindowStateResult, error) {
	return &bridge.WindowStateResult{Window: window, State: state, Changed: true}, nil
}
