package consent

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
)

var (
	xtermWin   = bridge.App{Name: "XTerm", Instance: "xterm", Class: "XTerm", Exe: "/usr/bin/xterm", PID: 10}
	firefoxWin = bridge.App{Name: "Firefox ESR", Instance: "Navigator", Class: "firefox-esr", Exe: "/usr/lib/firefox-esr/firefox-esr", DesktopID: "firefox-esr"}
	zenityWin  = bridge.App{Name: "Zenity", Instance: "zenity", Class: "Zenity", Exe: "/usr/bin/zenity", PID: 11}
	calcWin    = bridge.App{Name: "Calculator", Instance: "gnome-calculator", Class: "Gnome-calculator", Exe: "/usr/bin/gnome-calculator", DesktopID: "org.gnome.Calculator"}
	spotifyWin = bridge.App{Name: "Spotify", Instance: "spotify", Class: "Spotify", Exe: "/usr/share/spotify/spotify"}
	nautilus   = bridge.App{Name: "Files", Instance: "org.gnome.Nautilus", Class: "org.gnome.Nautilus", Exe: "/usr/bin/nautilus", DesktopID: "org.gnome.Nautilus"}
)

type fakeApps struct {
	running, installed []bridge.App
	err                error
}

func (f fakeApps) RunningApps(context.Context) ([]bridge.App, error)   { return f.running, f.err }
func (f fakeApps) InstalledApps(context.Context) ([]bridge.App, error) { return f.installed, nil }

// recorder is an Asker that records the dialog and answers with fn.
type recorder struct {
	dialogs []*Dialog
	answer  func(d *Dialog) Answer
}

func (r *recorder) ask(_ context.Context, d *Dialog) (Answer, error) {
	r.dialogs = append(r.dialogs, d)
	return r.answer(d), nil
}

// acceptAll ticks every box; acceptExcept unticks the titles containing
// any of names.
func acceptExcept(names ...string) func(d *Dialog) Answer {
	return func(d *Dialog) Answer {
		content := map[string]any{}
		for key, p := range d.Schema["properties"].(map[string]any) {
			title := p.(map[string]any)["title"].(string)
			v := true
			for _, n := range names {
				if strings.Contains(title, n) || strings.Contains(p.(map[string]any)["description"].(string), n) {
					v = false
				}
			}
			content[key] = v
		}
		return Answer{Action: ActionAccept, Content: content}
	}
}

type env struct {
	dir    string
	policy string
	apps   fakeApps
}

func newEnv(t *testing.T) *env {
	t.Helper()
	dir := t.TempDir()
	return &env{dir: dir, policy: filepath.Join(dir, "policy.json"), apps: fakeApps{running: []bridge.App{xtermWin, zenityWin, firefoxWin}, installed: []bridge.App{calcWin}}}
}

func (e *env) manager(t *testing.T, allow, grant []string) *Manager {
	t.Helper()
	m, err := New(Options{ConfigDir: e.dir, PolicyPaths: []string{e.policy}, Allow: allow, Grant: grant, Apps: e.apps})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func names(gs []Grant) map[string]catalog.Tier {
	out := map[string]catalog.Tier{}
	for _, g := range gs {
		out[g.Name] = g.Tier
	}
	return out
}

func kinds(rs []Refusal) map[string]string {
	out := map[string]string{}
	for _, r := range rs {
		out[r.Requested] = r.Kind
	}
	return out
}

func TestSessionStartsEmpty(t *testing.T) {
	m := newEnv(t).manager(t, nil, nil)
	s := m.Session()
	if s.Granted() || len(s.Apps()) != 0 || s.Flags() != (Flags{}) {
		t.Fatalf("new session = granted %v, apps %v, flags %+v; want nothing", s.Granted(), s.Apps(), s.Flags())
	}
	for _, app := range []bridge.App{xtermWin, zenityWin, firefoxWin} {
		if got := s.Tier(app); got != catalog.TierNone {
			t.Errorf("Tier(%s) before request_access = %v, want none", app.Name, got)
		}
	}
}

func TestAcceptAll(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil, nil)
	r := &recorder{answer: acceptExcept()}
	out, err := m.RequestAccess(context.Background(), Request{Apps: []string{"xterm", "Firefox", "zenity", "Calculator", "nautilus"}, Reason: "testing", Flags: []string{"clipboard-read"}}, r.ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.dialogs) != 1 {
		t.Fatalf("asked %d times, want once", len(r.dialogs))
	}
	msg := r.dialogs[0].Message
	for _, want := range []string{"XTerm (click:", "Firefox (read:", "Zenity (full:", "Calculator (full:", "Warning: this is a shell", "Warning: this is a file manager", "read the clipboard", "\"testing\"", "deskhand grants forget"} {
		if !strings.Contains(msg, want) {
			t.Errorf("dialog message lacks %q:\n%s", want, msg)
		}
	}
	want := map[string]catalog.Tier{"XTerm": catalog.TierClick, "Firefox": catalog.TierRead, "Zenity": catalog.TierFull, "Calculator": catalog.TierFull, "Nautilus": catalog.TierFull}
	if got := names(out.Granted); !equalTiers(got, want) {
		t.Errorf("granted %v, want %v", got, want)
	}
	s := m.Session()
	for app, tier := range map[bridge.App]catalog.Tier{xtermWin: catalog.TierClick, firefoxWin: catalog.TierRead, zenityWin: catalog.TierFull, calcWin: catalog.TierFull, nautilus: catalog.TierFull} {
		if got := s.Tier(app); got != tier {
			t.Errorf("Tier(%s) = %v, want %v", app.Name, got, tier)
		}
	}
	// Another xterm process, another Firefox build: same catalog app.
	if got := s.Tier(bridge.App{Instance: "uxterm", Class: "UXTerm", Exe: "/usr/bin/xterm"}); got != catalog.TierClick {
		t.Errorf("Tier(uxterm) = %v, want click", got)
	}
	// An unrelated app stays unapproved, whatever its window calls itself.
	if got := s.Tier(bridge.App{Name: "Zenity", Instance: "evil", Class: "Evil", Exe: "/tmp/evil"}); got != catalog.TierNone {
		t.Errorf("Tier(app named Zenity) = %v, want none", got)
	}
	if !s.Flags().ClipboardRead || s.Flags().ClipboardWrite {
		t.Errorf("flags = %+v, want clipboardRead only", s.Flags())
	}
	if text := out.Text(); !strings.Contains(text, AntiSubversionHint) || !strings.Contains(text, "Granted: XTerm at the click tier") {
		t.Errorf("outcome text lacks the grant or the anti-subversion hint:\n%s", text)
	}

	// Asking again for granted apps does not show a dialog.
	out, err = m.RequestAccess(context.Background(), Request{Apps: []string{"XTerm", "debian-xterm"}}, r.ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.dialogs) != 1 || len(out.AlreadyGranted) != 2 || len(out.Granted) != 0 {
		t.Errorf("second request: dialogs %d, already %v, granted %v; want no dialog, two already granted", len(r.dialogs), out.AlreadyGranted, out.Granted)
	}
}

func equalTiers(a, b map[string]catalog.Tier) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestPartialAcceptRemembersUnticked(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil, nil)
	r := &recorder{answer: acceptExcept("Firefox", "systemKeyCombos")}
	out, err := m.RequestAccess(context.Background(), Request{Apps: []string{"xterm", "firefox"}, Flags: []string{"systemKeyCombos", "clipboardWrite"}}, r.ask)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(out.Granted); !equalTiers(got, map[string]catalog.Tier{"XTerm": catalog.TierClick}) {
		t.Errorf("granted %v, want XTerm only", got)
	}
	if got := kinds(out.Refused); got["firefox"] != RefusedDeclined {
		t.Errorf("refused %v, want firefox declined", got)
	}
	if f := m.Session().Flags(); f.SystemKeyCombos || !f.ClipboardWrite {
		t.Errorf("flags = %+v, want clipboardWrite without systemKeyCombos", f)
	}
	list, err := m.Denials().List()
	if err != nil || len(list) != 1 || list[0].Name != "Firefox" {
		t.Fatalf("denials = %+v, %v; want Firefox", list, err)
	}

	// A new server process: Firefox is refused without a dialog.
	m2 := e.manager(t, nil, nil)
	r2 := &recorder{answer: acceptExcept()}
	out, err = m2.RequestAccess(context.Background(), Request{Apps: []string{"org.mozilla.firefox"}}, r2.ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(r2.dialogs) != 0 || kinds(out.Refused)["org.mozilla.firefox"] != RefusedRemembered {
		t.Fatalf("after restart: dialogs %d, refused %+v; want a remembered denial without a dialog", len(r2.dialogs), out.Refused)
	}
	if !strings.Contains(out.Text(), "deskhand grants forget Firefox") {
		t.Errorf("refusal does not say how to forget:\n%s", out.Text())
	}

	// Forgetting it lets the next request ask again.
	removed, err := m2.Denials().Forget("firefox-esr", false)
	if err != nil || len(removed) != 1 {
		t.Fatalf("Forget(firefox-esr) = %v, %v; want one removed", removed, err)
	}
	out, err = m2.RequestAccess(context.Background(), Request{Apps: []string{"firefox"}}, r2.ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(r2.dialogs) != 1 || names(out.Granted)["Firefox"] != catalog.TierRead {
		t.Errorf("after forget: dialogs %d, granted %v; want a dialog and Firefox at read", len(r2.dialogs), out.Granted)
	}
}

func TestDeclineAndCancel(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil, nil)
	cancel := &recorder{answer: func(*Dialog) Answer { return Answer{Action: ActionCancel} }}
	out, err := m.RequestAccess(context.Background(), Request{Apps: []string{"zenity", "xterm"}, Flags: []string{"clipboardRead"}}, cancel.ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Granted) != 0 || m.Session().Granted() || m.Session().Flags().ClipboardRead {
		t.Errorf("cancel granted %v / flags %+v, want nothing", out.Granted, m.Session().Flags())
	}
	if got := kinds(out.Refused); got["zenity"] != RefusedCancelled || got["xterm"] != RefusedCancelled {
		t.Errorf("cancel refused %v, want both cancelled", got)
	}
	if list, _ := m.Denials().List(); len(list) != 0 {
		t.Errorf("cancel remembered %v, want nothing", list)
	}

	decline := &recorder{answer: func(*Dialog) Answer { return Answer{Action: ActionDecline} }}
	out, err = m.RequestAccess(context.Background(), Request{Apps: []string{"zenity", "xterm"}}, decline.ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Granted) != 0 || m.Session().Granted() {
		t.Errorf("decline granted %v", out.Granted)
	}
	if list, _ := m.Denials().List(); len(list) != 2 {
		t.Errorf("decline remembered %v, want zenity and xterm", list)
	}
	// The remembered denial covers the running window of the app too.
	if _, found, _ := m.Denials().Find(refOf(zenityWin)); !found {
		t.Error("the denial of \"zenity\" does not cover the zenity window")
	}
	if removed, err := m.Denials().Forget("", true); err != nil || len(removed) != 2 {
		t.Errorf("Forget(all) = %v, %v", removed, err)
	}
}

func TestPolicyDeniedNeverAsked(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(e.policy, []byte(`{"deny": ["zenity", "org.gnome.Calculator"], "deny_flags": ["systemKeyCombos"], "message": "Ask IT."}`), 0o600); err != nil {
		t.Fatal(err)
	}
	m := e.manager(t, []string{"zenity=full"}, []string{"systemKeyCombos"})
	r := &recorder{answer: acceptExcept()}
	out, err := m.RequestAccess(context.Background(), Request{Apps: []string{"Zenity", "calculator", "Spotify", "com.amazon.Kindle"}, Flags: []string{"systemKeyCombos"}}, r.ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.dialogs) != 0 {
		t.Fatalf("a dialog was shown for policy-denied apps:\n%s", r.dialogs[0].Message)
	}
	want := map[string]string{"Zenity": RefusedPolicy, "calculator": RefusedPolicy, "Spotify": RefusedCatalog, "com.amazon.Kindle": RefusedCatalog}
	if got := kinds(out.Refused); len(got) != len(want) || got["Zenity"] != want["Zenity"] || got["calculator"] != want["calculator"] || got["Spotify"] != want["Spotify"] || got["com.amazon.Kindle"] != want["com.amazon.Kindle"] {
		t.Errorf("refused %v, want %v", got, want)
	}
	if len(out.FlagsRefused) != 1 || out.FlagsRefused[0].Kind != RefusedPolicy {
		t.Errorf("flags refused %+v, want systemKeyCombos by policy", out.FlagsRefused)
	}
	if !strings.Contains(out.Text(), "Ask IT.") {
		t.Errorf("policy message missing:\n%s", out.Text())
	}
	if m.Session().Tier(spotifyWin) != catalog.TierNone || m.Session().Tier(zenityWin) != catalog.TierNone {
		t.Error("a policy-denied app has a tier")
	}
}

func TestBrokenPolicyFailsClosed(t *testing.T) {
	e := newEnv(t)
	os.WriteFile(e.policy, []byte(`{"deny": "zenity"}`), 0o600)
	if _, err := New(Options{ConfigDir: e.dir, PolicyPaths: []string{e.policy}}); err == nil || !strings.Contains(err.Error(), e.policy) {
		t.Errorf("New with a broken policy = %v, want an error naming %s", err, e.policy)
	}
	os.WriteFile(e.policy, []byte(`{"deny_flags": ["everything"]}`), 0o600)
	if _, err := New(Options{ConfigDir: e.dir, PolicyPaths: []string{e.policy}}); err == nil || !strings.Contains(err.Error(), "unknown grant flag") {
		t.Errorf("New with an unknown policy flag = %v", err)
	}
}

func TestPreapprovalWithoutElicitation(t *testing.T) {
	e := newEnv(t)
	if err := SavePreapproval(filepath.Join(e.dir, PreapprovalFile), Preapproval{Allow: []string{"firefox"}, Grant: []string{"clipboard_write"}}); err != nil {
		t.Fatal(err)
	}
	m := e.manager(t, []string{"xterm=full", "Calculator=read"}, []string{"clipboardRead"})
	out, err := m.RequestAccess(context.Background(), Request{
		Apps:  []string{"xterm", "firefox", "org.gnome.Calculator", "zenity"},
		Flags: []string{"clipboardRead", "clipboardWrite", "systemKeyCombos"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]catalog.Tier{"XTerm": catalog.TierFull, "Firefox": catalog.TierRead, "Calculator": catalog.TierRead}
	if got := names(out.Granted); !equalTiers(got, want) {
		t.Errorf("granted %v, want %v", got, want)
	}
	for _, g := range out.Granted {
		if g.Source != SourcePreapproved {
			t.Errorf("%s source = %q, want preapproved", g.Name, g.Source)
		}
	}
	if kinds(out.Refused)["zenity"] != RefusedNotAsked || !out.CannotAsk {
		t.Errorf("refused %+v, want zenity not approved", out.Refused)
	}
	for _, want := range []string{"--allow zenity", "--grant systemKeyCombos", "deskhand grants allow zenity --grant systemKeyCombos", filepath.Join(e.dir, PreapprovalFile), "restart"} {
		if !strings.Contains(out.HowToPreapprove, want) {
			t.Errorf("instructions lack %q: %s", want, out.HowToPreapprove)
		}
	}
	if f := m.Session().Flags(); !f.ClipboardRead || !f.ClipboardWrite || f.SystemKeyCombos {
		t.Errorf("flags = %+v, want both clipboard flags only", f)
	}
	if list, _ := m.Denials().List(); len(list) != 0 {
		t.Errorf("a client that cannot ask left denials: %v", list)
	}
}

func TestNothingPreapprovedNoElicitation(t *testing.T) {
	m := newEnv(t).manager(t, nil, nil)
	out, err := m.RequestAccess(context.Background(), Request{Apps: []string{"xterm"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Session().Granted() || !strings.Contains(out.Text(), "--allow xterm") || !strings.Contains(out.Text(), "No app is approved") {
		t.Errorf("outcome = %s", out.Text())
	}
}

func TestCatalogTiersOnly(t *testing.T) {
	e := newEnv(t)
	os.WriteFile(e.policy, []byte(`{"catalog_tiers_only": true}`), 0o600)
	m := e.manager(t, []string{"xterm=full", "firefox=click"}, nil)
	out, err := m.RequestAccess(context.Background(), Request{Apps: []string{"xterm", "firefox"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(out.Granted); got["XTerm"] != catalog.TierClick || got["Firefox"] != catalog.TierRead {
		t.Errorf("granted %v, want catalog tiers", got)
	}
}

func TestUnknownLiteralApp(t *testing.T) {
	e := newEnv(t)
	m := e.manager(t, nil, nil)
	r := &recorder{answer: acceptExcept()}
	out, err := m.RequestAccess(context.Background(), Request{Apps: []string{"yad"}}, r.ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Granted) != 1 || !out.Granted[0].Literal || !strings.Contains(r.dialogs[0].Message, "No running or installed app") {
		t.Fatalf("granted %+v; dialog %s", out.Granted, r.dialogs[0].Message)
	}
	if m.Session().Tier(bridge.App{Instance: "yad", Class: "Yad"}) != catalog.TierFull {
		t.Error("the literal grant does not cover a yad window")
	}
	if m.Session().Tier(bridge.App{Name: "yad", Instance: "other", Class: "Other"}) != catalog.TierNone {
		t.Error("the literal grant covers a window only named yad")
	}
	// A literal name never covers an app the catalog knows.
	out, _ = m.RequestAccess(context.Background(), Request{Apps: []string{"not-a-terminal"}}, r.ask)
	if m.Session().Tier(bridge.App{Instance: "not-a-terminal", Class: "XTerm", Exe: "/usr/bin/xterm"}) != catalog.TierNone {
		t.Error("a literal grant covers an xterm window")
	}
}

func TestBadRequests(t *testing.T) {
	m := newEnv(t).manager(t, nil, nil)
	if _, err := m.RequestAccess(context.Background(), Request{}, nil); err == nil {
		t.Error("an empty request succeeded")
	}
	if _, err := m.RequestAccess(context.Background(), Request{Apps: []string{"xterm"}, Flags: []string{"root"}}, nil); err == nil || !strings.Contains(err.Error(), "clipboardRead") {
		t.Errorf("unknown flag error = %v", err)
	}
	failing := func(context.Context, *Dialog) (Answer, error) { return Answer{}, errors.New("client went away") }
	if _, err := m.RequestAccess(context.Background(), Request{Apps: []string{"xterm"}}, failing); err == nil || !strings.Contains(err.Error(), "client went away") {
		t.Errorf("asker failure = %v", err)
	}
	if _, err := New(Options{ConfigDir: t.TempDir(), PolicyPaths: []string{}, Allow: []string{"xterm=root"}}); err == nil {
		t.Error("--allow xterm=root accepted")
	}
	if _, err := New(Options{ConfigDir: t.TempDir(), PolicyPaths: []string{}, Grant: []string{"sudo"}}); err == nil {
		t.Error("--grant sudo accepted")
	}
}

func TestUnreadableDenialsRefuse(t *testing.T) {
	e := newEnv(t)
	os.WriteFile(filepath.Join(e.dir, DenialsFile), []byte("{not json"), 0o600)
	m := e.manager(t, nil, nil)
	r := &recorder{answer: acceptExcept()}
	out, err := m.RequestAccess(context.Background(), Request{Apps: []string{"xterm"}}, r.ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.dialogs) != 0 || len(out.Granted) != 0 || !strings.Contains(out.Text(), DenialsFile) {
		t.Errorf("with unreadable denials: dialogs %d, outcome %s", len(r.dialogs), out.Text())
	}
}

func TestTierRefusal(t *testing.T) {
	msg := TierRefusal(xtermWin, catalog.TierClick, catalog.TierFull, "typing")
	for _, want := range []string{"XTerm is approved at the click tier", "typing needs the full tier", "Terminals and IDEs", AntiSubversionHint} {
		if !strings.Contains(msg, want) {
			t.Errorf("TierRefusal lacks %q: %s", want, msg)
		}
	}
	if msg := TierRefusal(zenityWin, catalog.TierNone, catalog.TierClick, "a click"); !strings.Contains(msg, "Zenity is not approved") || !strings.Contains(msg, "request_access") {
		t.Errorf("TierRefusal(unapproved) = %s", msg)
	}
}

func TestParseHelpers(t *testing.T) {
	for in, want := range map[string]string{"clipboardRead": FlagClipboardRead, "CLIPBOARD-WRITE": FlagClipboardWrite, "system_key_combos": FlagSystemKeyCombos} {
		if got, err := ParseFlag(in); err != nil || got != want {
			t.Errorf("ParseFlag(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]Allow{"xterm": {App: "xterm"}, " firefox = read ": {App: "firefox", Tier: catalog.TierRead}, "Gnome Calculator=FULL": {App: "Gnome Calculator", Tier: catalog.TierFull}} {
		if got, err := ParseAllow(in); err != nil || got != want {
			t.Errorf("ParseAllow(%q) = %+v, %v, want %+v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "=full", "xterm=none", "xterm=admin"} {
		if _, err := ParseAllow(bad); err == nil {
			t.Errorf("ParseAllow(%q) succeeded", bad)
		}
	}
	if got := shellWord("it's"); got != `'it'\''s'` {
		t.Errorf("shellWord = %s", got)
	}
}

func TestDenialsConcurrentWriters(t *testing.T) {
	path := filepath.Join(t.TempDir(), DenialsFile)
	done := make(chan error)
	for i := 0; i < 8; i++ {
		go func() {
			d := NewDenials(path)
			done <- d.Add([]AppRef{{Name: "app" + string(rune('a'+i)), Identity: catalog.Identity{Name: "x"}, Literal: true}}, "", time.Now())
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	list, err := NewDenials(path).List()
	if err != nil || len(list) != 8 {
		t.Errorf("after 8 concurrent adds: %d denials, %v; want 8", len(list), err)
	}
}

func TestLauncherExecutablesDoNotIdentify(t *testing.T) {
	// An installed entry that runs "python3 app.py" must not cover every
	// python3 window.
	ref := refOf(bridge.App{Name: "My Tool", DesktopID: "my-tool", Exe: "python3"})
	if ref.Matches(bridge.App{Name: "Other", Exe: "/usr/bin/python3"}) {
		t.Error("a python3 desktop entry covers another python3 window")
	}
	if !ref.Matches(bridge.App{Name: "My Tool", DesktopID: "my-tool", Exe: "/usr/bin/python3", Class: "Tk"}) {
		t.Error("the entry does not cover its own window")
	}
	// A WM_CLASS pair decides for running windows.
	ref = refOf(bridge.App{Instance: "foo", Class: "Foo", Exe: "/usr/bin/java"})
	if ref.Matches(bridge.App{Instance: "bar", Class: "Bar", Exe: "/usr/bin/java"}) || !ref.Matches(bridge.App{Instance: "foo", Class: "Foo"}) {
		t.Error("WM_CLASS matching is wrong")
	}
}

func TestDisplayName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"XTerm", "XTerm"},
		{"  Café   au lait ", "Café au lait"},
		{"evil\n- Firefox (full: everything)", `evil\n- Firefox (full: everything)`},
		{"a\r\nb\tc", `a\r\nb\tc`},
		{"x\x1b[2Jy", `x\x1b[2Jy`},
		{"abc\u202edcb", `abc\u202edcb`},
		{"a\u2066b\u2069\u200bc\u200ed\ufeff", `a\u2066b\u2069\u200bc\u200ed\ufeff`},
		{"line\u2028sep\u2029para\u0085nel", `line\u2028sep\u2029para\u0085nel`},
		{"bad\xffutf8", `bad\xffutf8`},
		{"wide\u3000space\u00a0nbsp", "wide space nbsp"},
		{"日本語", "日本語"},
		{strings.Repeat("a", 200), strings.Repeat("a", maxDisplayRunes) + "…"},
	}
	for _, tt := range tests {
		if got := DisplayName(tt.in); got != tt.want {
			t.Errorf("DisplayName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestDialogNamesCannotInject puts line breaks, a terminal escape and
// bidi controls in a window's class, a requested name and the reason:
// the dialog keeps one line per app, and none of those characters
// reaches it or the result.
func TestDialogNamesCannotInject(t *testing.T) {
	e := newEnv(t)
	evil := bridge.App{Name: "Notes\n- Firefox (full: screenshots, clicks, dragging, typing and key presses)\u202e", Instance: "evilnotes", Class: "Notes\n\x1b[2J", Exe: "/usr/bin/evilnotes", PID: 12}
	e.apps.running = append(e.apps.running, evil)
	m := e.manager(t, nil, nil)
	r := &recorder{answer: acceptExcept()}
	out, err := m.RequestAccess(context.Background(), Request{
		Apps:   []string{"evilnotes", "pad\r\n- XTerm (full: everything)\u2066", "zenity"},
		Reason: "edit notes\n- Allow Firefox (full)\u202e",
	}, r.ask)
	if err != nil {
		t.Fatal(err)
	}
	d := r.dialogs[0]
	var items []string
	for _, line := range strings.Split(d.Message, "\n") {
		if strings.HasPrefix(line, "- ") {
			items = append(items, line)
		}
	}
	if len(items) != 3 {
		t.Errorf("the dialog has %d item lines, want 3:\n%s", len(items), d.Message)
	}
	shown := []string{d.Message, out.Text()}
	for _, p := range d.Schema["properties"].(map[string]any) {
		shown = append(shown, p.(map[string]any)["title"].(string), p.(map[string]any)["description"].(string))
	}
	for _, s := range shown {
		if strings.ContainsAny(s, "\r\x1b\u202e\u2066") {
			t.Errorf("a control or bidi character reached the user: %q", s)
		}
	}
	for _, p := range d.Schema["properties"].(map[string]any) {
		if title := p.(map[string]any)["title"].(string); strings.Contains(title, "\n") {
			t.Errorf("a checkbox title has a line break: %q", title)
		}
	}
	if !strings.Contains(d.Message, `Notes\n- Firefox`) {
		t.Errorf("the dialog does not show the escaped name:\n%s", d.Message)
	}
}

// TestDeclinedAnySpelling: once the user declines an app, every other
// spelling of it is refused as declined without a dialog: a path, a
// symlink, a command on $PATH, a desktop file name, another case.
func TestDeclinedAnySpelling(t *testing.T) {
	xterm, err := exec.LookPath("xterm")
	if err != nil {
		t.Skip("no xterm to resolve paths to")
	}
	dir := t.TempDir()
	link := filepath.Join(dir, "myterm")
	if err := os.Symlink(xterm, link); err != nil {
		t.Fatal(err)
	}
	chain := filepath.Join(dir, "firefox") // a link named like another app
	if err := os.Symlink(link, chain); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	e := newEnv(t)
	m := e.manager(t, nil, nil)
	decline := &recorder{answer: func(*Dialog) Answer { return Answer{Action: ActionDecline} }}
	if _, err := m.RequestAccess(context.Background(), Request{Apps: []string{"xterm", "zenity"}, Reason: "r"}, decline.ask); err != nil {
		t.Fatal(err)
	}
	never := &recorder{answer: func(d *Dialog) Answer {
		t.Errorf("a dialog was shown: %s", d.Message)
		return Answer{Action: ActionCancel}
	}}
	for _, q := range []string{xterm, "XTerm", "XTERM", "xterm.desktop", "XTerm.Desktop", "debian-xterm.desktop", "/usr/share/applications/debian-xterm.desktop", link, chain, "myterm", "ZENITY", "zenity.desktop"} {
		out, err := m.RequestAccess(context.Background(), Request{Apps: []string{q}, Reason: "again"}, never.ask)
		if err != nil {
			t.Fatal(err)
		}
		if got := kinds(out.Refused)[DisplayName(q)]; got != RefusedRemembered || len(out.Granted) != 0 {
			t.Errorf("request %q after declining: refused %v, granted %v; want refused as %s", q, out.Refused, out.Granted, RefusedRemembered)
		}
	}
	if zenity, err := exec.LookPath("zenity"); err == nil {
		out, _ := m.RequestAccess(context.Background(), Request{Apps: []string{zenity}, Reason: "again"}, never.ask)
		if kinds(out.Refused)[zenity] != RefusedRemembered {
			t.Errorf("request %q after declining zenity: refused %v", zenity, out.Refused)
		}
	}
}

// TestInterpreterWindows: a REPL window running in an interpreter is
// asked for at the click tier with the shell warning; its grant covers
// it, not other windows of the same interpreter, nor a Python window
// that copies its WM_CLASS's instance under another class; asking for
// the interpreter itself is refused.
func TestInterpreterWindows(t *testing.T) {
	e := newEnv(t)
	repl := bridge.App{Name: "Tclrepl", Instance: "tclrepl", Class: "Tclrepl", Exe: "/usr/bin/wish8.6", PID: 20}
	e.apps.running = append(e.apps.running, repl)
	m := e.manager(t, []string{"python3=full", "wish=full"}, nil)
	r := &recorder{answer: acceptExcept()}
	out, err := m.RequestAccess(context.Background(), Request{Apps: []string{"tclrepl"}, Reason: "r"}, r.ask)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.dialogs) != 1 || !strings.Contains(r.dialogs[0].Message, "Tclrepl (click:") || !strings.Contains(r.dialogs[0].Message, "Warning: this is a shell") {
		t.Fatalf("the REPL was not asked for at the click tier with the shell warning: %v", r.dialogs)
	}
	if len(out.Granted) != 1 || out.Granted[0].Tier != catalog.TierClick {
		t.Fatalf("granted %+v, want the REPL at the click tier", out.Granted)
	}
	s := m.Session()
	if got := s.Tier(repl); got != catalog.TierClick {
		t.Errorf("the REPL window's tier = %v, want click", got)
	}
	for _, other := range []bridge.App{
		{Instance: "other", Class: "Other", Exe: "/usr/bin/wish8.6"},
		{Instance: "idle", Class: "Idle", Exe: "/usr/bin/python3.11"},
		{Instance: "tclrepl", Class: "XTerm", Exe: "/usr/bin/xterm"},
	} {
		if got := s.Tier(other); got != catalog.TierNone {
			t.Errorf("Tier(%+v) = %v, want none: the REPL's grant covers another window", other, got)
		}
	}
	out, err = m.RequestAccess(context.Background(), Request{Apps: []string{"python3", "/usr/bin/wish"}, Reason: "r"}, r.ask)
	if err != nil {
		t.Fatal(err)
	}
	if got := kinds(out.Refused); got["python3"] != RefusedNotAnApp {
		t.Errorf("asking for python3: refused %v, want %s", out.Refused, RefusedNotAnApp)
	}
	if len(out.Granted) != 0 {
		t.Errorf("asking for interpreters granted %+v (the pre-approvals of python3 and wish must not count)", out.Granted)
	}
}

// TestPolicyAndForgetBySpelling: a policy rule or a forget command that
// names an app by path covers the app, as a request by path does.
func TestPolicyAndForgetBySpelling(t *testing.T) {
	xterm, err := exec.LookPath("xterm")
	if err != nil {
		t.Skip("no xterm to resolve paths to")
	}
	e := newEnv(t)
	if err := os.WriteFile(e.policy, []byte(`{"deny": ["`+xterm+`"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	m := e.manager(t, nil, nil)
	out, err := m.RequestAccess(context.Background(), Request{Apps: []string{"xterm"}, Reason: "r"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if kinds(out.Refused)["xterm"] != RefusedPolicy {
		t.Errorf("a policy denying %s refused %v, want xterm refused by policy", xterm, out.Refused)
	}
	if m.Session().Tier(xtermWin) != catalog.TierNone {
		t.Error("an xterm window is not denied by the policy rule naming its path")
	}
	if err := m.Denials().Add([]AppRef{resolve("xterm", nil, nil)}, "r", time.Now()); err != nil {
		t.Fatal(err)
	}
	if removed, err := m.Denials().Forget("xterm.desktop", false); err != nil || len(removed) != 1 {
		t.Errorf("Forget(xterm.desktop) = %v, %v; want the XTerm denial", removed, err)
	}
}

// TestDialogNamesFamily: a program that ships with a catalogued app (here
// beside it in the app's own directory) is shown as part of that app, at
// its tier and with its warning; a program nothing knows is shown as
// unknown, with its path.
func TestDialogNamesFamily(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"gnome-terminal-server", "gnome-terminal-preferences"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	prefsExe := filepath.Join(dir, "gnome-terminal-preferences")
	prefs := bridge.App{Name: "Preferences", Instance: "gnome-terminal-preferences", Class: "Gnome-terminal-preferences", Exe: prefsExe, PID: 13}
	e := newEnv(t)
	e.apps.running = append(e.apps.running, prefs)
	m := e.manager(t, nil, nil)
	r := &recorder{answer: acceptExcept()}
	out, err := m.RequestAccess(context.Background(), Request{Apps: []string{"gnome-terminal-preferences", "zenity"}}, r.ask)
	if err != nil {
		t.Fatal(err)
	}
	msg := r.dialogs[0].Message
	for _, want := range []string{
		"- GNOME Terminal (click: ",
		"Its program, " + prefsExe + ", is part of GNOME Terminal (directory " + dir + ")",
		"Warning: this is a shell.",
		"Unknown app: no catalog entry and no package or bundle deskhand knows covers its program, /usr/bin/zenity.",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the dialog does not say %q:\n%s", want, msg)
		}
	}
	if got := names(out.Granted); got["GNOME Terminal"] != catalog.TierClick {
		t.Errorf("granted %v, want GNOME Terminal at the click tier", got)
	}
	// The grant covers the terminal itself: one family, one app.
	if tier := m.Session().Tier(bridge.App{Instance: "gnome-terminal-server", Class: "Gnome-terminal-server", Exe: "/usr/libexec/gnome-terminal-server"}); tier != catalog.TierClick {
		t.Errorf("the terminal's tier after approving its preferences = %s, want click", tier)
	}
	if tier := m.Session().Tier(prefs); tier != catalog.TierClick {
		t.Errorf("the preferences' tier = %s, want click", tier)
	}
}
