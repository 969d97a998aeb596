package geometry

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// StateVersion is the version of the state file format this package
// writes; files of another version are ignored.
const StateVersion = 1

// State is what the server remembers across a restart: the display the
// model selected and the geometry of the last screenshot it was shown.
type State struct {
	Version int `json:"version"`
	// Display names the display the state belongs to (":0" on X11); a
	// state written for another display does not apply. The wire name
	// stays what the first, X11-only, state files used.
	Display string `json:"x_display,omitempty"`
	// SelectedDisplay is the id of the display switch_display selected,
	// nil for the primary.
	SelectedDisplay *uint32 `json:"selected_display,omitempty"`
	// LastShot is the geometry of the latest screenshot, nil before the
	// first.
	LastShot *Shot `json:"last_shot,omitempty"`
	// Updated is when the state was written.
	Updated time.Time `json:"updated"`
}

// DefaultStateDir returns $XDG_STATE_HOME/deskhand, or
// ~/.local/state/deskhand when XDG_STATE_HOME is unset or not absolute (as
// the XDG base directory specification requires).
func DefaultStateDir() (string, error) {
	if dir := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(dir) {
		return filepath.Join(dir, "deskhand"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("finding the state directory: %w; set XDG_STATE_HOME or pass --state-dir", err)
	}
	return filepath.Join(home, ".local", "state", "deskhand"), nil
}

// StatePath returns the state file for display in dir: one file
// per display, so that servers on different displays (a virtual one and
// the user's own) do not overwrite each other's geometry.
func StatePath(dir, display string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			return r
		}
		return '_'
	}, strings.TrimPrefix(display, ":"))
	if name == "" {
		name = "default"
	}
	return filepath.Join(dir, "screen-"+name+".json")
}

// LoadState reads the state file at path. A missing file is the zero
// State; a file that does not parse, or of another version, is an error
// the caller may log and ignore.
func LoadState(path string) (State, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return State{}, nil
	}
	if err != nil {
		return State{}, fmt.Errorf("reading state file: %w", err)
	}
	var st State
	if err := json.Unmarshal(data, &st); err != nil {
		return State{}, fmt.Errorf("parsing state file %s: %w (delete it; it is rewritten on the next screenshot)", path, err)
	}
	if st.Version != StateVersion {
		return State{}, fmt.Errorf("state file %s has version %d, want %d; ignoring it", path, st.Version, StateVersion)
	}
	if st.LastShot != nil {
		if err := st.LastShot.Validate(); err != nil {
			return State{}, fmt.Errorf("state file %s: %w; ignoring it", path, err)
		}
	}
	return st, nil
}

// SaveState writes st to path atomically: into a temporary file in the
// same directory, synced, then renamed over path, so a reader (or a crash)
// sees the old state or the new one, never a mix. The directory is created
// with mode 0700 when missing.
func SaveState(path string, st State) error {
	st.Version = StateVersion
	if st.Updated.IsZero() {
		st.Updated = time.Now().UTC()
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding state: %w", err)
	}
	data = append(data, '\n')
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("creating state directory: %w", err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing state file: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing state file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("syncing state file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing state file: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing state file: %w", err)
	}
	// Make the rename itself durable.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
