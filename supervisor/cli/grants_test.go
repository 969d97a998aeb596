package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/consent"
)

// grants runs `deskhand grants args...` against dir and returns stdout,
// stderr and the exit status.
func grants(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	t.Setenv(consent.PolicyEnv, filepath.Join(dir, "policy.json"))
	var out, errOut bytes.Buffer
	code := Main(context.Background(), append([]string{"grants", "--config-dir", dir}, args...), Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return out.String(), errOut.String(), code
}

func TestGrantsAllowDisallow(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := grants(t, dir, "allow", "xterm", "zenity=full", "firefox=click", "--grant", "clipboardRead,clipboard-write")
	if code != 0 {
		t.Fatalf("grants allow: %d %s", code, errOut)
	}
	for _, want := range []string{"pre-approved: xterm (XTerm at its catalog tier, click)", "pre-approved: zenity=full (full tier)", "firefox=click (Firefox at click, above its catalog tier read)", "pre-granted flag: clipboardWrite", "restart the MCP server"} {
		if !strings.Contains(out, want) {
			t.Errorf("grants allow output lacks %q:\n%s", want, out)
		}
	}
	pre, err := consent.LoadPreapproval(filepath.Join(dir, consent.PreapprovalFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(pre.Allow, " ") != "xterm zenity=full firefox=click" || strings.Join(pre.Grant, " ") != "clipboardRead clipboardWrite" {
		t.Errorf("pre-approval file = %+v", pre)
	}
	// Allowing an app again replaces its entry, under any of its names.
	if _, errOut, code := grants(t, dir, "allow", "debian-xterm=read"); code != 0 {
		t.Fatal(errOut)
	}
	if _, errOut, code := grants(t, dir, "disallow", "Zenity", "--grant", "clipboardRead"); code != 0 {
		t.Fatal(errOut)
	}
	pre, _ = consent.LoadPreapproval(filepath.Join(dir, consent.PreapprovalFile))
	if strings.Join(pre.Allow, " ") != "firefox=click debian-xterm=read" || strings.Join(pre.Grant, " ") != "clipboardWrite" {
		t.Errorf("after re-allow and disallow: %+v", pre)
	}
	// A server reads the file.
	m, err := consent.New(consent.Options{ConfigDir: dir, PolicyPaths: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if allow, flags := m.Preapproved(); len(allow) != 2 || allow[1] != (consent.Allow{App: "debian-xterm", Tier: catalog.TierRead}) || !flags.ClipboardWrite {
		t.Errorf("Preapproved() = %v, %+v", allow, flags)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"allow", "spotify"}, "never operates media"},
		{[]string{"allow", "xterm=admin"}, "unknown tier"},
		{[]string{"allow", "--grant", "root"}, "unknown grant flag"},
		{[]string{"allow"}, "needs apps"},
		{[]string{"frobnicate"}, "unknown subcommand"},
		{[]string{}, "name a subcommand"},
	} {
		_, errOut, code := grants(t, dir, tc.args...)
		if code == 0 || !strings.Contains(errOut, tc.want) {
			t.Errorf("grants %v = %d %q, want a failure containing %q", tc.args, code, errOut, tc.want)
		}
	}
}

func TestGrantsListAndForget(t *testing.T) {
	dir := t.TempDir()
	d := consent.NewDenials(filepath.Join(dir, consent.DenialsFile))
	ff, fid, _ := catalog.Find("firefox")
	if err := d.Add([]consent.AppRef{{Name: ff.Name, Identity: fid}, {Name: "yad", Identity: catalog.Identity{Name: "yad"}, Literal: true}}, "browse the web", time.Now()); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "policy.json"), []byte(`{"deny": ["kate"], "deny_flags": ["systemKeyCombos"]}`), 0o600)
	grants(t, dir, "allow", "xterm")
	out, errOut, code := grants(t, dir, "list")
	if code != 0 {
		t.Fatalf("grants list: %s", errOut)
	}
	for _, want := range []string{"Pre-approved (" + filepath.Join(dir, consent.PreapprovalFile), "xterm", "Declined", "Firefox", `(asked for: "browse the web")`, "yad", "denies apps: kate", "denies flags: systemKeyCombos", "media and reading apps"} {
		if !strings.Contains(out, want) {
			t.Errorf("grants list lacks %q:\n%s", want, out)
		}
	}
	out, errOut, code = grants(t, dir, "forget", "org.mozilla.firefox")
	if code != 0 || !strings.Contains(out, "forgot: Firefox") {
		t.Errorf("grants forget org.mozilla.firefox = %d %q %q", code, out, errOut)
	}
	if _, errOut, code := grants(t, dir, "forget", "firefox"); code == 0 || !strings.Contains(errOut, "not among the declined apps") {
		t.Errorf("forgetting twice = %d %q", code, errOut)
	}
	out, _, code = grants(t, dir, "forget", "--all")
	if code != 0 || !strings.Contains(out, "forgot: yad") {
		t.Errorf("grants forget --all = %d %q", code, out)
	}
	if list, _ := d.List(); len(list) != 0 {
		t.Errorf("denials after forget --all: %v", list)
	}
	if _, errOut, code := grants(t, dir, "forget"); code == 0 || !strings.Contains(errOut, "--all") {
		t.Errorf("grants forget without apps = %d %q", code, errOut)
	}
}

func TestGrantsListsInHelp(t *testing.T) {
	var out bytes.Buffer
	Main(context.Background(), []string{"help"}, Stdio{In: strings.NewReader(""), Out: &out, Err: &bytes.Buffer{}})
	if !strings.Contains(out.String(), "grants") {
		t.Errorf("deskhand help does not list grants:\n%s", out.String())
	}
}
