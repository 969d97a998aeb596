package geometry

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestStateRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state", "deskhand")
	path := StatePath(dir, ":7")
	if want := filepath.Join(dir, "screen-7.json"); path != want {
		t.Fatalf("StatePath(%q, %q) = %q, want %q", dir, ":7", path, want)
	}

	// A missing file is the zero state.
	st, err := LoadState(path)
	if err != nil || st.LastShot != nil || st.SelectedDisplay != nil {
		t.Fatalf("LoadState(missing) = %+v, %v, want the zero state", st, err)
	}

	sel := uint32(2)
	want := State{
		Display:         ":7",
		SelectedDisplay: &sel,
		LastShot:        &rightShot,
		Updated:         time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	if err := SaveState(path, want); err != nil {
		t.Fatalf("SaveState: %v", err)
	}
	got, err := LoadState(path)
	if err != nil {
		t.Fatalf("LoadState: %v", err)
	}
	want.Version = StateVersion
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadState after SaveState: (-want +got)\n%s", diff)
	}

	// Private: the directory 0700, the file 0600.
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("state directory mode = %v, %v, want 0700", fi.Mode().Perm(), err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("state file mode = %v, %v, want 0600", fi.Mode().Perm(), err)
	}

	// Overwriting leaves no temporary files behind.
	want.LastShot = &seedShot
	if err := SaveState(path, want); err != nil {
		t.Fatalf("SaveState again: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("state directory holds %v, want only %s", names, filepath.Base(path))
	}
	if got, _ := LoadState(path); got.LastShot == nil || *got.LastShot != seedShot {
		t.Errorf("LoadState after overwrite: last shot = %+v, want %+v", got.LastShot, seedShot)
	}
}

func TestLoadStateRejects(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"garbage":     "{not json",
		"old version": `{"version": 99}`,
		"empty shot":  `{"version": 1, "last_shot": {"display_id": 1}}`,
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if st, err := LoadState(path); err == nil {
			t.Errorf("LoadState(%s) = %+v, nil, want an error", name, st)
		}
	}
}

func TestStatePathSanitizes(t *testing.T) {
	tests := map[string]string{
		":0":             "screen-0.json",
		":1.0":           "screen-1.0.json",
		"localhost:10.0": "screen-localhost_10.0.json",
		"":               "screen-default.json",
		"../../x":        "screen-.._.._x.json",
	}
	for in, want := range tests {
		if got := filepath.Base(StatePath("/s", in)); got != want {
			t.Errorf("StatePath(%q) base = %q, want %q", in, got, want)
		}
		if got := filepath.Dir(StatePath("/s", in)); got != "/s" {
			t.Errorf("StatePath(%q) dir = %q, want /s", in, got)
		}
	}
}

func TestDefaultStateDir(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/xdg/state")
	if got, err := DefaultStateDir(); err != nil || got != "/xdg/state/deskhand" {
		t.Errorf("DefaultStateDir() with XDG_STATE_HOME = %q, %v, want /xdg/state/deskhand", got, err)
	}
	t.Setenv("XDG_STATE_HOME", "relative/ignored")
	t.Setenv("HOME", "/home/u")
	if got, err := DefaultStateDir(); err != nil || got != "/home/u/.local/state/deskhand" {
		t.Errorf("DefaultStateDir() with a relative XDG_STATE_HOME = %q, %v, want /home/u/.local/state/deskhand", got, err)
	}
}
