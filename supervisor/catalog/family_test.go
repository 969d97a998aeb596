package catalog

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// fakeDpkg points the dpkg index at a database in a temporary directory
// holding lists, a package name to its files.
func fakeDpkg(t *testing.T, lists map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, files := range lists {
		if err := os.WriteFile(filepath.Join(dir, name+".list"), []byte(files), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	saved := dpkg
	dpkg = &dpkgIndex{dir: dir}
	t.Cleanup(func() { dpkg = saved })
	return dir
}

func TestDpkgFamily(t *testing.T) {
	dir := fakeDpkg(t, map[string]string{
		"gnome-terminal": "/.\n/usr\n/usr/bin\n/usr/bin/gnome-terminal\n/usr/libexec/gnome-terminal-preferences\n/usr/libexec/gnome-terminal-server\n" +
			"/usr/share/applications/org.gnome.Terminal.desktop\n/usr/share/doc/gnome-terminal/copyright\n",
		"zenity:amd64": "/usr/bin/zenity\n/usr/share/zenity/zenity.ui\n",
		"bash":         "/bin/bash\n/usr/bin/bashbug\n",
	})
	for _, tc := range []struct {
		path, where string
		members     int
	}{
		{"/usr/libexec/gnome-terminal-preferences", "Debian package gnome-terminal", 4},
		{"/usr/bin/zenity", "Debian package zenity", 1},
		{"/usr/bin/bash", "Debian package bash", 2}, // /usr merged: dpkg lists /bin/bash
		{"/bin/bashbug", "Debian package bash", 2},
		{"/usr/share/doc/gnome-terminal/copyright", "", 0}, // never a program: not indexed
		{"/usr/bin/unpackaged", "", 0},
	} {
		f, ok := dpkg.family(tc.path)
		if f.where != tc.where || ok != (tc.where != "") || len(f.members) != tc.members {
			t.Errorf("family(%q) = %q, %d members, %v; want %q, %d members", tc.path, f.where, len(f.members), ok, tc.where, tc.members)
		}
	}

	// A package installed after the index was read is found on the next
	// miss, since the database changed.
	if err := os.WriteFile(filepath.Join(dir, "kitty.list"), []byte("/usr/bin/kitty\n/usr/lib/kitty/kitten\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(dir, later, later); err != nil {
		t.Fatal(err)
	}
	if f, ok := dpkg.family("/usr/lib/kitty/kitten"); !ok || f.where != "Debian package kitty" {
		t.Errorf("family of a newly installed program = %q, %v; want Debian package kitty", f.where, ok)
	}
}

// TestClassifyFamily: a program the catalog does not know takes the
// catalogued app of its package, bundle or directory; an app takes its
// family's verdict when that is stricter; a program nothing knows stays
// unknown.
func TestClassifyFamily(t *testing.T) {
	fakeDpkg(t, map[string]string{
		"gnome-terminal": "/usr/bin/gnome-terminal\n/usr/libexec/gnome-terminal-preferences\n/usr/libexec/gnome-terminal-server\n",
		"zenity":         "/usr/bin/zenity\n",
		// a package shipping a terminal beside a file manager: the file
		// manager gets the terminal's click tier
		"suite": "/usr/bin/nautilus\n/usr/bin/xterm\n",
	})
	tmp := t.TempDir()
	mkexe := func(rel string) string {
		p := filepath.Join(tmp, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ideHelper := mkexe("opt/ide/crash-reporter")
	mkexe("opt/ide/code")
	loner := mkexe("opt/loner/loner")
	bundleHelper := mkexe("Kitty.app/Contents/Frameworks/Helper.app/Contents/MacOS/Helper")
	mkexe("Kitty.app/Contents/MacOS/kitty")
	termHelper := mkexe("Utilities/Terminal.app/Contents/MacOS/Terminal Helper")
	plist := "<plist version=\"1.0\">\n<dict>\n\t<key>CFBundleIdentifier</key>\n\t<string>com.apple.Terminal</string>\n</dict>\n</plist>\n"
	if err := os.WriteFile(filepath.Join(tmp, "Utilities/Terminal.app/Contents/Info.plist"), []byte(plist), 0o644); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		id           Identity
		name, family string
		tier         Tier
		sensitive    string
	}{
		{Identity{Class: "Gnome-terminal-preferences", Instance: "gnome-terminal-preferences", Exe: "gnome-terminal-preferences", Path: "/usr/libexec/gnome-terminal-preferences"},
			"GNOME Terminal", "Debian package gnome-terminal", TierClick, SensitiveShell},
		// the catalogued app itself keeps its own verdict
		{Identity{Class: "Gnome-terminal", Exe: "gnome-terminal-server", Path: "/usr/libexec/gnome-terminal-server"}, "GNOME Terminal", "", TierClick, SensitiveShell},
		{Identity{Class: "Zenity", Exe: "zenity", Path: "/usr/bin/zenity"}, "", "", TierFull, ""},
		{Identity{DesktopID: "org.gnome.Nautilus", Exe: "nautilus", Path: "/usr/bin/nautilus"}, "XTerm", "Debian package suite", TierClick, SensitiveShell},
		{Identity{Class: "Crash-reporter", Exe: "crash-reporter", Path: ideHelper}, "Visual Studio Code", "directory " + filepath.Dir(ideHelper), TierClick, ""},
		{Identity{Class: "Loner", Exe: "loner", Path: loner}, "", "", TierFull, ""},
		{Identity{BundleID: "net.kovidgoyal.kitty.helper", Exe: "Helper", Path: bundleHelper}, "kitty", filepath.Join(tmp, "Kitty.app"), TierClick, SensitiveShell},
		{Identity{BundleID: "com.apple.Terminal.helper", Exe: "Terminal Helper", Path: termHelper}, "Terminal (macOS)", filepath.Join(tmp, "Utilities/Terminal.app"), TierClick, SensitiveShell},
	} {
		e := Classify(tc.id)
		if e.Name != tc.name || e.Family != tc.family || e.DefaultTier != tc.tier || e.Sensitive != tc.sensitive {
			t.Errorf("Classify(%+v) = %q (family %q) %s %q, want %q (family %q) %s %q", tc.id, e.Name, e.Family, e.DefaultTier, e.Sensitive, tc.name, tc.family, tc.tier, tc.sensitive)
		}
	}
}
