package check

import (
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// testOnlyPackages are Debian packages only the tests drive: apps, the
// Wayland compositors, a browser, reference tools. A user who builds
// deskhand must not get them.
var testOnlyPackages = []string{
	"chromium", "sway", "kwin-wayland",
	"python3-pyqt5", "gtk-3-examples", "gtk-4-examples", "python3-gi",
	"foot", "grim", "wl-clipboard", "wtype", "xterm", "zenity", "xdotool",
	"wmctrl", "xclip", "imagemagick", "tk", "at-spi2-core", "xkbset",
}

// TestBuildDepsHaveNoTestPackages: make deps (make build) installs the
// build set of scripts/deps.sh, which holds no test-only package; the test
// set (make check-deps) holds all of the build set and the test packages.
func TestBuildDepsHaveNoTestPackages(t *testing.T) {
	build := depsList(t, "build")
	test := depsList(t, "test")
	for _, p := range testOnlyPackages {
		if slices.Contains(build, p) {
			t.Errorf("the build set of scripts/deps.sh has %s, which only the tests need", p)
		}
		if !slices.Contains(test, p) {
			t.Errorf("the test set of scripts/deps.sh lacks %s", p)
		}
	}
	for _, p := range build {
		if !slices.Contains(test, p) {
			t.Errorf("the test set of scripts/deps.sh lacks the build package %s", p)
		}
	}
	for _, p := range []string{"xvfb", "openbox", "libx11-dev", "cmake"} {
		if !slices.Contains(build, p) {
			t.Errorf("the build set of scripts/deps.sh lacks %s, which building or running on X11 needs", p)
		}
	}
}

func depsList(t *testing.T, set string) []string {
	t.Helper()
	out, err := exec.Command("bash", filepath.Join(repoRoot(t), "scripts", "deps.sh"), "--list", set).Output()
	if err != nil {
		t.Fatalf("scripts/deps.sh --list %s: %v", set, err)
	}
	return strings.Fields(string(out))
}
