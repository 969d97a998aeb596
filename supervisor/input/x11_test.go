//go:build linux

package input

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// These tests drive real applications (GTK 3 dialogs from zenity, xterm) on
// a private Xvfb desktop and read back what they received.

// startInput starts a desktop and an Input on it; both end with the test.
func startInput(t *testing.T) (*desktoptest.Desktop, *Input) {
	t.Helper()
	desktoptest.Require(t, "zenity", "xterm", "xdotool", "xmodmap", "setxkbmap", "xkbcomp", "xinput", "import")
	d := desktoptest.Start(t, desktoptest.Options{})
	in, err := New(Options{Display: d.Display(), Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("New(%q): %v", d.Display(), err)
	}
	t.Cleanup(func() {
		if err := in.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d, in
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// app is a started application whose standard output and exit status are
// written to files, read by result.
type app struct {
	d   *desktoptest.Desktop
	win *desktoptest.Window
	out string
}

// startCaptured runs name with args through sh so that its stdout and exit
// status land in files, and waits for its window (found by WM_CLASS class).
func startCaptured(t *testing.T, d *desktoptest.Desktop, class, name string, args ...string) *app {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	script := `"$@" > "$DESKHAND_TEST_OUT"; echo $? > "$DESKHAND_TEST_OUT.status"`
	w := d.StartApp(t, desktoptest.App{
		Name:  "sh",
		Args:  append([]string{"-c", script, "sh", name}, args...),
		Class: class,
		Env:   []string{"DESKHAND_TEST_OUT=" + out},
	})
	d.Focus(t, w.ID)
	return &app{d: d, win: w, out: out}
}

func startZenity(t *testing.T, d *desktoptest.Desktop, args ...string) *app {
	t.Helper()
	return startCaptured(t, d, "Zenity", "zenity", args...)
}

// result waits for the application to exit and returns its stdout and
// exit status.
func (a *app) result(t *testing.T) (string, int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, err := os.ReadFile(a.out + ".status")
		if err == nil && len(status) > 0 && status[len(status)-1] == '\n' {
			code, err := strconv.Atoi(strings.TrimSpace(string(status)))
			if err != nil {
				t.Fatalf("exit status file holds %q", status)
			}
			out, err := os.ReadFile(a.out)
			if err != nil {
				t.Fatal(err)
			}
			a.waitUnmanaged(t)
			return string(out), code
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s (window 0x%x) did not exit within 10s", a.win.Title, a.win.ID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitUnmanaged waits until the window manager no longer lists the
// application's window. A new client may get the same window id, and the
// harness ignores windows it saw listed before starting an app.
func (a *app) waitUnmanaged(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for slices.Contains(a.d.ClientList(t), a.win.ID) {
		if time.Now().After(deadline) {
			t.Fatalf("window 0x%x is still managed 5s after its application exited", a.win.ID)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// keymapDump is the whole keyboard mapping twice over: the core view
// (xmodmap -pke) and the XKB keymap (xkbcomp).
func keymapDump(t *testing.T, d *desktoptest.Desktop) (core, xkb string) {
	t.Helper()
	return d.Run(t, "xmodmap", "-pke"), d.Run(t, "xkbcomp", "-xkb", d.Display(), "-")
}

func setLayout(t *testing.T, d *desktoptest.Desktop, layout string) {
	t.Helper()
	d.Run(t, "setxkbmap", "-layout", layout)
	if got := d.Run(t, "setxkbmap", "-query"); !regexp.MustCompile(`(?m)^layout:\s+`+layout+`$`).MatchString(got) {
		t.Fatalf("setxkbmap -layout %s: query says\n%s", layout, got)
	}
}

var typingCases = []struct{ name, text string }{
	{"ascii", "Hello, World! 0123456789 ~`!@#$%^&*()_+-=[]{}\\|;:'\",.<>/? yz YZ"},
	{"latin", "héllo wörld ß ÄÖÜ àçñ €"},
	{"cjk", "日本語"},
	{"emoji", "🙂"},
	{"mixed", "Grüße 👋 from 東京, 1+1=2."},
}

// TestTypeGTKEntry types into a GTK entry under a US and a German layout
// and reads back exactly what the entry holds (zenity prints it after
// Return), then checks the keymap is as it was.
func TestTypeGTKEntry(t *testing.T) {
	d, in := startInput(t)
	ctx := context.Background()
	for _, layout := range []string{"us", "de"} {
		t.Run(layout, func(t *testing.T) {
			setLayout(t, d, layout)
			core, xkb := keymapDump(t, d)
			for _, tc := range typingCases {
				t.Run(tc.name, func(t *testing.T) {
					z := startZenity(t, d, "--entry", "--title", "entry "+layout+" "+tc.name)
					if err := in.Type(ctx, tc.text); err != nil {
						t.Fatalf("Type(%q): %v", tc.text, err)
					}
					if err := in.Key(ctx, "Return"); err != nil {
						t.Fatalf("Key(Return): %v", err)
					}
					out, code := z.result(t)
					if code != 0 || out != tc.text+"\n" {
						t.Errorf("typed %q under %s: zenity exited %d printing %q", tc.text, layout, code, out)
					}
				})
			}
			core2, xkb2 := keymapDump(t, d)
			if core2 != core {
				t.Errorf("xmodmap -pke changed under %s:\n%s", layout, lineDiff(core, core2))
			}
			if xkb2 != xkb {
				t.Errorf("the XKB keymap changed under %s:\n%s", layout, lineDiff(xkb, xkb2))
			}
		})
	}
	setLayout(t, d, "us")
}

// TestTypeMultiline types newlines and tabs into a GTK text view and into
// a terminal, under both layouts.
func TestTypeMultiline(t *testing.T) {
	d, in := startInput(t)
	ctx := context.Background()
	text := "first line\n\tindented é 日本 🙂\n\n  last\tline"
	for _, layout := range []string{"us", "de"} {
		t.Run(layout, func(t *testing.T) {
			setLayout(t, d, layout)
			core, _ := keymapDump(t, d)

			z := startZenity(t, d, "--text-info", "--editable", "--title", "text view "+layout)
			if err := in.Type(ctx, text); err != nil {
				t.Fatalf("Type: %v", err)
			}
			// ctrl+Tab leaves the text view; Return then activates OK.
			if err := in.Key(ctx, "ctrl+Tab Return"); err != nil {
				t.Fatalf("Key: %v", err)
			}
			if out, code := z.result(t); code != 0 || out != text {
				t.Errorf("GTK text view under %s: zenity exited %d printing %q, want %q", layout, code, out, text)
			}

			x := startCaptured(t, d, "XTerm", "xterm", "-e", "sh", "-c", `exec cat > "$DESKHAND_TEST_OUT.cat"`)
			if err := in.Type(ctx, text+"\n"); err != nil {
				t.Fatalf("Type: %v", err)
			}
			// ctrl+d at the start of a line ends cat's input; xterm exits.
			if err := in.Key(ctx, "ctrl+d"); err != nil {
				t.Fatalf("Key(ctrl+d): %v", err)
			}
			x.result(t)
			if got, err := os.ReadFile(x.out + ".cat"); err != nil || string(got) != text+"\n" {
				t.Errorf("xterm under %s: cat wrote %q (%v), want %q", layout, got, err, text+"\n")
			}
			if core2, _ := keymapDump(t, d); core2 != core {
				t.Errorf("xmodmap -pke changed under %s:\n%s", layout, lineDiff(core, core2))
			}
		})
	}
	setLayout(t, d, "us")
}

// lineDiff lists the lines that differ, for failure messages.
func lineDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out []string
	for i := 0; i < max(len(al), len(bl)) && len(out) < 20; i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			out = append(out, fmt.Sprintf("-%s\n+%s", x, y))
		}
	}
	return strings.Join(out, "\n")
}

var _ = bufio.NewScanner
var _ = bytes.NewReader
var _ = errors.New
var _ = image.Rect
var _ = png.Decode
var _ = exec.Command
var _ sync.Mutex
var _ = syscall.Kill
