package freedesktop

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/deskhand/deskhand/bridge"
)

// DesktopEntry is an application's .desktop file (the freedesktop.org
// Desktop Entry Specification), with the keys a launcher needs. The
// capture helper reads the files (PROTOCOL.md `apps`): it is the one
// place desktop entries are parsed, so the app open_application resolves
// and launches is the app the helper names its windows after. Entries
// that are Hidden, not applications, or whose TryExec program is missing
// are not in its index.
type DesktopEntry struct {
	// ID is the desktop-file id: the path below applications/ with "/"
	// replaced by "-", without ".desktop".
	ID          string
	File        string
	Name        string
	GenericName string
	// Exec is the Exec key split into words, field codes not expanded.
	Exec           []string
	Icon           string
	WorkDir        string // the Path key
	Terminal       bool
	NoDisplay      bool
	StartupWMClass string
	Keywords       []string
}

// AppIndex is where the desktop entries come from: the capture helper
// (*bridge.Client satisfies it).
type AppIndex interface {
	Apps(ctx context.Context) ([]bridge.DesktopEntry, error)
}

// LoadEntries returns the installed applications' entries from the
// helper's index, most important data directory first: an id in an
// earlier XDG data directory hides the same id in later ones.
func LoadEntries(ctx context.Context, index AppIndex) ([]DesktopEntry, error) {
	if index == nil {
		return nil, errors.New("reading the desktop entries: no capture helper to read them")
	}
	list, err := index.Apps(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the desktop entries through the capture helper: %w", err)
	}
	out := make([]DesktopEntry, 0, len(list))
	for _, e := range list {
		out = append(out, DesktopEntry{
			ID: e.ID, File: e.File, Name: e.Name, GenericName: e.GenericName, Exec: e.Exec,
			Icon: e.Icon, WorkDir: e.WorkDir, Terminal: e.Terminal, NoDisplay: e.NoDisplay,
			StartupWMClass: e.StartupWMClass, Keywords: e.Keywords,
		})
	}
	return out, nil
}

// Command returns the entry's Exec line as arguments (split by the
// helper with the specification's quoting rules), field codes expanded for a launch without
// files (%f %F %u %U dropped, %i the icon, %c the name, %k the file, %%
// a percent sign).
func (e DesktopEntry) Command() ([]string, error) {
	var out []string
	for _, w := range e.Exec {
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
		return nil, fmt.Errorf("desktop entry %s: Exec %q names no program", e.ID, strings.Join(e.Exec, " "))
	}
	return out, nil
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
	if len(e.Exec) == 0 {
		return ""
	}
	return filepath.Base(e.Exec[0])
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
