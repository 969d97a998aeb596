//go:build unix

package freedesktop

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func writeEntry(t *testing.T, dir, rel, content string) {
	t.Helper()
	path := filepath.Join(dir, "applications", rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCommand(t *testing.T) {
	tests := []struct {
		exec string
		want []string
	}{
		{"xterm", []string{"xterm"}},
		{"gedit %U", []string{"gedit"}},
		{"app --name=%c %f --file %k", []string{"app", "--name=My App", "--file", "/usr/share/applications/my.desktop"}},
		{"app %i", []string{"app", "--icon", "my-icon"}},
		{"app 100%%", []string{"app", "100%"}},
		{`sh -c "echo \"hi there\" \$HOME \\\\ done"`, []string{"sh", "-c", `echo "hi there" $HOME \ done`}},
		{`"/opt/My App/bin/app"  --flag`, []string{"/opt/My App/bin/app", "--flag"}},
		{`env FOO=bar app`, []string{"env", "FOO=bar", "app"}},
	}
	for _, tt := range tests {
		e := DesktopEntry{ID: "my", Name: "My App", File: "/usr/share/applications/my.desktop", Icon: "my-icon", Exec: helperSplit(t, tt.exec)}
		got, err := e.Command()
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Command(Exec=%q) = %q, %v, want %q", tt.exec, got, err, tt.want)
		}
	}
	for _, bad := range [][]string{nil, {"%f"}, {""}} {
		if got, err := (DesktopEntry{ID: "bad", Exec: bad}).Command(); err == nil {
			t.Errorf("Command(Exec=%q) = %q, want an error", bad, got)
		}
	}
}

func testEntries(t *testing.T) []DesktopEntry {
	home, sys := t.TempDir(), t.TempDir()
	writeEntry(t, sys, "debian-xterm.desktop", "[Desktop Entry]\nType=Application\nName=XTerm\nExec=xterm\n")
	writeEntry(t, sys, "debian-uxterm.desktop", "[Desktop Entry]\nType=Application\nName=UXTerm\nExec=uxterm\n")
	writeEntry(t, sys, "org.gnome.Calculator.desktop", "[Desktop Entry]\nType=Application\nName=Calculator\nExec=gnome-calculator\nKeywords=math;sum;\n")
	writeEntry(t, sys, "hidden-app.desktop", "[Desktop Entry]\nType=Application\nName=Hidden\nExec=hidden\nNoDisplay=true\n")
	writeEntry(t, sys, "gone.desktop", "[Desktop Entry]\nType=Application\nName=Gone\nExec=gone\nHidden=true\n")
	writeEntry(t, sys, "missing.desktop", "[Desktop Entry]\nType=Application\nName=Missing\nExec=missing\nTryExec=/nonexistent/deskhand-missing\n")
	writeEntry(t, sys, "kde/konsole.desktop", "[Desktop Entry]\nType=Application\nName=Konsole\nExec=konsole\n")
	// The user's own entry overrides the system one with the same id.
	writeEntry(t, sys, "editor.desktop", "[Desktop Entry]\nType=Application\nName=System Editor\nExec=sysedit\n")
	writeEntry(t, home, "editor.desktop", "[Desktop Entry]\nType=Application\nName=My Editor\nExec=myedit\n")
	return helperEntries(t, home, sys)
}

func TestLoadEntries(t *testing.T) {
	entries := testEntries(t)
	var got []string
	for _, e := range entries {
		got = append(got, e.ID+"="+e.Name)
	}
	want := []string{
		"editor=My Editor",
		"debian-uxterm=UXTerm", "debian-xterm=XTerm", "hidden-app=Hidden", "kde-konsole=Konsole", "org.gnome.Calculator=Calculator",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("LoadEntries (-want +got):\n%s", diff)
	}
}

func TestResolve(t *testing.T) {
	entries := testEntries(t)
	tests := map[string]string{
		"debian-xterm":         "debian-xterm",
		"debian-xterm.desktop": "debian-xterm",
		"DEBIAN-XTERM":         "debian-xterm",
		"xterm":                "debian-xterm", // by Name
		"XTerm":                "debian-xterm",
		"uxterm":               "debian-uxterm",
		"calculator":           "org.gnome.Calculator", // Name and id tail
		"org.gnome.Calculator": "org.gnome.Calculator",
		"gnome-calculator":     "org.gnome.Calculator", // program name
		"konsole":              "kde-konsole",
		"editor":               "editor",
		"My Editor":            "editor",
		"hidden":               "hidden-app",
	}
	for in, want := range tests {
		e, err := Resolve(entries, in)
		if err != nil || e.ID != want {
			got := ""
			if e != nil {
				got = e.ID
			}
			t.Errorf("Resolve(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	bad := map[string][]string{
		"calculatr": {`"org.gnome.Calculator" (Calculator)`},
		"xtrm":      {`"debian-xterm" (XTerm)`},
		"term":      {"debian-xterm", "debian-uxterm"},
		"math":      {"org.gnome.Calculator"},
		"zzzzqqqq":  {"none is close", "installed:", "debian-xterm"},
		"gone":      {"none is close"}, // Hidden=true: deleted
	}
	for in, wants := range bad {
		_, err := Resolve(entries, in)
		if !errors.Is(err, ErrNoSuchApp) {
			t.Errorf("Resolve(%q) = %v, want ErrNoSuchApp", in, err)
			continue
		}
		for _, w := range wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Resolve(%q) error %q lacks %q", in, err, w)
			}
		}
	}
	if _, err := Resolve(nil, "x"); err == nil || !strings.Contains(err.Error(), "no applications are installed") {
		t.Errorf("Resolve with no entries = %v", err)
	}
}

func TestDescends(t *testing.T) {
	self := os.Getpid()
	if !descends(self, self) {
		t.Errorf("descends(self, self) = false")
	}
	if !descends(self, os.Getppid()) {
		t.Errorf("descends(self, parent) = false")
	}
	if descends(os.Getppid(), self) {
		t.Errorf("descends(parent, self) = true")
	}
}
