package catalog

import (
	"bufio"
	"hash/maphash"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// A family is the package or bundle an executable ships in: GNOME
// Terminal's preferences window is a program of its own
// (/usr/libexec/gnome-terminal-preferences), but it sets the command the
// terminal runs, so it must not be a stranger to the terminal's tier.
// Every program of a family takes the strictest verdict the catalog gives
// any member; see Catalog.Classify.
//
// Where the family comes from, in order: a program inside a macOS .app
// bundle belongs to the outermost bundle; on Debian, to the package the
// dpkg database says installed it; elsewhere, to its directory when that
// directory is the app's own (/opt/foo), not a shared one (/usr/bin).
// The rules are data-driven rather than split by OS: each finds nothing
// where its source does not exist.
type family struct {
	// where names the family for the dialog: "Debian package
	// gnome-terminal", "/Applications/Foo.app", "directory /opt/foo".
	where string
	// members are the identities of what the family ships that the
	// catalog could know: its programs and desktop entries.
	members []Identity
}

// familyOf finds the family of the executable at path.
func familyOf(path string) (family, bool) {
	if !filepath.IsAbs(path) {
		return family{}, false
	}
	if f, ok := bundleFamily(path); ok {
		return f, true
	}
	if f, ok := dpkg.family(path); ok {
		return f, true
	}
	return dirs.family(path)
}

// bundleFamily puts a program inside a .app bundle (a helper app in
// Contents/Frameworks, a second binary in Contents/MacOS) in the
// outermost bundle.
func bundleFamily(path string) (family, bool) {
	i := strings.Index(path, ".app/")
	if i < 0 {
		return family{}, false
	}
	bundle := path[:i+len(".app")]
	f := family{where: bundle}
	// The bundle id, when Info.plist is XML; a binary one leaves the
	// bundle's name, a weaker clue ("Terminal" is also GNOME Terminal's).
	if b, err := os.ReadFile(filepath.Join(bundle, "Contents", "Info.plist")); err == nil {
		if m := bundleIDKey.FindSubmatch(b); m != nil {
			f.members = append(f.members, Identity{BundleID: string(m[1])})
		}
	}
	if len(f.members) == 0 {
		f.members = append(f.members, Identity{Name: strings.TrimSuffix(filepath.Base(bundle), ".app")})
	}
	if ents, err := os.ReadDir(filepath.Join(bundle, "Contents", "MacOS")); err == nil {
		for _, e := range ents {
			f.members = append(f.members, Identity{Exe: e.Name()})
		}
	}
	return f, true
}

var bundleIDKey = regexp.MustCompile(`<key>CFBundleIdentifier</key>\s*<string>([^<]+)</string>`)

// dpkgIndex knows which Debian package installed each file, read once
// from the dpkg database's file lists (/var/lib/dpkg/info/*.list) and
// read again only when a lookup misses and the database has changed
// since (a package installed after deskhand started).
type dpkgIndex struct {
	dir string

	mu      sync.Mutex
	built   bool
	mtime   time.Time
	seed    maphash.Seed
	paths   map[uint64]int32 // hash of a file's path -> index in pkgs
	pkgs    []string
	members [][]Identity // per package
}

var dpkg = &dpkgIndex{dir: "/var/lib/dpkg/info"}

// noExecutables are trees where packages put most of their files and
// never a program; skipping them halves the index.
var noExecutables = []string{"/usr/share/locale/", "/usr/share/man/", "/usr/share/icons/", "/usr/share/doc/", "/usr/include/"}

func (x *dpkgIndex) family(path string) (family, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	i, ok := x.lookup(path)
	if !ok {
		fi, err := os.Stat(x.dir)
		if err != nil || x.built && fi.ModTime().Equal(x.mtime) {
			return family{}, false
		}
		x.build(fi.ModTime())
		if i, ok = x.lookup(path); !ok {
			return family{}, false
		}
	}
	return family{where: "Debian package " + x.pkgs[i], members: x.members[i]}, true
}

// lookup finds path's package; x.mu is held. With /usr merged, dpkg may
// list /bin/bash for what runs as /usr/bin/bash, or the other way round.
func (x *dpkgIndex) lookup(path string) (int32, bool) {
	if !x.built {
		return 0, false
	}
	alt := "/usr" + path
	if rest, ok := strings.CutPrefix(path, "/usr/"); ok {
		alt = "/" + rest
	}
	for _, p := range []string{path, alt} {
		if i, ok := x.paths[maphash.String(x.seed, p)]; ok {
			return i, true
		}
	}
	return 0, false
}

// build reads the file lists; x.mu is held. Unreadable lists are
// skipped: their programs fall back to the directory rule.
func (x *dpkgIndex) build(mtime time.Time) {
	lists, _ := filepath.Glob(filepath.Join(x.dir, "*.list"))
	x.built, x.mtime, x.seed = true, mtime, maphash.MakeSeed()
	x.paths, x.pkgs, x.members = map[uint64]int32{}, nil, nil
	for _, list := range lists {
		f, err := os.Open(list)
		if err != nil {
			continue
		}
		pkg, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(list), ".list"), ":") // "libfoo:amd64"
		i := int32(len(x.pkgs))
		x.pkgs = append(x.pkgs, pkg)
		var members []Identity
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			p := sc.Text()
			if skipped(p) {
				continue
			}
			x.paths[maphash.String(x.seed, p)] = i
			if id, ok := memberOf(p); ok {
				members = append(members, id)
			}
		}
		f.Close()
		x.members = append(x.members, members)
	}
}

func skipped(p string) bool {
	for _, pre := range noExecutables {
		if strings.HasPrefix(p, pre) {
			return true
		}
	}
	return false
}

// memberOf is the identity a packaged file gives its package: a desktop
// entry's id, or the name of a program in a bin, sbin or libexec
// directory.
func memberOf(p string) (Identity, bool) {
	dir, base := filepath.Split(p)
	if id, ok := strings.CutSuffix(base, ".desktop"); ok && strings.HasSuffix(dir, "/applications/") {
		return Identity{DesktopID: id}, true
	}
	switch filepath.Base(dir) {
	case "bin", "sbin", "libexec":
		return Identity{Exe: base}, true
	}
	return Identity{}, false
}

// dirIndex is the fallback family: the executable's own directory.
type dirIndex struct {
	mu    sync.Mutex
	cache map[string][]Identity
}

var dirs = &dirIndex{}

// sharedDirs hold programs of many apps, so they make no family.
var sharedDirs = map[string]bool{"": true, "/": true, "bin": true, "sbin": true, "libexec": true, "lib": true, "lib32": true, "lib64": true,
	"games": true, "usr": true, "local": true, "opt": true, "tmp": true, "home": true, "root": true, "Applications": true}

// windowsSharedDirs are Windows' shared program directories, in lower
// case (Windows' names ignore case): System32 alone holds Notepad, the
// console host and Internet Explorer.
var windowsSharedDirs = map[string]bool{"windows": true, "system32": true, "syswow64": true, "sysnative": true,
	"program files": true, "program files (x86)": true, "windowsapps": true, "temp": true}

func (x *dirIndex) family(path string) (family, bool) {
	dir := filepath.Dir(path)
	base := filepath.Base(dir)
	if home, err := os.UserHomeDir(); sharedDirs[base] || windowsSharedDirs[strings.ToLower(base)] || strings.HasSuffix(base, "-linux-gnu") || err == nil && dir == home {
		return family{}, false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	members, ok := x.cache[dir]
	if !ok {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return family{}, false
		}
		for _, e := range ents {
			if !e.IsDir() {
				members = append(members, Identity{Exe: e.Name()})
			}
		}
		if x.cache == nil || len(x.cache) >= 256 {
			x.cache = map[string][]Identity{}
		}
		x.cache[dir] = members
	}
	return family{where: "directory " + dir, members: members}, true
}

// familyEntry is the strictest verdict the catalog gives a member of the
// family of the executable at path, with Family set.
func (c *Catalog) familyEntry(path string) (Entry, bool) {
	f, ok := familyOf(path)
	if !ok {
		return Entry{}, false
	}
	var best *appRecord
	for _, m := range f.members {
		if a := c.lookup(m); a != nil && a != best && (best == nil || c.entry(a).restricts(c.entry(best))) {
			best = a
		}
	}
	if best == nil {
		return Entry{}, false
	}
	e := c.entry(best)
	e.Family = f.where
	return e, true
}
