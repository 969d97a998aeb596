package windows

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/desktop"
	"github.com/deskhand/deskhand/supervisor/lock"
	"golang.org/x/sys/windows"
)

// DefaultLaunchTimeout bounds the wait for a launched app's first window.
const DefaultLaunchTimeout = 15 * time.Second

// Options configure Open.
type Options struct {
	// VirtualDisplay is serve's --virtual-display: Windows has no private
	// desktop for deskhand, so only auto (or off) is accepted.
	VirtualDisplay string
	Logger         *slog.Logger
}

// Desktop is the interactive session deskhand runs in.
type Desktop struct {
	name string
	log  *slog.Logger
}

var (
	procOpenInputDesktop  = user32.NewProc("OpenInputDesktop")
	procCloseDesktop      = user32.NewProc("CloseDesktop")
	procGetUserObjectInfo = user32.NewProc("GetUserObjectInformationW")
	procSetDpiAwarenessCx = user32.NewProc("SetProcessDpiAwarenessContext")
	procSetProcessDPIAwr  = user32.NewProc("SetProcessDPIAware")
)

// Open opens the session's desktop. It makes the process per-monitor DPI
// aware first, so that the pointer, the helper's captures and the window
// bounds all speak physical pixels (otherwise Windows scales a process
// that did not say so, and a click lands off by the scale factor).
func Open(_ context.Context, opts Options) (*Desktop, error) {
	switch strings.ToLower(strings.TrimSpace(opts.VirtualDisplay)) {
	case "", "auto", "off", "none", "no", "false":
	default:
		return nil, fmt.Errorf("--virtual-display %s: Windows has no private virtual desktop for deskhand to start; it works on your own screen, so use --virtual-display auto (the default)", opts.VirtualDisplay)
	}
	const perMonitorV2 = ^uintptr(3) // DPI_AWARENESS_CONTEXT_PER_MONITOR_AWARE_V2 (-4)
	if procSetDpiAwarenessCx.Find() == nil {
		procSetDpiAwarenessCx.Call(perMonitorV2)
	} else if procSetProcessDPIAwr.Find() == nil {
		procSetProcessDPIAwr.Call()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Desktop{name: SessionName(), log: log}, nil
}

// SessionName names this process's interactive session ("windows-session-1"):
// the state file and messages are keyed by it.
func SessionName() string {
	var id uint32
	if err := windows.ProcessIdToSessionId(windows.GetCurrentProcessId(), &id); err != nil {
		return "windows-session"
	}
	return fmt.Sprintf("windows-session-%d", id)
}

func (d *Desktop) Display() string { return d.name }

// Lock is the session's computer-use lock (LockName).
func (d *Desktop) Lock(opts lock.Options) *lock.Lock { return Lock(opts) }

func (d *Desktop) Private() bool { return false }

// HelperEnv: the helper finds the session's desktop by itself.
func (d *Desktop) HelperEnv() []string { return nil }

// DisplayGate is CheckDisplay.
func (d *Desktop) DisplayGate(*bridge.Client) func(ctx context.Context) error {
	return func(context.Context) error { return CheckDisplay() }
}

// CheckDisplay reports why deskhand cannot see and drive the user's
// desktop now: it runs without one (a service, session 0, an ssh
// session), or the input desktop is not the user's (the screen is
// locked, or a UAC prompt or Ctrl+Alt+Del shows the secure desktop,
// where no program may send input).
func CheckDisplay() error {
	const desktopReadObjects = 0x0001
	h, _, err := procOpenInputDesktop.Call(0, 0, desktopReadObjects)
	if h == 0 {
		return fmt.Errorf("deskhand cannot reach the user's desktop (%v): it must run in the logged-in user's desktop session, not as a service or over ssh; ask the user to start the MCP client from their own desktop", err)
	}
	defer procCloseDesktop.Call(h)
	var name [64]uint16
	var n uint32
	const uoiName = 2
	if r, _, err := procGetUserObjectInfo.Call(h, uoiName, uintptr(unsafe.Pointer(&name[0])), unsafe.Sizeof(name), uintptr(unsafe.Pointer(&n))); r == 0 {
		return fmt.Errorf("reading the name of the input desktop: %w", err)
	}
	if got := windows.UTF16ToString(name[:]); !strings.EqualFold(got, "Default") {
		return fmt.Errorf("the screen shows the %s desktop (the lock screen or a security prompt), where Windows lets no program see or send input; ask the user to unlock the screen or answer the prompt, then try again", got)
	}
	if metric(smCXVirtualScreen) <= 0 {
		return errors.New("the desktop reports no screen: ask the user to connect a display or start a remote desktop session")
	}
	return nil
}

// WatchEscape is the package's WatchEscape.
func (d *Desktop) WatchEscape(onEscape func()) (own func(code uint8), stop func(), err error) {
	return WatchEscape(onEscape)
}

// KeepClipboard does nothing: Windows keeps text put on the clipboard
// with SetClipboardData after the process that put it there exits, so
// the clipboard needs no owner.
func (d *Desktop) KeepClipboard(context.Context, string, cleanup.Stash) error { return nil }

// Notify is the package's Notify.
func (d *Desktop) Notify(_ context.Context, summary, body string) error { return Notify(summary, body) }

// ResolveApp finds how name would launch and the identity of its windows.
func (d *Desktop) ResolveApp(name string) (bridge.App, error) {
	l, err := planLaunch(name, startMenus(), exec.LookPath)
	return l.App, err
}

// startMenus are the user's and every user's Start-menu Programs folders.
func startMenus() []startMenu {
	var menus []startMenu
	for _, env := range []string{"APPDATA", "ProgramData"} {
		if root := os.Getenv(env); root != "" {
			dir := filepath.Join(root, `Microsoft\Windows\Start Menu\Programs`)
			menus = append(menus, startMenu{Dir: dir, FS: os.DirFS(dir)})
		}
	}
	return menus
}

// Launcher launches apps and waits, through helper, for their window.
func (d *Desktop) Launcher(helper *bridge.Client) desktop.Launcher {
	return &launcher{d: d, helper: helper}
}

// InstalledApps lists none yet: the helper has no apps method on Windows,
// so request_access names apps by what is running or by executable.
func (d *Desktop) InstalledApps(context.Context, *bridge.Client) ([]bridge.App, error) {
	return nil, nil
}

// SessionCapture is nil: the gates' masking is all a capture needs.
func (d *Desktop) SessionCapture(*bridge.Client, *consent.Session) desktop.Capture { return nil }

// NoStacking is nil: Windows gives the z-order.
func (d *Desktop) NoStacking() error { return nil }

// Drawn is nil: the helper compares pixels for the staleness gate, and
// staleness covers the whole screen.
func (d *Desktop) Drawn() desktop.Drawn { return nil }

func (d *Desktop) Close() {}

type launcher struct {
	d      *Desktop
	helper *bridge.Client
}

// OpenApplication starts name (planLaunch) and returns its first new
// window: of the started process when deskhand ran the executable, else
// the first new window of the app's identity, or any new window when a
// shortcut names nothing more.
func (l *launcher) OpenApplication(ctx context.Context, name string) (*desktop.LaunchedApp, error) {
	plan, err := planLaunch(name, startMenus(), exec.LookPath)
	if err != nil {
		return nil, err
	}
	before, err := l.helper.Windows(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("listing windows before launching %s: %w", name, err)
	}
	known := map[uint32]bool{}
	for _, w := range before.Windows {
		known[w.ID] = true
	}
	argv, pid := []string{plan.Exe}, 0
	if plan.Exe != "" {
		cmd := exec.Command(plan.Exe)
		// A process group of its own: a Ctrl-C meant for deskhand must
		// not reach the app.
		cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("launching %s: %w", plan.Exe, err)
		}
		pid = cmd.Process.Pid
		go cmd.Wait()
	} else {
		argv = []string{"ShellExecute", plan.Shell}
		target, _ := windows.UTF16PtrFromString(plan.Shell)
		verb, _ := windows.UTF16PtrFromString("open")
		if err := windows.ShellExecute(0, verb, target, nil, nil, windows.SW_SHOWNORMAL); err != nil {
			return nil, fmt.Errorf("launching %s: %w", plan.Shell, err)
		}
	}
	l.d.log.Info("launched application", "argv", argv, "pid", pid)
	deadline := time.NewTimer(DefaultLaunchTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if list, err := l.helper.Windows(ctx, false); err == nil {
			for i := range list.Windows {
				w := &list.Windows[i]
				if !known[w.ID] && !w.Hidden && !w.Minimized && launchedBy(plan, pid, w.App) {
					return &desktop.LaunchedApp{Name: w.App.Name, Exec: argv, PID: w.App.PID, Window: w}, nil
				}
			}
		}
		select {
		case <-tick.C:
		case <-deadline.C:
			return nil, fmt.Errorf("launched %s, but no new window of it appeared within %s; take a screenshot to see whether it shows up later", name, DefaultLaunchTimeout)
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %s's window: %w", name, ctx.Err())
		}
	}
}
