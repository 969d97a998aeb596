//go:build unix

package supervisor

// End-to-end tests of `deskhand install`, `deskhand doctor` and the helper
// lookup: a deskhand binary built to trust the test signing key (through
// the link-time manifest.extraTrustedKeys) installs the real helper from a
// loopback release server into a private HOME, and the commands that
// follow find and use it.

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/installer/manifest"
	"github.com/deskhand/deskhand/installer/releasetest"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

var (
	trustingOnce sync.Once
	trustingBin  string
	trustingErr  error
)

// trustingDeskhand builds cmd/deskhand trusting releasetest.Current.
func trustingDeskhand(t *testing.T) string {
	t.Helper()
	trustingOnce.Do(func() {
		root, err := desktoptest.RepoRoot()
		if err != nil {
			trustingErr = err
			return
		}
		// One place per user, where each run removes what runs more than
		// an hour old left, so binaries do not pile up.
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("deskhand-install-e2e-%d", os.Getuid()))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			trustingErr = err
			return
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Hour {
				os.Remove(filepath.Join(dir, e.Name()))
			}
		}
		trustingBin = filepath.Join(dir, fmt.Sprintf("deskhand-%d", os.Getpid()))
		key := manifest.FormatPublicKey(releasetest.Current.Public().(ed25519.PublicKey))
		cmd := exec.Command("go", "build", "-ldflags", "-X github.com/deskhand/deskhand/installer/manifest.extraTrustedKeys="+key, "-o", trustingBin, "./cmd/deskhand")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			trustingErr = err
			t.Logf("%s", out)
		}
	})
	if trustingErr != nil {
		t.Fatalf("building deskhand: %v", trustingErr)
	}
	return trustingBin
}

type installEnv struct {
	t    *testing.T
	bin  string
	home string
	env  []string
	srv  *releasetest.Server
}

func newInstallEnv(t *testing.T, display string) *installEnv {
	bin := trustingDeskhand(t)
	helper := desktoptest.HelperPath(t)
	home := t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "DESKHAND_HELPER", "DISPLAY", "HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "DESKHAND_MANIFEST_URL", "WAYLAND_DISPLAY":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"), "XDG_STATE_HOME="+filepath.Join(home, "state"))
	if display != "" {
		env = append(env, "DISPLAY="+display)
	}
	e := &installEnv{t: t, bin: bin, home: home, env: env, srv: releasetest.NewServer(t)}
	archive, files, hv, protos := releasetest.RealHelper(t, helper)
	for _, v := range []string{"1.0.0", "1.1.0"} {
		r := releasetest.Sign(t, releasetest.Spec{
			Version: v, Archive: archive, Files: files, HelperVersion: hv, Protocols: protos,
			URLs:   []string{e.srv.At("/helper-" + v + ".tar.gz")},
			Issued: time.Now().Add(-time.Hour), Expires: time.Now().Add(24 * time.Hour),
		})
		e.srv.Publish("/"+v+"/manifest.json", r)
	}
	return e
}

// run runs deskhand with args and extra environment, returning its exit
// status, stdout and stderr.
func (e *installEnv) run(extraEnv []string, args ...string) (int, string, string) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.bin, args...)
	cmd.Env = append(append([]string{}, e.env...), extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			e.t.Fatalf("running deskhand %v: %v", args, err)
		}
		code = ee.ExitCode()
	}
	return code, stdout.String(), stderr.String()
}

func (e *installEnv) mustRun(args ...string) string {
	e.t.Helper()
	code, out, errOut := e.run(nil, args...)
	if code != 0 {
		e.t.Fatalf("deskhand %v exited %d:\n%s%s", args, code, out, errOut)
	}
	return out
}

func TestInstallCommandAndServe(t *testing.T) {
	d := desktoptest.Start(t, desktoptest.Options{})
	e := newInstallEnv(t, d.Display())

	out := e.mustRun("install", "--manifest-url", e.srv.At("/1.0.0/manifest.json"))
	if !strings.Contains(out, "installed helper 1.0.0") {
		t.Errorf("install printed %q, want it to name version 1.0.0", out)
	}
	if out = e.mustRun("install", "--manifest-url", e.srv.At("/1.0.0/manifest.json")); !strings.Contains(out, "already installed") {
		t.Errorf("second install printed %q, want already installed", out)
	}

	// The installed helper is found with no further step.
	out = e.mustRun("helper", "displays")
	if !strings.Contains(out, `"displays"`) || !strings.Contains(out, `"primary": true`) {
		t.Errorf("helper displays with the installed helper printed %q", out)
	}

	// deskhand serve uses it too: initialize and tools/list over MCP.
	cmd := exec.Command(e.bin, "serve", "--virtual-display", "off", "--state-dir", t.TempDir())
	cmd.Env = e.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "deskhand-install-e2e", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("starting deskhand serve: %v\n%s", err, stderr.String())
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("tools/list = %v, %v\n%s", tools, err, stderr.String())
	}
	cs.Close()
	t.Logf("serve with the installed helper lists %d tools", len(tools.Tools))

	// Upgrade, roll back.
	if out = e.mustRun("install", "--manifest-url", e.srv.At("/1.1.0/manifest.json")); !strings.Contains(out, "installed helper 1.1.0") || !strings.Contains(out, "1.0.0 is kept") {
		t.Errorf("upgrade printed %q", out)
	}
	if out = e.mustRun("install", "--rollback"); !strings.Contains(out, "rolled back to helper 1.0.0") {
		t.Errorf("rollback printed %q", out)
	}
	// The rollback was deliberate; the 1.0.0 manifest is still below the
	// highest version accepted, so fetching it is refused.
	if code, _, errOut := e.run(nil, "install", "--manifest-url", e.srv.At("/1.0.0/manifest.json")); code != 1 || !strings.Contains(errOut, "older than one already accepted") {
		t.Errorf("install of a manifest below the highest accepted version exited %d: %s", code, errOut)
	}

	// doctor: everything needed works.
	code, out, errOut := e.run(nil, "doctor")
	if code != 0 {
		t.Errorf("doctor exited %d on a working setup:\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"ok    display", "ok    XTEST", "ok    helper", "installed 1.0.0", "ok    lock"} {
		if !strings.Contains(out, want) && !strings.Contains(out, strings.ReplaceAll(want, "installed ", "(installed version ")) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}

	// A helper modified after install is refused at launch.
	var helperPath string
	filepath.WalkDir(filepath.Join(e.home, "data", "deskhand", "helpers"), func(p string, de os.DirEntry, err error) error {
		if err == nil && de.Name() == "deskhand-helper" && strings.Contains(p, "1.0.0") {
			helperPath = p
		}
		return nil
	})
	f, err := os.OpenFile(helperPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("tampered"))
	f.Close()
	code, _, errOut = e.run(nil, "helper", "displays")
	if code == 0 || !strings.Contains(errOut, "modified after install") || !strings.Contains(errOut, "deskhand install") {
		t.Errorf("helper displays with a modified helper exited %d: %s; want a refusal that says to reinstall", code, errOut)
	}
	code, out, _ = e.run(nil, "doctor")
	if code == 0 || !strings.Contains(out, "FAIL") || !strings.Contains(out, "fix:") {
		t.Errorf("doctor with a modified helper exited %d:\n%s", code, out)
	}
}

func TestFreshMachineDownloadsOnFirstUse(t *testing.T) {
	d := desktoptest.Start(t, desktoptest.Options{})
	e := newInstallEnv(t, d.Display())
	code, out, errOut := e.run([]string{"DESKHAND_MANIFEST_URL=" + e.srv.At("/1.1.0/manifest.json")}, "helper", "handshake")
	if code != 0 || !strings.Contains(out, `"protocol_version"`) {
		t.Fatalf("helper handshake on a fresh machine exited %d:\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "installing the capture helper") {
		t.Errorf("no install progress on stderr: %s", errOut)
	}
	if _, err := os.Stat(filepath.Join(e.home, "data", "deskhand", "helpers", "1.1.0", "deskhand-helper")); err != nil {
		t.Errorf("the helper was not installed: %v", err)
	}
}

// TestDoctorWithoutDisplay: no DISPLAY and no helper: the display is
// fine (serve starts its own desktop), the missing helper is not.
func TestDoctorWithoutDisplay(t *testing.T) {
	e := newInstallEnv(t, "")
	code, out, _ := e.run([]string{"DESKHAND_VIRTUAL_DISPLAY=auto"}, "doctor")
	if code == 0 {
		t.Fatalf("doctor exited 0 without a helper:\n%s", out)
	}
	for _, want := range []string{"ok    display", "DISPLAY is not set", "its own private 1920x1080 desktop (Xvfb and openbox)", "FAIL  helper", "deskhand install"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
}

func TestBundledHelperChecksums(t *testing.T) {
	helper := desktoptest.HelperPath(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "deskhand")
	data, _ := os.ReadFile(trustingDeskhand(t))
	os.WriteFile(bin, data, 0o755)
	hdata, _ := os.ReadFile(helper)
	os.WriteFile(filepath.Join(dir, "deskhand-helper"), hdata, 0o755)
	e := newInstallEnv(t, "")
	e.bin = bin
	// No SHA256SUMS beside it: a development build, used with a note.
	if code, out, errOut := e.run(nil, "helper", "handshake"); code != 0 {
		t.Fatalf("helper beside the executable: exit %d %s%s", code, out, errOut)
	}
	sum, _ := hashHex(hdata)
	os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(sum+"  deskhand-helper\n"), 0o644)
	if code, out, errOut := e.run(nil, "helper", "handshake"); code != 0 {
		t.Fatalf("helper matching SHA256SUMS: exit %d %s%s", code, out, errOut)
	}
	os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(strings.Repeat("0", 64)+"  deskhand-helper\n"), 0o644)
	code, _, errOut := e.run(nil, "helper", "handshake")
	if code == 0 || !strings.Contains(errOut, "SHA256SUMS") {
		t.Errorf("helper not matching SHA256SUMS: exit %d, %s; want a refusal", code, errOut)
	}
}

func hashHex(b []byte) (string, error) {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// An MCP client that launches deskhand on a machine with no helper gets
// one installed on the first tool call that needs it, and sees the
// progress as MCP log notifications.
func TestServeDownloadsHelperOnFirstUse(t *testing.T) {
	d := desktoptest.Start(t, desktoptest.Options{})
	d.StartXterm(t, desktoptest.XtermOptions{Title: "first-use"})
	e := newInstallEnv(t, d.Display())

	cmd := exec.Command(e.bin, "serve", "--virtual-display", "off", "--state-dir", t.TempDir(), "--allow", "xterm=full")
	cmd.Env = append(append([]string{}, e.env...), "DESKHAND_MANIFEST_URL="+e.srv.At("/1.1.0/manifest.json"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var mu sync.Mutex
	var logs, progress []string
	client := mcp.NewClient(&mcp.Implementation{Name: "deskhand-first-use-e2e", Version: "1"}, &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, req *mcp.LoggingMessageRequest) {
			mu.Lock()
			defer mu.Unlock()
			logs = append(logs, fmt.Sprint(req.Params.Data))
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			if req.Params.ProgressToken == "first-use" {
				progress = append(progress, req.Params.Message)
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("starting deskhand serve: %v\n%s", err, stderr.String())
	}
	defer cs.Close()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
		t.Fatalf("logging/setLevel: %v", err)
	}
	helper := filepath.Join(e.home, "data", "deskhand", "helpers", "1.1.0", "deskhand-helper")
	if _, err := os.Stat(helper); err == nil {
		t.Fatalf("the helper was installed before any tool needed it")
	}
	for _, call := range []*mcp.CallToolParams{
		{Name: "request_access", Arguments: map[string]any{"apps": []string{"xterm"}, "reason": "test the first-use install"}},
		{Name: "screenshot", Arguments: map[string]any{}},
	} {
		call.SetProgressToken("first-use")
		res, err := cs.CallTool(ctx, call)
		if err != nil || res.IsError {
			t.Fatalf("%s = %v, %v\nserver log:\n%s", call.Name, resultText(res), err, stderr.String())
		}
	}
	if _, err := os.Stat(helper); err != nil {
		t.Errorf("the helper was not installed on first use: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.ContainsFunc(logs, func(s string) bool { return strings.Contains(s, "installing the capture helper") }) {
		t.Errorf("no install progress reached the client as log notifications; got %q", logs)
	}
	if !slices.ContainsFunc(progress, func(s string) bool { return strings.Contains(s, "installing the capture helper") }) {
		t.Errorf("no install progress reached the client as progress notifications of the call; got %q", progress)
	}
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return "<nil>"
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
