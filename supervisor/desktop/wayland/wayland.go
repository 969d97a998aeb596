//go:build unix

// Package wayland is deskhand's desktop platform for a native Wayland
// session (Desktop, opened by Open) on a wlroots compositor (sway and
// others with the same protocols), the user's or a private headless sway
// (package sway): it finds the session in the environment, asks the capture helper's wayland-wlr
// backend what this compositor lets deskhand do, and turns that into the
// display gate's refusal and the doctor's explanation; and it starts the
// clipboard keeper (Keep) that serves the text deskhand puts back as it
// exits.
//
// The helper does all the Wayland work, input included (helpers/PROTOCOL.md,
// "Wayland (wlroots)"): no well-kept Go Wayland client speaks the wlroots
// virtual-pointer and virtual-keyboard protocols, while the Rust crates
// (wayland-client, wayland-protocols-wlr, wayland-protocols-misc) do.
//
// What Wayland cannot tell deskhand is refused, not guessed: there is no
// window under a point (ErrNoWindowAt), and no client can see the user's
// key presses outside its own windows, so the Escape watcher cannot work
// here (ErrNoEscapeWatcher).
//
// A KDE Plasma session (IsKDE) is reached through the helper's kde-kwin
// backend (KDEHelperEnv): KWin tells an authorized client its windows with
// their geometry and stacking order, so every gate is live there
// (GateKDE); without the desktop entry that authorizes the helper
// (KDEEntry, KDEEntryFile) KWin withholds them and the gate says what to
// add.
//
// A GNOME session (IsGNOME) is reached through the helper's gnome-mutter
// backend instead (GNOMEHelperEnv); mutter tells no client its windows,
// so serve's display gate refuses every action there (GateGNOME) and the
// doctor says so (ExplainGNOME).
package wayland

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/lock"
)

// Backend is the helper backend this package expects.
const Backend = "wayland-wlr"

// ErrNoWindowAt is the refusal for every check that needs the window under
// a point.
var ErrNoWindowAt = errors.New("Wayland does not tell a client which window is under a point, so deskhand cannot check whose window this action would land on; it refuses rather than guess")

// ErrNoEscapeWatcher says why the Escape watcher is off on Wayland.
var ErrNoEscapeWatcher = errors.New("the Escape watcher does not work on Wayland: the compositor gives no client the keys pressed in other apps' windows; stop deskhand from the MCP client instead")

// Session returns the Wayland display named by env (KEY=value) when it
// is a native Wayland session: WAYLAND_DISPLAY set and DISPLAY unset (with
// DISPLAY set too, X11 apps run under XWayland and deskhand drives those).
func Session(env []string) (display string, ok bool) {
	display = getenv(env, "WAYLAND_DISPLAY")
	return display, display != "" && getenv(env, "DISPLAY") == ""
}

// HelperEnv is what the helper needs to reach the session: its backend
// forced to Wayland, no DISPLAY, and the session's sockets.
func HelperEnv(env []string) []string {
	out := []string{"DESKHAND_HELPER_BACKEND=wayland", "DISPLAY="}
	for _, k := range []string{"WAYLAND_DISPLAY", "XDG_RUNTIME_DIR", "SWAYSOCK"} {
		if v := getenv(env, k); v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// Lock is the computer-use lock of the compositor whose socket display
// (WAYLAND_DISPLAY, or a path) names in env: a file beside the socket,
// found through symbolic links, named for it. Every deskhand that reaches
// the socket finds the same file whatever its XDG_RUNTIME_DIR (a Wayland
// compositor keeps nothing a client could own, as an X server keeps a
// selection). With no way to find the socket, the user's lock.Dir.
func Lock(env []string, display string, opts lock.Options) *lock.Lock {
	socket := display
	if !filepath.IsAbs(socket) {
		run := getenv(env, "XDG_RUNTIME_DIR")
		if !filepath.IsAbs(run) {
			return lock.New(lock.Path(lock.Dir(), display), opts)
		}
		socket = filepath.Join(run, socket)
	}
	if real, err := filepath.EvalSymlinks(socket); err == nil {
		socket = real
	}
	return lock.New(lock.Path(filepath.Join(filepath.Dir(socket), "deskhand"), filepath.Base(socket)), opts)
}

func getenv(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val
		}
	}
	return v
}

// Support is what the helper found this compositor offers.
type Support struct {
	Platform     string   `json:"platform"`
	Backend      string   `json:"backend"`
	Display      string   `json:"display"`
	Capabilities []string `json:"capabilities"`
	// Missing says, one sentence each, what this compositor cannot do.
	Missing []string `json:"missing"`
	// DisplayError is set when the compositor could not be reached.
	DisplayError string `json:"display_error"`
	Extensions   struct {
		SwayIPC bool `json:"sway_ipc"`
	} `json:"extensions"`
}

// Probe handshakes with the helper and reads what it supports.
func Probe(ctx context.Context, helper *bridge.Client) (Support, error) {
	var s Support
	if err := helper.Call(ctx, "handshake", map[string]any{"protocol_versions": bridge.ProtocolVersions(), "client": "deskhand"}, &s); err != nil {
		return s, fmt.Errorf("asking the helper what this Wayland session supports: %w", err)
	}
	return s, nil
}

// Has reports whether the compositor offers capability c.
func (s Support) Has(c string) bool { return slices.Contains(s.Capabilities, c) }

// feature is a helper capability and what deskhand calls it to the user.
type feature struct{ capability, what string }

// lacks is what s lacks of fs, in fs's order, for a refusal.
func (s Support) lacks(fs []feature) []string {
	var out []string
	for _, f := range fs {
		if !s.Has(f.capability) {
			out = append(out, f.what)
		}
	}
	return out
}

// offers is what s has of fs, in fs's order, for the doctor's report.
func (s Support) offers(fs []feature) []string {
	var out []string
	for _, f := range fs {
		if s.Has(f.capability) {
			out = append(out, f.what)
		}
	}
	return out
}

// needed are the capabilities deskhand cannot act without, with what each
// is for.
var needed = []feature{
	{"capture", "screenshots (wlr-screencopy)"},
	{"windows", "the window list that decides which app is in front (wlr-foreign-toplevel-management)"},
	{"capture.mask", "masking unapproved windows (wlr-foreign-toplevel-management)"},
	{"input.pointer", "mouse input (zwlr_virtual_pointer_v1)"},
	{"input.keyboard", "keyboard input (zwp_virtual_keyboard_v1)"},
}

// Gate is the display gate's verdict: nil when the compositor offers all
// deskhand needs to act safely, else a refusal that names what is missing
// and what to do.
func (s Support) Gate() error {
	if s.DisplayError != "" {
		return fmt.Errorf("the Wayland display cannot be reached: %s", s.DisplayError)
	}
	if s.Backend == KDEBackend {
		// KWin without XDG_CURRENT_DESKTOP=KDE: its own rules apply.
		return s.GateKDE("")
	}
	if s.Backend != Backend {
		return fmt.Errorf("the capture helper answers with backend %q, not %q; install a helper built with Wayland support (deskhand install)", s.Backend, Backend)
	}
	if missing := s.lacks(needed); len(missing) > 0 {
		return fmt.Errorf("this Wayland compositor lacks %s, so deskhand cannot act here safely; use a wlroots compositor (sway, Hyprland, river, labwc), or run deskhand with --virtual-display for a private desktop",
			strings.Join(missing, ", "))
	}
	return nil
}

// Line is one line of the doctor's report.
type Line struct {
	Status string // "ok", "warn" or "FAIL"
	Detail string
	Fix    string
}

// Explain says, for the doctor, what this session supports and what it
// lacks.
func (s Support) Explain() []Line {
	if err := s.Gate(); err != nil {
		return []Line{{Status: "FAIL", Detail: err.Error(),
			Fix: "run deskhand inside a wlroots session (sway, Hyprland, river, labwc) or pass --virtual-display; on KDE Plasma (XDG_CURRENT_DESKTOP=KDE) deskhand reads KWin's own protocols instead; GNOME is reached too, with serve refusing every action there"}}
	}
	works := s.offers([]feature{
		{"capture", "screenshots"}, {"windows", "window list"}, {"capture.mask", "masking"},
		{"hide", "hiding windows"}, {"clipboard", "clipboard"}, {"input.pointer", "mouse"},
		{"input.keyboard", "keyboard (exact Unicode on any layout)"},
	})
	lines := []Line{{Status: "ok", Detail: fmt.Sprintf("native Wayland session %s (helper backend %s): %s work", s.Display, s.Backend, strings.Join(works, ", "))}}
	for _, m := range s.Missing {
		lines = append(lines, Line{Status: "warn", Detail: "missing: " + m})
	}
	lines = append(lines, Line{Status: "warn", Detail: ErrNoEscapeWatcher.Error()})
	return lines
}
