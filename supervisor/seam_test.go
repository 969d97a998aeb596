package supervisor

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/desktop"
	"github.com/deskhand/deskhand/supervisor/desktop/macos"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// Every platform satisfies the seam on every OS the tests run on, so the
// macOS composition is type-checked on Linux and Windows too (X11's in
// seam_unix_test.go, Windows' in seam_windows.go).
var _ desktop.Platform = (*macos.Desktop)(nil)

// treeExecutor answers A11yTree itself and fails if a capture came with
// the request, which would skip the platform's capture.
type treeExecutor struct{ mcpserver.Executor }

func (treeExecutor) A11yTree(_ context.Context, req bridge.A11yTreeRequest) (*bridge.A11yTree, error) {
	if req.Capture != nil {
		return nil, os.ErrInvalid
	}
	return &bridge.A11yTree{Window: bridge.A11yWindow{Title: "w"}}, nil
}

// TestSessionCaptureTakesTheTreeCapture: a capture asked for with an
// accessibility tree is taken through the platform's session capture
// (macOS: only the approved apps), not passed on with the tree.
func TestSessionCaptureTakesTheTreeCapture(t *testing.T) {
	var took []bridge.CaptureRequest
	exec := sessionCapture{Executor: treeExecutor{}, capture: func(_ context.Context, req bridge.CaptureRequest) (*bridge.Capture, error) {
		took = append(took, req)
		return &bridge.Capture{}, nil
	}}
	want := bridge.CaptureRequest{Format: bridge.FormatPNG}
	tree, err := exec.A11yTree(context.Background(), bridge.A11yTreeRequest{PID: 5, Capture: &want})
	if err != nil {
		t.Fatal(err)
	}
	if tree.CaptureErr != nil || tree.Capture == nil || len(took) != 1 || took[0].Format != want.Format {
		t.Fatalf("A11yTree with a capture: capture %v (%v), session captures %v; want one of %v", tree.Capture, tree.CaptureErr, took, want)
	}
}

// The rule, for the non-test Go files of the shared packages:
//
//   - no cgo (import "C"), so no X11 (or any platform) header or library;
//   - no import of an X11 or other desktop-platform library
//     (forbiddenImports; imports_test.go keeps platform packages out);
//   - no identifier that names X11 machinery (forbiddenIdent: XTEST, XKB,
//     XInput, the X display, EWMH, ICCCM, RandR, WM_CLASS, xgb...);
//   - no string literal that is an X11 atom, extension or variable name
//     (forbiddenLiteral: "_NET_WM_PID", "WM_CLASS", "XTEST", "CLIPBOARD",
//     "DISPLAY=..."), which is how code would reach for one.
//
// Comments and prose inside messages may still mention platforms: a
// refusal that tells the user to look at a window's WM_CLASS names no
// X11 machinery. Package input is shared too: its backends live under
// desktop/ (keycodes, wayland).
var (
	forbiddenImports = []string{
		"github.com/jezek/xgb", "github.com/BurntSushi/xgb", "github.com/go-vgo/robotgo",
		"github.com/godbus/dbus",
	}
	forbiddenIdent   = regexp.MustCompile(`X11|x11|XTEST|XTest|xtest|XWayland|XWAYLAND|xwayland|XKB|Xkb|xkb|XInput|xinput|Xlib|xlib|XDisplay|^xdisplay|Xdisplay|xgb|xproto|EWMH|Ewmh|ewmh|ICCCM|icccm|RandR|RANDR|randr|WMClass|WmClass|wmClass|WM_CLASS|_NET_`)
	forbiddenLiteral = regexp.MustCompile(`^(_NET_\w*|_XKB\w*|WM_[A-Z_]+|XTEST|XWAYLAND|XInputExtension|MIT-SHM|RANDR|CLIPBOARD|UTF8_STRING|TARGETS|CUT_BUFFER\d|DISPLAY(=.*)?|XAUTHORITY)$`)
)

// seamViolations lists where the Go files in dir break the rule.
func seamViolations(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == "C" {
				out = append(out, fset.Position(imp.Pos()).String()+": cgo")
			}
			for _, bad := range forbiddenImports {
				if path == strings.TrimSuffix(bad, "/") || strings.HasPrefix(path, strings.TrimSuffix(bad, "/")+"/") {
					out = append(out, fset.Position(imp.Pos()).String()+": imports "+path)
				}
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ImportSpec:
				return false
			case *ast.Field:
				// Struct tags are wire names (a state file's "x_display"
				// stays readable), not code that reaches for X11.
				for _, id := range n.Names {
					if forbiddenIdent.MatchString(id.Name) {
						out = append(out, fset.Position(id.Pos()).String()+": identifier "+id.Name)
					}
				}
				ast.Inspect(n.Type, func(m ast.Node) bool { return inspectSeam(fset, m, &out) })
				return false
			}
			return inspectSeam(fset, n, &out)
		})
	}
	return out
}

func inspectSeam(fset *token.FileSet, n ast.Node, out *[]string) bool {
	switch n := n.(type) {
	case *ast.Ident:
		if forbiddenIdent.MatchString(n.Name) {
			*out = append(*out, fset.Position(n.Pos()).String()+": identifier "+n.Name)
		}
	case *ast.BasicLit:
		if n.Kind == token.STRING {
			if s, err := strconv.Unquote(n.Value); err == nil && forbiddenLiteral.MatchString(s) {
				*out = append(*out, fset.Position(n.Pos()).String()+": literal "+n.Value)
			}
		}
	}
	return true
}

// TestSharedPackagesNameNoPlatform enforces the seam's rule on the shared
// packages (imports_test.go), so that a new platform is a new package
// under desktop/ and a new selection in seam_<os>.go, not an edit of the
// safety layer.
func TestSharedPackagesNameNoPlatform(t *testing.T) {
	// These shared packages may name X11 things, for the reason given.
	mayName := map[string]string{
		"bridge":          "the helper protocol's client: the wire's fields (StartupWMClass)",
		"supervisor/lock": "DisplayKey knows the spellings of an X display",
	}
	for _, pkg := range shared {
		if mayName[pkg] != "" {
			continue
		}
		for _, v := range seamViolations(t, filepath.Join("..", pkg)) {
			t.Errorf("%s", v)
		}
	}
}

// TestSeamCheckCatchesX11: the check finds each kind of violation in a
// file that has them, and passes the platform package it was written
// against, so it is not vacuous.
func TestSeamCheckCatchesX11(t *testing.T) {
	dir := t.TempDir()
	src := `package bad

// #include <X11/Xlib.h>
import "C"

import "github.com/jezek/xgb/xproto"

type state struct{ XDisplay string }

func f() {
	_ = xproto.AtomPrimary
	_ = "_NET_WM_PID"
	_ = "DISPLAY=:0"
	_ = "look at the window's WM_CLASS" // prose: allowed
}
`
	if err := os.WriteFile(filepath.Join(dir, "bad.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(seamViolations(t, dir), "\n")
	for _, want := range []string{": cgo", "imports github.com/jezek/xgb/xproto", "identifier XDisplay", "identifier xproto", `literal "_NET_WM_PID"`, `literal "DISPLAY=:0"`} {
		if !strings.Contains(got, want) {
			t.Errorf("violations of bad.go lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "WM_CLASS\"") {
		t.Errorf("prose naming WM_CLASS was flagged:\n%s", got)
	}
	if v := seamViolations(t, filepath.Join("desktop", "x11")); len(v) == 0 {
		t.Error("the check finds nothing in desktop/x11, which is all X11")
	}
}
