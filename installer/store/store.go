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
//
// A running deskhand holds a lease on the version it runs: a shared flock
// on the version directory itself (not on a file in it, which could be
// unlinked, replaced or linked away so that the collector misses it),
// dropped by the kernel when the process dies, so a killed deskhand never
// leaves a stale lease. GC, Commit and Cleanup delete a directory only
// while they hold its flock exclusively, under whatever name it has by
// then, so a version in use is kept and removed by a later run once it is
// free. The lock file and version directories are opened without
// following symbolic links.
// CheckPrivate refuses directories that anyone but the user (or root)
// could change, since what they hold runs with access to the screen.
package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Errors, wrapped with the detail; test with errors.Is.
var (
	// ErrNotInstalled means no version has been activated yet.
	ErrNotInstalled = errors.New("no helper installed")
	// ErrUnsafeDir means a directory on the way to the helper can be
	// changed by someone other than this user and root; see
	// UnsafeDirError.
	ErrUnsafeDir = errors.New("directory can be changed by another user")
	// ErrSymlink means a file the store opens itself (a lock, a lease,
	// active.json) is a symbolic link, which it refuses to follow.
	ErrSymlink = errors.New("refusing to follow a symbolic link")
	// ErrNotRegular means a file the store reads (active.json, a
	// version's files, installer.json) is not a regular file: a FIFO, a
	// device, a socket or a directory.
	ErrNotRegular = errors.New("not a regular file")
	// ErrVersionGone means a version directory was removed (or is being
	// removed) before it could be leased.
	ErrVersionGone = errors.New("helper version directory is gone")
)

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
	raw, err := readNoFollow(s.activePath())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotInstalled
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w; run `deskhand install` to replace it", s.activePath(), err)
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
			return nil, fmt.Errorf("reading %s: previous: %w; run `deskhand install` to replace it", s.activePath(), err)
		}
	}
	return &a, nil
}

// readNoFollow reads a small file that must be a regular file.
func readNoFollow(path string) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

// OpenRegular opens a file of the store for reading: without following a
// symbolic link (ErrSymlink), without waiting for a writer should it be a
// FIFO, and only when the open descriptor is a regular file
// (ErrNotRegular), so that whatever was put at path, nothing that reads
// the store can hang on it.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock, 0)
	if isLoop(err) {
		return nil, fmt.Errorf("%w: %s is a symbolic link", ErrSymlink, path)
	}
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is a %s (mode %v)", ErrNotRegular, path, fileKind(fi.Mode()), fi.Mode())
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// fileKind names a file type for error messages.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "directory"
	}
	return "special file"
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
	raw, err := readNoFollow(s.acceptedPath())
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
// it is one of inUse (the active and previous versions) or a running
// deskhand holds a lease on it: then the new directory gets the name with
// a "~N" suffix instead.
func (s *Store) Commit(staging, version string, inUse ...string) (string, error) {
	if err := syncTree(staging); err != nil {
		return "", err
	}
	name := version
	for n := 2; ; n++ {
		if !contains(inUse, name) {
			if _, err := os.Lstat(s.Path(name)); errors.Is(err, fs.ErrNotExist) {
				break
			}
			removed, err := s.trashIfFree(name)
			if err != nil {
				return "", err
			}
			if removed {
				break
			}
		}
		name = version + "~" + strconv.Itoa(n)
	}
	target := s.Path(name)
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
// half-deleted version never keeps a version's name) and deletes it,
// unless what now has that name is a directory someone leases.
func (s *Store) trash(name string) error {
	tmp := ".trash-" + randomSuffix()
	if err := os.Rename(s.Path(name), s.Path(tmp)); err != nil {
		return fmt.Errorf("removing %s: %w", s.Path(name), err)
	}
	if err := SyncDir(s.Dir); err != nil {
		return err
	}
	_, err := s.removeIfFree(tmp)
	return err
}

func randomSuffix() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// GC removes every version directory except those named in keep and
// those a running deskhand holds a lease on, and returns the names it
// removed and the names it kept because they are in use.
func (s *Store) GC(keep ...string) (removed, inUse []string, err error) {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || contains(keep, e.Name()) {
			continue
		}
		ok, err := s.trashIfFree(e.Name())
		if err != nil {
			return removed, inUse, err
		}
		if ok {
			removed = append(removed, e.Name())
		} else {
			inUse = append(inUse, e.Name())
		}
	}
	return removed, inUse, nil
}

// trashIfFree removes the entry name unless it is a version directory
// that someone holds a lease on. The exclusive flock is held across the
// rename, so a lease is taken either before (and the version is kept) or
// after, on a directory no longer at the version's path (see Lease); and
// what the rename moved is checked again before it is deleted.
func (s *Store) trashIfFree(name string) (bool, error) {
	dir := s.Path(name)
	fi, err := os.Lstat(dir)
	if err != nil {
		return false, err
	}
	if !fi.IsDir() {
		return true, s.trash(name)
	}
	f, ok, err := lockDir(dir)
	if err != nil || !ok {
		return false, err
	}
	defer f.Close()
	tmp := ".trash-" + randomSuffix()
	if err := os.Rename(dir, s.Path(tmp)); err != nil {
		return false, fmt.Errorf("removing %s: %w", dir, err)
	}
	if err := SyncDir(s.Dir); err != nil {
		return false, err
	}
	held, err := f.Stat()
	if err != nil {
		return false, err
	}
	if now, err := os.Lstat(s.Path(tmp)); err == nil && os.SameFile(held, now) {
		return true, os.RemoveAll(s.Path(tmp))
	}
	// Something replaced the directory between the check and the rename:
	// delete that only if nobody leases it either.
	return s.removeIfFree(tmp)
}

// removeIfFree deletes the entry name unless it is a directory someone
// leases, and reports whether it did.
func (s *Store) removeIfFree(name string) (bool, error) {
	path := s.Path(name)
	fi, err := os.Lstat(path)
	if err != nil {
		return false, err
	}
	if fi.IsDir() {
		f, ok, err := lockDir(path)
		if err != nil || !ok {
			return false, err
		}
		defer f.Close()
	}
	return true, os.RemoveAll(path)
}

// lockDir opens a directory (never through a link, never waiting) and
// takes its flock exclusively without waiting; ok is false, with no file,
// while someone leases it.
func lockDir(path string) (f *os.File, ok bool, err error) {
	f, err = openDir(path)
	if err != nil {
		return nil, false, fmt.Errorf("checking whether %s is in use: %w", path, err)
	}
	ok, err = tryLock(f)
	if err != nil || !ok {
		f.Close()
		if err != nil {
			return nil, false, fmt.Errorf("checking whether %s is in use: %w", path, err)
		}
		return nil, false, nil
	}
	return f, true, nil
}

// openDir opens a directory for flock: not through a symbolic link
// (ELOOP), and nothing but a directory (ENOTDIR), without waiting should
// something else be there.
func openDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock|oDirectory, 0)
}

// Lease is a running deskhand's hold on one installed version: while it
// is held, GC and Commit leave the version's directory alone.
type Lease struct {
	f *os.File
	// Dir is the leased version's directory name.
	Dir string
}

// Lease takes a lease on the version directory dir: a shared flock on the
// directory itself. It fails with ErrVersionGone when the directory is
// gone or being removed, and with ErrSymlink when it is a link.
func (s *Store) Lease(ctx context.Context, dir string) (*Lease, error) {
	path := s.Path(dir)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s", ErrVersionGone, path)
	case err != nil:
		return nil, fmt.Errorf("leasing helper version %s: %w", dir, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%w: %s is a symbolic link; run `deskhand install` to reinstall it", ErrSymlink, path)
	case !fi.IsDir():
		return nil, fmt.Errorf("leasing helper version %s: %s is not a directory (mode %v); run `deskhand install` to reinstall it", dir, path, fi.Mode())
	}
	f, err := openDir(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s", ErrVersionGone, path)
	case err != nil:
		return nil, fmt.Errorf("leasing helper version %s: %w", dir, err)
	}
	for {
		ok, err := tryShared(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("leasing helper version %s: %w", dir, err)
		}
		if ok {
			break
		}
		// An installer holds it for the moment it takes to rename the
		// directory away.
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("leasing helper version %s: %w", dir, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	held, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	now, err := os.Lstat(path)
	if err != nil || !os.SameFile(held, now) {
		f.Close()
		return nil, fmt.Errorf("%w: %s was removed while it was being leased", ErrVersionGone, path)
	}
	return &Lease{f: f, Dir: dir}, nil
}

// DropBrokenAccepted removes the rollback record when it is not a
// regular file (a FIFO, a device): nothing can be read from it, so no
// floor is lost, and the caller raises the floor again from the active
// version. Call it with the lock held.
func (s *Store) DropBrokenAccepted() (bool, error) {
	fi, err := os.Lstat(s.acceptedPath())
	if err != nil || fi.Mode().IsRegular() || fi.Mode()&fs.ModeSymlink != 0 {
		return false, nil
	}
	if err := os.RemoveAll(s.acceptedPath()); err != nil {
		return false, fmt.Errorf("removing %s: %w", s.acceptedPath(), err)
	}
	return true, nil
}

// Release gives the lease up; it may be called more than once.
func (l *Lease) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
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
				// A leased version renamed here is still in use: a
				// later run removes it.
				ok, err := (&Store{Dir: d}).removeIfFree(n)
				if err != nil {
					return removed, err
				}
				if ok {
					removed = append(removed, n)
				}
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
		// Only a regular file is kept: a download opened for writing
		// would wait for ever on a FIFO.
		if keepSHA != "" && strings.HasPrefix(e.Name(), keepSHA+".") && e.Type().IsRegular() {
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
	f, err := openLock(path, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, err
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
	f, err := openLock(path, os.O_RDONLY)
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

// openLock opens the lock file without following a link and refuses
// anything but a plain file of its own: the installer writes its pid
// there, and a link (or a second hard link) would make it truncate
// another file.
func openLock(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|oNoFollow|oNonBlock, 0o600)
	if isLoop(err) {
		target, _ := os.Readlink(path)
		return nil, fmt.Errorf("%w: the installer lock %s is a symbolic link (to %s), which deskhand does not follow since it would truncate the file it points to; remove it with `rm %s` and run the command again",
			ErrSymlink, path, target, path)
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err == nil && (!fi.Mode().IsRegular() || links(fi) > 1) {
		err = fmt.Errorf("%w: the installer lock %s is not a plain file of its own (mode %v, %d links); remove it with `rm %s` and run the command again", ErrNotRegular, path, fi.Mode(), links(fi), path)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func readPID(path string) int {
	raw, _ := readNoFollow(path)
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	return pid
}
