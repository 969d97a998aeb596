// Package installer finds, downloads, verifies and activates the capture
// helper for this platform from a signed release manifest.
//
// Install fetches the manifest from the primary URL and then the mirrors,
// refuses it unless it is signed by a trusted key, fresh, for this
// platform and not older than the highest version ever accepted; downloads
// the archive resumably and checks its size and SHA-256; extracts exactly
// the listed files into a staging directory; starts the staged helper and
// completes the protocol handshake; and only then activates it atomically,
// under a lock that serialises installers; only then is the rollback floor
// raised to its version. Rollback returns to the version kept from before.
// Both rebuild a damaged active.json from the installed versions that
// verify. Active finds the active version and checks its files against its
// signed manifest again, and its directories for write access by others,
// so a helper changed after install is refused at launch; Use does the
// same and leases the version, so that installs keep it while it runs.
//
// The pieces live in subpackages: manifest (schema and signatures), fetch
// (HTTP with retries, caps, watchdog and resume), archive (safe
// extraction), store (layout, lock and atomic activation) and release
// (building and signing releases).
package installer

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/installer/archive"
	"github.com/deskhand/deskhand/installer/fetch"
	"github.com/deskhand/deskhand/installer/manifest"
	"github.com/deskhand/deskhand/installer/store"
	sha256 "github.com/minio/sha256-simd"
)

// DefaultManifestURLs are where Install looks when given no URL: the
// latest release's manifest on the project's release page.
var DefaultManifestURLs = []string{
	"https://github.com/deskhand/deskhand/releases/latest/download/manifest.json",
}

// ManifestFile is the name of the signed manifest kept in each installed
// version's directory; Active checks the files against it at launch.
const ManifestFile = "manifest.json"

// Errors, wrapped with the detail; test with errors.Is. The manifest,
// fetch, archive and store packages' errors come through wrapped too.
var (
	// ErrRollback means the manifest's version is below the highest
	// version this machine ever accepted.
	ErrRollback = errors.New("release manifest is older than one already accepted")
	// ErrInvalidHelper means the staged helper failed validation: it did
	// not complete the handshake, or spoke a protocol or version other
	// than the manifest declares.
	ErrInvalidHelper = errors.New("downloaded helper failed validation")
	// ErrModified means an installed helper's files no longer match the
	// signed manifest they were installed from.
	ErrModified = errors.New("installed helper was modified after install")
	// ErrNoPrevious means there is no earlier version to roll back to.
	ErrNoPrevious = errors.New("no previous helper version to roll back to")
	// ErrNotInstalled means no helper version is active.
	ErrNotInstalled = store.ErrNotInstalled
	// ErrUnsafeDir means the helper's directory, the store or a
	// directory above them can be changed by another user; the helper is
	// refused until it is fixed (the error says how).
	ErrUnsafeDir = store.ErrUnsafeDir
)

// Step names a phase of an install, for progress reports.
type Step string

// The steps of Install, in order.
const (
	StepLock     Step = "lock"
	StepManifest Step = "manifest"
	StepDownload Step = "download"
	StepExtract  Step = "extract"
	StepValidate Step = "validate"
	StepActivate Step = "activate"
	StepDone     Step = "done"
)

// Event is a progress report. Done and Total count bytes during
// StepDownload and are 0 otherwise.
type Event struct {
	Step    Step
	Message string
	Done    int64
	Total   int64
}

// Options configure Install, Rollback and Active. Zero fields take the
// defaults named on each.
type Options struct {
	// ManifestURLs are tried in order (primary, then mirrors); the first
	// manifest that passes every check is used. Default
	// DefaultManifestURLs.
	ManifestURLs []string
	// DataDir and StateDir locate the store; default store.DefaultDirs.
	DataDir, StateDir string
	// TrustedKeys verify manifests; default manifest.TrustedKeys().
	TrustedKeys []manifest.PublicKey
	// Now is the clock for expiry checks; default time.Now.
	Now func() time.Time
	// ClockSkew is how far in the future a manifest's issue time may be;
	// default one hour.
	ClockSkew time.Duration
	// OS and Arch select the artifact; default runtime.GOOS, GOARCH.
	OS, Arch string
	// Fetch configures HTTP.
	Fetch fetch.Options
	// Limits cap extraction; default archive.DefaultLimits.
	Limits archive.Limits
	// ManifestTimeout bounds fetching the manifest from one URL, after
	// which the next is tried; default 30 s.
	ManifestTimeout time.Duration
	// ValidateTimeout bounds starting the staged helper and its
	// handshake; default 10 s.
	ValidateTimeout time.Duration
	// HelperEnv is added to the environment of the staged helper.
	HelperEnv []string
	// Progress receives progress reports; nil drops them.
	Progress func(Event)
	// Logger receives details; nil discards them.
	Logger *slog.Logger

	// hook, in tests, is called at named points of Install.
	hook func(point string)
}

func (o Options) withDefaults() (Options, error) {
	if len(o.ManifestURLs) == 0 {
		o.ManifestURLs = DefaultManifestURLs
	}
	if o.DataDir == "" || o.StateDir == "" {
		data, state, err := store.DefaultDirs()
		if err != nil {
			return o, err
		}
		if o.DataDir == "" {
			o.DataDir = data
		}
		if o.StateDir == "" {
			o.StateDir = state
		}
	}
	if o.TrustedKeys == nil {
		o.TrustedKeys = manifest.TrustedKeys()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.ClockSkew <= 0 {
		o.ClockSkew = time.Hour
	}
	if o.OS == "" {
		o.OS = runtime.GOOS
	}
	if o.Arch == "" {
		o.Arch = runtime.GOARCH
	}
	if o.ManifestTimeout <= 0 {
		o.ManifestTimeout = 30 * time.Second
	}
	if o.ValidateTimeout <= 0 {
		o.ValidateTimeout = 10 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Fetch.Logger == nil {
		o.Fetch.Logger = o.Logger
	}
	return o, nil
}

func (o *Options) report(e Event) {
	if o.Progress != nil {
		o.Progress(e)
	}
}

func (o *Options) at(point string) {
	if o.hook != nil {
		o.hook(point)
	}
}

// Result describes what Install or Rollback left active.
type Result struct {
	// Version is the active release version; Path its helper executable.
	Version string
	Path    string
	// Changed is false when the version was already active and intact.
	Changed bool
	// Previous is the version kept for rollback ("" when none).
	Previous string
	// Removed lists leftovers and old versions that were deleted.
	Removed []string
	// Repaired, when not empty, says why the install record
	// (active.json) was damaged; it has been rebuilt and rewritten.
	Repaired string
}

// Install installs and activates the newest release for this platform.
// It is a no-op when that version is already active and intact. On any
// error nothing is activated and the active helper is untouched. A
// damaged active.json (unreadable, naming something outside the store)
// is rebuilt from the versions on disk that verify, and rewritten.
func Install(ctx context.Context, opts Options) (*Result, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	st := store.New(opts.DataDir, opts.StateDir)

	opts.report(Event{Step: StepLock, Message: "locking " + st.Dir})
	lock, err := st.Lock(ctx, func(pid int) {
		opts.report(Event{Step: StepLock, Message: fmt.Sprintf("waiting for another deskhand install (pid %d) to finish", pid)})
	})
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	defer opts.at("unlocking")
	opts.at("locked")
	if err := store.CheckPrivate(st.Dir, st.StateDir); err != nil {
		return nil, err
	}
	removed, err := st.Cleanup()
	if err != nil {
		return nil, fmt.Errorf("cleaning up after an earlier run: %w", err)
	}
	active, damaged, verified, err := readActive(st, &opts)
	if err != nil {
		return nil, err
	}
	// Records nothing can be read from (a FIFO put in their place) are
	// replaced, so that serve and doctor can use the store again.
	var repairs []string
	if damaged != "" {
		repairs = append(repairs, damaged)
	}
	if dropped, err := st.DropBrokenAccepted(); err != nil {
		return nil, err
	} else if dropped {
		repairs = append(repairs, "installer.json was not a regular file; the floor is raised again from the active version")
	}
	if active != nil {
		// A run killed between activating a version and raising the
		// floor finishes here.
		if inst, err := verifyDir(st, active.Record, &opts, false); err == nil {
			if err := raiseFloor(st, &opts, inst.Version); err != nil {
				return nil, err
			}
		}
	}

	doc, m, art, err := fetchManifest(ctx, &opts, st)
	if err != nil {
		return nil, err
	}
	res := &Result{Version: m.Version, Removed: removed, Repaired: strings.Join(repairs, "; ")}

	if active != nil && active.Version == m.Version {
		if inst, err := verifyDir(st, active.Record, &opts, false); err == nil && inst.archiveSHA == art.SHA256 {
			res.Path = inst.Path
			previous := pickPrevious(st, &opts, active, m.Version)
			if !sameRecord(previous, active.Previous) && res.Repaired == "" {
				res.Repaired = fmt.Sprintf("the previous version %s recorded there does not verify", active.Previous.Version)
			}
			if res.Repaired != "" {
				rec := store.Active{Record: active.Record, Previous: previous, Activated: opts.Now().UTC()}
				if err := st.SetActive(rec); err != nil {
					return nil, err
				}
				opts.report(Event{Step: StepActivate, Message: "rewrote " + filepath.Join(st.Dir, "active.json") + ": " + res.Repaired})
			}
			keep := append([]string{active.Dir}, verified...)
			if previous != nil {
				res.Previous = previous.Version
				keep = append(keep, previous.Dir)
			}
			// Finish what a run killed after activation left undone, and
			// remove versions that were in use at the last install.
			res.Removed = append(res.Removed, collect(st, &opts, keep)...)
			gone, _ := st.PruneDownloads("")
			res.Removed = append(res.Removed, gone...)
			opts.report(Event{Step: StepDone, Message: fmt.Sprintf("helper %s is already installed and intact", m.Version)})
			return res, nil
		} else if err != nil {
			opts.Logger.Warn("the active helper does not verify; reinstalling it", "version", active.Version, "error", err)
		}
	}

	gone, err := st.PruneDownloads(art.SHA256)
	res.Removed = append(res.Removed, gone...)
	if err != nil {
		return nil, err
	}
	archivePath := st.DownloadPath(art.SHA256)
	if err := download(ctx, &opts, archivePath, art); err != nil {
		return nil, err
	}
	opts.at("downloaded")

	opts.report(Event{Step: StepExtract, Message: "extracting into a staging directory"})
	staging, err := st.NewStaging()
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			os.RemoveAll(staging)
		}
	}()
	if err := extract(archivePath, staging, art, opts.Limits); err != nil {
		return nil, err
	}
	if err := writeSynced(filepath.Join(staging, ManifestFile), doc); err != nil {
		return nil, err
	}
	opts.at("extracted")

	opts.report(Event{Step: StepValidate, Message: "starting the new helper and checking its handshake"})
	if err := validate(ctx, &opts, filepath.Join(staging, filepath.FromSlash(art.Helper)), art); err != nil {
		return nil, err
	}
	opts.at("validated")

	opts.report(Event{Step: StepActivate, Message: "activating helper " + m.Version})
	var inUse []string
	if active != nil {
		inUse = append(inUse, active.Dir)
		if active.Previous != nil {
			inUse = append(inUse, active.Previous.Dir)
		}
	}
	previous := pickPrevious(st, &opts, active, m.Version)
	dir, err := st.Commit(staging, m.Version, inUse...)
	if err != nil {
		return nil, err
	}
	committed = true
	opts.at("committed")
	if err := st.SetActive(store.Active{Record: store.Record{Version: m.Version, Dir: dir}, Previous: previous, Activated: opts.Now().UTC()}); err != nil {
		return nil, err
	}
	opts.at("activated")
	// The floor rises only now: a release that was fetched but never
	// activated (a download that failed, a helper that did not start)
	// must not lock the machine out of the version it runs.
	if err := raiseFloor(st, &opts, m.Version); err != nil {
		return nil, err
	}
	opts.at("accepted")

	keep := append([]string{dir}, verified...)
	if previous != nil {
		keep = append(keep, previous.Dir)
		res.Previous = previous.Version
	}
	res.Removed = append(res.Removed, collect(st, &opts, keep)...)
	os.Remove(archivePath)
	opts.at("collected")

	res.Path = filepath.Join(st.Path(dir), filepath.FromSlash(art.Helper))
	res.Changed = true
	opts.report(Event{Step: StepDone, Message: fmt.Sprintf("helper %s installed at %s", m.Version, res.Path)})
	return res, nil
}

// raiseFloor records version as the highest accepted when it is above
// the current floor.
func raiseFloor(st *store.Store, opts *Options, version string) error {
	acc, err := st.Accepted()
	if err != nil {
		return err
	}
	if manifest.CompareVersions(version, acc.Highest) <= 0 {
		return nil
	}
	return st.SetAccepted(store.Accepted{Highest: version, At: opts.Now().UTC()})
}

// collect removes the versions other than keep, leaving those a running
// deskhand uses for a later run.
func collect(st *store.Store, opts *Options, keep []string) []string {
	removed, inUse, err := st.GC(keep...)
	if err != nil {
		opts.Logger.Warn("removing old helper versions", "error", err)
	}
	if len(inUse) > 0 {
		opts.Logger.Info("keeping old helper versions that a running deskhand uses; a later install removes them", "versions", inUse)
	}
	return removed
}

// readActive reads active.json. When it is damaged (unreadable, or a
// record that names something outside the store) or missing while
// versions are installed, it returns the record rebuilt from the versions
// on disk that verify (the highest active, the next one previous; nil
// when none does), why it was rebuilt, and every version that verifies,
// all of which the caller keeps: any of them may be what the user wants
// to roll back to.
func readActive(st *store.Store, opts *Options) (*store.Active, string, []string, error) {
	a, err := st.Active()
	if err == nil {
		return a, "", nil, nil
	}
	vs := scanVerified(st, opts)
	if errors.Is(err, store.ErrNotInstalled) {
		if len(vs) == 0 {
			return nil, "", nil, nil
		}
		err = fmt.Errorf("%s is missing, but %d installed versions verify", filepath.Join(st.Dir, "active.json"), len(vs))
	}
	opts.Logger.Warn("the install record is damaged; rebuilding it from the verified versions on disk", "error", err)
	why := err.Error()
	if len(vs) == 0 {
		return nil, why, nil, nil
	}
	rebuilt := &store.Active{Record: vs[0]}
	if len(vs) > 1 {
		rebuilt.Previous = &vs[1]
	}
	var dirs []string
	for _, v := range vs {
		dirs = append(dirs, v.Dir)
	}
	return rebuilt, why, dirs, nil
}

// scanVerified returns the version directories whose files verify
// against the signed manifest in them, highest version first.
func scanVerified(st *store.Store, opts *Options) []store.Record {
	entries, err := os.ReadDir(st.Dir)
	if err != nil {
		return nil
	}
	var out []store.Record
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		doc, err := readManifest(st.Path(e.Name()))
		if err != nil {
			continue
		}
		m, err := manifest.Open(doc, opts.TrustedKeys)
		if err != nil {
			continue
		}
		rec := store.Record{Version: m.Version, Dir: e.Name()}
		if _, err := verifyDir(st, rec, opts, false); err != nil {
			opts.Logger.Info("not using an installed version that does not verify", "dir", e.Name(), "error", err)
			continue
		}
		if slices.ContainsFunc(out, func(r store.Record) bool { return r.Version == rec.Version }) {
			continue
		}
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b store.Record) int { return manifest.CompareVersions(b.Version, a.Version) })
	return out
}

// pickPrevious chooses the version to keep for rollback when version
// becomes active: the active one (unless it is version itself), else the
// one it kept, whichever verifies first.
func pickPrevious(st *store.Store, opts *Options, active *store.Active, version string) *store.Record {
	if active == nil {
		return nil
	}
	var candidates []store.Record
	if active.Version != version {
		candidates = append(candidates, active.Record)
	}
	if active.Previous != nil && active.Previous.Version != version {
		candidates = append(candidates, *active.Previous)
	}
	for _, c := range candidates {
		if _, err := verifyDir(st, c, opts, false); err == nil {
			return &c
		} else {
			opts.Logger.Info("not keeping a version for rollback that does not verify", "version", c.Version, "error", err)
		}
	}
	return nil
}

func sameRecord(a, b *store.Record) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// fetchManifest returns the first manifest from opts.ManifestURLs that
// passes every check, with its raw signed bytes.
func fetchManifest(ctx context.Context, opts *Options, st *store.Store) ([]byte, *manifest.Manifest, *manifest.Artifact, error) {
	client := fetch.New(opts.Fetch)
	acc, err := st.Accepted()
	if err != nil {
		return nil, nil, nil, err
	}
	var errs []string
	var first error
	for _, u := range opts.ManifestURLs {
		opts.report(Event{Step: StepManifest, Message: "fetching the release manifest from " + u})
		doc, m, art, err := checkManifest(ctx, client, u, opts, acc.Highest)
		if err == nil {
			return doc, m, art, nil
		}
		if ctx.Err() != nil {
			return nil, nil, nil, ctx.Err()
		}
		opts.Logger.Warn("release manifest refused", "url", u, "error", err)
		errs = append(errs, fmt.Sprintf("%s: %v", u, err))
		if first == nil {
			first = err
		}
	}
	if len(errs) == 1 {
		return nil, nil, nil, fmt.Errorf("release manifest from %w", wrapFirst(first, errs[0]))
	}
	return nil, nil, nil, fmt.Errorf("no usable release manifest (%w); tried:\n  %s", first, strings.Join(errs, "\n  "))
}

// wrapFirst keeps err matchable by errors.Is while printing msg.
func wrapFirst(err error, msg string) error { return &msgErr{msg: msg, err: err} }

type msgErr struct {
	msg string
	err error
}

func (e *msgErr) Error() string { return e.msg }
func (e *msgErr) Unwrap() error { return e.err }

func checkManifest(ctx context.Context, client *fetch.Client, u string, opts *Options, highest string) ([]byte, *manifest.Manifest, *manifest.Artifact, error) {
	// A manifest is a few kilobytes: a server that takes longer than this
	// to send one is trickling, and the next URL is tried.
	getCtx, cancel := context.WithTimeout(ctx, opts.ManifestTimeout)
	defer cancel()
	doc, err := client.Get(getCtx, u, manifest.MaxEnvelopeBytes)
	if err != nil {
		return nil, nil, nil, err
	}
	m, err := manifest.Open(doc, opts.TrustedKeys)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := m.CheckTime(opts.Now(), opts.ClockSkew); err != nil {
		return nil, nil, nil, err
	}
	if highest != "" && manifest.CompareVersions(m.Version, highest) < 0 {
		return nil, nil, nil, fmt.Errorf("%w: it is for version %s, but this machine already accepted %s; someone may be serving an old release to force a known-bad helper on you (use `deskhand install --rollback` to go back deliberately)",
			ErrRollback, m.Version, highest)
	}
	art, err := m.Artifact(opts.OS, opts.Arch)
	if err != nil {
		return nil, nil, nil, err
	}
	if !slices.ContainsFunc(art.ProtocolVersions, func(v int) bool { return slices.Contains(bridge.ProtocolVersions(), v) }) {
		return nil, nil, nil, fmt.Errorf("%w: release %s's helper speaks protocol versions %v and this deskhand speaks %v; upgrade deskhand",
			ErrInvalidHelper, m.Version, art.ProtocolVersions, bridge.ProtocolVersions())
	}
	return doc, m, art, nil
}

// download fetches the archive from its URLs in order. With more than
// one, a first pass abandons a URL as soon as it proves slow (its
// projected completion too far away, or its attempt cut short), so a
// trickling primary cannot hold the mirrors back; only when every URL
// failed that way are the slow ones resumed, patiently, in order.
func download(ctx context.Context, opts *Options, path string, art *manifest.Artifact) error {
	client := fetch.New(opts.Fetch)
	var errs []string
	var first error
	var slow []string
	pass := func(urls []string, hurry bool) error {
		for _, u := range urls {
			opts.report(Event{Step: StepDownload, Message: "downloading " + u, Total: art.Size})
			want := fetch.Target{Size: art.Size, SHA256: art.SHA256, Alternatives: hurry}
			err := client.Download(ctx, u, path, want, func(done, total int64) {
				opts.report(Event{Step: StepDownload, Done: done, Total: total})
			})
			if err == nil {
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if hurry && errors.Is(err, fetch.ErrTooSlow) {
				slow = append(slow, u)
			}
			opts.Logger.Warn("download failed; trying the next URL", "url", u, "error", err)
			errs = append(errs, fmt.Sprintf("%s: %v", u, err))
			if first == nil {
				first = err
			}
		}
		return errNoURLLeft
	}
	err := pass(art.URLs, len(art.URLs) > 1)
	if errors.Is(err, errNoURLLeft) && len(slow) > 0 {
		opts.Logger.Info("every archive URL failed or was slow; resuming the slow ones", "urls", slow)
		err = pass(slow, false)
	}
	if !errors.Is(err, errNoURLLeft) {
		return err
	}
	return fmt.Errorf("downloading the helper archive (%w); tried:\n  %s", first, strings.Join(errs, "\n  "))
}

var errNoURLLeft = errors.New("no URL left to try")

func extract(archivePath, staging string, art *manifest.Artifact, lim archive.Limits) error {
	f, err := os.Open(archivePath)
	if err != nil {
		return err
	}
	defer f.Close()
	files := make([]archive.File, len(art.Files))
	for i, mf := range art.Files {
		files[i] = archive.File{Path: mf.Path, Size: mf.Size, SHA256: mf.SHA256, Mode: mf.FileMode()}
	}
	if err := archive.Extract(f, staging, files, lim); err != nil {
		return fmt.Errorf("extracting the helper archive: %w", err)
	}
	return nil
}

func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// validate starts the helper at path and completes the handshake, which
// must choose a protocol version the manifest lists and report the
// manifest's helper version.
func validate(ctx context.Context, opts *Options, path string, art *manifest.Artifact) error {
	ctx, cancel := context.WithTimeout(ctx, opts.ValidateTimeout)
	defer cancel()
	client := bridge.New(bridge.Options{
		Path:             path,
		Env:              opts.HelperEnv,
		Logger:           opts.Logger.With("component", "staged-helper"),
		HandshakeTimeout: opts.ValidateTimeout,
		MaxRestarts:      1,
		ClientName:       "deskhand-installer",
	})
	defer client.Close()
	if err := client.Start(ctx); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidHelper, err)
	}
	info := client.HandshakeInfo()
	if !slices.Contains(art.ProtocolVersions, info.ProtocolVersion) {
		return fmt.Errorf("%w: it chose protocol version %d, the manifest lists %v", ErrInvalidHelper, info.ProtocolVersion, art.ProtocolVersions)
	}
	if info.HelperVersion != art.HelperVersion {
		return fmt.Errorf("%w: it reports version %q, the manifest says %q", ErrInvalidHelper, info.HelperVersion, art.HelperVersion)
	}
	return nil
}

// Installed is a verified installed helper.
type Installed struct {
	Version string // release version
	Path    string // helper executable
	// Exe (from Use only) is Path opened, the descriptor whose bytes
	// were hashed: start the helper from it (bridge.Options.Exe), so a
	// file swapped in at Path after the check never runs. Release
	// closes it.
	Exe              *os.File
	Dir              string // version directory
	HelperVersion    string
	ProtocolVersions []int
	Previous         string // version kept for rollback, "" if none

	archiveSHA string
	lease      *store.Lease
}

// Release gives up the lease Use took and closes Exe; it may be called
// more than once, and on an Installed from Active it does nothing.
func (i *Installed) Release() error {
	if i == nil {
		return nil
	}
	if i.Exe != nil {
		i.Exe.Close()
	}
	return i.lease.Release()
}

// Use is Active for a deskhand that is about to run the helper: it also
// takes a lease on the version, so that installs running meanwhile do
// not remove it (they remove it later, once it is released). The lease
// is taken before the files are checked, so what was checked stays.
// Release it when the helper no longer runs; the kernel releases it if
// the process dies.
func Use(ctx context.Context, opts Options) (*Installed, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	st := store.New(opts.DataDir, opts.StateDir)
	for attempt := 1; ; attempt++ {
		a, err := st.Active()
		if err != nil {
			return nil, err
		}
		lease, err := st.Lease(ctx, a.Dir)
		if errors.Is(err, store.ErrVersionGone) && attempt < 5 {
			continue // an install switched versions under us: read the record again
		}
		if errors.Is(err, store.ErrVersionGone) {
			return nil, fmt.Errorf("%w: helper %s: %v; run `deskhand install` to reinstall it", ErrModified, a.Version, err)
		}
		if err != nil {
			return nil, err
		}
		inst, err := verifyDir(st, a.Record, &opts, true)
		if err != nil {
			lease.Release()
			return nil, err
		}
		if a.Previous != nil {
			inst.Previous = a.Previous.Version
		}
		inst.lease = lease
		return inst, nil
	}
}

// Active returns the active helper after checking its manifest's
// signature and every file's size and SHA-256 against it. A helper
// modified after install fails with ErrModified. It takes no lock: the
// records it reads are replaced atomically.
func Active(opts Options) (*Installed, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	st := store.New(opts.DataDir, opts.StateDir)
	a, err := st.Active()
	if err != nil {
		return nil, err
	}
	inst, err := verifyDir(st, a.Record, &opts, false)
	if err != nil {
		return nil, err
	}
	if a.Previous != nil {
		inst.Previous = a.Previous.Version
	}
	return inst, nil
}

// verifyDir checks an installed version against the signed manifest kept
// in its directory. With keepExe the result holds the helper executable
// open, as it was hashed (see Installed.Exe).
func verifyDir(st *store.Store, rec store.Record, opts *Options, keepExe bool) (*Installed, error) {
	dir := st.Path(rec.Dir)
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: helper %s: %v; run `deskhand install` to reinstall it", ErrModified, rec.Version, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%w: helper %s: %s is not a directory (mode %v) but should be the version's own; run `deskhand install` to reinstall it", ErrModified, rec.Version, dir, fi.Mode())
	}
	doc, err := readManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: helper %s: reading its manifest: %v; run `deskhand install` to reinstall it", ErrModified, rec.Version, err)
	}
	m, err := manifest.Open(doc, opts.TrustedKeys)
	if err != nil {
		return nil, fmt.Errorf("%w: helper %s: %v; run `deskhand install` to reinstall it", ErrModified, rec.Version, err)
	}
	if m.Version != rec.Version {
		return nil, fmt.Errorf("%w: %s holds the manifest of version %s, not %s; run `deskhand install` to reinstall it", ErrModified, dir, m.Version, rec.Version)
	}
	art, err := m.Artifact(opts.OS, opts.Arch)
	if err != nil {
		return nil, err
	}
	helper := filepath.Join(dir, filepath.FromSlash(art.Helper))
	if err := store.CheckPrivate(st.Dir, dir, filepath.Dir(helper)); err != nil {
		return nil, fmt.Errorf("helper %s: %w", rec.Version, err)
	}
	var exe *os.File
	for _, f := range art.Files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		fd, err := openChecked(p, f)
		if err != nil {
			exe.Close()
			return nil, fmt.Errorf("%w: %v; it will not be run. Run `deskhand install` to reinstall it, and find out what changed it", ErrModified, err)
		}
		if p == helper && keepExe {
			exe = fd
		} else {
			fd.Close()
		}
	}
	return &Installed{
		Version:          m.Version,
		Path:             helper,
		Exe:              exe,
		Dir:              dir,
		HelperVersion:    art.HelperVersion,
		ProtocolVersions: art.ProtocolVersions,
		archiveSHA:       art.SHA256,
	}, nil
}

// readManifest reads the signed manifest kept in a version directory.
func readManifest(dir string) ([]byte, error) {
	f, err := store.OpenRegular(filepath.Join(dir, ManifestFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, manifest.MaxEnvelopeBytes))
}

// openChecked opens a file of an installed version (never through a
// link, never waiting on a FIFO) and compares what the descriptor holds
// with its manifest entry; the caller closes the file.
func openChecked(path string, f manifest.File) (*os.File, error) {
	fd, err := store.OpenRegular(path)
	if err != nil {
		return nil, err
	}
	sum, err := checkOpen(fd, path, f)
	if err == nil && sum != f.SHA256 {
		err = fmt.Errorf("%s has SHA-256 %s, the signed manifest says %s", path, sum, f.SHA256)
	}
	if err != nil {
		fd.Close()
		return nil, err
	}
	return fd, nil
}

func checkOpen(fd *os.File, path string, f manifest.File) (string, error) {
	fi, err := fd.Stat()
	if err != nil {
		return "", err
	}
	if fi.Size() != f.Size {
		return "", fmt.Errorf("%s is %d bytes, the signed manifest says %d", path, fi.Size(), f.Size)
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return "", fmt.Errorf("%s is writable by group or others (mode %v)", path, fi.Mode().Perm())
	}
	return hashFrom(fd, path)
}

func hashFrom(f *os.File, path string) (string, error) {
	h := sha256.New()
	if _, err := f.WriteTo(h); err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// OpenHashed opens a regular file (without waiting should it be a FIFO)
// and returns it with the lower-case hex SHA-256 of what the descriptor
// holds; execute the descriptor, not the path, to run what was hashed.
func OpenHashed(path string) (*os.File, string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, "", err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s (mode %v)", store.ErrNotRegular, path, fi.Mode())
	}
	var sum string
	if err == nil {
		sum, err = hashFrom(f, path)
	}
	if err != nil {
		f.Close()
		return nil, "", err
	}
	return f, sum, nil
}

// Rollback makes the previous version active again (the current one
// becomes the previous), after verifying it. When active.json is
// damaged, it is rebuilt from the versions on disk that verify first (the
// highest counts as current), so a rollback still goes to the one below.
func Rollback(ctx context.Context, opts Options) (*Result, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	st := store.New(opts.DataDir, opts.StateDir)
	lock, err := st.Lock(ctx, func(pid int) {
		opts.report(Event{Step: StepLock, Message: fmt.Sprintf("waiting for another deskhand install (pid %d) to finish", pid)})
	})
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	if err := store.CheckPrivate(st.Dir, st.StateDir); err != nil {
		return nil, err
	}
	removed, err := st.Cleanup()
	if err != nil {
		return nil, err
	}
	a, damaged, _, err := readActive(st, &opts)
	if err != nil {
		return nil, err
	}
	if a == nil && damaged != "" {
		return nil, fmt.Errorf("%w: the install record is damaged (%s) and no installed version verifies; run `deskhand install`", ErrNotInstalled, damaged)
	}
	if a == nil {
		return nil, ErrNotInstalled
	}
	if a.Previous == nil {
		if damaged != "" {
			if err := st.SetActive(store.Active{Record: a.Record, Activated: opts.Now().UTC()}); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%w: the install record was damaged (%s) and has been rewritten; only %s verifies here", ErrNoPrevious, damaged, a.Version)
		}
		return nil, fmt.Errorf("%w: only %s has been installed here", ErrNoPrevious, a.Version)
	}
	inst, err := verifyDir(st, *a.Previous, &opts, false)
	if err != nil {
		return nil, fmt.Errorf("rolling back to %s: %w", a.Previous.Version, err)
	}
	cur := a.Record
	var keep *store.Record
	if _, err := verifyDir(st, cur, &opts, false); err == nil {
		keep = &cur
	}
	opts.report(Event{Step: StepActivate, Message: "activating helper " + a.Previous.Version})
	if err := st.SetActive(store.Active{Record: *a.Previous, Previous: keep, Activated: opts.Now().UTC()}); err != nil {
		return nil, err
	}
	res := &Result{Version: a.Previous.Version, Path: inst.Path, Changed: true, Removed: removed, Repaired: damaged}
	if keep != nil {
		res.Previous = keep.Version
	}
	opts.report(Event{Step: StepDone, Message: fmt.Sprintf("rolled back from %s to %s", cur.Version, a.Previous.Version)})
	return res, nil
}
