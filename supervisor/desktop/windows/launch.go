package windows

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"strings"

	"github.com/deskhand/deskhand/bridge"
)

// A launch is how open_application starts an app on Windows.
type launch struct {
	// Exe, when set, is run directly, so its pid is known.
	Exe string
	// Shell, when set, is opened through the shell (ShellExecute): a
	// Start-menu shortcut, or shell:AppsFolder\AUMID for a packaged app,
	// which has no executable one may run directly.
	Shell string
	// App is what the launched app's windows are recognised by.
	App bridge.App
}

// aumidPattern is an App User Model ID of a packaged app:
// PackageFamilyName!AppId ("Microsoft.WindowsCalculator_8wekyb3d8bbwe!App").
var aumidPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.\-]*_[a-z0-9]{13}![A-Za-z][A-Za-z0-9.\-]*$`)

// IsAUMID reports whether s is a packaged app's App User Model ID.
func IsAUMID(s string) bool { return aumidPattern.MatchString(s) }

// planLaunch decides how to start name: an AUMID through the shell, a
// .lnk path through the shell, an executable path as it is, else a
// Start-menu shortcut of that name (from startMenus, the per-user and
// the all-users Programs folders, searched case-insensitively), else an
// executable lookPath finds (cmd, notepad.exe).
func planLaunch(name string, startMenus []startMenu, lookPath func(string) (string, error)) (launch, error) {
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		return launch{}, errors.New("no app named: give its name as the Start menu shows it, its executable (notepad.exe) or its App User Model ID")
	case IsAUMID(name):
		return launch{Shell: `shell:AppsFolder\` + name, App: bridge.App{Name: name, AUMID: name}}, nil
	case strings.EqualFold(path.Ext(strings.ReplaceAll(name, `\`, "/")), ".lnk"):
		return launch{Shell: name, App: bridge.App{Name: strings.TrimSuffix(baseName(name), path.Ext(name))}}, nil
	case strings.ContainsAny(name, `\/`):
		return launch{Exe: name, App: bridge.App{Name: baseName(name), Exe: name}}, nil
	}
	for _, menu := range startMenus {
		if lnk := findShortcut(menu.FS, name); lnk != "" {
			return launch{Shell: menu.Dir + `\` + strings.ReplaceAll(lnk, "/", `\`), App: bridge.App{Name: name}}, nil
		}
	}
	exe, err := lookPath(name)
	if err != nil {
		return launch{}, fmt.Errorf("no Start-menu shortcut or executable is called %q (%v); give the executable's full path or the app's App User Model ID", name, err)
	}
	return launch{Exe: exe, App: bridge.App{Name: name, Exe: exe}}, nil
}

// A startMenu is a Programs folder of the Start menu: its path, and the
// folder to search.
type startMenu struct {
	Dir string
	FS  fs.FS
}

// findShortcut returns the path, in menu, of the shortcut NAME.lnk,
// matched without regard to case, or "".
func findShortcut(menu fs.FS, name string) string {
	var found string
	_ = fs.WalkDir(menu, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || found != "" {
			return fs.SkipDir
		}
		if !d.IsDir() && strings.EqualFold(d.Name(), name+".lnk") {
			found = p
			return fs.SkipAll
		}
		return nil
	})
	return found
}

// baseName is the last element of a Windows or slash-separated path.
func baseName(p string) string {
	return p[strings.LastIndexAny(p, `\/`)+1:]
}

// launchedBy reports whether a new window of app belongs to what plan
// started: the process pid deskhand started, else the plan's AUMID or
// executable, else (a shortcut, whose target deskhand does not read) any.
func launchedBy(plan launch, pid int, app bridge.App) bool {
	switch {
	case pid != 0 && app.PID == pid:
		return true
	case plan.App.AUMID != "":
		return strings.EqualFold(app.AUMID, plan.App.AUMID)
	case plan.App.Exe != "":
		return strings.EqualFold(baseName(app.Exe), baseName(plan.App.Exe))
	}
	return true
}
