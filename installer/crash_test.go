//go:build unix

package installer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/installer/store"
)

// childEnv makes the test binary run one Install as a subprocess (see
// TestMain) with the configuration in its value.
const childEnv = "DESKHAND_INSTALLER_TEST_CHILD"

type childConfig struct {
	Dir      string   // testOptions' directory
	URLs     []string // manifest URLs
	KillAt   string   // hook point at which the child SIGKILLs itself
	PauseAt  string   // hook point at which it sleeps PauseFor
	PauseFor time.Duration
	Events   string // file the child appends "enter"/"leave" lines to
}

func TestMain(m *testing.M) {
	if raw := os.Getenv(childEnv); raw != "" {
		os.Exit(runChild(raw))
	}
	os.Exit(m.Run())
}

// runChild installs as the config says and prints the Result as JSON.
func runChild(raw string) int {
	var cfg childConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	opts := testOptions(cfg.Dir)
	opts.ManifestURLs = cfg.URLs
	note := func(what string) {
		if cfg.Events == "" {
			return
		}
		f, err := os.OpenFile(cfg.Events, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err == nil {
			fmt.Fprintf(f, "%s %d %d\n", what, os.Getpid(), time.Now().UnixNano())
			f.Close()
		}
	}
	opts.hook = func(point string) {
		switch point {
		case "locked":
			note("enter")
		case "unlocking":
			note("leave")
		}
		if point == cfg.PauseAt {
			time.Sleep(cfg.PauseFor)
		}
		if point == cfg.KillAt {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	res, err := Install(context.Background(), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	json.NewEncoder(os.Stdout).Encode(res)
	return 0
}

func startChild(t *testing.T, cfg childConfig) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	raw, _ := json.Marshal(cfg)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, &stdout, &stderr
}

// checkConsistent fails unless active.json is absent or names a complete
// version whose files verify against its signed manifest.
func checkConsistent(t *testing.T, e *env, run string) {
	t.Helper()
	_, err := store.New(e.opts.DataDir, e.opts.StateDir).Active()
	if err == store.ErrNotInstalled {
		return
	}
	if err != nil {
		t.Fatalf("%s: active.json is unreadable: %v", run, err)
	}
	if _, err := Active(e.opts); err != nil {
		t.Fatalf("%s: active.json names a version that does not verify: %v", run, err)
	}
}

// leftovers lists what an interrupted run may leave and a finished one
// must have removed.
func leftovers(e *env) []string {
	var out []string
	for _, d := range []string{e.opts.DataDir, e.opts.StateDir, filepath.Join(e.opts.DataDir, ".downloads")} {
		entries, _ := os.ReadDir(d)
		for _, en := range entries {
			n := en.Name()
			if strings.HasPrefix(n, ".staging-") || strings.HasPrefix(n, ".trash-") || strings.HasPrefix(n, ".tmp-") || d == filepath.Join(e.opts.DataDir, ".downloads") {
				out = append(out, filepath.Join(filepath.Base(d), n))
			}
		}
	}
	return out
}

func TestCrashConsistency(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Dir(filepath.Dir(filepath.Dir(e.opts.DataDir)))
	points := []string{"locked", "accepted", "downloaded", "extracted", "validated", "committed", "activated", "collected", "unlocking"}
	const randomKills = 16
	runs := len(points) + randomKills
	seed := uint64(time.Now().UnixNano())
	t.Logf("random kill delays seeded with %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	// Measure one clean install to spread the random kills over it.
	u0, _ := e.publish("1.0.0", nil)
	start := time.Now()
	cmd, _, stderr := startChild(t, childConfig{Dir: dir, URLs: []string{u0}})
	if err := cmd.Wait(); err != nil {
		t.Fatalf("clean install in a child: %v: %s", err, stderr)
	}
	span := time.Since(start)
	checkConsistent(t, e, "clean run")

	killed := 0
	for i := range runs {
		version := fmt.Sprintf("1.0.%d", i+1)
		u, _ := e.publish(version, nil)
		cfg := childConfig{Dir: dir, URLs: []string{u}}
		var desc string
		if i < len(points) {
			cfg.KillAt = points[i]
			desc = fmt.Sprintf("run %d (%s, killed at %s)", i, version, points[i])
		} else {
			delay := time.Duration(rng.Int64N(int64(span)))
			desc = fmt.Sprintf("run %d (%s, killed after %v)", i, version, delay)
			cmd, _, _ := startChild(t, cfg)
			time.Sleep(delay)
			cmd.Process.Signal(syscall.SIGKILL)
			if err := cmd.Wait(); err != nil {
				killed++
			}
			checkConsistent(t, e, desc)
			continue
		}
		cmd, _, stderr := startChild(t, cfg)
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("%s: child was not killed: %v: %s", desc, err, stderr)
		}
		killed++
		checkConsistent(t, e, desc)
	}
	t.Logf("%d of %d runs were killed before finishing", killed, runs)

	// A run to completion cleans up whatever the killed runs left.
	final := fmt.Sprintf("1.0.%d", runs+1)
	u, _ := e.publish(final, nil)
	cmd, stdout, stderr := startChild(t, childConfig{Dir: dir, URLs: []string{u}})
	if err := cmd.Wait(); err != nil {
		t.Fatalf("final install: %v: %s", err, stderr)
	}
	var res Result
	json.Unmarshal(stdout.Bytes(), &res)
	if res.Version != final {
		t.Fatalf("final install = %+v, want version %s", res, final)
	}
	e.checkActive(final)
	if l := leftovers(e); len(l) > 0 {
		t.Errorf("leftovers after a complete run: %v", l)
	}
	var versions []string
	entries, _ := os.ReadDir(e.opts.DataDir)
	for _, en := range entries {
		if en.IsDir() && !strings.HasPrefix(en.Name(), ".") {
			versions = append(versions, en.Name())
		}
	}
	if len(versions) > 2 {
		t.Errorf("version directories after a complete run: %v, want the active one and at most one previous", versions)
	}
}

func TestConcurrentInstallsAreSerialised(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Dir(filepath.Dir(filepath.Dir(e.opts.DataDir)))
	u, _ := e.publish("1.0.0", nil)
	events := filepath.Join(t.TempDir(), "events")
	cfg := childConfig{Dir: dir, URLs: []string{u}, PauseAt: "locked", PauseFor: 300 * time.Millisecond, Events: events}
	a, aOut, aErr := startChild(t, cfg)
	b, bOut, bErr := startChild(t, cfg)
	if err := a.Wait(); err != nil {
		t.Fatalf("installer A: %v: %s", err, aErr)
	}
	if err := b.Wait(); err != nil {
		t.Fatalf("installer B: %v: %s", err, bErr)
	}
	var ra, rb Result
	json.Unmarshal(aOut.Bytes(), &ra)
	json.Unmarshal(bOut.Bytes(), &rb)
	if ra.Changed == rb.Changed {
		t.Errorf("results A=%+v B=%+v: want exactly one install and one no-op", ra, rb)
	}
	f, err := os.Open(events)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var seq []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		seq = append(seq, strings.Fields(sc.Text())[0])
	}
	if strings.Join(seq, " ") != "enter leave enter leave" {
		t.Errorf("critical sections = %v, want enter leave enter leave (no overlap)", seq)
	}
	e.checkActive("1.0.0")
}
