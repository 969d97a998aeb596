package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestCommittedListCurrent regenerates the list from the packages and
// fails when the committed linux_shortcuts.json differs. Without the
// packages (no archive, not installed) it skips, except under CI=true.
func TestCommittedListCurrent(t *testing.T) {
	roots, cleanup, err := fetchPackages(packageNames())
	defer cleanup()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("reading the desktops' packages: %v", err)
		}
		t.Skipf("reading the desktops' packages: %v", err)
	}
	hand, err := os.ReadFile("../" + handFile)
	if err != nil {
		t.Fatal(err)
	}
	got, err := generate(roots, hand)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../" + outFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			g, w := line(gl, i), line(wl, i)
			if g != w {
				t.Fatalf("%s is stale (run go generate ./supervisor/keyblock); line %d is\n%s\nwant\n%s", outFile, i+1, w, g)
			}
		}
	}
}

func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(end of file)"
}

func TestSpellings(t *testing.T) {
	for _, c := range []struct {
		conv func(string) (string, error)
		in   string
		want string
	}{
		{gtkAccel, "<Primary><Alt>Delete", "ctrl+alt+Delete"},
		{gtkAccel, "<Control>Escape", "ctrl+Escape"},
		{gtkAccel, "<Ctrl><Shift>Escape", "ctrl+shift+Escape"},
		{gtkAccel, "<Shift><Super>Page_Up", "shift+super+Page_Up"},
		{gtkAccel, "<Mod4>T", "super+t"},
		{gtkAccel, "<Mod1>F2", "alt+F2"},
		{gtkAccel, "<Super>Above_Tab", "super+grave"},
		{gtkAccel, "Super_L", "Super_L"},
		{openboxKey, "C-Escape", "ctrl+Escape"},
		{openboxKey, "W-S-Left", "super+shift+Left"},
		{openboxKey, "A-F4", "alt+F4"},
		{openboxKey, "M-x", "alt+x"},
		{openboxKey, "Mod4-E", "super+e"},
	} {
		got, err := c.conv(c.in)
		if err != nil || got != c.want {
			t.Errorf("converting %q = %q, %v, want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"<Frob>a", "<Alt>", "<Alt"} {
		if got, err := gtkAccel(bad); err == nil {
			t.Errorf("gtkAccel(%q) = %q, want an error", bad, got)
		}
	}
	for _, bad := range []string{"X-a", "C-"} {
		if got, err := openboxKey(bad); err == nil {
			t.Errorf("openboxKey(%q) = %q, want an error", bad, got)
		}
	}
	bs, err := kdeDesktop([]byte("[Desktop Entry]\nName=KRunner\nName[de]=K\nX-KDE-Shortcuts=Alt+Space,Ctrl+Esc,Meta+.\n[Desktop Action x]\nX-KDE-Shortcuts=Meta+Shift+Print\nName=Shot\n"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range bs {
		got = append(got, b.id+"="+b.keys)
	}
	want := "kde/KRunner=alt+Space kde/KRunner=ctrl+Escape kde/KRunner=super+period kde/Shot=super+shift+Print"
	if strings.Join(got, " ") != want {
		t.Errorf("kdeDesktop = %v, want %s", got, want)
	}
}
