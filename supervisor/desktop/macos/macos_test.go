package macos

import (
	"context"
	"encoding/json"
	"errors"
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
)

// fakeClient starts the real bridge client on the fake macOS helper (this
// test binary), with env for its behaviour.
func fakeClient(t *testing.T, env ...string) *bridge.Client {
	t.Helper()
	c := bridge.New(bridge.Options{Path: os.Args[0], Env: append([]string{fakeHelperEnv + "=1"}, env...), MaxRestarts: 1})
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestOpenNeverStartsAVirtualDisplay(t *testing.T) {
	for _, flag := range []string{"", "auto", "off"} {
		d, err := Open(context.Background(), Options{VirtualDisplay: flag})
		if err != nil {
			t.Fatalf("Open(--virtual-display %q): %v", flag, err)
		}
		if d.Display() != DisplayName || d.HelperEnv() != nil {
			t.Errorf("Open(%q): display %q, helper env %q; want %q and none", flag, d.Display(), d.HelperEnv(), DisplayName)
		}
	}
	_, err := Open(context.Background(), Options{VirtualDisplay: "1280x800"})
	if err == nil || !strings.Contains(err.Error(), "no private virtual desktop") || !strings.Contains(err.Error(), "--virtual-display auto") {
		t.Fatalf("Open(--virtual-display 1280x800) = %v, want a refusal that says to use auto", err)
	}
}

// TestDisplayGateNamesThePane: gate 2 asks the helper's permissions and
// refuses with the exact System Settings pane of each missing one.
func TestDisplayGateNamesThePane(t *testing.T) {
	d, err := Open(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		perms         string
		want, wantNot []string
	}{
		{"screen_recording,accessibility", nil, nil},
		{"", []string{ScreenRecordingPane, AccessibilityPane, "Screen Recording is not granted", "Accessibility is not granted"}, nil},
		{"accessibility", []string{ScreenRecordingPane, "restart deskhand"}, []string{AccessibilityPane}},
		{"screen_recording", []string{AccessibilityPane}, []string{ScreenRecordingPane}},
		{"no-session", []string{"logged-in desktop session", "not over ssh"}, nil},
	}
	for _, tt := range tests {
		gate := d.DisplayGate(fakeClient(t, fakePermsEnv+"="+tt.perms))
		err := gate(context.Background())
		if tt.want == nil {
			if err != nil {
				t.Errorf("gate with %q granted: %v", tt.perms, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("gate with %q granted: no refusal", tt.perms)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("gate with %q granted = %q, want it to contain %q", tt.perms, err, w)
			}
		}
		for _, w := range tt.wantNot {
			if strings.Contains(err.Error(), w) {
				t.Errorf("gate with %q granted = %q, which names %q, a pane already granted", tt.perms, err, w)
			}
		}
	}
	if ScreenRecordingPane != "x-apple.systempreferences:com.apple.preference.security?Privacy_ScreenCapture" ||
		AccessibilityPane != "x-apple.systempreferences:com.apple.preference.security?Privacy_Accessibility" {
		t.Fatalf("pane URLs changed: %q, %q", ScreenRecordingPane, AccessibilityPane)
	}
}

// TestCaptureIncludesOnlyApprovedApps: a screenshot asks the helper for
// the approved apps' windows only (by the grant's bundle id, and by the
// running apps a name-only grant covers); an unapproved app (Terminal) is
// never in include_apps, and with nothing approved nothing is included.
func TestCaptureIncludesOnlyApprovedApps(t *testing.T) {
	log := filepath.Join(t.TempDir(), "captures.jsonl")
	c := fakeClient(t, fakePermsEnv+"=screen_recording,accessibility", fakeLogEnv+"="+log)
	sess := consent.NewSession()
	capture := ApprovedCapture(c, sess)
	req := bridge.CaptureRequest{Format: bridge.FormatPNG, Mask: []uint32{99}}
	if _, err := capture(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	sess.Add([]consent.Grant{
		{AppRef: consent.AppRef{Name: "Editor", Identity: catalog.Identity{BundleID: "com.example.Editor"}}, Tier: catalog.TierFull},
		{AppRef: consent.AppRef{Name: "com.example.Notes", Literal: true}, Tier: catalog.TierRead},
	}, consent.Flags{})
	if _, err := capture(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 {
		t.Fatalf("helper saw %d captures, want 2: %q", len(lines), lines)
	}
	type params struct {
		IncludeApps *[]string `json:"include_apps"`
		Mask        []uint32  `json:"mask"`
	}
	var sent []params
	for _, l := range lines {
		var s params
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatal(err)
		}
		sent = append(sent, s)
	}
	if sent[0].IncludeApps == nil || len(*sent[0].IncludeApps) != 0 {
		t.Errorf("capture before any approval sent include_apps %v, want [] (no app at all)", sent[0].IncludeApps)
	}
	got := *sent[1].IncludeApps
	slices.Sort(got)
	if !slices.Equal(got, []string{"com.example.Editor", "com.example.Notes"}) {
		t.Errorf("capture sent include_apps %q, want the two approved apps only", got)
	}
	if !slices.Equal(sent[1].Mask, []uint32{99}) {
		t.Errorf("capture sent mask %v, want the gates' [99] kept", sent[1].Mask)
	}
}

// recorder is a fake Options.Run: it records each command and answers
// for osascript and open as macOS would.
type recorder struct {
	mu       sync.Mutex
	calls    [][]string
	launched string // file the fake helper reads: the app opened a window
}

func (r *recorder) run(_ context.Context, name string, args ...string) ([]byte, error) {
	r.mu.Lock()
	r.calls = append(r.calls, append([]string{name}, args...))
	r.mu.Unlock()
	switch {
	case name == "/usr/bin/osascript" && slices.Contains(args, "id of application (item 1 of argv)"):
		if args[len(args)-1] == "Notes" {
			return []byte("com.example.Notes\n"), nil
		}
		return nil, errors.New("exit status 1: Can't get application")
	case name == "/usr/bin/osascript":
		return nil, nil
	case name == "/usr/bin/open" && len(args) == 2 && args[0] == "-b":
		if args[1] == "com.example.Notes" {
			return nil, os.WriteFile(r.launched, nil, 0o600)
		}
		return nil, nil
	}
	return nil, errors.New("unexpected command " + name)
}

// TestLaunchByBundleID: open_application resolves a name to its bundle id
// through Launch Services, opens it with open -b, and reports the new
// window the helper lists; a name no app has is a clear error.
func TestLaunchByBundleID(t *testing.T) {
	rec := &recorder{launched: filepath.Join(t.TempDir(), "launched")}
	c := fakeClient(t, fakeLaunchedEnv+"="+rec.launched)
	d, err := Open(context.Background(), Options{Run: rec.run, LaunchTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	got, err := d.Launcher(c).OpenApplication(context.Background(), "Notes")
	if err != nil {
		t.Fatal(err)
	}
	if got.Window == nil || got.Window.ID != 15 || got.Window.App.BundleID != "com.example.Notes" {
		t.Fatalf("launched window = %+v, want the new Notes window 15 (not the old one, 14)", got.Window)
	}
	if !slices.Equal(got.Exec, []string{"/usr/bin/open", "-b", "com.example.Notes"}) {
		t.Errorf("Exec = %q", got.Exec)
	}
	if app, err := d.ResolveApp("com.example.Editor"); err != nil || app.BundleID != "com.example.Editor" {
		t.Errorf("ResolveApp(a bundle id) = %+v, %v", app, err)
	}
	// A name goes to osascript as an argument, never into the script.
	evil := `Notes" & (do shell script "touch /tmp/owned") & "`
	if _, err := d.ResolveApp(evil); err == nil || !strings.Contains(err.Error(), "no installed app") {
		t.Errorf("ResolveApp(%q) = %v, want no such app", evil, err)
	}
	for _, call := range rec.calls {
		for _, a := range call[1 : len(call)-1] {
			if strings.Contains(a, "touch") {
				t.Errorf("the app name reached the script: %q", call)
			}
		}
	}
	if _, err := d.Launcher(c).OpenApplication(context.Background(), "No Such App"); err == nil || !strings.Contains(err.Error(), `no installed app is called "No Such App"`) {
		t.Errorf("OpenApplication of an app that does not exist = %v", err)
	}
}

func TestNotifyPassesTextAsArguments(t *testing.T) {
	rec := &recorder{}
	d, err := Open(context.Background(), Options{Run: rec.run})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Notify(context.Background(), "deskhand stopped", `body with "quotes"`); err != nil {
		t.Fatal(err)
	}
	call := rec.calls[0]
	if call[0] != "/usr/bin/osascript" || call[len(call)-2] != "deskhand stopped" || call[len(call)-1] != `body with "quotes"` {
		t.Fatalf("notification ran %q", call)
	}
	// The pasteboard outlives the helper: nothing to keep.
	if err := d.KeepClipboard(context.Background(), "", cleanup.Stash{Clipboard: cleanup.Clip{Text: "x", Had: true}}); err != nil {
		t.Fatal(err)
	}
}

// TestDoctorReportsInputMonitoring: the helper's permissions answer says
// whether Input Monitoring is granted, doctor's check names its pane and
// what works without it, and the display gate never asks for it.
func TestDoctorReportsInputMonitoring(t *testing.T) {
	d, err := Open(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	without := fakeClient(t, fakePermsEnv+"=screen_recording,accessibility")
	if err := d.DisplayGate(without)(ctx); err != nil {
		t.Fatalf("gate without Input Monitoring refused: %v; only the Escape watch needs it", err)
	}
	err = CheckInputMonitoring(ctx, without)
	if err == nil {
		t.Fatal("CheckInputMonitoring without Input Monitoring: no report")
	}
	for _, want := range []string{"Input Monitoring is not granted", "Escape", "everything else works",
		"System Settings > Privacy & Security > Input Monitoring", InputMonitoringPane, "restart deskhand"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CheckInputMonitoring = %q, want it to contain %q", err, want)
		}
	}
	if _, err := without.Permissions(ctx, bridge.PermissionInputMonitoring); err == nil {
		t.Error("permissions require input_monitoring without it: no permission_denied")
	}

	with := fakeClient(t, fakePermsEnv+"=screen_recording,accessibility,input_monitoring")
	if err := CheckInputMonitoring(ctx, with); err != nil {
		t.Errorf("CheckInputMonitoring with Input Monitoring granted: %v", err)
	}
	if p, err := with.Permissions(ctx, bridge.PermissionInputMonitoring); err != nil || p.InputMonitoring == nil || !*p.InputMonitoring {
		t.Errorf("permissions require input_monitoring with it granted = %+v, %v", p, err)
	}

	// A helper from before input_monitoring says nothing about it: that is
	// reported as unknown, not as a missing grant.
	old := fakeClient(t, fakePermsEnv+"=screen_recording,accessibility,input_monitoring", fakeOldEnv+"=1")
	if err := CheckInputMonitoring(ctx, old); err == nil || !strings.Contains(err.Error(), "too old to report") {
		t.Errorf("CheckInputMonitoring with an old helper = %v, want it to say the helper is too old", err)
	}
	if InputMonitoringPane != "x-apple.systempreferences:com.apple.preference.security?Privacy_ListenEvent" {
		t.Fatalf("pane URL changed: %q", InputMonitoringPane)
	}
}
