//go:build unix

package freedesktop

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// helperEntries runs the real capture helper with home as XDG_DATA_HOME
// and sys as XDG_DATA_DIRS and returns its desktop entries (no X display
// is needed for `apps`).
func helperEntries(t *testing.T, home string, sys ...string) []DesktopEntry {
	t.Helper()
	helper := bridge.New(bridge.Options{
		Path: desktoptest.HelperPath(t),
		Env:  []string{"XDG_DATA_HOME=" + home, "XDG_DATA_DIRS=" + strings.Join(sys, ":"), "DISPLAY=:deskhand-none", "PATH=/usr/local/bin:/usr/bin:/bin"},
	})
	t.Cleanup(func() { helper.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	entries, err := LoadEntries(ctx, helper)
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// helperSplit is how the helper splits an Exec value: one entry with it,
// read back.
func helperSplit(t *testing.T, exec string) []string {
	t.Helper()
	dir := t.TempDir()
	writeEntry(t, dir, "split.desktop", "[Desktop Entry]\nType=Application\nName=Split\nExec="+exec+"\n")
	entries := helperEntries(t, t.TempDir(), dir)
	if len(entries) != 1 {
		t.Fatalf("helper read %d entries from one file", len(entries))
	}
	return entries[0].Exec
}
