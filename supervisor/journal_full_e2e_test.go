//go:build unix

package supervisor_test

// End-to-end test of a turn journal that cannot be written because the
// state directory's disk is full: the hide gate refuses input with the
// real cause and its fix, instead of leaving the unapproved window in
// front to be blamed. The state directory is a 64 KiB tmpfs filled to
// the last byte (root only).
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run JournalFullDisk -v

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// fullDisk mounts a 64 KiB tmpfs under a temporary directory, unmounted
// when the test ends, and returns it with the function that fills it.
func fullDisk(t *testing.T) (dir string, fill func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		if desktoptest.InCI() {
			t.Fatal("mounting a tmpfs needs root (CI is set, so this is a failure, not a skip)")
		}
		t.Skip("mounting a tmpfs needs root")
	}
	dir = filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Fatalf("mount -t tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir, func() {
		t.Helper()
		f, err := os.Create(filepath.Join(dir, "filler"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		block := make([]byte, 4096)
		for {
			if _, err := f.Write(block); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("filling %s: %v", dir, err)
				}
				break
			}
		}
		// Smaller writes take the last bytes of a partly used block.
		for _, err := f.Write(block[:1]); err == nil; _, err = f.Write(block[:1]) {
		}
	}
}

// TestJournalFullDisk: with the state directory's disk full, a click on
// an approved app while an unapproved one is in front is refused with an
// error that names the full disk and the fix; the unapproved window stays
// shown (nothing hid it without a journal), and no journal was written.
func TestJournalFullDisk(t *testing.T) {
	state, fill := fullDisk(t)
	d := newDesktop(t, desktoptest.Options{})
	app := d.StartGTK(t, "approved")
	d.Move(t, app.ID, 100, 100, 0, 0)
	other := d.StartApp(t, desktoptest.App{Name: "xterm", Args: []string{"-geometry", "40x10+900+500"}, Class: "XTerm"})
	d.Focus(t, other.ID)
	app = d.WindowInfo(t, app.ID)
	e := gatedServer(t, d, nil, "--allow", "zenity", "--state-dir", state)
	fill()
	e.access([]string{"zenity"})
	e.screenshot("screenshot", nil) // looking needs no hiding: the xterm is masked
	x, y := center(app, 0, -20)
	msg := e.bad("left_click", map[string]any{"coordinate": e.at(x, y)}, "is full", state, "free space", "--state-dir none")
	t.Logf("the refusal: %s", msg)
	if strings.Contains(msg, "Click a window of an approved app") {
		t.Errorf("the refusal %q sends the model after the window in front", msg)
	}
	if d.WindowInfo(t, other.ID).Minimized() {
		t.Error("the unapproved xterm was hidden without a turn journal")
	}
	if files := journals(t, state); len(files) != 0 {
		t.Errorf("turn journals on the full disk: %v", files)
	}
}
