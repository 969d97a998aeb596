//go:build unix

package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor"
	"github.com/deskhand/deskhand/supervisor/desktop/wayland"
)

// waylandChecks explains, in a native Wayland session, what the helper's
// wayland-wlr backend can do on this compositor and what is missing. In a
// GNOME session it asks the gnome-mutter backend instead, and says that
// serve refuses what needs the window list mutter does not give. In a KDE
// Plasma session it asks the kde-kwin backend, and names the desktop entry
// that authorizes the helper when KWin withholds its interfaces.
func waylandChecks(ctx context.Context, explicit string) []check {
	const name = "wayland"
	display, ok := wayland.Session(os.Environ())
	if !ok {
		return nil
	}
	loc, err := supervisor.FindHelper(ctx, supervisor.LocateOptions{Explicit: explicit, NoDownload: true})
	if err != nil {
		return []check{{status: "warn", name: name, detail: "Wayland session " + display + ": no helper to ask what it supports: " + err.Error()}}
	}
	defer loc.Release()
	env, explain := wayland.HelperEnv(os.Environ()), wayland.Support.Explain
	gnome := wayland.IsGNOME(os.Environ())
	if gnome {
		env, explain = wayland.GNOMEHelperEnv(os.Environ()), wayland.Support.ExplainGNOME
	}
	if wayland.IsKDE(os.Environ()) {
		// KWin authorizes the helper by its executable's real path.
		env, explain = wayland.KDEHelperEnv(os.Environ()), func(s wayland.Support) []wayland.Line { return s.ExplainKDE(loc.Path) }
	}
	client := bridge.New(bridge.Options{Path: loc.Path, Env: env, MaxRestarts: 1, ClientName: "deskhand-doctor"})
	defer client.Close()
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := client.Start(hctx); err != nil {
		return []check{{status: "warn", name: name, detail: fmt.Sprintf("Wayland session %s: the helper does not start on it: %v", display, err)}}
	}
	s, err := wayland.Probe(hctx, client)
	if err != nil {
		return []check{{status: "warn", name: name, detail: err.Error()}}
	}
	var out []check
	for _, l := range explain(s) {
		// Not a failure of doctor: serve still works here through a
		// private desktop (--virtual-display WIDTHxHEIGHT).
		status := l.Status
		if status == "FAIL" {
			status = "warn"
		}
		out = append(out, check{status: status, name: name, detail: l.Detail, fix: l.Fix})
	}
	return out
}
