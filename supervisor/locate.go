package supervisor

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/deskhand/deskhand/installer"
	"github.com/deskhand/deskhand/installer/store"
)

// HelperName is the file name of the capture helper binary (on Windows
// with .exe, the name Windows runs a program by).
const HelperName = "deskhand-helper" + exeSuffix

// BundleChecksums is the checksum list a bundle carries beside its helper,
// in sha256sum(1) format.
const BundleChecksums = "SHA256SUMS"

// HelperSource says where a helper binary was found.
type HelperSource string

// Where FindHelper looks, in order.
const (
	FromFlag      HelperSource = "--helper flag"
	FromEnv       HelperSource = "DESKHAND_HELPER"
	FromBeside    HelperSource = "beside the deskhand executable"
	FromResources HelperSource = "the app bundle's resources"
	FromInstalled HelperSource = "installed"
	FromDownload  HelperSource = "downloaded and installed"
)

// LocateOptions configure FindHelper.
type LocateOptions struct {
	// Explicit is the --helper flag's value.
	Explicit string
	// NoDownload stops FindHelper before it would download a helper.
	NoDownload bool
	// Install configures the installed-version check and the download:
	// manifest URLs, store directories, progress and logging.
	Install installer.Options
}

// errNoLocalHelper says that no helper is on this machine: only a
// download can provide one.
var errNoLocalHelper = errors.New("no " + HelperName + " found")

// Located is a helper FindHelper found.
type Located struct {
	Path   string
	Source HelperSource
	// Version is the installed release version (installed or
	// downloaded helpers only).
	Version string
	// Note qualifies the source, for example an unverified development
	// build.
	Note string
	// Exe is the helper opened when its hash was checked (installed,
	// downloaded and bundled helpers): start it from this descriptor
	// (bridge.Options.Exe) so that what runs is what was checked.
	// Release closes it.
	Exe *os.File

	// installed holds the lease on an installed version; see Release.
	installed *installer.Installed
}

// Release gives up the lease that keeps an installed helper's version
// from being removed by installs while it runs (see installer.Use), and
// closes Exe. It may be called more than once.
func (l Located) Release() {
	l.installed.Release()
	if l.Exe != nil {
		l.Exe.Close()
	}
}

// FindHelper finds the capture helper in this order: an explicit path
// (--helper, then $DESKHAND_HELPER); a helper bundled beside the
// executable or in the app's resources, checked against the bundle's
// SHA256SUMS; the active installed version, whose files are checked
// against its signed manifest (a modified helper is refused, not skipped);
// and finally a download and install from the release manifest. An
// installed or downloaded helper comes with a lease on its version:
// Release it once the helper has stopped.
func FindHelper(ctx context.Context, opts LocateOptions) (Located, error) {
	if opts.Explicit != "" {
		p, err := checkExecutable(opts.Explicit)
		if err != nil {
			return Located{}, fmt.Errorf("using --helper: %w", err)
		}
		return Located{Path: p, Source: FromFlag}, nil
	}
	if env := os.Getenv("DESKHAND_HELPER"); env != "" {
		p, err := checkExecutable(env)
		if err != nil {
			return Located{}, fmt.Errorf("using DESKHAND_HELPER: %w", err)
		}
		return Located{Path: p, Source: FromEnv}, nil
	}
	var looked []string
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		dir := filepath.Dir(exe)
		bundles := []struct {
			dir      string
			source   HelperSource
			required bool // whether the checksum list must be there
		}{
			{dir, FromBeside, false},
			{filepath.Join(dir, "..", "Resources"), FromResources, true},       // macOS .app: Contents/MacOS → Contents/Resources
			{filepath.Join(dir, "..", "lib", "deskhand"), FromResources, true}, // Linux packages: bin → lib/deskhand
		}
		for _, b := range bundles {
			candidate := filepath.Join(filepath.Clean(b.dir), HelperName)
			looked = append(looked, candidate)
			p, err := checkExecutable(candidate)
			if err != nil {
				continue
			}
			exe, note, err := checkBundle(p, b.required)
			if err != nil {
				return Located{}, err
			}
			return Located{Path: p, Source: b.source, Note: note, Exe: exe}, nil
		}
	}
	inst, err := installer.Use(ctx, opts.Install)
	switch {
	case err == nil:
		return Located{Path: inst.Path, Source: FromInstalled, Version: inst.Version, Exe: inst.Exe, installed: inst}, nil
	case !errors.Is(err, installer.ErrNotInstalled):
		return Located{}, fmt.Errorf("checking the installed helper: %w", err)
	}
	data, _ := installDirs(opts.Install)
	looked = append(looked, data+" (installed versions)")
	if opts.NoDownload || os.Getenv("DESKHAND_NO_DOWNLOAD") != "" {
		return Located{}, fmt.Errorf("finding the capture helper: %w (looked in %s); run `deskhand install`, build it with `make build`, or pass --helper PATH or set DESKHAND_HELPER",
			errNoLocalHelper, strings.Join(looked, ", "))
	}
	if _, err := installer.Install(ctx, opts.Install); err != nil {
		return Located{}, fmt.Errorf("no %s found (looked in %s), and downloading one failed: %w; build it with `make build` and pass --helper PATH, or run `deskhand install` when the network is back",
			HelperName, strings.Join(looked, ", "), err)
	}
	// Checked and leased like any installed helper, so that an install
	// running meanwhile cannot slip another one in.
	inst, err = installer.Use(ctx, opts.Install)
	if err != nil {
		return Located{}, fmt.Errorf("checking the helper just installed: %w", err)
	}
	return Located{Path: inst.Path, Source: FromDownload, Version: inst.Version, Exe: inst.Exe, installed: inst}, nil
}

// helperLocator is a serving deskhand's bridge.Options.Locate: it finds
// (and so verifies) the helper again before every start, restarts after
// a crash included, so a helper swapped while deskhand runs is refused,
// and an upgrade or rollback is taken at the next start. It holds the
// lease of the version it found until the next start or Close.
type helperLocator struct {
	opts LocateOptions
	mu   sync.Mutex
	held Located
}

func (l *helperLocator) locate(ctx context.Context) (string, *os.File, error) {
	found, err := FindHelper(ctx, l.opts)
	l.mu.Lock()
	defer l.mu.Unlock()
	// A start runs only when no helper does: the last one's version is
	// free now.
	l.held.Release()
	l.held = found
	if err != nil {
		return "", nil, err
	}
	return found.Path, found.Exe, nil
}

// Close releases the lease on the version last found.
func (l *helperLocator) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held.Release()
	l.held = Located{}
}

// oneShotLeases keeps the leases of helpers found by LocateHelper for the
// rest of the process: a one-shot command runs its helper until it exits.
var oneShotLeases struct {
	mu   sync.Mutex
	kept []Located
}

// LocateHelper is FindHelper with the defaults a command-line run wants:
// an install it has to do logs its progress on stderr, and
// $DESKHAND_MANIFEST_URL (space-separated URLs) replaces the default
// manifest location.
func LocateHelper(explicit string) (Located, error) {
	opts := LocateOptions{Explicit: explicit}
	opts.Install.ManifestURLs = ManifestURLsFromEnv()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	opts.Install.Progress = func(e installer.Event) {
		if e.Message != "" {
			logger.Info("installing the capture helper: " + e.Message)
		}
	}
	h, err := FindHelper(context.Background(), opts)
	oneShotLeases.mu.Lock()
	oneShotLeases.kept = append(oneShotLeases.kept, h)
	oneShotLeases.mu.Unlock()
	return h, err
}

// ManifestURLsFromEnv is $DESKHAND_MANIFEST_URL: the release manifest URLs
// to install from, the first the primary and the rest mirrors.
func ManifestURLsFromEnv() []string {
	return strings.Fields(os.Getenv("DESKHAND_MANIFEST_URL"))
}

// installDirs returns the store directories opts use.
func installDirs(opts installer.Options) (data, state string) {
	data, state = opts.DataDir, opts.StateDir
	if data == "" || state == "" {
		d, s, _ := defaultStoreDirs()
		if data == "" {
			data = d
		}
		if state == "" {
			state = s
		}
	}
	return data, state
}

// checkBundle compares a bundled helper with the SHA256SUMS beside it and
// returns it opened as it was hashed (nil for an unverified development
// build, which runs by path), with a note for such a build.
func checkBundle(helper string, required bool) (*os.File, string, error) {
	sums := filepath.Join(filepath.Dir(helper), BundleChecksums)
	want, err := readChecksum(sums, HelperName)
	if errors.Is(err, os.ErrNotExist) && !required {
		return nil, "unverified development build: no " + BundleChecksums + " beside it", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("checking the bundled helper %s: %w; reinstall deskhand", helper, err)
	}
	exe, got, err := installer.OpenHashed(helper)
	if err != nil {
		return nil, "", err
	}
	if got != want {
		exe.Close()
		return nil, "", fmt.Errorf("the bundled helper %s has SHA-256 %s, but the bundle's %s says %s: the bundle was modified or damaged; it will not be run. Reinstall deskhand",
			helper, got, BundleChecksums, want)
	}
	return exe, "verified against " + BundleChecksums, nil
}

// readChecksum finds name's hash in a sha256sum(1) list.
func readChecksum(path, name string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, 1<<20))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 2 && strings.TrimPrefix(fields[1], "*") == name && len(fields[0]) == 64 {
			return strings.ToLower(fields[0]), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("%s has no line for %s", path, name)
}

func checkExecutable(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s does not exist", abs)
		}
		return "", err
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%s is a directory, not the helper binary", abs)
	}
	// Windows has no execute bits: a program is an .exe.
	if runtime.GOOS == "windows" {
		if !strings.EqualFold(filepath.Ext(abs), ".exe") {
			return "", fmt.Errorf("%s is not a Windows program (.exe)", abs)
		}
	} else if fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not executable (chmod +x it)", abs)
	}
	return abs, nil
}

func defaultStoreDirs() (string, string, error) { return store.DefaultDirs() }
