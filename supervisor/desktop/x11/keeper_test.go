//go:build unix

package x11

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
	"github.com/deskhand/deskhand/supervisor/cleanup"
)

// keeperDesktop starts a bare Xvfb and returns it with a selection reader
// (xclip -o) for it.
func keeperDesktop(t *testing.T) (*desktoptest.Desktop, func(sel, target string) string) {
	t.Helper()
	desktoptest.Require(t, "Xvfb", "xclip", "timeout")
	d := desktoptest.Start(t, desktoptest.Options{WindowManager: "none"})
	return d, func(sel, target string) string {
		args := []string{"-o", "-selection", sel}
		if target != "" {
			args = append(args, "-t", target)
		}
		// Bounded: a reader waits forever on an owner that died mid-INCR.
		out, _ := d.Command("timeout", append([]string{"10", "xclip"}, args...)...).Output()
		return string(out)
	}
}

// waitFor waits (generously: the machines are shared) until read returns
// want.
func waitFor(t *testing.T, what string, read func() string, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for got := read(); got != want; got = read() {
		if time.Now().After(deadline) {
			t.Fatalf("%s = %.200q, want %.200q", what, got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// keeperAlive tells whether a helper keeping the clipboard of display
// still runs.
func keeperAlive(display string) bool {
	out, _ := exec.Command("pgrep", "-f", "--", KeepFlag).Output()
	for _, pid := range strings.Fields(string(out)) {
		env, err := readFile("/proc/" + pid + "/environ")
		if err == nil && strings.Contains(env, "DISPLAY="+display+"\x00") {
			return true
		}
	}
	return false
}

// TestKeeperOnXvfb: the text handed to the helper's keep mode stays on
// the clipboard after the process that handed it off is done with it, in
// UTF-8 and Latin-1, until another client takes the clipboard; then the
// keeper exits.
func TestKeeperOnXvfb(t *testing.T) {
	d, read := keeperDesktop(t)
	helper := desktoptest.HelperPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	keep := func(text string) error {
		return Keep(ctx, helper, d.Display(), cleanup.Stash{Clipboard: cleanup.Clip{Text: text, Had: true}})
	}
	if err := keep("kept: déjà vu"); err != nil {
		t.Fatal(err)
	}
	if got := read("clipboard", "UTF8_STRING"); got != "kept: déjà vu" {
		t.Fatalf("UTF8_STRING = %q", got)
	}
	if got := read("clipboard", "STRING"); got != "kept: d\xe9j\xe0 vu" {
		t.Fatalf("STRING = %q", got)
	}
	if got := read("clipboard", "TARGETS"); !strings.Contains(got, "UTF8_STRING") || !strings.Contains(got, "TARGETS") {
		t.Fatalf("TARGETS = %q", got)
	}
	// A second keeper takes over from the first, which exits.
	if err := keep("€ only in UTF-8, 日本語, 🙂"); err != nil {
		t.Fatal(err)
	}
	if got := read("clipboard", "UTF8_STRING"); got != "€ only in UTF-8, 日本語, 🙂" {
		t.Fatalf("second keeper: UTF8_STRING = %q", got)
	}
	if err := keep(strings.Repeat("x", MaxKeptBytes+1)); !errors.Is(err, ErrTooLargeToKeep) {
		t.Fatalf("Keep of too much text: %v", err)
	}
	// Another owner takes over; the keeper goes away.
	cmd := d.Command("xclip", "-i", "-selection", "clipboard")
	cmd.Stdin = strings.NewReader("someone else")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "clipboard after xclip took it", func() string { return read("clipboard", "UTF8_STRING") }, "someone else")
	waitFor(t, "a keeper runs", func() string { return strconv.FormatBool(keeperAlive(d.Display())) }, "false")
}

// TestKeeperKeepsPrimary: one keeper holds the clipboard and PRIMARY,
// each with its own text, and stays until both are taken.
func TestKeeperKeepsPrimary(t *testing.T) {
	d, read := keeperDesktop(t)
	helper := desktoptest.HelperPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := cleanup.Stash{Clipboard: cleanup.Clip{Text: "copied ✓", Had: true}, Primary: cleanup.Clip{Text: "selected: déjà vu", Had: true}}
	if err := Keep(ctx, helper, d.Display(), s); err != nil {
		t.Fatal(err)
	}
	if got := read("clipboard", ""); got != "copied ✓" {
		t.Fatalf("clipboard = %q", got)
	}
	if got := read("primary", ""); got != "selected: déjà vu" {
		t.Fatalf("PRIMARY = %q", got)
	}
	// Someone selects text: PRIMARY is theirs, the clipboard still kept.
	cmd := d.Command("xclip", "-i", "-selection", "primary")
	cmd.Stdin = strings.NewReader("someone's selection")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "PRIMARY", func() string { return read("primary", "") }, "someone's selection")
	if got := read("clipboard", ""); got != "copied ✓" {
		t.Fatalf("clipboard after PRIMARY was taken = %q", got)
	}
	if !keeperAlive(d.Display()) {
		t.Fatal("the keeper exited while it still owned the clipboard")
	}
	// Nothing to keep: no keeper.
	if err := Keep(ctx, helper, d.Display(), cleanup.Stash{Primary: cleanup.Clip{Text: "not had"}}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "PRIMARY", func() string { return read("primary", "") }, "someone's selection")
	// The clipboard is taken too: the keeper is done.
	cmd = d.Command("xclip", "-i", "-selection", "clipboard")
	cmd.Stdin = strings.NewReader("copied elsewhere")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a keeper runs", func() string { return strconv.FormatBool(keeperAlive(d.Display())) }, "false")
}

// TestKeeperLargeTextThroughINCR: text far over one X request (the core
// protocol's 256 KiB) is kept and read back whole, which only an INCR
// transfer does, in both selections.
func TestKeeperLargeTextThroughINCR(t *testing.T) {
	d, read := keeperDesktop(t)
	helper := desktoptest.HelperPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var b strings.Builder
	for i := 0; b.Len() < 900*1024; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteString(" déjà 日本 🙂\n")
	}
	big := b.String()
	primary := strings.ToUpper(big[:600*1024])
	if err := Keep(ctx, helper, d.Display(), cleanup.Stash{Clipboard: cleanup.Clip{Text: big, Had: true}, Primary: cleanup.Clip{Text: primary, Had: true}}); err != nil {
		t.Fatal(err)
	}
	if got := read("clipboard", "UTF8_STRING"); got != big {
		t.Fatalf("clipboard: read %d bytes back, want the %d kept", len(got), len(big))
	}
	if got := read("primary", "UTF8_STRING"); got != primary {
		t.Fatalf("PRIMARY: read %d bytes back, want the %d kept", len(got), len(primary))
	}
}

// TestKeeperRefusesBadInput: the keep mode says what was wrong with its
// input and keeps nothing.
func TestKeeperRefusesBadInput(t *testing.T) {
	d, read := keeperDesktop(t)
	cmd := exec.Command(desktoptest.HelperPath(t), KeepFlag)
	cmd.Env = append(cmd.Environ(), "DISPLAY="+d.Display())
	cmd.Stdin = strings.NewReader(`{"clipbord": "typo"}`)
	out, err := cmd.Output()
	if err == nil || !strings.HasPrefix(string(out), "error: ") || !strings.Contains(string(out), "clipbord") {
		t.Fatalf("keep mode with a misspelt key: %v, %q", err, out)
	}
	if got := read("clipboard", ""); got != "" {
		t.Fatalf("clipboard = %q after refused input", got)
	}
}

func readFile(name string) (string, error) {
	b, err := os.ReadFile(name)
	return string(b), err
}
