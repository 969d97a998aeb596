package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func newStore(t *testing.T) *Store {
	dir := t.TempDir()
	return New(filepath.Join(dir, "helpers"), filepath.Join(dir, "state"))
}

func TestActiveRoundTrip(t *testing.T) {
	s := newStore(t)
	if _, err := s.Active(); !errors.Is(err, ErrNotInstalled) {
		t.Fatalf("Active() on an empty store = %v, want ErrNotInstalled", err)
	}
	a := Active{Record: Record{Version: "1.1.0", Dir: "1.1.0"}, Previous: &Record{Version: "1.0.0", Dir: "1.0.0"}, Activated: time.Unix(5, 0).UTC()}
	if err := s.SetActive(a); err != nil {
		t.Fatal(err)
	}
	got, err := s.Active()
	if err != nil || got.Version != "1.1.0" || got.Previous.Dir != "1.0.0" {
		t.Fatalf("Active() = %+v, %v", got, err)
	}
	for _, bad := range []Record{{Version: "1", Dir: "../x"}, {Version: "1", Dir: ".staging-1"}, {Version: "", Dir: "x"}} {
		if err := s.SetActive(Active{Record: bad}); err == nil {
			t.Errorf("SetActive(%+v) = nil, want an error", bad)
		}
	}
	entries, _ := os.ReadDir(s.Dir)
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".json" && e.Name() != ".downloads" {
			t.Errorf("unexpected entry %s after atomic writes", e.Name())
		}
	}
}

func TestLockExcludes(t *testing.T) {
	s := newStore(t)
	l1, err := s.Lock(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if held, pid, _ := s.LockHolder(); !held || pid != os.Getpid() {
		t.Errorf("LockHolder() = %v, %d; want held by %d", held, pid, os.Getpid())
	}
	waited := make(chan int, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	if _, err := s.Lock(ctx, func(pid int) { waited <- pid }); err == nil {
		t.Fatal("a second Lock succeeded while the first was held")
	}
	if pid := <-waited; pid != os.Getpid() {
		t.Errorf("onWait got pid %d, want %d", pid, os.Getpid())
	}
	l1.Unlock()
	l2, err := s.Lock(context.Background(), nil)
	if err != nil {
		t.Fatalf("Lock after Unlock = %v", err)
	}
	l2.Unlock()
	if held, _, _ := s.LockHolder(); held {
		t.Errorf("LockHolder() = held after Unlock")
	}
}

func TestCommitGCAndCleanup(t *testing.T) {
	s := newStore(t)
	stage := func() string {
		d, err := s.NewStaging()
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o644)
		return d
	}
	name, err := s.Commit(stage(), "1.0.0")
	if err != nil || name != "1.0.0" {
		t.Fatalf("Commit = %q, %v", name, err)
	}
	// The name is in use by the active version: a suffix is added.
	if name, err = s.Commit(stage(), "1.0.0", "1.0.0"); err != nil || name != "1.0.0~2" {
		t.Fatalf("Commit(in use) = %q, %v; want 1.0.0~2", name, err)
	}
	// A stale directory under the name is replaced.
	os.MkdirAll(s.Path("2.0.0/junk"), 0o755)
	if name, err = s.Commit(stage(), "2.0.0"); err != nil || name != "2.0.0" {
		t.Fatalf("Commit(stale) = %q, %v", name, err)
	}
	if _, err := os.Stat(s.Path("2.0.0/junk")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale directory's content survived")
	}
	removed, _, err := s.GC("2.0.0", "1.0.0~2")
	if err != nil || len(removed) != 1 || removed[0] != "1.0.0" {
		t.Errorf("GC = %v, %v; want [1.0.0]", removed, err)
	}
	// Leftovers of interrupted runs.
	stage()
	os.Mkdir(s.Path(".trash-x"), 0o755)
	os.WriteFile(s.Path(".tmp-active.json-1"), nil, 0o600)
	os.WriteFile(filepath.Join(s.StateDir, ".tmp-installer.json-2"), nil, 0o600)
	os.WriteFile(s.DownloadPath("aa"), nil, 0o600)
	os.WriteFile(s.DownloadPath("bb"), nil, 0o600)
	if removed, err = s.Cleanup(); err != nil || len(removed) != 4 {
		t.Errorf("Cleanup = %v, %v; want 4 leftovers", removed, err)
	}
	if removed, err = s.PruneDownloads("aa"); err != nil || len(removed) != 1 {
		t.Errorf("PruneDownloads(aa) = %v, %v; want bb removed", removed, err)
	}
	if _, err := os.Stat(s.DownloadPath("aa")); err != nil {
		t.Errorf("the kept download is gone: %v", err)
	}
}

func TestAcceptedRecord(t *testing.T) {
	s := newStore(t)
	if a, err := s.Accepted(); err != nil || a.Highest != "" {
		t.Fatalf("Accepted() = %+v, %v", a, err)
	}
	s.SetAccepted(Accepted{Highest: "1.2.0"})
	if a, _ := s.Accepted(); a.Highest != "1.2.0" {
		t.Errorf("Accepted().Highest = %q", a.Highest)
	}
	os.WriteFile(filepath.Join(s.StateDir, "installer.json"), []byte("{broken"), 0o600)
	if _, err := s.Accepted(); err == nil {
		t.Errorf("a damaged rollback record was accepted; it must be refused, not reset")
	}
}
