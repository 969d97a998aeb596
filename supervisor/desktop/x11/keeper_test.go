package x11

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/cleanup"
)

// TestKeeperKeepsPrimary: one keeper holds the clipboard and PRIMARY,
// each with its own text, and stays until both are taken.
func TestKeeperKeepsPrimary(t *testing.T) {
	desktoptest.Require(t, "Xvfb", "xclip")
	d := desktoptest.Start(t, desktoptest.Options{WindowManager: "none"})
	read := func(sel string) string {
		out, _ := d.Command("xclip", "-o", "-selection", sel).Output()
		return string(out)
	}
	waitText := func(sel, want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for got := read(sel); got != want; got = read(sel) {
			if time.Now().After(deadline) {
				t.Fatalf("%s = %q, want %q", sel, got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s := cleanup.Stash{Clipboard: cleanup.Clip{Text: "copied ✓", Had: true}, Primary: cleanup.Clip{Text: "selected: déjà vu", Had: true}}
	if err := Keep(ctx, os.Args[0], d.Display(), s); err != nil {
		t.Fatal(err)
	}
	if got := read("clipboard"); got != "copied ✓" {
		t.Fatalf("clipboard = %q", got)
	}
	if got := read("primary"); got != "selected: déjà vu" {
		t.Fatalf("PRIMARY = %q", got)
	}
	// Someone selects text: PRIMARY is theirs, the clipboard still kept.
	cmd := d.Command("xclip", "-i", "-selection", "primary")
	cmd.Stdin = strings.NewReader("someone's selection")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	waitText("primary", "someone's selection")
	if got := read("clipboard"); got != "copied ✓" {
		t.Fatalf("clipboard after PRIMARY was taken = %q", got)
	}
	// Nothing to keep: no keeper.
	if err := Keep(ctx, os.Args[0], d.Display(), cleanup.Stash{Primary: cleanup.Clip{Text: "not had"}}); err != nil {
		t.Fatal(err)
	}
	waitText("primary", "someone's selection")
}
