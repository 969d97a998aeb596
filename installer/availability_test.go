//go:build unix

package installer

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/installer/archive"
	"github.com/deskhand/deskhand/installer/fetch"
	"github.com/deskhand/deskhand/installer/releasetest"
	"github.com/deskhand/deskhand/installer/store"
)

// syncBuffer is a log sink safe for the installer's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// stallEnv is an env whose fetches give up on a stalled server after
// short deadlines, and whose log is kept.
func stallEnv(t *testing.T) (*env, *syncBuffer) {
	e := newEnv(t)
	e.opts.Fetch.HeaderTimeout = time.Second
	e.opts.Fetch.FirstByteTimeout = time.Second
	// Longer than the deadlines, so that they, not the watchdog, act.
	e.opts.Fetch.ThroughputWindow = time.Minute
	log := &syncBuffer{}
	e.opts.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return e, log
}

// blackHole accepts the request and never answers, until the client
// hangs up.
func blackHole(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }

// headersThenNothing sends its headers and then no body.
func headersThenNothing(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Length", "1000000")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

func TestStalledServersFallBackToMirrors(t *testing.T) {
	t.Run("black-hole primary manifest", func(t *testing.T) {
		e, log := stallEnv(t)
		u, _ := e.publish("1.0.0", nil)
		e.srv.Handle("/primary.json", blackHole)
		primary := e.srv.At("/primary.json")
		e.mustInstall(primary, u)
		e.checkActive("1.0.0")
		if !strings.Contains(log.String(), primary) || !strings.Contains(log.String(), "sent no response") {
			t.Errorf("the log does not name the stalled primary %s:\n%s", primary, log)
		}
		if n := e.srv.Hits("/primary.json"); n != 1 {
			t.Errorf("the stalled primary got %d requests, want 1", n)
		}
	})
	t.Run("first archive URL of a valid manifest stalls", func(t *testing.T) {
		for name, h := range map[string]http.HandlerFunc{"no headers": blackHole, "no body": headersThenNothing} {
			t.Run(name, func(t *testing.T) {
				e, log := stallEnv(t)
				stalled := e.srv.At("/stalled/helper.tar.gz")
				u, _ := e.publish("1.0.0", func(s *releasetest.Spec) {
					s.URLs = []string{stalled, e.srv.At("/helper-1.0.0.tar.gz")}
				})
				e.srv.Handle("/stalled/helper.tar.gz", h)
				e.mustInstall(u)
				e.checkActive("1.0.0")
				if !strings.Contains(log.String(), stalled) || !strings.Contains(log.String(), "stalled") {
					t.Errorf("the log does not name the stalled archive URL %s:\n%s", stalled, log)
				}
			})
		}
	})
}

// When every archive URL stalls the install fails naming each URL and
// what it did, and the floor is not raised: the machine can still take a
// release between the active one and the one that failed.
func TestFailedInstallDoesNotRaiseFloor(t *testing.T) {
	e, _ := stallEnv(t)
	u1, _ := e.publish("1.0.0", nil)
	e.mustInstall(u1)
	a, b := e.srv.At("/a/helper.tar.gz"), e.srv.At("/b/helper.tar.gz")
	u2, _ := e.publish("2.0.0", func(s *releasetest.Spec) { s.URLs = []string{a, b} })
	e.srv.Handle("/a/helper.tar.gz", blackHole)
	e.srv.Handle("/b/helper.tar.gz", headersThenNothing)
	_, err := e.install(u2)
	if !errors.Is(err, fetch.ErrStalled) {
		t.Fatalf("Install with every archive URL stalled = %v, want ErrStalled", err)
	}
	for _, want := range []string{a, "sent no response", b, "sent its headers (200 OK) but no body"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	st := store.New(e.opts.DataDir, e.opts.StateDir)
	if acc, _ := st.Accepted(); acc.Highest != "1.0.0" {
		t.Errorf("after a failed install of 2.0.0 the floor is %q, want 1.0.0", acc.Highest)
	}
	// A helper that fails validation does not raise it either.
	u3 := scriptHelper(`exec sleep 30`)(e)[0]
	e.opts.ValidateTimeout = time.Second
	if _, err := e.install(u3); !errors.Is(err, ErrInvalidHelper) {
		t.Fatalf("Install of a helper that never answers = %v, want ErrInvalidHelper", err)
	}
	if acc, _ := st.Accepted(); acc.Highest != "1.0.0" {
		t.Errorf("after a failed validation of 2.0.0 the floor is %q, want 1.0.0", acc.Highest)
	}
	u4, _ := e.publish("1.1.0", nil)
	e.mustInstall(u4)
	e.checkActive("1.1.0")
	if acc, _ := st.Accepted(); acc.Highest != "1.1.0" {
		t.Errorf("after activating 1.1.0 the floor is %q, want 1.1.0", acc.Highest)
	}
}

// install repairs whatever state active.json is in, from the versions on
// disk that verify, without downloading what is there.
func TestInstallRepairsActiveRecord(t *testing.T) {
	for _, tc := range []struct {
		name    string
		damage  func(t *testing.T, e *env, path string)
		damaged bool // Result.Repaired must say why
	}{
		{"garbage", func(t *testing.T, e *env, path string) { os.WriteFile(path, []byte("\x00{garbage"), 0o600) }, true},
		{"empty", func(t *testing.T, e *env, path string) { os.WriteFile(path, nil, 0o600) }, true},
		{"dir outside the store", func(t *testing.T, e *env, path string) {
			os.WriteFile(path, []byte(`{"version":"1.1.0","dir":"../../../../etc"}`), 0o600)
		}, true},
		{"symlink to a record elsewhere", func(t *testing.T, e *env, path string) {
			elsewhere := filepath.Join(t.TempDir(), "active.json")
			os.WriteFile(elsewhere, []byte(`{"version":"1.1.0","dir":"1.1.0"}`), 0o600)
			os.Remove(path)
			os.Symlink(elsewhere, path)
		}, true},
		{"version directory is a symlink out of the store", func(t *testing.T, e *env, path string) {
			outside := t.TempDir()
			os.Rename(filepath.Join(e.opts.DataDir, "1.1.0"), filepath.Join(outside, "1.1.0"))
			os.Symlink(filepath.Join(outside, "1.1.0"), filepath.Join(e.opts.DataDir, "1.1.0"))
		}, false},
		{"names a missing directory", func(t *testing.T, e *env, path string) {
			os.WriteFile(path, []byte(`{"version":"1.1.0","dir":"9.9.9","previous":{"version":"1.0.0","dir":"1.0.0"}}`), 0o600)
		}, false},
		{"previous is missing", func(t *testing.T, e *env, path string) { os.RemoveAll(filepath.Join(e.opts.DataDir, "1.0.0")) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			u1, _ := e.publish("1.0.0", nil)
			u2, _ := e.publish("1.1.0", nil)
			e.mustInstall(u1)
			e.mustInstall(u2)
			path := filepath.Join(e.opts.DataDir, "active.json")
			tc.damage(t, e, path)
			if _, err := Active(e.opts); err == nil && tc.name != "previous is missing" {
				t.Fatalf("Active() after the damage = nil error, want a refusal")
			}
			res, err := e.install(u2)
			if err != nil {
				t.Fatalf("Install over a record that is %s = %v, want a repair", tc.name, err)
			}
			if tc.damaged && res.Repaired == "" {
				t.Errorf("Install = %+v, want Repaired to say what was wrong", res)
			}
			inst := e.checkActive("1.1.0")
			fi, err := os.Lstat(path)
			if err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("active.json after the repair: %v, %v; want a regular file", fi, err)
			}
			if !strings.HasPrefix(inst.Path, e.opts.DataDir+string(filepath.Separator)) {
				t.Errorf("the repaired record runs %s, outside the store %s", inst.Path, e.opts.DataDir)
			}
			if real, _ := filepath.EvalSymlinks(inst.Path); real != inst.Path {
				t.Errorf("the repaired record runs %s through a link to %s", inst.Path, real)
			}
		})
	}
}

func TestRollbackRepairsActiveRecord(t *testing.T) {
	e := newEnv(t)
	u1, _ := e.publish("1.0.0", nil)
	u2, _ := e.publish("1.1.0", nil)
	e.mustInstall(u1)
	e.mustInstall(u2)
	os.WriteFile(filepath.Join(e.opts.DataDir, "active.json"), []byte("not json"), 0o600)
	res, err := Rollback(context.Background(), e.opts)
	if err != nil {
		t.Fatalf("Rollback over a garbage record = %v, want a repair and a rollback", err)
	}
	if res.Version != "1.0.0" || res.Previous != "1.1.0" || res.Repaired == "" {
		t.Errorf("Rollback = %+v, want 1.0.0 active, 1.1.0 kept, and the repair reported", res)
	}
	e.checkActive("1.0.0")
}

// A version leased by a running deskhand (Use) survives two upgrades, and
// the next install after the lease is released removes it.
func TestUseLeasesVersion(t *testing.T) {
	e := newEnv(t)
	u1, _ := e.publish("1.0.0", nil)
	e.mustInstall(u1)
	inst, err := Use(context.Background(), e.opts)
	if err != nil {
		t.Fatal(err)
	}
	u2, _ := e.publish("1.1.0", nil)
	u3, _ := e.publish("1.2.0", nil)
	e.mustInstall(u2)
	e.mustInstall(u3)
	if _, err := os.Stat(inst.Path); err != nil {
		t.Fatalf("two upgrades removed the helper a running deskhand uses: %v", err)
	}
	inst.Release()
	res := e.mustInstall(u3)
	if !strings.Contains(strings.Join(res.Removed, " "), "1.0.0") {
		t.Errorf("the install after the release removed %v, want 1.0.0 among them", res.Removed)
	}
	if _, err := os.Stat(filepath.Dir(inst.Path)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("1.0.0 is still there after its lease was released: %v", err)
	}
}

// A helper whose directory, or the store, others can write is refused at
// launch and by install, with the same message.
func TestUnsafeDirectoriesRefused(t *testing.T) {
	for _, tc := range []struct {
		name string
		dir  func(e *env, inst *Result) string
	}{
		{"world-writable version directory", func(e *env, inst *Result) string { return filepath.Dir(inst.Path) }},
		{"world-writable store", func(e *env, inst *Result) string { return e.opts.DataDir }},
		{"group-writable parent of the store", func(e *env, inst *Result) string { return filepath.Dir(e.opts.DataDir) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			u, _ := e.publish("1.0.0", nil)
			inst := e.mustInstall(u)
			dir := tc.dir(e, inst)
			mode := os.FileMode(0o777)
			if strings.HasPrefix(tc.name, "group") {
				mode = 0o775
			}
			os.Chmod(dir, mode)
			_, err := Active(e.opts)
			var ue *store.UnsafeDirError
			if !errors.Is(err, ErrUnsafeDir) || !errors.As(err, &ue) || ue.Path != dir {
				t.Fatalf("Active() with %s = %v, want ErrUnsafeDir naming %s", tc.name, err, dir)
			}
			if !strings.Contains(err.Error(), "chmod go-w "+dir) {
				t.Errorf("refusal %q does not say how to fix it", err)
			}
			if _, err := Use(context.Background(), e.opts); !errors.Is(err, ErrUnsafeDir) {
				t.Errorf("Use() with %s = %v, want ErrUnsafeDir", tc.name, err)
			}
			if tc.name != "world-writable version directory" {
				if _, err := e.install(u); !errors.Is(err, ErrUnsafeDir) || !strings.Contains(err.Error(), ue.Error()) {
					t.Errorf("Install with %s = %v, want the same refusal %q", tc.name, err, ue)
				}
			}
			os.Chmod(dir, 0o755)
			e.checkActive("1.0.0")
		})
	}
}

// The helper swapped back and forth at its path (hard link and rename,
// as the same user could) between the hash check and the start: what
// starts is always the file that was hashed, never the stand-in, which
// would leave a marker.
func TestStartRunsTheHashedHelper(t *testing.T) {
	e := newEnv(t)
	u, _ := e.publish("1.0.0", nil)
	res := e.mustInstall(u)
	dir := t.TempDir()
	real, standIn, marker := filepath.Join(dir, "real"), filepath.Join(dir, "stand-in"), filepath.Join(dir, "stand-in-ran")
	if err := os.Link(res.Path, real); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ntouch " + marker + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(standIn, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tmp := res.Path + ".swap"
		for i := 0; ; i++ {
			select {
			case <-stop:
				os.Remove(tmp)
				os.Link(real, tmp)
				os.Rename(tmp, res.Path)
				return
			default:
			}
			// Mostly the real helper, so that most checks pass and the
			// start that follows has the stand-in to run by mistake.
			src := real
			if i%4 == 0 {
				src = standIn
			}
			os.Remove(tmp)
			if err := os.Link(src, tmp); err == nil {
				os.Rename(tmp, res.Path)
			}
		}
	}()
	started := 0
	for range 60 {
		inst, err := Use(context.Background(), e.opts)
		if err != nil {
			continue // the check saw the stand-in: refused, as it should be
		}
		c := bridge.New(bridge.Options{Path: inst.Path, Exe: inst.Exe, MaxRestarts: 1})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := c.Start(ctx); err == nil {
			started++
		} else {
			t.Logf("start: %v", err)
		}
		cancel()
		c.Close()
		inst.Release()
	}
	close(stop)
	wg.Wait()
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the stand-in swapped in after the hash check ran (%d starts)", started)
	}
	if started == 0 {
		t.Fatalf("no start passed the check while the helper was being swapped; the race was never run")
	}
	t.Logf("%d of 60 starts ran the hashed helper", started)
}

// returns runs f and fails the test if it does not return: a store file
// replaced by a FIFO must never leave a reader waiting for a writer.
func returns[T any](t *testing.T, what string, f func() (T, error)) (T, error) {
	t.Helper()
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-time.After(30 * time.Second):
		t.Fatalf("%s is still waiting after 30 s: it blocks on the FIFO", what)
		panic("unreachable")
	}
}

// Each file of the store replaced by a FIFO gets a clear refusal from
// the launch check instead of a hang, and install repairs it.
func TestFIFOInStore(t *testing.T) {
	for _, tc := range []struct {
		file    func(e *env) string
		refused bool // whether Use refuses the helper until install runs
		repairs bool // whether install replaces it (else refuses clearly)
	}{
		{func(e *env) string { return filepath.Join(e.opts.DataDir, "active.json") }, true, true},
		{func(e *env) string { return filepath.Join(e.opts.DataDir, "1.0.0", ManifestFile) }, true, true},
		{func(e *env) string { return filepath.Join(e.opts.DataDir, "1.0.0", "deskhand-helper") }, true, true},
		{func(e *env) string { return filepath.Join(e.opts.StateDir, "installer.json") }, false, true},
		{func(e *env) string { return filepath.Join(e.opts.DataDir, ".lock") }, false, false},
	} {
		e := newEnv(t)
		path := tc.file(e)
		t.Run(filepath.Base(path), func(t *testing.T) {
			e.t = t
			u, _ := e.publish("1.0.0", nil)
			e.mustInstall(u)
			os.Remove(path)
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
			inst, err := returns(t, "Use", func() (*Installed, error) { return Use(context.Background(), e.opts) })
			if tc.refused && (err == nil || !strings.Contains(err.Error(), "FIFO")) {
				t.Errorf("Use() with a FIFO at %s = %v, want a refusal that says so", path, err)
			}
			inst.Release()
			res, err := returns(t, "Install", func() (*Result, error) { return e.install(u) })
			if !tc.repairs {
				if err == nil || !strings.Contains(err.Error(), "rm "+path) {
					t.Errorf("Install with a FIFO at %s = %v, want a refusal that says how to fix it", path, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Install with a FIFO at %s = %v, want a repair", path, err)
			}
			t.Logf("repaired: %q", res.Repaired)
			if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
				t.Errorf("after the install %s is still a %v; want a regular file, or the version replaced", path, fi.Mode())
			}
			inst, err = Use(context.Background(), e.opts)
			if err != nil {
				t.Fatalf("Use() after the repair = %v", err)
			}
			inst.Release()
			e.checkActive("1.0.0")
		})
	}
}

// trickle sends body (or, when nil, spaces for ever) at about 10 KB/s,
// above the tests' throughput floor, ignoring Range.
func trickle(body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if body != nil {
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		}
		w.WriteHeader(http.StatusOK)
		chunk := bytes.Repeat([]byte(" "), 1024)
		for sent := 0; body == nil || sent < len(body); sent += len(chunk) {
			if body != nil {
				chunk = body[sent:min(sent+1024, len(body))]
			}
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// A server that trickles just above the throughput floor does not hold
// the install: the archive URL whose projected completion is too far
// away, and the manifest URL that overruns its budget, are abandoned
// for the mirror after one request, and the log names them and their
// speed. Attempts may last a minute here, as in real use they last
// five: only the projection and the manifest budget move on.
func TestTricklingServersFallBackToMirrors(t *testing.T) {
	trickleEnv := func(t *testing.T) (*env, *syncBuffer) {
		e, log := stallEnv(t)
		e.opts.Fetch.AttemptTimeout = time.Minute
		e.opts.Fetch.ThroughputWindow = 300 * time.Millisecond
		e.opts.Fetch.ProjectedLimit = 5 * time.Second
		e.opts.ManifestTimeout = 2 * time.Second
		return e, log
	}
	t.Run("archive", func(t *testing.T) {
		e, log := trickleEnv(t)
		slow := e.srv.At("/slow/helper.tar.gz")
		u, _ := e.publish("1.0.0", func(s *releasetest.Spec) {
			s.URLs = []string{slow, e.srv.At("/helper-1.0.0.tar.gz")}
		})
		e.srv.Handle("/slow/helper.tar.gz", trickle(e.archive))
		e.mustInstall(u)
		e.checkActive("1.0.0")
		want := []string{"/1.0.0/manifest.json", "/slow/helper.tar.gz", "/helper-1.0.0.tar.gz"}
		if got := e.srv.Asked(); !slices.Equal(got, want) {
			t.Errorf("the server was asked for %v, want %v", got, want)
		}
		if !strings.Contains(log.String(), slow) || !strings.Contains(log.String(), "KB/s") {
			t.Errorf("the log does not name the slow URL %s and its speed:\n%s", slow, log)
		}
	})
	t.Run("manifest", func(t *testing.T) {
		e, log := trickleEnv(t)
		u, _ := e.publish("1.0.0", nil)
		e.srv.Handle("/slow/manifest.json", trickle(nil))
		slow := e.srv.At("/slow/manifest.json")
		e.mustInstall(slow, u)
		e.checkActive("1.0.0")
		want := []string{"/slow/manifest.json", "/1.0.0/manifest.json", "/helper-1.0.0.tar.gz"}
		if got := e.srv.Asked(); !slices.Equal(got, want) {
			t.Errorf("the server was asked for %v, want %v", got, want)
		}
		if !strings.Contains(log.String(), slow) || !strings.Contains(log.String(), "KB/s") {
			t.Errorf("the log does not name the slow URL %s and its speed:\n%s", slow, log)
		}
	})
}

// A disk that fills up while the helper is extracted is reported as
// such, with how much was needed, not as a corrupt archive; the active
// helper stays.
func TestDiskFullDuringExtraction(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("mounting the small tmpfs this test fills needs root (CI is set, so this is a failure, not a skip)")
		}
		t.Skip("mounting the small tmpfs this test fills needs root")
	}
	e := newEnv(t)
	var total int64
	for _, f := range e.files {
		total += f.Size
	}
	// Room for the download and half the extracted files.
	size := (int64(len(e.archive)) + total/2 + 64<<10) &^ 4095
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.FormatInt(size, 10)+",mode=0755", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Fatalf("mounting a %d-byte tmpfs: %v: %s", size, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("unmounting %s: %v: %s", mnt, err, out)
		}
	})
	e.opts.DataDir = filepath.Join(mnt, "helpers")
	u, _ := e.publish("1.0.0", nil)
	_, err := e.install(u)
	if !errors.Is(err, archive.ErrNoSpace) || errors.Is(err, archive.ErrCorrupt) {
		t.Fatalf("Install onto a full disk = %v, want ErrNoSpace and not ErrCorrupt", err)
	}
	for _, want := range []string{"no space left on the device", strconv.FormatInt(total, 10) + " bytes"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, err := Active(e.opts); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Active() after the failed install = %v, want ErrNotInstalled", err)
	}
}

// With active.json deleted, install rebuilds it keeping the versions
// that verify, so a rollback is still possible afterwards; so does a
// rollback run straight away.
func TestDeletedActiveRecordKeepsRollback(t *testing.T) {
	for _, first := range []string{"install", "rollback"} {
		t.Run(first, func(t *testing.T) {
			e := newEnv(t)
			u1, _ := e.publish("1.0.0", nil)
			u2, _ := e.publish("1.1.0", nil)
			e.mustInstall(u1)
			e.mustInstall(u2)
			if err := os.Remove(filepath.Join(e.opts.DataDir, "active.json")); err != nil {
				t.Fatal(err)
			}
			if first == "install" {
				res := e.mustInstall(u2)
				if res.Repaired == "" || res.Previous != "1.0.0" {
					t.Errorf("Install over a deleted active.json = %+v, want the repair reported and 1.0.0 kept", res)
				}
				e.checkActive("1.1.0")
			}
			res, err := Rollback(context.Background(), e.opts)
			if err != nil {
				t.Fatalf("Rollback after active.json was deleted = %v, want 1.0.0 active", err)
			}
			if res.Version != "1.0.0" || res.Previous != "1.1.0" {
				t.Errorf("Rollback = %+v, want 1.0.0 active and 1.1.0 kept", res)
			}
			e.checkActive("1.0.0")
		})
	}
}

// A version leased by Use survives installs whatever is done to the files
// in it or to its name: the lease is on the directory itself, and the
// collector deletes a directory only while it holds that lease itself.
func TestLeaseSurvivesTampering(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dir string) string // returns where the version is now
	}{
		{"lease file renamed", func(t *testing.T, dir string) string {
			os.WriteFile(filepath.Join(dir, "planted"), nil, 0o644)
			os.Rename(filepath.Join(dir, ".in-use"), filepath.Join(dir, ".in-use.moved"))
			return dir
		}},
		{"lease file replaced by a link", func(t *testing.T, dir string) string {
			os.Remove(filepath.Join(dir, ".in-use"))
			os.Symlink(filepath.Join(t.TempDir(), "elsewhere"), filepath.Join(dir, ".in-use"))
			return dir
		}},
		{"version renamed to a trash name", func(t *testing.T, dir string) string {
			moved := filepath.Join(filepath.Dir(dir), ".trash-moved")
			if err := os.Rename(dir, moved); err != nil {
				t.Fatal(err)
			}
			return moved
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			u1, _ := e.publish("1.0.0", nil)
			u2, _ := e.publish("1.1.0", nil)
			u3, _ := e.publish("1.2.0", nil)
			e.mustInstall(u1)
			inst, err := Use(context.Background(), e.opts)
			if err != nil {
				t.Fatal(err)
			}
			defer inst.Release()
			now := tc.tamper(t, inst.Dir)
			e.mustInstall(u2)
			e.mustInstall(u3)
			if _, err := os.Stat(filepath.Join(now, "deskhand-helper")); err != nil {
				t.Fatalf("an install removed the version a running deskhand leases: %v", err)
			}
			inst.Release()
			e.mustInstall(u3)
			if _, err := os.Stat(now); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s is still there after its lease was released: %v", now, err)
			}
		})
	}
}
