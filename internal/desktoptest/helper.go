//go:build unix

package desktoptest

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// HelperPath returns the capture helper binary to test: $DESKHAND_HELPER,
// else <repo root>/bin/deskhand-helper, else
// <repo root>/target/release/deskhand-helper, where the repo root is the
// nearest directory above the working directory holding go.mod. When none
// exists the test is skipped (failed under CI); a DESKHAND_HELPER that
// names a missing file always fails.
func HelperPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("DESKHAND_HELPER"); p != "" {
		if err := checkExecutable(p); err != nil {
			t.Fatalf("DESKHAND_HELPER=%s: %v", p, err)
		}
		return p
	}
	root, err := RepoRoot()
	if err != nil {
		skipOrFail(t, "no capture helper: %v", err)
	}
	candidates := []string{
		filepath.Join(root, "bin", "deskhand-helper"),
		filepath.Join(root, "target", "release", "deskhand-helper"),
	}
	for _, p := range candidates {
		if checkExecutable(p) == nil {
			return p
		}
	}
	skipOrFail(t, "no capture helper at %s: build it with `cargo build --release -p deskhand-helper` in %s, or set DESKHAND_HELPER",
		strings.Join(candidates, " or "), root)
	return ""
}

func checkExecutable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", p)
	}
	return nil
}

// RepoRoot returns the nearest directory at or above the working directory
// that contains go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding repo root: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod in the working directory or above it")
		}
		dir = parent
	}
}

// Screenshot returns the whole root window as `xwd -root -silent` reads it,
// converted by ImageMagick (`convert xwd:- png:-`): an independent
// reference for the helper's captures.
func (d *Desktop) Screenshot(t testing.TB) *image.RGBA {
	t.Helper()
	Require(t, "xwd", "convert")
	xwd, err := d.runBytes(nil, "xwd", "-root", "-silent")
	if err != nil {
		t.Fatal(err)
	}
	pngData, err := d.runBytes(xwd, "convert", "xwd:-", "png:-")
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(pngData))
	if err != nil {
		t.Fatalf("decoding the PNG convert made from xwd: %v", err)
	}
	return ToRGBA(img)
}

// ToRGBA converts any image to *image.RGBA with its origin at 0,0.
func ToRGBA(img image.Image) *image.RGBA {
	if rgba, ok := img.(*image.RGBA); ok && rgba.Rect.Min == (image.Point{}) {
		return rgba
	}
	b := img.Bounds()
	out := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(out, out.Rect, img, b.Min, draw.Src)
	return out
}

func (d *Desktop) runBytes(stdin []byte, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = d.Env()
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return nil, fmt.Errorf("DISPLAY=%s %s %s: %w: %s", d.display, name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		return nil, fmt.Errorf("%s %s: timed out after 60s", name, strings.Join(args, " "))
	}
	return stdout.Bytes(), nil
}
