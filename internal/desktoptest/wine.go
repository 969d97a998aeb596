//go:build unix

package desktoptest

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Windows programs run on a desktop under Wine (64-bit only: Debian's wine64
// without wine32). Facts this relies on, checked with Debian 12's Wine 8.0:
//
//   - `wineboot -i` in a fresh prefix takes about 36 s, so a prefix is made
//     once per Wine version (and shim) and cached; each test process works
//     on a private copy, because a prefix has one wineserver and one
//     explorer.exe (which owns the X clipboard), and those must live on the
//     test's own display and die with it.
//   - A Go (1.22 or later) Windows binary dies at start with
//     "bcryptprimitives.dll not found": Wine 8 lacks ProcessPrng. The shim in
//     wineshim/ provides it; it is installed only where the prefix has no
//     bcryptprimitives.dll (Wine 10 ships one).
//   - Windows started under Wine are ordinary X top-levels managed by the
//     window manager, with _NET_WM_PID the pid of the wine64 process.

//go:embed wineshim/bcryptprimitives.c
var wineShimSource []byte

// wineDeps names the Debian packages behind a missing Wine tool.
const wineDeps = "on Debian: apt-get install wine wine64 gcc-mingw-w64-x86-64"

// Wine runs Windows programs on one desktop, in the test process's prefix.
type Wine struct {
	d      *Desktop
	prefix string
	tools  wineTools
}

type wineTools struct{ wine, server, gcc string }

var (
	winePrefixOnce sync.Once
	winePrefixDir  string
	wineToolsFound wineTools
	winePrefixErr  error
)

// StartWine returns the Wine that runs programs on d in the test process's
// private prefix (one per desktop, with a wineserver kept running), making the prefix on first use (from the cache when it
// holds one for this Wine version). It skips the test when Wine or mingw
// is missing (fails under CI). Wine's processes carry the desktop id, so
// Close stops the wineserver with the rest of the desktop.
func (d *Desktop) StartWine(t testing.TB) *Wine {
	t.Helper()
	winePrefixOnce.Do(func() { winePrefixDir, wineToolsFound, winePrefixErr = makeWinePrefix() })
	if errors.Is(winePrefixErr, ErrMissingTool) {
		skipOrFail(t, "no Wine: %v", winePrefixErr)
	}
	if winePrefixErr != nil {
		t.Fatalf("making the Wine prefix: %v", winePrefixErr)
	}
	d.mu.Lock()
	w := d.wine
	d.mu.Unlock()
	if w != nil {
		return w
	}
	w = &Wine{d: d, prefix: winePrefixDir, tools: wineToolsFound}
	// A persistent wineserver (and the explorer.exe it starts with the
	// first program) saves every later program the few seconds of
	// starting them again; it stops with the desktop.
	cmd := exec.Command(w.tools.server, "-f", "-p")
	cmd.Env = w.Env()
	p, err := startProc("wineserver", cmd, filepath.Join(d.dir, "logs", "wineserver.log"), syscall.SIGKILL)
	if err != nil {
		t.Fatalf("starting wineserver: %v", err)
	}
	d.mu.Lock()
	d.daemons = append(d.daemons, p)
	d.mu.Unlock()
	// The first program in a session starts Wine's services (services.exe,
	// winedevice.exe, explorer.exe), which inherit its standard handles and
	// outlive it: a test's pipes would never reach end of file. wineboot
	// starts them here with no stdio.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	boot := exec.CommandContext(ctx, w.tools.wine, "wineboot")
	boot.Env = w.Env()
	if err := boot.Run(); err != nil {
		t.Fatalf("starting Wine's services (wineboot): %v", err)
	}
	d.mu.Lock()
	d.wine = w
	d.mu.Unlock()
	return w
}

// Prefix returns the WINEPREFIX directory.
func (w *Wine) Prefix() string { return w.prefix }

// Env returns the desktop's AppEnv with the prefix and settings that keep
// Wine quiet and from installing Mono, Gecko or menu entries.
func (w *Wine) Env() []string {
	return append(withoutVars(w.d.AppEnv(), "WINEPREFIX", "WINEDEBUG", "WINEDLLOVERRIDES", "WINEARCH"),
		wineEnv(w.prefix)...)
}

func wineEnv(prefix string) []string {
	return []string{
		"WINEPREFIX=" + prefix,
		"WINEDEBUG=-all",
		"WINEDLLOVERRIDES=mscoree,mshtml,winemenubuilder.exe=d",
	}
}

// Command returns a command that runs the Windows program exe (a path on
// the Linux side, or a Wine built-in such as "notepad") under wine64 on the
// desktop. The caller starts and waits for it; whatever it leaves behind is
// swept on Close.
func (w *Wine) Command(exe string, args ...string) *exec.Cmd {
	cmd := exec.Command(w.tools.wine, append([]string{exe}, args...)...)
	cmd.Env = w.Env()
	cmd.Dir = filepath.Join(w.d.dir, "home")
	return cmd
}

// StartApp starts a Windows GUI program under Wine and waits for its
// top-level window, like Desktop.StartApp; class is the WM_CLASS class Wine
// gives it (the executable's name, "notepad.exe"), or "" to match by pid.
func (w *Wine) StartApp(t testing.TB, class, exe string, args ...string) *Window {
	t.Helper()
	return w.d.StartApp(t, App{
		Name:  w.tools.wine,
		Args:  append([]string{exe}, args...),
		Class: class,
		Env:   wineEnv(w.prefix),
	})
}

// OfferXClipboard puts text on the X clipboard with xclip and waits, up to
// 20 s, until arrived reports that Windows' clipboard followed, as Wine
// makes it do a moment after the selection changes owner (0.5–5 s here).
// arrived is asked only every 500 ms: asked every 50 ms, Windows'
// clipboard kept its old text in two runs of three on a loaded machine,
// most likely because Wine's import gives up when it finds the clipboard
// open. xclip offers the text again, up to three times, before the test
// fails.
func (w *Wine) OfferXClipboard(t testing.TB, text string, arrived func() bool) {
	t.Helper()
	for try := 1; try <= 3; try++ {
		xc := w.d.Command("xclip", "-selection", "clipboard", "-i")
		xc.Stdin = strings.NewReader(text)
		// No output pipes: xclip forks to serve the selection and would
		// hold them open.
		if err := xc.Run(); err != nil {
			t.Fatalf("xclip -i: %v", err)
		}
		// Each look opens Windows' clipboard: look seldom.
		for start := time.Now(); time.Since(start) < 20*time.Second; time.Sleep(500 * time.Millisecond) {
			if arrived() {
				return
			}
		}
		x, _ := w.d.Command("xclip", "-selection", "clipboard", "-o").Output()
		t.Logf("try %d: Windows' clipboard has not followed X's, which holds %q", try, x)
	}
	t.Errorf("Windows' clipboard did not follow X's clipboard (%q)", text)
}

// WindowsPath returns the Windows path (Z:\...) of a Linux path, which Wine
// maps through its Z: drive.
func WindowsPath(path string) string {
	return `Z:` + strings.ReplaceAll(path, "/", `\`)
}

// BuildWindows builds the Go main package pkg (an import path or a
// directory relative to the module root) for windows/amd64 without cgo
// into a temporary directory of the test and returns the .exe's path.
func BuildWindows(t testing.TB, pkg string) string {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(pkg)+".exe")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, pkg)
	cmd.Dir = root
	cmd.Env = append(withoutVars(os.Environ(), "GOOS", "GOARCH", "CGO_ENABLED"),
		"GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=windows go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

func moduleRoot() (string, error) {
	b, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module root: %w", err)
	}
	mod := strings.TrimSpace(string(b))
	if mod == "" || mod == os.DevNull {
		return "", errors.New("finding the module root: not inside a Go module")
	}
	return filepath.Dir(mod), nil
}

func findWineTools() (wineTools, error) {
	// Debian puts wine64 and wineserver in /usr/lib/wine, with only the
	// wine wrapper on PATH.
	look := func(name string) string {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		if p := filepath.Join("/usr/lib/wine", name); isExecutable(p) {
			return p
		}
		return ""
	}
	tools := wineTools{wine: look("wine64"), server: look("wineserver"), gcc: look("x86_64-w64-mingw32-gcc")}
	var missing []string
	for name, p := range map[string]string{"wine64": tools.wine, "wineserver": tools.server, "x86_64-w64-mingw32-gcc": tools.gcc} {
		if p == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		return tools, fmt.Errorf("%w: %s not found (%s)", ErrMissingTool, strings.Join(missing, ", "), wineDeps)
	}
	return tools, nil
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// wineCacheRoot is where prefixes are kept between test runs:
// DESKHAND_WINE_CACHE, else /var/cache/deskhand when writable (CI keeps it),
// else the temporary directory.
func wineCacheRoot() string {
	if dir := os.Getenv("DESKHAND_WINE_CACHE"); dir != "" {
		return dir
	}
	if err := os.MkdirAll("/var/cache/deskhand", 0o755); err == nil && syscall.Access("/var/cache/deskhand", 2) == nil {
		return "/var/cache/deskhand"
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("deskhand-wine-%d", os.Getuid()))
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9.]+`)

// makeWinePrefix returns this process's private prefix, a copy of the
// cached one for this Wine version and shim.
func makeWinePrefix() (string, wineTools, error) {
	tools, err := findWineTools()
	if err != nil {
		return "", tools, err
	}
	version, err := exec.Command(tools.wine, "--version").Output()
	if err != nil {
		return "", tools, fmt.Errorf("asking %s --version: %w", tools.wine, err)
	}
	sum := sha256.Sum256(wineShimSource)
	key := unsafeName.ReplaceAllString(strings.TrimSpace(string(version)), "-") + "-" + hex.EncodeToString(sum[:4])
	root := wineCacheRoot()
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", tools, fmt.Errorf("creating the Wine cache: %w", err)
	}
	template := filepath.Join(root, "wine-prefix-"+key)
	if err := ensureTemplate(template, tools); err != nil {
		return "", tools, err
	}
	removeStaleCopies(root)
	dir := filepath.Join(root, fmt.Sprintf("wine-run-%d", os.Getpid()))
	_ = os.RemoveAll(dir)
	if err := copyPrefix(template, dir); err != nil {
		return "", tools, fmt.Errorf("copying the Wine prefix: %w", err)
	}
	return dir, tools, nil
}

// copyPrefix copies a prefix, hard-linking system32: its 600 MB of DLLs
// (Wine 8 installs real builtins, not stubs) are never written, while the
// registry and everything else is.
func copyPrefix(src, dst string) error {
	shared := filepath.Join(src, "drive_c", "windows", "system32")
	return filepath.WalkDir(src, func(path string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		to := filepath.Join(dst, rel)
		info, err := e.Info()
		if err != nil {
			return err
		}
		switch {
		case e.IsDir():
			return os.Mkdir(to, info.Mode().Perm())
		case e.Type()&os.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case strings.HasPrefix(path, shared+string(filepath.Separator)):
			return os.Link(path, to)
		default:
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if err := os.WriteFile(to, b, info.Mode().Perm()); err != nil {
				return err
			}
			return os.Chtimes(to, info.ModTime(), info.ModTime()) // Wine compares .update-timestamp
		}
	})
}

// removeStaleCopies removes the private prefixes of test processes that
// have ended; a test process cannot remove its own at exit.
func removeStaleCopies(root string) {
	entries, _ := os.ReadDir(root)
	for _, e := range entries {
		pid, ok := strings.CutPrefix(e.Name(), "wine-run-")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(pid)
		if err != nil || syscall.Kill(n, 0) == syscall.ESRCH {
			_ = os.RemoveAll(filepath.Join(root, e.Name()))
		}
	}
}

// ensureTemplate makes the cached prefix unless it exists. A lock file
// serialises test processes that start at once; the prefix is made under
// another name and renamed, so a killed run leaves no half-made prefix.
func ensureTemplate(template string, tools wineTools) error {
	lock, err := os.OpenFile(template+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("opening the Wine prefix lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("locking the Wine prefix: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(filepath.Join(template, "system.reg")); err == nil {
		return nil
	}
	work := template + ".new"
	_ = os.RemoveAll(work)
	if err := bootPrefix(work, tools); err != nil {
		_ = os.RemoveAll(work)
		return err
	}
	if err := os.Rename(work, template); err != nil {
		return fmt.Errorf("storing the Wine prefix: %w", err)
	}
	return nil
}

// bootPrefix runs wineboot in a new prefix without a display, waits for its
// wineserver to exit, and installs the shim where Wine lacks the DLL.
func bootPrefix(prefix string, tools wineTools) error {
	home, err := os.MkdirTemp("", "deskhand-wine-home-")
	if err != nil {
		return fmt.Errorf("creating a home for wineboot: %w", err)
	}
	defer os.RemoveAll(home)
	env := append(withoutVars(os.Environ(), "DISPLAY", "WAYLAND_DISPLAY", "WINEPREFIX", "WINEDEBUG", "WINEDLLOVERRIDES", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"),
		append(wineEnv(prefix), "HOME="+home)...)
	run := func(timeout time.Duration, name string, args ...string) error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Env = env
		cmd.Dir = home
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		setDeathSig(cmd.SysProcAttr, syscall.SIGKILL)
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, tail(b))
		}
		return nil
	}
	if err := run(5*time.Minute, tools.wine, "wineboot", "-i"); err != nil {
		_ = run(30*time.Second, tools.server, "-k")
		return fmt.Errorf("making the Wine prefix: %w", err)
	}
	if err := run(2*time.Minute, tools.server, "-w"); err != nil {
		return fmt.Errorf("waiting for wineserver: %w", err)
	}
	// wineboot linked the user's folders (Desktop, Documents, ...) into
	// the throwaway home; make them plain folders so they outlive it.
	links, _ := filepath.Glob(filepath.Join(prefix, "drive_c", "users", "*", "*"))
	more, _ := filepath.Glob(filepath.Join(prefix, "drive_c", "users", "*", "AppData", "Roaming", "Microsoft", "Windows", "*"))
	for _, link := range append(links, more...) {
		if target, err := os.Readlink(link); err == nil && strings.HasPrefix(target, home) {
			if err := os.Remove(link); err != nil {
				return fmt.Errorf("replacing the link %s: %w", link, err)
			}
			if err := os.Mkdir(link, 0o755); err != nil {
				return fmt.Errorf("replacing the link %s: %w", link, err)
			}
		}
	}
	dll := filepath.Join(prefix, "drive_c", "windows", "system32", "bcryptprimitives.dll")
	if _, err := os.Stat(dll); err == nil {
		return nil
	}
	src := filepath.Join(home, "bcryptprimitives.c")
	if err := os.WriteFile(src, wineShimSource, 0o600); err != nil {
		return fmt.Errorf("writing the shim source: %w", err)
	}
	if err := run(2*time.Minute, tools.gcc, "-shared", "-s", "-O2", "-o", dll, src, "-ladvapi32"); err != nil {
		return fmt.Errorf("building the bcryptprimitives shim: %w", err)
	}
	return nil
}

func tail(b []byte) string {
	const max = 2000
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return strings.TrimSpace(string(b))
}
