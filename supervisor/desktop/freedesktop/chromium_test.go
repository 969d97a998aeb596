package freedesktop

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWithRendererAccessibility(t *testing.T) {
	// An Electron-style app: an executable of any name next to Chromium's
	// resource pack, reached through a symlink elsewhere.
	dir := t.TempDir()
	app := filepath.Join(dir, "opt", "Chat", "chat")
	if err := os.MkdirAll(filepath.Dir(app), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{app, filepath.Join(filepath.Dir(app), "chrome_100_percent.pak")} {
		if err := os.WriteFile(f, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "chat")
	if err := os.Symlink(app, link); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "xterm")
	if err := os.WriteFile(plain, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"DISPLAY=:9", "ACCESSIBILITY_ENABLED=0"}
	tests := []struct {
		argv []string
		on   bool
	}{
		{[]string{"/usr/bin/chromium", "%U"}, true},
		{[]string{"google-chrome-stable", "https://example.com"}, true},
		{[]string{"electron", "app/"}, true},
		{[]string{"brave-browser"}, true},
		{[]string{link, "--flag"}, true},
		{[]string{app}, true},
		{[]string{plain, "-e", "chromium"}, false},
		{[]string{"chromium-like-tool"}, false},
		{[]string{"/nonexistent/thing"}, false},
		{[]string{"flatpak", "run", "org.chromium.Chromium"}, false},
	}
	for _, tc := range tests {
		argv, gotEnv := withRendererAccessibility(tc.argv, env)
		if got := slices.Contains(argv, rendererAccessibilityFlag); got != tc.on {
			t.Errorf("withRendererAccessibility(%q) = %q, want the flag %v", tc.argv, argv, tc.on)
			continue
		}
		if !tc.on {
			if !slices.Equal(argv, tc.argv) || !slices.Equal(gotEnv, env) {
				t.Errorf("withRendererAccessibility(%q) changed a non-Chromium launch: %q %q", tc.argv, argv, gotEnv)
			}
			continue
		}
		if argv[0] != tc.argv[0] || argv[1] != rendererAccessibilityFlag || !slices.Equal(argv[2:], tc.argv[1:]) {
			t.Errorf("withRendererAccessibility(%q) = %q, want the flag right after the program", tc.argv, argv)
		}
		if !slices.Contains(gotEnv, accessibilityEnv) || slices.Contains(gotEnv, "ACCESSIBILITY_ENABLED=0") || !slices.Contains(gotEnv, "DISPLAY=:9") {
			t.Errorf("withRendererAccessibility(%q) env = %q", tc.argv, gotEnv)
		}
	}
	// Given twice, the flag is not added again.
	argv, _ := withRendererAccessibility([]string{"chromium", rendererAccessibilityFlag}, env)
	if n := len(slices.DeleteFunc(slices.Clone(argv), func(a string) bool { return a != rendererAccessibilityFlag })); n != 1 {
		t.Errorf("the flag is in %q %d times", argv, n)
	}
}
