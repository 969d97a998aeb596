// Package store keeps installed helper versions on disk and switches
// between them atomically.
//
// Layout, under $XDG_DATA_HOME/deskhand/helpers (~/.local/share/...):
//
//	active.json        which version runs, and the previous one (rollback)
//	<version>/         one installed version: its files and manifest.json
//	.lock              flock(2)ed by an installer for its whole run
//	.downloads/        partial archive downloads, kept to resume
//	.staging-*/        a version being extracted and validated
//	.trash-*/          a version being deleted
//	.tmp-*             a file being written
//
// A version directory is complete before it gets its name (it is built
// under .staging-* and renamed), and active.json only ever names a
// complete directory (it is written to a temporary file, synced, renamed
// over the old one, and the directory synced). A crash at any point leaves
// either the old or the new active.json; the dot-entries it leaves are
// removed by Cleanup on the next run. The highest version ever accepted is
// kept apart, in $XDG_STATE_HOME/deskhand/installer.json, so that removing
// or editing active.json does not reopen the door to a rollback.
package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrNotInstalled means no version has been activated yet.
var ErrNotInstalled = errors.New("no helper installed")

// Record names one installed version.
type Record struct {
	Version string `json:"version"`
	// Dir is the version's directory name under the store (normally the
	// version itself).
	Dir string `json:"dir"`
}

// Active is the content of active.json.
type Active struct {
	Record
	// Previous is the version that was active before, kept for rollback.
	Previous  *Record   `json:"previous,omitempty"`
	Activated time.Time `json:"activated"`
}

// Accepted is the rollback-protection record.
type Accepted struct {
	// Highest is the highest release version whose signed manifest was
	// ever accepted; manifests below it are refused.
	Highest string    `json:"highest_version"`
	At      time.Time `json:"accepted_at"`
}

// Store is a helper store rooted at Dir, with its rollback record under
// StateDir.
type Store struct {
	Dir      string
	StateDir string
}

// DefaultDirs returns the XDG locations: $XDG_DATA_HOME/deskhand/helpers
// and $XDG_STATE_HOME/deskhand, with the XDG defaults under $HOME.
func DefaultDirs() (dataDir, stateDir string, err error) {
	data, state := os.Getenv("XDG_DATA_HOME"), os.Getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(data) || !filepath.IsAbs(state) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", "", fmt.Errorf("finding the data directory: %w (set HOME or XDG_DATA_HOME and XDG_STATE_HOME)", err)
		}
		if !filepath.IsAbs(data) {
			data = filepath.Join(home, ".local", "share")
		}
		if !filepath.IsAbs(state) {
			state = filepath.Join(home, ".local", "state")
		}
	}
	return filepath.Join(data, "deskhand", "helpers"), filepath.Join(state, "deskhand"), nil
}

// New returns the store at dir with its rollback record in stateDir.
// Nothing is created until something is written.
func New(dir, stateDir string) *Store { return &Store{Dir: dir, StateDir: stateDir} }

func (s *Store) activePath() string   { return filepath.Join(s.Dir, "active.json") }
func (s *Store) acceptedPath() string { return filepath.Join(s.StateDir, "installer.json") }

// Path returns the directory of an installed version's directory name.
func (s *Store) Path(dir string) string { return filepath.Join(s.Dir, dir) }

// ensure creates the store directories, private to the user.
func (s *Store) ensure() error {
	for _, d := range []string{s.Dir, s.StateDir, filepath.Join(s.Dir, ".downloads")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	return nil
}

// Active reads active.json; ErrNotInstalled when there is none.
func (s *Store) Active() (*Active, error) {
	raw, err := os.ReadFile(s.activePath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotInstalled
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.activePath(), err)
	}
	var a Active
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("reading %s: %w; run `deskhand install` to replace it", s.activePath(), err)
	}
	if err := a.Record.check(); err != nil {
		return nil, fmt.Errorf("reading %s: %w; run `deskhand install` to replace it", s.activePath(), err)
	}
	if a.Previous != nil {
		if err := a.Previous.check(); err != nil {
			return nil, fmt.Errorf("reading %s: previous: %w", s.activePath(), err)
		}
	}
	return &a, nil
}

func (r Record) check() error {
	if r.Version == "" || r.Dir == "" || r.Dir != filepath.Base(r.Dir) || strings.HasPrefix(r.Dir, ".") {
		return fmt.Errorf("bad version record %+v", r)
	}
	return nil
}

// SetActive replaces active.json atomically and durably.
func (s *Store) SetActive(a Active) error {
	if err := a.Record.check(); err != nil {
		return err
	}
	if err := s.ensure(); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(s.activePath(), append(raw, '\n'), 0o600)
}

// Accepted reads the rollback-protection record; the zero value when none.
func (s *Store) Accepted() (Accepted, error) {
	raw, err := os.ReadFile(s.acceptedPath())
	if errors.Is(err, fs.ErrNotExist) {
		return Accepted{}, nil
	}
	if err != nil {
		return Accepted{}, fmt.Errorf("reading %s: %w", s.acceptedPath(), err)
	}
	var a Accepted
	if err := json.Unmarshal(raw, &a); err != nil {
		// Refuse rather than reset: a damaged record must not reopen the
		// door to a rollback.
		return Accepted{}, fmt.Errorf("reading %s: %w; if you are sure no older helper is being forced on you, delete it", s.acceptedPath(), err)
	}
	return a, nil
}

// SetAccepted replaces the rollback-protection record atomically.
func (s *Store) SetAccepted(a Accepted) error {
	if err := s.ensure(); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(s.acceptedPath(), append(raw, '\n'), 0o600)
}

// WriteFileAtomic writes data to path so that a crash leaves either the
// old file or the whole new one: a temporary file in the same directory
// is written and synced, renamed over path, and the directory synced.
func WriteFileAtomic(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // after a successful rename this finds nothing
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", tmp, err)
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("syncing %s: %w", tmp, err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("renaming %s to %s: %w", tmp, path, err)
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory, making renames and creations in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}

// NewStaging creates an empty staging directory for a version being
// installed.
func (s *Store) NewStaging() (string, error) {
	if err := s.ensure(); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(s.Dir, ".staging-")
	if err != nil {
		return "", fmt.Errorf("creating a staging directory: %w", err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

// Commit gives a complete, validated staging directory its version
// directory name and returns that name. A directory already holding the
// name (left by an interrupted removal, say) is moved aside first, unless
// it is one of inUse (the active and previous versions): then the new
// directory gets the name with a "~N" suffix instead.
func (s *Store) Commit(staging, version string, inUse ...string) (string, error) {
	if err := syncTree(staging); err != nil {
		return "", err
	}
	name := version
	for n := 2; contains(inUse, name); n++ {
		name = version + "~" + strconv.Itoa(n)
	}
	target := s.Path(name)
	if _, err := os.Lstat(target); err == nil {
		if err := s.trash(name); err != nil {
			return "", err
		}
	}
	if err := os.Rename(staging, target); err != nil {
		return "", fmt.Errorf("moving the staged helper into place: %w", err)
	}
	if err := SyncDir(s.Dir); err != nil {
		return "", err
	}
	return name, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// syncTree fsyncs every directory under root (files are synced as they
// are written), so the tree is durable before it is renamed into place.
func syncTree(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return SyncDir(p)
		}
		return nil
	})
}

// trash renames an entry of the store to a .trash-* name (atomic, so a
// half-deleted version never keeps a version's name) and deletes it.
func (s *Store) trash(name string) error {
	tmp := s.Path(".trash-" + randomSuffix())
	if err := os.Rename(s.Path(name), tmp); err != nil {
		return fmt.Errorf("removing %s: %w", s.Path(name), err)
	}
	if err := SyncDir(s.Dir); err != nil {
		return err
	}
	return os.RemoveAll(tmp)
}

func randomSuffix() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// GC removes every version directory except those named in keep and
// returns the names it removed.
func (s *Store) GC(keep ...string) ([]string, error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || contains(keep, e.Name()) {
			continue
		}
		if err := s.trash(e.Name()); err != nil {
			return removed, err
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}

// DownloadPath is where the archive with the given SHA-256 is downloaded.
func (s *Store) DownloadPath(sha string) string {
	return filepath.Join(s.Dir, ".downloads", sha+".tar.gz")
}

// Cleanup removes what interrupted runs left: staging and trash
// directories and temporary files. It returns the names it removed. Call
// it with the lock held.
func (s *Store) Cleanup() ([]string, error) {
	var removed []string
	for _, d := range []string{s.Dir, s.StateDir} {
		entries, err := os.ReadDir(d)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return removed, err
		}
		for _, e := range entries {
			n := e.Name()
			if strings.HasPrefix(n, ".staging-") || strings.HasPrefix(n, ".trash-") || strings.HasPrefix(n, ".tmp-") {
				if err := os.RemoveAll(filepath.Join(d, n)); err != nil {
					return removed, err
				}
				removed = append(removed, n)
			}
		}
	}
	return removed, nil
}

// PruneDownloads removes partial and complete downloads other than the
// one for the archive with SHA-256 keepSHA ("" keeps none), and returns
// the names it removed. Call it with the lock held.
func (s *Store) PruneDownloads(keepSHA string) ([]string, error) {
	var removed []string
	dl := filepath.Join(s.Dir, ".downloads")
	entries, err := os.ReadDir(dl)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if keepSHA != "" && strings.HasPrefix(e.Name(), keepSHA+".") {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dl, e.Name())); err != nil {
			return removed, err
		}
		removed = append(removed, filepath.Join(".downloads", e.Name()))
	}
	return removed, nil
}

// Lock is an exclusive hold on the store; two installers never run their
// critical sections at the same time.
type Lock struct{ f *os.File }

// Lock takes the store's lock, waiting while another process holds it
// (onWait, when not nil, is called once with the holder's pid) until ctx
// ends.
func (s *Store) Lock(ctx context.Context, onWait func(pid int)) (*Lock, error) {
	if err := s.ensure(); err != nil {
		return nil, err
	}
	path := filepath.Join(s.Dir, ".lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	waited := false
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if ok {
			break
		}
		if !waited && onWait != nil {
			onWait(readPID(path))
		}
		waited = true
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another deskhand install (pid %d) to finish: %w", readPID(path), ctx.Err())
		case <-time.After(25 * time.Millisecond):
		}
	}
	// The pid is informational (for doctor and the waiting message); the
	// flock is what excludes.
	f.Truncate(0)
	f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return &Lock{f: f}, nil
}

// Unlock releases the lock. The kernel releases it too if the process
// dies, so a killed installer never leaves the store locked.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// LockHolder reports whether another process holds the store's lock now,
// and its pid when it does.
func (s *Store) LockHolder() (held bool, pid int, err error) {
	path := filepath.Join(s.Dir, ".lock")
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	defer f.Close()
	ok, err := tryLock(f)
	if err != nil {
		return false, 0, err
	}
	if ok {
		return false, 0, nil
	}
	return true, readPID(path), nil
}

func readPID(path string) int {
	raw, _ := os.ReadFile(path)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	return pid
}
