package freedesktop

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DesktopEntry is an application's .desktop file (the freedesktop.org
// Desktop Entry Specification), with the keys a launcher needs.
type DesktopEntry struct {
	// ID is the desktop-file id: the path below applications/ with "/"
	// replaced by "-", without ".desktop".
	ID             string
	File           string
	Name           string
	GenericName    string
	Exec           string
	TryExec        string
	Icon           string
	WorkDir        string // the Path key
	Terminal       bool
	NoDisplay      bool
	Hidden         bool
	StartupWMClass string
	Keywords       []string
}

// DataDirs returns the XDG data directories in order of importance:
// $XDG_DATA_HOME (default ~/.local/share), then $XDG_DATA_DIRS (default
// /usr/local/share:/usr/share).
func DataDirs() []string {
	var dirs []string
	home := os.Getenv("XDG_DATA_HOME")
	if !filepath.IsAbs(home) {
		home = ""
		if h, err := os.UserHomeDir(); err == nil {
			home = filepath.Join(h, ".local", "share")
		}
	}
	if home != "" {
		dirs = append(dirs, home)
	}
	sys := os.Getenv("XDG_DATA_DIRS")
	if sys == "" {
		sys = "/usr/local/share:/usr/share"
	}
	for _, d := range strings.Split(sys, ":") {
		if filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// LoadEntries reads the application entries under dir/applications for
// each dir. An id found in an earlier directory hides the same id in later
// ones (as the specification orders them); entries that are Hidden, not of
// Type=Application, or whose TryExec program is missing are left out.
func LoadEntries(dirs []string) []DesktopEntry {
	seen := map[string]bool{}
	var out []DesktopEntry
	for _, dir := range dirs {
		root := filepath.Join(dir, "applications")
		var found []DesktopEntry
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".desktop") {
				return nil
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return nil
			}
			id := strings.TrimSuffix(strings.ReplaceAll(rel, string(filepath.Separator), "-"), ".desktop")
			if seen[id] {
				return nil
			}
			seen[id] = true // a hidden entry still hides later ones
			f, err := os.Open(path)
			if err != nil {
				return nil
			}
			e, ok, err := ParseEntry(f)
			f.Close()
			if err != nil || !ok || e.Hidden {
				return nil
			}
			if e.TryExec != "" {
				if _, err := lookPath(e.TryExec); err != nil {
					return nil
				}
			}
			e.ID, e.File = id, path
			found = append(found, e)
			return nil
		})
		sort.Slice(found, func(i, j int) bool { return found[i].ID < found[j].ID })
		out = append(out, found...)
	}
	return out
}

func lookPath(prog string) (string, error) {
	if filepath.IsAbs(prog) {
		fi, err := os.Stat(prog)
		if err != nil {
			return "", err
		}
		if fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s is not executable", prog)
		}
		return prog, nil
	}
	return execLookPath(prog)
}

// ParseEntry reads the [Desktop Entry] group of a .desktop file. ok is
// false when the file describes something other than an application.
func ParseEntry(r io.Reader) (e DesktopEntry, ok bool, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	inGroup := false
	typ := ""
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "[") {
			inGroup = line == "[Desktop Entry]"
			continue
		}
		if !inGroup {
			continue
		}
		key, value, found := strings.Cut(line, "=")
		if !found {
			continue
		}
		key = strings.TrimSpace(key)
		if strings.Contains(key, "[") {
			continue // a localized value; the untranslated one is used
		}
		value = unescapeValue(strings.TrimSpace(value))
		switch key {
		case "Type":
			typ = value
		case "Name":
			e.Name = value
		case "GenericName":
			e.GenericName = value
		case "Exec":
			e.Exec = value
		case "TryExec":
			e.TryExec = value
		case "Icon":
			e.Icon = value
		case "Path":
			e.WorkDir = value
		case "Terminal":
			e.Terminal = value == "true"
		case "NoDisplay":
			e.NoDisplay = value == "true"
		case "Hidden":
			e.Hidden = value == "true"
		case "StartupWMClass":
			e.StartupWMClass = value
		case "Keywords":
			for _, k := range strings.Split(value, ";") {
				if k = strings.TrimSpace(k); k != "" {
					e.Keywords = append(e.Keywords, k)
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return DesktopEntry{}, false, err
	}
	return e, typ == "Application" && e.Exec != "", nil
}

// unescapeValue applies the string escapes of the specification: \s \n \t
// \r \\. Other backslashes are kept for the Exec quoting rules.
func unescapeValue(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 's':
				b.WriteByte(' ')
				i++
				continue
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case 't':
				b.WriteByte('\t')
				i++
				continue
			case 'r':
				b.WriteByte('\r')
				i++
				continue
			case '\\':
				b.WriteByte('\\')
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Command returns the entry's Exec line as arguments: split with the
// specification's quoting rules, field codes expanded for a launch without
// files (%f %F %u %U dropped, %i the icon, %c the name, %k the file, %%
// a percent sign).
func (e DesktopEntry) Command() ([]string, error) {
	words, err := splitExec(e.Exec)
	if err != nil {
		return nil, fmt.Errorf("desktop entry %s: Exec %q: %w", e.ID, e.Exec, err)
	}
	var out []string
	for _, w := range words {
		switch w {
		case "%f", "%F", "%u", "%U", "%d", "%D", "%n", "%N", "%v", "%m":
			continue
		case "%i":
			if e.Icon != "" {
				out = append(out, "--icon", e.Icon)
			}
			continue
		}
		var b strings.Builder
		for i := 0; i < len(w); i++ {
			if w[i] != '%' || i+1 >= len(w) {
				b.WriteByte(w[i])
				continue
			}
			i++
			switch w[i] {
			case '%':
				b.WriteByte('%')
			case 'c':
				b.WriteString(e.Name)
			case 'k':
				b.WriteString(e.File)
			default:
				// Other codes expand to nothing inside a word.
			}
		}
		out = append(out, b.String())
	}
	if len(out) == 0 || out[0] == "" {
		return nil, fmt.Errorf("desktop entry %s: Exec %q names no program", e.ID, e.Exec)
	}
	return out, nil
}

// splitExec splits an Exec value into words: whitespace separates them,
// double quotes group them, and inside quotes a backslash escapes ", `, $
// and \.
func splitExec(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord, quoted := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quoted && c == '\\' && i+1 < len(s) && strings.IndexByte("\"`$\\", s[i+1]) >= 0:
			cur.WriteByte(s[i+1])
			i++
		case c == '"':
			quoted = !quoted
			inWord = true
		case !quoted && (c == ' ' || c == '\t'):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if quoted {
		return nil, errors.New("unterminated quote")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// ErrNoSuchApp is wrapped by the error of an application name that matches
// no desktop entry.
var ErrNoSuchApp = errors.New("no such application")

// Resolve finds the entry an application name means: its desktop-file id
// (with or without ".desktop", in any case), the last component of a
// reverse-DNS id ("Calculator" for org.gnome.Calculator) or of a
// dash-prefixed one ("xterm" for debian-xterm), its Name, or its program's
// name. Visible entries win over NoDisplay ones. A name that matches
// nothing is an error (wrapping ErrNoSuchApp) listing close matches.
func Resolve(entries []DesktopEntry, name string) (*DesktopEntry, error) {
	q := strings.TrimSuffix(strings.TrimSpace(name), ".desktop")
	lq := strings.ToLower(q)
	tests := []func(e *DesktopEntry) bool{
		func(e *DesktopEntry) bool { return e.ID == q },
		func(e *DesktopEntry) bool { return strings.ToLower(e.ID) == lq },
		func(e *DesktopEntry) bool { return strings.ToLower(e.Name) == lq },
		func(e *DesktopEntry) bool { return strings.ToLower(idTail(e.ID)) == lq },
		func(e *DesktopEntry) bool { return strings.ToLower(programName(e)) == lq },
	}
	for _, test := range tests {
		var hit *DesktopEntry
		for i := range entries {
			e := &entries[i]
			if !test(e) {
				continue
			}
			if hit == nil || (hit.NoDisplay && !e.NoDisplay) {
				hit = e
			}
		}
		if hit != nil {
			return hit, nil
		}
	}
	return nil, noSuchApp(entries, q)
}

// idTail is the part of an id after its last "." or "-".
func idTail(id string) string {
	if i := strings.LastIndexAny(id, ".-"); i >= 0 {
		return id[i+1:]
	}
	return id
}

func programName(e *DesktopEntry) string {
	words, err := splitExec(e.Exec)
	if err != nil || len(words) == 0 {
		return ""
	}
	return filepath.Base(words[0])
}

func noSuchApp(entries []DesktopEntry, q string) error {
	type scored struct {
		e     *DesktopEntry
		score int
	}
	lq := strings.ToLower(q)
	var close []scored
	for i := range entries {
		e := &entries[i]
		best := -1
		for _, cand := range []string{e.ID, e.Name, idTail(e.ID), programName(e), e.GenericName} {
			lc := strings.ToLower(cand)
			if lc == "" {
				continue
			}
			score := -1
			switch {
			case strings.Contains(lc, lq) || (len(lc) >= 3 && strings.Contains(lq, lc)):
				score = 0
			default:
				limit := max(2, len(lq)/3)
				if d := editDistance(lq, lc); d <= limit {
					score = d
				}
			}
			if score >= 0 && (best < 0 || score < best) {
				best = score
			}
		}
		for _, k := range e.Keywords {
			if strings.EqualFold(k, q) && (best < 0 || best > 1) {
				best = 1
			}
		}
		if best >= 0 {
			close = append(close, scored{e, best})
		}
	}
	sort.SliceStable(close, func(i, j int) bool {
		if close[i].score != close[j].score {
			return close[i].score < close[j].score
		}
		return close[i].e.NoDisplay != close[j].e.NoDisplay && !close[i].e.NoDisplay
	})
	describe := func(e *DesktopEntry) string { return fmt.Sprintf("%q (%s)", e.ID, e.Name) }
	if len(close) > 0 {
		var names []string
		for i, c := range close {
			if i == 5 {
				break
			}
			names = append(names, describe(c.e))
		}
		return fmt.Errorf("%w: no installed application is called %q; close matches: %s", ErrNoSuchApp, q, strings.Join(names, ", "))
	}
	var some []string
	for i := range entries {
		if !entries[i].NoDisplay {
			some = append(some, describe(&entries[i]))
		}
		if len(some) == 10 {
			some = append(some, "…")
			break
		}
	}
	if len(some) == 0 {
		return fmt.Errorf("%w: no installed application is called %q, and no applications are installed (no .desktop files under applications/ in the XDG data directories)", ErrNoSuchApp, q)
	}
	return fmt.Errorf("%w: no installed application is called %q and none is close; installed: %s", ErrNoSuchApp, q, strings.Join(some, ", "))
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
