package gates

import (
	"context"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/supervisor/consent"
)

// TestSetWindowStateOwnWindowOnly: the guarded executor changes a window's
// state only for the pid that owns the window, and only at the full tier
// of that window's app, whatever pid the call names: a full-tier app's
// pid cannot carry a state change to the unapproved or the click-tier
// app's window.
func TestSetWindowStateOwnWindowOnly(t *testing.T) {
	f := newFixture(t, consent.Flags{})
	ctx := context.Background()
	if _, err := f.exec.SetWindowState(ctx, zenityApp.PID, 3, "maximized"); err != nil {
		t.Fatalf("maximizing the full-tier app's own window: %v", err)
	}
	cases := []struct {
		name   string
		pid    int
		window uint32
		want   string
	}{
		{"another app's window", zenityApp.PID, 4, "belongs to"},
		{"a click-tier window by its own pid", xtermApp.PID, 1, "full"},
		{"the unapproved app's own window", secretApp.PID, 4, "not approved"},
		{"a window that is not there", zenityApp.PID, 99, "not on the desktop"},
	}
	for _, c := range cases {
		_, err := f.exec.SetWindowState(ctx, c.pid, c.window, "minimized")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: SetWindowState(pid %d, window %d) = %v, want an error with %q", c.name, c.pid, c.window, err, c.want)
		}
	}
}
