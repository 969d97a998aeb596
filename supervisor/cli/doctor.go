package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/installer"
	"github.com/deskhand/deskhand/installer/store"
	"github.com/deskhand/deskhand/supervisor"
	"github.com/deskhand/deskhand/supervisor/lock"
)

const doctorUsage = `doctor [--helper PATH] [--state-dir DIR] [--repair]

Checks what deskhand needs and explains each problem with the exact fix:
the display serve would work on, with the same probe its display gate
uses (reachable, X11 and not XWayland; with DISPLAY unset, whether serve
can start its own private desktop, which is not a failure), the X
extensions (XTEST, MIT-SHM, RANDR; on a Wayland session, what the
compositor offers deskhand and what is missing, and on KDE the desktop
entry that authorizes the helper; on macOS, Screen Recording and
Accessibility instead, and Input Monitoring, without which everything but
the user's Escape stopping a turn works), the capture helper (where it
comes from, its version and protocol), the installer lock, the computer-use lock of the display (where it is and
who holds it), the turn journal, the config and state paths and their
permissions. The exit status is 0 only when everything deskhand needs
works.

The turn journal: before deskhand hides a window or stashes the clipboard
it writes that down in the state directory, and removes the record once
the turn's end has given them back. A deskhand that was killed mid-turn
leaves its record behind; doctor reports it, and the next deskhand serving
on the display gives the windows and the clipboard back when it starts.
--repair does that now, without serving: it shows the recorded windows
that still exist again and puts the clipboard, PRIMARY selection and cut
buffer back. It repairs only records of deskhands whose process is gone,
and not while another deskhand uses the display.

Flags:
`

// check is one line of the doctor's report.
type check struct {
	status string // "ok", "warn" (works, degraded) or "FAIL" (needed and broken)
	name   string
	detail string
	fix    string
}

func runDoctorCommand(ctx context.Context, args []string, io Stdio) error {
	fs := newFlagSet("doctor", doctorUsage, io)
	helperPath := fs.String("helper", "", "check this helper `binary` instead of looking for one")
	stateDir := fs.String("state-dir", "", "the `directory` deskhand serve keeps its state in, as given to serve's --state-dir (default $XDG_STATE_HOME/deskhand, else ~/.local/state/deskhand)")
	repair := fs.Bool("repair", false, "give back the windows and the clipboard a deskhand killed mid-turn left hidden and stashed (see the turn journal above), then check")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	fmt.Fprintf(io.Out, "deskhand %s doctor\n", supervisor.Version)
	dir, err := journalDir(*stateDir)
	if err != nil {
		return err
	}
	if *repair {
		if err := repairJournals(ctx, io.Out, *helperPath, dir, desktopName()); err != nil {
			return err
		}
	}
	checks := doctor(ctx, *helperPath)
	checks = append(checks, journalCheck(dir, desktopName()))
	failed := 0
	for _, c := range checks {
		fmt.Fprintf(io.Out, "  %-4s  %-11s %s\n", c.status, c.name, c.detail)
		if c.fix != "" {
			fmt.Fprintf(io.Out, "        %-11s fix: %s\n", "", c.fix)
		}
		if c.status == "FAIL" {
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d check(s) failed; apply the fixes above and run `deskhand doctor` again", failed)
	}
	fmt.Fprintln(io.Out, "everything deskhand needs works")
	return nil
}

func doctor(ctx context.Context, explicitHelper string) []check {
	var checks []check
	display := desktopName()
	dc, state := displayChecks(ctx, display, envOr("DESKHAND_VIRTUAL_DISPLAY", "auto"))
	checks = append(checks, dc...)
	checks = append(checks, helperChecks(ctx, explicitHelper, display, state)...)
	checks = append(checks, storeChecks()...)
	checks = append(checks, sessionLockCheck(display))
	checks = append(checks, waylandChecks(ctx, explicitHelper)...)
	return checks
}

// sessionLockCheck reports the cross-session lock of display: where every
// deskhand on it looks, whether that place is fit to hold it, and who
// holds the lock.
func sessionLockCheck(display string) check {
	const name = "cu lock"
	if display == "" {
		return check{status: "ok", name: name, detail: "no DISPLAY: each private virtual desktop deskhand starts has its own lock"}
	}
	l := displayLock(display, lock.Options{})
	where := l.Path()
	if l.NeedsDir() {
		if err := lock.CheckDir(filepath.Dir(where)); err != nil {
			return check{status: "FAIL", name: name, detail: err.Error() + ", so deskhand refuses to take the computer-use lock there",
				fix: fmt.Sprintf("remove it (`rm -r %s`; deskhand makes it again), or set XDG_RUNTIME_DIR to your own runtime directory", filepath.Dir(where))}
		}
	}
	o, err := l.Holder()
	switch {
	case err != nil:
		return check{status: "warn", name: name, detail: err.Error()}
	case o == nil:
		return check{status: "ok", name: name, detail: "computer-use lock of " + display + " is free (" + where + ")"}
	}
	return check{status: "ok", name: name, detail: fmt.Sprintf("computer-use lock of %s (%s) is held by deskhand pid %d (session %s) since %s; other sessions on it wait",
		display, where, o.PID, o.SessionID, o.Acquired.Local().Format("15:04:05"))}
}

// displayState is what the display checks found, as far as the helper
// check needs to know.
type displayState int

const (
	// displayReached: the X server answered (usable or not).
	displayReached displayState = iota
	// displayOwn: serve would start its own private desktop.
	displayOwn
	// displayDown: there is no display to use, or it does not answer.
	displayDown
)

// helperChecks finds the helper the way serve does (without downloading)
// and handshakes with it. With displayOwn, serve would start its own
// desktop, so the helper's complaint that it has no display now is
// expected. With displayDown the helper is checked without the display:
// it would wait on a stopped X server until its handshake deadline, and
// then be blamed, with a reinstall as the fix, for what the display line
// already reports.
func helperChecks(ctx context.Context, explicit, display string, state displayState) []check {
	loc, err := supervisor.FindHelper(ctx, supervisor.LocateOptions{Explicit: explicit, NoDownload: true})
	if err != nil {
		fix := "run `deskhand install` to download and verify it, or build it with `make build`"
		var unsafe *store.UnsafeDirError
		switch {
		case errors.As(err, &unsafe):
			fix = unsafe.Fix
		case errors.Is(err, installer.ErrModified):
			fix = "run `deskhand install` to reinstall it, and find out what changed the installed files"
		}
		return []check{{status: "FAIL", name: "helper", detail: err.Error(), fix: fix}}
	}
	defer loc.Release()
	where := string(loc.Source)
	if loc.Version != "" {
		where += " version " + loc.Version
	}
	if loc.Note != "" {
		where += ", " + loc.Note
	}
	helperDisplay := display
	if state == displayDown {
		helperDisplay = ""
		where += ", checked without the display, which failed above"
	}
	client := bridge.New(bridge.Options{Path: loc.Path, Env: []string{"DISPLAY=" + helperDisplay, "DESKHAND_HELPER_BACKEND=x11"}, MaxRestarts: 1, ClientName: "deskhand-doctor"})
	defer client.Close()
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Start(hctx); err != nil {
		return []check{{status: "FAIL", name: "helper", detail: fmt.Sprintf("%s (%s) does not start: %v", loc.Path, where, err),
			fix: "reinstall it with `deskhand install` (or rebuild with `make build`); run `deskhand helper handshake` to see its log"}}
	}
	info := client.HandshakeInfo()
	out := []check{{status: "ok", name: "helper", detail: fmt.Sprintf("%s (%s): helper %s, protocol %d, platform %s",
		loc.Path, where, info.HelperVersion, info.ProtocolVersion, info.Platform)}}
	var raw map[string]any
	if err := client.Call(hctx, "handshake", map[string]any{"protocol_versions": bridge.ProtocolVersions()}, &raw); err == nil {
		if de, ok := raw["display_error"].(string); ok && de != "" && state == displayReached {
			out = append(out, check{status: "FAIL", name: "helper", detail: "the helper cannot use the display: " + de,
				fix: "fix the display problem above; the helper reads DISPLAY from deskhand's environment"})
		}
	}
	return out
}

// storeChecks reports the install state, the lock and the paths.
func storeChecks() []check {
	var out []check
	data, state, err := store.DefaultDirs()
	if err != nil {
		return []check{{status: "FAIL", name: "paths", detail: err.Error(), fix: "set HOME (or XDG_DATA_HOME and XDG_STATE_HOME)"}}
	}
	st := store.New(data, state)
	if a, err := st.Active(); err == nil {
		detail := fmt.Sprintf("active %s", a.Version)
		if a.Previous != nil {
			detail += fmt.Sprintf(", previous %s (for `deskhand install --rollback`)", a.Previous.Version)
		}
		var unsafe *store.UnsafeDirError
		if _, err := installer.Active(installer.Options{DataDir: data, StateDir: state}); errors.As(err, &unsafe) {
			out = append(out, check{status: "FAIL", name: "installed", detail: detail + ": " + unsafe.Detail(), fix: unsafe.Fix})
		} else if err != nil {
			out = append(out, check{status: "FAIL", name: "installed", detail: detail + ": " + err.Error(), fix: "run `deskhand install` to reinstall it"})
		} else {
			out = append(out, check{status: "ok", name: "installed", detail: detail + ", verified against its signed manifest"})
		}
	} else if errors.Is(err, store.ErrNotInstalled) {
		out = append(out, check{status: "ok", name: "installed", detail: "no downloaded helper (`deskhand install` fetches one)"})
	} else {
		out = append(out, check{status: "FAIL", name: "installed", detail: err.Error(),
			fix: "run `deskhand install`: it rebuilds the record from the installed versions that verify, and rewrites it"})
	}
	if acc, err := st.Accepted(); errors.Is(err, store.ErrNotRegular) {
		out = append(out, check{status: "FAIL", name: "installed", detail: err.Error(), fix: "run `deskhand install`: it replaces it and raises the floor again from the active version"})
	} else if err != nil {
		out = append(out, check{status: "FAIL", name: "installed", detail: err.Error(), fix: "delete " + filepath.Join(state, "installer.json") + " if you trust the release you install next"})
	} else if acc.Highest != "" {
		out = append(out, check{status: "ok", name: "rollback", detail: "manifests older than " + acc.Highest + " are refused"})
	}
	if held, pid, err := st.LockHolder(); errors.Is(err, store.ErrSymlink) || errors.Is(err, store.ErrNotRegular) {
		lock := filepath.Join(data, ".lock")
		out = append(out, check{status: "FAIL", name: "lock", detail: "installs are refused: " + err.Error(), fix: fmt.Sprintf("`rm %s`", lock)})
	} else if err != nil {
		out = append(out, check{status: "warn", name: "lock", detail: "cannot read the installer lock: " + err.Error(), fix: "check the permissions of " + data})
	} else if held {
		out = append(out, check{status: "warn", name: "lock", detail: fmt.Sprintf("an install is running now (pid %d); other installs wait for it", pid),
			fix: fmt.Sprintf("wait for it, or stop it with `kill %d`", pid)})
	} else {
		out = append(out, check{status: "ok", name: "lock", detail: "installer lock is free"})
	}
	config := filepath.Join(xdgDir("XDG_CONFIG_HOME", ".config"), "deskhand")
	for _, p := range []struct{ name, dir string }{{"config", config}, {"data", data}, {"state", state}} {
		out = append(out, pathCheck(p.name, p.dir))
	}
	return out
}

func xdgDir(env, fallback string) string {
	if v := os.Getenv(env); filepath.IsAbs(v) {
		return v
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, fallback)
}

// pathCheck reports a directory deskhand writes: missing is fine (it is
// created when needed) as long as its nearest existing parent is
// writable; one that another user could change (store.CheckPrivate) is
// not, since the helpers there run with access to the screen.
func pathCheck(name, dir string) check {
	fi, err := os.Stat(dir)
	if errors.Is(err, os.ErrNotExist) {
		parent := dir
		for {
			parent = filepath.Dir(parent)
			if _, err := os.Stat(parent); err == nil || parent == filepath.Dir(parent) {
				break
			}
		}
		if err := writable(parent); err != nil {
			return check{status: "FAIL", name: name, detail: fmt.Sprintf("%s does not exist and %s is not writable: %v", dir, parent, err),
				fix: fmt.Sprintf("create it: `mkdir -p %s && chmod 700 %s`", dir, dir)}
		}
		return check{status: "ok", name: name, detail: dir + " (created when first needed)"}
	}
	if err != nil {
		return check{status: "FAIL", name: name, detail: err.Error(), fix: "check the permissions of " + filepath.Dir(dir)}
	}
	if !fi.IsDir() {
		return check{status: "FAIL", name: name, detail: dir + " is not a directory", fix: fmt.Sprintf("move it away: `mv %s %s.bak`", dir, dir)}
	}
	// The same check, and so the same words, as the refusal at launch.
	var unsafe *store.UnsafeDirError
	if err := store.CheckPrivate(dir); errors.As(err, &unsafe) {
		return check{status: "FAIL", name: name, detail: unsafe.Detail(), fix: unsafe.Fix}
	} else if err != nil {
		return check{status: "FAIL", name: name, detail: err.Error(), fix: "check the permissions of " + dir}
	}
	if err := writable(dir); err != nil {
		return check{status: "FAIL", name: name, detail: fmt.Sprintf("%s is not writable: %v", dir, err), fix: fmt.Sprintf("`chown -R %s %s`", os.Getenv("USER"), dir)}
	}
	return check{status: "ok", name: name, detail: dir}
}

func writable(dir string) error {
	f, err := os.CreateTemp(dir, ".tmp-doctor-")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
