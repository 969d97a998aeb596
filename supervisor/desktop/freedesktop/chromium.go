package freedesktop

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// Chromium and Electron apps keep the accessibility tree of their web
// contents to themselves unless told otherwise: since Chromium 85 on Linux
// an AT-SPI client's calls no longer turn it on (crbug.com/1086506), only
// --force-renderer-accessibility does. Without it the tree of a page is
// one empty frame. So the launcher passes it to every app it takes for
// Chromium-based, with ACCESSIBILITY_ENABLED=1, which Chromium's Linux
// accessibility bridge reads to expose its own (browser) UI too.
const (
	rendererAccessibilityFlag = "--force-renderer-accessibility"
	accessibilityEnv          = "ACCESSIBILITY_ENABLED=1"
)

// chromiumNames are the program names of Chromium browsers and of the
// Electron runtime, as their desktop entries and wrapper scripts call
// them.
var chromiumNames = regexp.MustCompile(`^(chromium(-browser)?|google-chrome(-stable|-beta|-unstable)?|chrome|microsoft-edge(-stable|-beta|-dev)?|brave(-browser)?(-stable|-beta|-nightly)?|vivaldi(-stable|-snapshot)?|opera(-beta|-developer)?|thorium-browser|ungoogled-chromium|electron[0-9]*)$`)

// chromiumBuildFiles are files every Chromium build and every packaged
// Electron app ships next to its executable (the UI resource packs), and
// the app archive an Electron app keeps its code in. An executable found
// beside one is Chromium-based whatever it is called (/usr/share/code/code,
// /opt/Slack/slack).
var chromiumBuildFiles = []string{"chrome_100_percent.pak", "resources.pak", filepath.Join("resources", "app.asar")}

// IsChromiumBased reports whether argv runs a Chromium-based app: its
// program is named like a Chromium browser or the Electron runtime, or
// the executable (symlinks followed) sits next to Chromium's resource
// packs or an Electron app archive. Apps started through another program
// (flatpak run, snap, env) are not recognised.
func IsChromiumBased(argv []string) bool {
	if len(argv) == 0 {
		return false
	}
	if chromiumNames.MatchString(filepath.Base(argv[0])) {
		return true
	}
	exe := argv[0]
	if !strings.ContainsRune(exe, '/') {
		p, err := execLookPath(exe)
		if err != nil {
			return false
		}
		exe = p
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	if chromiumNames.MatchString(filepath.Base(exe)) {
		return true
	}
	dir := filepath.Dir(exe)
	for _, f := range chromiumBuildFiles {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// withRendererAccessibility returns argv and env for launching a
// Chromium-based app with its accessibility tree on (the flag right after
// the program, where Chromium and Electron both parse switches), and
// argv and env unchanged for any other app.
func withRendererAccessibility(argv, env []string) ([]string, []string) {
	if !IsChromiumBased(argv) || slices.Contains(argv, rendererAccessibilityFlag) {
		return argv, env
	}
	out := append([]string{argv[0], rendererAccessibilityFlag}, argv[1:]...)
	env = append(slices.DeleteFunc(slices.Clone(env), func(v string) bool { return strings.HasPrefix(v, "ACCESSIBILITY_ENABLED=") }), accessibilityEnv)
	return out, env
}
