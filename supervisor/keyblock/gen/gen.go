package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/deskhand/deskhand/supervisor/input"
	"github.com/deskhand/deskhand/supervisor/keyblock"
)

const (
	handFile = "linux_shortcuts_hand.json"
	outFile  = "linux_shortcuts.json"
)

// source is one file of default key bindings in a Debian package.
type source struct {
	pkg, path string
	parse     func(data []byte) ([]binding, error)
}

// binding is one default key binding as a desktop's file states it.
type binding struct {
	// id names it for the hand file's allow list and the output's
	// sources: desktop/file/action.
	id   string
	keys string // key-tool syntax, e.g. "ctrl+alt+Delete"
	why  string
	err  error // the desktop's spelling could not be read
}

const schemas = "/usr/share/glib-2.0/schemas/"

// sources are read in this order; the first source of a chord gives its
// reason.
var sources = []source{
	{"gsettings-desktop-schemas", schemas + "org.gnome.desktop.wm.keybindings.gschema.xml", gschema("org.gnome.desktop.wm.keybindings")},
	{"mutter-common", schemas + "org.gnome.mutter.gschema.xml", gschema("org.gnome.mutter", "org.gnome.mutter.keybindings")},
	{"mutter-common", schemas + "org.gnome.mutter.wayland.gschema.xml", gschema("org.gnome.mutter.wayland.keybindings")},
	{"gnome-shell-common", schemas + "org.gnome.shell.gschema.xml", gschema("org.gnome.shell.keybindings")},
	{"gnome-settings-daemon-common", schemas + "org.gnome.settings-daemon.plugins.media-keys.gschema.xml", gschema("org.gnome.settings-daemon.plugins.media-keys")},
	{"plasma-workspace", "/usr/share/kglobalaccel/org.kde.krunner.desktop", kdeDesktop},
	{"plasma-desktop", "/usr/share/applications/org.kde.plasma.emojier.desktop", kdeDesktop},
	{"konsole", "/usr/share/applications/org.kde.konsole.desktop", kdeDesktop},
	{"dolphin", "/usr/share/applications/org.kde.dolphin.desktop", kdeDesktop},
	{"kde-spectacle", "/usr/share/applications/org.kde.spectacle.desktop", kdeDesktop},
	{"systemsettings", "/usr/share/applications/systemsettings.desktop", kdeDesktop},
	{"libxfce4ui-common", "/etc/xdg/xfce4/xfconf/xfce-perchannel-xml/xfce4-keyboard-shortcuts.xml", xfconf},
	{"openbox", "/etc/xdg/openbox/rc.xml", openboxRC},
}

func packageNames() []string {
	var names []string
	for _, s := range sources {
		if !slices.Contains(names, s.pkg) {
			names = append(names, s.pkg)
		}
	}
	return names
}

// fetchPackages unpacks the packages' files: fetched from the Debian
// archive, so that a conffile a local admin changed does not count, or
// else read from / where the packages are installed. It returns each
// package's root folder.
func fetchPackages(names []string) (map[string]string, func(), error) {
	roots := map[string]string{}
	tmp, err := os.MkdirTemp("", "keyblock-gen-")
	if err != nil {
		return nil, func() {}, err
	}
	cleanup := func() { os.RemoveAll(tmp) }
	dl := exec.Command("apt-get", append([]string{"download", "-q"}, names...)...)
	dl.Dir = tmp
	if out, err := dl.CombinedOutput(); err == nil {
		debs, _ := filepath.Glob(filepath.Join(tmp, "*.deb"))
		for _, deb := range debs {
			name, _, _ := strings.Cut(filepath.Base(deb), "_")
			root := filepath.Join(tmp, name)
			if out, err := exec.Command("dpkg-deb", "-x", deb, root).CombinedOutput(); err != nil {
				return nil, cleanup, fmt.Errorf("unpacking %s: %v: %s", deb, err, out)
			}
			roots[name] = root
		}
	} else {
		err = fmt.Errorf("apt-get download: %v: %s", err, bytes.TrimSpace(out))
		for _, n := range names {
			st, qerr := exec.Command("dpkg-query", "-W", "-f=${db:Status-Status}", n).Output()
			if qerr != nil || string(st) != "installed" {
				return nil, cleanup, fmt.Errorf("%s is neither downloadable (%w) nor installed", n, err)
			}
			roots[n] = "/"
		}
	}
	for _, n := range names {
		if roots[n] == "" {
			return nil, cleanup, fmt.Errorf("apt-get download fetched no %s", n)
		}
	}
	return roots, cleanup, nil
}

// gschema reads the keys of GNOME schemas: every string and string-list
// key of a keybindings schema, and mutter's overlay-key (Super alone).
func gschema(ids ...string) func([]byte) ([]binding, error) {
	return func(data []byte) ([]binding, error) {
		var f struct {
			Schemas []struct {
				ID   string `xml:"id,attr"`
				Keys []struct {
					Name    string `xml:"name,attr"`
					Type    string `xml:"type,attr"`
					Default string `xml:"default"`
					Summary string `xml:"summary"`
				} `xml:"key"`
			} `xml:"schema"`
		}
		if err := xml.Unmarshal(data, &f); err != nil {
			return nil, err
		}
		var out []binding
		found := 0
		for _, s := range f.Schemas {
			if !slices.Contains(ids, s.ID) {
				continue
			}
			found++
			short := strings.TrimPrefix(strings.TrimPrefix(s.ID, "org.gnome.settings-daemon.plugins."), "org.gnome.")
			for _, k := range s.Keys {
				if k.Type != "as" && k.Type != "s" || s.ID == "org.gnome.mutter" && k.Name != "overlay-key" {
					continue
				}
				why := "GNOME: " + strings.TrimSuffix(strings.TrimSpace(k.Summary), ".")
				for _, accel := range gvariantStrings(k.Default) {
					if accel == "" || accel == "disabled" {
						continue
					}
					keys, err := gtkAccel(accel)
					out = append(out, binding{id: "gnome/" + short + "/" + k.Name, keys: keys, why: why, err: err})
				}
			}
		}
		if found != len(ids) {
			return nil, fmt.Errorf("found %d of the schemas %v", found, ids)
		}
		return out, nil
	}
}

var gvariantString = regexp.MustCompile(`'([^']*)'|"([^"]*)"`)

// gvariantStrings reads the strings of a GVariant text such as
// ['<Super>a', '<Alt>F1'].
func gvariantStrings(s string) []string {
	var out []string
	for _, m := range gvariantString.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1]+m[2])
	}
	return out
}

// gtkAccel converts a GTK accelerator ("<Primary><Alt>Delete",
// "<Shift><Super>Page_Up", "Super_L") to key-tool syntax.
func gtkAccel(s string) (string, error) {
	var keys []string
	rest := s
	for strings.HasPrefix(rest, "<") {
		end := strings.Index(rest, ">")
		if end < 0 {
			return "", fmt.Errorf("accelerator %q: unclosed <", s)
		}
		mod := strings.ToLower(rest[1:end])
		rest = rest[end+1:]
		switch mod {
		case "primary", "control", "ctrl", "ctl":
			keys = append(keys, "ctrl")
		case "shift", "shft":
			keys = append(keys, "shift")
		case "alt", "mod1":
			keys = append(keys, "alt")
		// Meta and Hyper share Mod4 with Super in the keymaps GNOME and
		// Xfce set up.
		case "super", "mod4", "meta", "hyper":
			keys = append(keys, "super")
		case "release":
		default:
			return "", fmt.Errorf("accelerator %q: unknown modifier <%s>", s, mod)
		}
	}
	if rest == "" {
		return "", fmt.Errorf("accelerator %q names no key", s)
	}
	// Above_Tab is mutter's name for the key above Tab: grave on the
	// layouts where it is not remapped.
	if rest == "Above_Tab" {
		rest = "grave"
	}
	return strings.Join(append(keys, keyName(rest)), "+"), nil
}

// keyName writes a one-letter key name in lower case: desktops match
// letters without case, while the key tools read an upper-case letter
// as the shifted key.
func keyName(k string) string {
	if len(k) == 1 {
		return strings.ToLower(k)
	}
	return k
}

// xfconf reads Xfce's default shortcuts: the commands xfsettingsd runs
// and the actions of xfwm4.
func xfconf(data []byte) ([]binding, error) {
	type prop struct {
		Name  string `xml:"name,attr"`
		Value string `xml:"value,attr"`
		Props []prop `xml:"property"`
	}
	var ch struct {
		Props []prop `xml:"property"`
	}
	if err := xml.Unmarshal(data, &ch); err != nil {
		return nil, err
	}
	var out []binding
	for _, group := range ch.Props {
		for _, def := range group.Props {
			if def.Name != "default" {
				continue
			}
			for _, p := range def.Props {
				keys, err := gtkAccel(p.Name)
				// A command's id is its chord, since commands repeat; an
				// action's is its name.
				b := binding{id: "xfce/" + group.Name + "/" + p.Value, keys: keys, err: err}
				if group.Name == "commands" {
					b.id = "xfce/commands/" + p.Name
				}
				switch group.Name {
				case "commands":
					b.why = "Xfce runs " + p.Value
				case "xfwm4":
					b.why = "Xfce's window manager: " + strings.ReplaceAll(strings.TrimSuffix(p.Value, "_key"), "_", " ")
				default:
					return nil, fmt.Errorf("unknown group %q", group.Name)
				}
				out = append(out, b)
			}
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no shortcuts")
	}
	return out, nil
}

// openboxRC reads the key bindings of openbox's rc.xml. Only the top
// level counts: the keys of a chain act only after its first chord.
func openboxRC(data []byte) ([]binding, error) {
	type action struct {
		Name    string `xml:"name,attr"`
		Command string `xml:"command"`
	}
	var rc struct {
		Keybinds []struct {
			Key     string   `xml:"key,attr"`
			Actions []action `xml:"action"`
		} `xml:"keyboard>keybind"`
	}
	if err := xml.Unmarshal(data, &rc); err != nil {
		return nil, err
	}
	var out []binding
	for _, kb := range rc.Keybinds {
		var acts []string
		for _, a := range kb.Actions {
			acts = append(acts, strings.TrimSpace(a.Name+" "+strings.TrimSpace(a.Command)))
		}
		keys, err := openboxKey(kb.Key)
		out = append(out, binding{id: "openbox/" + kb.Key, keys: keys, err: err, why: "openbox: " + strings.Join(acts, ", ")})
	}
	if len(out) == 0 {
		return nil, errors.New("no key bindings")
	}
	return out, nil
}

// openboxKey converts openbox's "C-A-Left" to key-tool syntax.
func openboxKey(s string) (string, error) {
	parts := strings.Split(s, "-")
	key := parts[len(parts)-1]
	var keys []string
	for _, m := range parts[:len(parts)-1] {
		switch m {
		case "S":
			keys = append(keys, "shift")
		case "C":
			keys = append(keys, "ctrl")
		// openbox's M is Meta, which the standard keymaps put on Mod1
		// with Alt.
		case "A", "M", "Mod1":
			keys = append(keys, "alt")
		case "W", "H", "Mod4":
			keys = append(keys, "super")
		default:
			return "", fmt.Errorf("openbox key %q: unknown modifier %q", s, m)
		}
	}
	if key == "" {
		return "", fmt.Errorf("openbox key %q names no key", s)
	}
	return strings.Join(append(keys, keyName(key)), "+"), nil
}

// qtKeys are Qt's key names (QKeySequence's portable text) that are not
// X keysym names or key-tool aliases.
var qtKeys = map[string]string{
	"Esc": "Escape", "Del": "Delete", "Ins": "Insert", "PgUp": "Prior", "PgDown": "Next", "Backspace": "BackSpace",
	"Search": "XF86Search", "Tools": "XF86Tools", ".": "period", ",": "comma",
}

// kdeDesktop reads the X-KDE-Shortcuts of a .desktop file, which
// kglobalaccel registers as global shortcuts.
func kdeDesktop(data []byte) ([]binding, error) {
	type group struct{ name, shortcuts string }
	var groups []*group
	var cur *group
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			cur = &group{}
			groups = append(groups, cur)
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || cur == nil {
			continue
		}
		switch k {
		case "Name":
			cur.name = v
		case "X-KDE-Shortcuts":
			cur.shortcuts = v
		}
	}
	var out []binding
	for _, g := range groups {
		if g.shortcuts == "" {
			continue
		}
		for _, seq := range strings.Split(g.shortcuts, ",") {
			var keys []string
			var err error
			for _, k := range strings.Split(seq, "+") {
				switch k {
				case "Ctrl", "Alt", "Shift":
					keys = append(keys, strings.ToLower(k))
				case "Meta":
					keys = append(keys, "super")
				case "":
					err = fmt.Errorf("KDE shortcut %q: empty key", seq)
				default:
					if x, ok := qtKeys[k]; ok {
						k = x
					}
					keys = append(keys, keyName(k))
				}
			}
			out = append(out, binding{id: "kde/" + g.name, keys: strings.Join(keys, "+"), err: err, why: "KDE: " + g.name})
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no X-KDE-Shortcuts")
	}
	return out, nil
}

// handData is the hand file: reviewed shortcuts that no package file
// states (VT switches, the X server's keys, KDE's compiled-in defaults,
// tiling window managers), and bindings of the package files that are
// not blocked, each with the reason.
type handData struct {
	About     string  `json:"about"`
	Shortcuts []entry `json:"shortcuts"`
	Allow     []struct {
		Sources []string `json:"sources"`
		Why     string   `json:"why"`
	} `json:"allow"`
}

// entry is one shortcut of the hand file and of the output.
type entry struct {
	Name    string   `json:"name,omitempty"`
	Why     string   `json:"why"`
	Keys    []string `json:"keys"`
	Sources []string `json:"sources,omitempty"`
}

const about = "The Linux system-shortcut blocklist: key combinations that the X server and common desktops (GNOME, KDE, Xfce, openbox, Cinnamon, MATE, i3) bind, and that so act outside the focused application. deskhand refuses each, in any spelling and with extra modifiers, unless the user granted systemKeyCombos. Generated by `go generate ./supervisor/keyblock` from the default key bindings in the desktops' Debian packages (sources name the file and action) and from the reviewed linux_shortcuts_hand.json (source \"hand\"); edit that file, not this one. Each entry: keys (one chord in key-tool syntax), why (what it does, for the model and the user), an optional name (default: the chord, e.g. Ctrl+Alt+T) and its sources. Keys that act on the X server itself (Terminate_Server, XF86Switch_VT_*, XF86Ungrab, MouseKeys and AccessX keysyms) are not here: the key tools refuse them always (package input's allowlist)."

// generate merges the packages' bindings (roots maps a package to the
// folder its files are under) with the hand file into the output file.
func generate(roots map[string]string, handJSON []byte) ([]byte, error) {
	var hand handData
	dec := json.NewDecoder(bytes.NewReader(handJSON))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&hand); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", handFile, err)
	}
	var out []*entry
	byChord := map[string]*entry{}
	add := func(keys, name, why, src string) error {
		ch, err := keyblock.ParseChord(keys)
		if err != nil {
			return err
		}
		if len(ch.Keys) > 1 {
			return fmt.Errorf("%q: name one key besides the modifiers", keys)
		}
		canon := ch.String()
		if back, err := keyblock.ParseChord(canon); err != nil || back.String() != canon {
			return fmt.Errorf("%q: its canonical spelling %q does not read back (%v)", keys, canon, err)
		}
		if e := byChord[canon]; e != nil {
			if src == "hand" && slices.Contains(e.Sources, "hand") {
				return fmt.Errorf("%q is listed twice in %s", keys, handFile)
			}
			if !slices.Contains(e.Sources, src) {
				e.Sources = append(e.Sources, src)
			}
			return nil
		}
		e := &entry{Name: name, Why: why, Keys: []string{canon}, Sources: []string{src}}
		byChord[canon] = e
		out = append(out, e)
		return nil
	}
	for _, h := range hand.Shortcuts {
		if h.Why == "" || len(h.Keys) == 0 {
			return nil, fmt.Errorf("%s: shortcut %v needs why and keys", handFile, h.Keys)
		}
		for _, k := range h.Keys {
			if err := add(k, h.Name, h.Why, "hand"); err != nil {
				return nil, fmt.Errorf("%s: %w", handFile, err)
			}
		}
	}
	used := map[string]bool{}
	allowed := func(id string) bool {
		for _, a := range hand.Allow {
			for _, pat := range a.Sources {
				if ok, _ := path.Match(pat, id); ok {
					used[pat] = true
					return true
				}
			}
		}
		return false
	}
	var errs []error
	for _, s := range sources {
		data, err := os.ReadFile(filepath.Join(roots[s.pkg], s.path))
		if err != nil {
			return nil, fmt.Errorf("reading %s's %s: %w", s.pkg, s.path, err)
		}
		bs, err := s.parse(data)
		if err != nil {
			return nil, fmt.Errorf("reading %s's %s: %w", s.pkg, s.path, err)
		}
		for _, b := range bs {
			if allowed(b.id) {
				continue
			}
			err := b.err
			if err == nil {
				err = add(b.keys, "", b.why, b.id)
			}
			var na *input.KeyNotAllowedError
			if errors.As(err, &na) {
				continue // the key tools never send it
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s (%s's %s): %w; teach the generator the spelling, or allow it in %s with the reason", b.id, s.pkg, s.path, err, handFile))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, a := range hand.Allow {
		if a.Why == "" {
			return nil, fmt.Errorf("%s: allow %v needs why", handFile, a.Sources)
		}
		for _, pat := range a.Sources {
			if !used[pat] {
				return nil, fmt.Errorf("%s: allow %q matches no binding of the packages; drop it", handFile, pat)
			}
		}
	}
	var buf bytes.Buffer
	buf.WriteString("{\n \"about\": ")
	if err := writeJSON(&buf, about); err != nil {
		return nil, err
	}
	buf.WriteString(",\n \"shortcuts\": [\n")
	for i, e := range out {
		buf.WriteString("  ")
		if err := writeJSON(&buf, e); err != nil {
			return nil, err
		}
		if i < len(out)-1 {
			buf.WriteString(",")
		}
		buf.WriteString("\n")
	}
	buf.WriteString(" ]\n}\n")
	return buf.Bytes(), nil
}

func writeJSON(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // Encode's newline
	return nil
}
