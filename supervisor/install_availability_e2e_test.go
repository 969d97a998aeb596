//go:build unix

package supervisor

// End-to-end tests of the installer's availability under attack, with the
// built deskhand (trusting the test key), a loopback release server and
// the real helper: a stalled primary, a damaged install record, a helper
// swapped or upgraded under a running serve, directories other users can
// write, and a symlinked lock.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/installer/releasetest"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// store is the private HOME's helper store.
func (e *installEnv) store() string { return filepath.Join(e.home, "data", "deskhand", "helpers") }

// publishWith signs the real helper as version with the given archive
// URLs and serves its manifest at /<version>/manifest.json.
func (e *installEnv) publishWith(version string, urls ...string) string {
	e.t.Helper()
	archive, files, hv, protos := releasetest.RealHelper(e.t, desktoptest.HelperPath(e.t))
	if len(urls) == 0 {
		urls = []string{e.srv.At("/helper-" + version + ".tar.gz")}
	}
	r := releasetest.Sign(e.t, releasetest.Spec{
		Version: version, Archive: archive, Files: files, HelperVersion: hv, Protocols: protos, URLs: urls,
		Issued: time.Now().Add(-time.Hour), Expires: time.Now().Add(24 * time.Hour),
	})
	return e.srv.Publish("/"+version+"/manifest.json", r)
}

// blackHoleHandler accepts a request and never answers.
func blackHoleHandler(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// A primary that accepts connections and never answers no longer holds
// the install until the overall timeout: the mirror is used, and the
// output names the primary and what it did. The same holds for the first
// archive URL inside a valid manifest.
func TestInstallFromMirrorWhenPrimaryStalls(t *testing.T) {
	e := newInstallEnv(t, "")
	e.srv.Handle("/stalled/manifest.json", blackHoleHandler)
	primary := e.srv.At("/stalled/manifest.json")
	code, out, errOut := e.run(nil, "install", "--stall-timeout", "2s", "--manifest-url", primary, "--manifest-url", e.srv.At("/1.0.0/manifest.json"))
	if code != 0 || !strings.Contains(out, "installed helper 1.0.0") {
		t.Fatalf("install with a black-hole primary exited %d:\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, primary) || !strings.Contains(errOut, "accepted the connection but sent no response") {
		t.Errorf("the log does not name the stalled primary %s and what it did:\n%s", primary, errOut)
	}

	e.srv.Handle("/stalled/helper.tar.gz", blackHoleHandler)
	stalled := e.srv.At("/stalled/helper.tar.gz")
	u := e.publishWith("1.2.0", stalled, e.srv.At("/helper-1.2.0.tar.gz"))
	code, out, errOut = e.run(nil, "install", "--stall-timeout", "2s", "--manifest-url", u)
	if code != 0 || !strings.Contains(out, "installed helper 1.2.0") {
		t.Fatalf("install with a stalled first archive URL exited %d:\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, stalled) || !strings.Contains(errOut, "sent no response") {
		t.Errorf("the log does not name the stalled archive URL %s:\n%s", stalled, errOut)
	}
	if out := e.mustRun("helper", "handshake"); !strings.Contains(out, `"protocol_version"`) {
		t.Errorf("helper handshake after the install printed %q", out)
	}
}

// doctor says a damaged active.json is fixed by `deskhand install`, and
// it is: install and --rollback rebuild it from what verifies on disk.
func TestInstallRepairsGarbageActiveRecord(t *testing.T) {
	e := newInstallEnv(t, "")
	e.mustRun("install", "--manifest-url", e.srv.At("/1.0.0/manifest.json"))
	e.mustRun("install", "--manifest-url", e.srv.At("/1.1.0/manifest.json"))
	record := filepath.Join(e.store(), "active.json")
	garbage := func() {
		if err := os.WriteFile(record, []byte("{\"version\": \x00garbage"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	garbage()
	code, _, errOut := e.run(nil, "helper", "handshake")
	if code == 0 || !strings.Contains(errOut, "deskhand install") {
		t.Fatalf("helper handshake over a garbage record exited %d: %s; want a refusal that says to run deskhand install", code, errOut)
	}
	_, out, _ := e.run(nil, "doctor")
	if !strings.Contains(out, "FAIL  installed") || !strings.Contains(out, "fix: run `deskhand install`") {
		t.Errorf("doctor over a garbage record does not send the user to deskhand install:\n%s", out)
	}

	code, out, errOut = e.run(nil, "install", "--manifest-url", e.srv.At("/1.1.0/manifest.json"))
	if code != 0 || !strings.Contains(out, "repaired the install record") {
		t.Fatalf("install over a garbage record exited %d:\n%s%s", code, out, errOut)
	}
	if out := e.mustRun("helper", "handshake"); !strings.Contains(out, `"protocol_version"`) {
		t.Errorf("helper handshake after the repair printed %q", out)
	}
	if _, out, _ = e.run(nil, "doctor"); !strings.Contains(out, "active 1.1.0, previous 1.0.0") {
		t.Errorf("doctor after the repair does not show 1.1.0 active with 1.0.0 kept:\n%s", out)
	}

	garbage()
	code, out, errOut = e.run(nil, "install", "--rollback")
	if code != 0 || !strings.Contains(out, "rolled back to helper 1.0.0") || !strings.Contains(out, "repaired") {
		t.Fatalf("install --rollback over a garbage record exited %d:\n%s%s", code, out, errOut)
	}
	if out := e.mustRun("helper", "handshake"); !strings.Contains(out, `"protocol_version"`) {
		t.Errorf("helper handshake after the rollback printed %q", out)
	}
}

// servedDeskhand is a deskhand serve connected to an MCP client, with
// access to xterm granted.
type servedDeskhand struct {
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	stderr *syncBuf
}

// syncBuf is serve's stderr, written by exec's copier while a test reads.
type syncBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func serveInstalled(t *testing.T, e *installEnv, ctx context.Context) *servedDeskhand {
	t.Helper()
	cmd := exec.Command(e.bin, "serve", "--virtual-display", "off", "--state-dir", t.TempDir(), "--allow", "xterm=full")
	cmd.Env = append(append([]string{}, e.env...), "DESKHAND_NO_DOWNLOAD=1")
	s := &servedDeskhand{cmd: cmd, stderr: &syncBuf{}}
	cmd.Stderr = s.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "deskhand-install-availability-e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err != nil {
		t.Fatalf("starting deskhand serve: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	s.cs = cs
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "request_access", Arguments: map[string]any{"apps": []string{"xterm"}, "reason": "test the installed helper"}})
	if err != nil || res.IsError {
		t.Fatalf("request_access = %v, %v", resultText(res), err)
	}
	return s
}

func (s *servedDeskhand) screenshot(ctx context.Context) (*mcp.CallToolResult, error) {
	return s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "screenshot", Arguments: map[string]any{}})
}

// helperChild waits for serve's running helper child and returns its pid
// and executable.
func (s *servedDeskhand) helperChild(t *testing.T) (int, string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir("/proc")
		for _, en := range entries {
			pid, err := strconv.Atoi(en.Name())
			if err != nil {
				continue
			}
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil {
				continue
			}
			// pid (comm) state ppid ...
			fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
			if len(fields) < 2 || fields[1] != strconv.Itoa(s.cmd.Process.Pid) {
				continue
			}
			exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
			if strings.Contains(exe, HelperName) {
				return pid, exe
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("deskhand serve (pid %d) has no running helper", s.cmd.Process.Pid)
	return 0, ""
}

// killHelper SIGKILLs serve's helper and waits until it is gone.
func (s *servedDeskhand) killHelper(t *testing.T) {
	t.Helper()
	pid, _ := s.helperChild(t)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(stat), ") Z ") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("helper %d survived SIGKILL", pid)
}

// A helper swapped while serve runs is refused when the bridge restarts
// it after a crash, with a tool error that says what to do; the swapped
// file never runs (it would leave a marker).
func TestServeRefusesHelperSwappedUnderIt(t *testing.T) {
	d := desktoptest.Start(t, desktoptest.Options{})
	d.StartXterm(t, desktoptest.XtermOptions{Title: "swap"})
	e := newInstallEnv(t, d.Display())
	e.mustRun("install", "--manifest-url", e.srv.At("/1.0.0/manifest.json"))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	s := serveInstalled(t, e, ctx)
	if res, err := s.screenshot(ctx); err != nil || res.IsError {
		t.Fatalf("screenshot with the installed helper = %v, %v\n%s", resultText(res), err, s.stderr.String())
	}

	// The swap: a script that would work (it runs the real helper) and
	// leaves a marker, put in place atomically as an attacker would.
	installed := filepath.Join(e.store(), "1.0.0", HelperName)
	marker := filepath.Join(t.TempDir(), "swapped-helper-ran")
	script := fmt.Sprintf("#!/bin/sh\ntouch %s\nexec %s \"$@\"\n", marker, desktoptest.HelperPath(t))
	tmp := installed + ".swap"
	if err := os.WriteFile(tmp, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, installed); err != nil {
		t.Fatal(err)
	}
	s.killHelper(t)

	var refusal string
	for i := 0; i < 5 && refusal == ""; i++ {
		res, err := s.screenshot(ctx)
		if err != nil {
			t.Fatalf("screenshot after the swap: %v", err)
		}
		if !res.IsError {
			t.Fatalf("screenshot after the swap succeeded: the swapped helper was run\n%s", s.stderr.String())
		}
		if text := resultText(res); strings.Contains(text, "modified after install") {
			refusal = text
		} else {
			t.Logf("screenshot after the swap: %s", text)
		}
	}
	if refusal == "" {
		t.Fatalf("no tool error said the helper was modified after install\n%s", s.stderr.String())
	}
	if !strings.Contains(refusal, "deskhand install") || !strings.Contains(refusal, installed) {
		t.Errorf("the tool error %q does not name the helper and say to run deskhand install", refusal)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the swapped helper ran: %s exists", marker)
	}
}

// Two upgrades while serve runs do not remove the version its helper runs
// from; after its helper is killed it restarts with the new active
// version, and the next install removes the old one.
func TestServeSurvivesTwoUpgrades(t *testing.T) {
	d := desktoptest.Start(t, desktoptest.Options{})
	d.StartXterm(t, desktoptest.XtermOptions{Title: "upgrades"})
	e := newInstallEnv(t, d.Display())
	u12 := e.publishWith("1.2.0")
	e.mustRun("install", "--manifest-url", e.srv.At("/1.0.0/manifest.json"))
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	s := serveInstalled(t, e, ctx)
	if res, err := s.screenshot(ctx); err != nil || res.IsError {
		t.Fatalf("screenshot with 1.0.0 = %v, %v\n%s", resultText(res), err, s.stderr.String())
	}
	pid, exe := s.helperChild(t)
	if !strings.Contains(exe, "/1.0.0/") {
		t.Fatalf("serve runs %s, want the installed 1.0.0", exe)
	}
	// Started from the descriptor its hash was read from, which it keeps
	// as fd 3, not by its path.
	if fd3, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/3", pid)); fd3 != exe {
		t.Errorf("the helper's fd 3 is %q (%v), want its executable %s, the descriptor serve hashed", fd3, err, exe)
	}

	e.mustRun("install", "--manifest-url", e.srv.At("/1.1.0/manifest.json"))
	e.mustRun("install", "--manifest-url", u12)
	if _, err := os.Stat(filepath.Join(e.store(), "1.0.0", HelperName)); err != nil {
		t.Fatalf("two upgrades removed the version serve runs: %v", err)
	}
	s.killHelper(t)
	for i := range 3 {
		res, err := s.screenshot(ctx)
		if err == nil && !res.IsError {
			break
		}
		if i == 2 {
			t.Fatalf("screenshot after two upgrades and a helper crash = %v, %v\n%s", resultText(res), err, s.stderr.String())
		}
	}
	if _, exe := s.helperChild(t); !strings.Contains(exe, "/1.2.0/") {
		t.Errorf("after the restart serve runs %s, want the active 1.2.0", exe)
	}
	// 1.0.0 is free now: the next install removes it.
	e.mustRun("install", "--manifest-url", u12)
	if _, err := os.Stat(filepath.Join(e.store(), "1.0.0")); !os.IsNotExist(err) {
		t.Errorf("1.0.0 is still there after serve stopped using it: %v", err)
	}
}

// A helper in a directory other users can write is refused at launch,
// and doctor reports the same problem in the same words.
func TestWorldWritableDirectoryRefused(t *testing.T) {
	e := newInstallEnv(t, "")
	e.mustRun("install", "--manifest-url", e.srv.At("/1.0.0/manifest.json"))
	for _, dir := range []string{e.store(), filepath.Join(e.store(), "1.0.0")} {
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		code, _, errOut := e.run(nil, "helper", "handshake")
		problem := dir + " is writable by group or others (mode drwxrwxrwx): another user could swap the helper deskhand runs, so it is refused"
		if code == 0 || !strings.Contains(errOut, problem) || !strings.Contains(errOut, "chmod go-w "+dir) {
			t.Errorf("helper handshake with %s world-writable exited %d: %s; want a refusal saying %q", dir, code, errOut, problem)
		}
		code, out, _ := e.run(nil, "doctor")
		if code == 0 || !strings.Contains(out, problem) || !strings.Contains(out, "fix: `chmod go-w "+dir+"`") {
			t.Errorf("doctor with %s world-writable exited %d; want the launch refusal's words %q:\n%s", dir, code, problem, out)
		}
		os.Chmod(dir, 0o755)
	}
	if out := e.mustRun("helper", "handshake"); !strings.Contains(out, `"protocol_version"`) {
		t.Errorf("helper handshake after chmod go-w printed %q", out)
	}
}

// The installer's lock is not followed through a symbolic link: install
// refuses with a clear error and the link's target is untouched.
func TestSymlinkedLockRefused(t *testing.T) {
	e := newInstallEnv(t, "")
	e.mustRun("install", "--manifest-url", e.srv.At("/1.0.0/manifest.json"))
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o600)
	lock := filepath.Join(e.store(), ".lock")
	os.Remove(lock)
	if err := os.Symlink(victim, lock); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := e.run(nil, "install", "--manifest-url", e.srv.At("/1.1.0/manifest.json"))
	if code == 0 || !strings.Contains(errOut, "is a symbolic link") || !strings.Contains(errOut, "rm "+lock) {
		t.Errorf("install through a symlinked lock exited %d:\n%s%s; want a refusal saying to remove it", code, out, errOut)
	}
	if got, _ := os.ReadFile(victim); string(got) != "precious\n" {
		t.Errorf("the lock symlink's target now holds %q, want it untouched", got)
	}
	if _, out, _ = e.run(nil, "doctor"); !strings.Contains(out, "FAIL  lock") || !strings.Contains(out, "rm "+lock) {
		t.Errorf("doctor with a symlinked lock:\n%s", out)
	}
}

// FIFOs put in place of active.json and installer.json no longer hang
// doctor, install or --rollback: doctor says what is wrong and that
// install repairs it, and install does.
func TestFIFOsInStoreDoNotHang(t *testing.T) {
	e := newInstallEnv(t, "")
	e.mustRun("install", "--manifest-url", e.srv.At("/1.0.0/manifest.json"))
	e.mustRun("install", "--manifest-url", e.srv.At("/1.1.0/manifest.json"))
	fifos := []string{filepath.Join(e.store(), "active.json"), filepath.Join(e.home, "state", "deskhand", "installer.json")}
	for _, p := range fifos {
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// run kills a command still running after a minute: exit -1.
	code, out, errOut := e.run([]string{"DESKHAND_VIRTUAL_DISPLAY=auto"}, "doctor")
	if code == -1 || !strings.Contains(out, "is a FIFO") || !strings.Contains(out, "deskhand install") {
		t.Errorf("doctor with FIFOs in the store: exit %d, want it to name the FIFO and the fix:\n%s%s", code, out, errOut)
	}
	code, out, errOut = e.run(nil, "install", "--rollback")
	if code != 0 || !strings.Contains(out, "rolled back to helper 1.0.0") {
		t.Fatalf("install --rollback over the FIFOs: exit %d, want a repair and a rollback:\n%s%s", code, out, errOut)
	}
	code, out, errOut = e.run(nil, "install", "--manifest-url", e.srv.At("/1.1.0/manifest.json"))
	if code != 0 {
		t.Fatalf("install over the FIFO installer.json: exit %d, want a repair:\n%s%s", code, out, errOut)
	}
	for _, p := range fifos {
		if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("after the install %s is %v, %v; want a regular file", p, fi, err)
		}
	}
}
