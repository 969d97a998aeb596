//go:build unix

package wayland

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/supervisor/input"
)

// wlRecorder stands in for the helper in unit tests of the Wayland
// backend's logic; the real helper is driven by the supervisor's
// wayland_serve_e2e_test.go.
type wlRecorder struct {
	calls []string
	keys  [][]input.Keysym
	texts []string
}

func (r *wlRecorder) call(_ context.Context, method string, params, _ any) error {
	r.calls = append(r.calls, method)
	p := params.(map[string]any)
	switch method {
	case "key_combo":
		r.keys = append(r.keys, p["keys"].([]input.Keysym))
	case "key_type":
		r.texts = append(r.texts, p["text"].(string))
	}
	return nil
}

// newWlTest drives the backend through the shared input front, as serve
// does.
func newWlTest(t *testing.T) (*input.Input, *wlRecorder) {
	t.Helper()
	r := &wlRecorder{}
	be, err := NewInput(InputOptions{Call: r.call})
	if err != nil {
		t.Fatal(err)
	}
	return input.New(be), r
}

func TestWaylandKeyNames(t *testing.T) {
	in, r := newWlTest(t)
	if err := in.Key(context.Background(), "ctrl+shift+t alt+F4 Return ctrl+T"); err != nil {
		t.Fatal(err)
	}
	want := [][]input.Keysym{{0xffe3, 0xffe1, 't'}, {0xffe9, 0xffc1}, {0xff0d}, {0xffe3, 0xffe1, 't'}}
	if !reflect.DeepEqual(r.keys, want) {
		t.Fatalf("key_combo keys %q, want %q", r.keys, want)
	}
}

func TestWaylandAllowlistHolds(t *testing.T) {
	in, r := newWlTest(t)
	var na *input.KeyNotAllowedError
	if err := in.Key(context.Background(), "ctrl+alt+Terminate_Server"); !errors.As(err, &na) {
		t.Fatalf("Terminate_Server: %v, want a input.KeyNotAllowedError", err)
	}
	if err := in.Type(context.Background(), "a\x1bb"); err == nil {
		t.Fatal("typing an escape character was accepted")
	}
	if len(r.calls) != 0 {
		t.Fatalf("refused input still reached the helper: %v", r.calls)
	}
}

func TestWaylandTypeRuns(t *testing.T) {
	in, r := newWlTest(t)
	text := strings.Repeat("x", 40) + "\nyz"
	if err := in.Type(context.Background(), text); err != nil {
		t.Fatal(err)
	}
	want := []string{strings.Repeat("x", 32), strings.Repeat("x", 8) + "\n", "yz"}
	if !reflect.DeepEqual(r.texts, want) {
		t.Fatalf("key_type runs %q, want %q", r.texts, want)
	}
	// The guard is asked before each run, and its refusal stops the rest.
	checks := 0
	ctx := input.WithGuard(context.Background(), &input.Guard{Check: func(context.Context) ([]uint32, error) {
		checks++
		if checks == 2 {
			return nil, errors.New("the focus moved")
		}
		return nil, nil
	}})
	r.texts = nil
	err := in.Type(ctx, text)
	if err == nil || !strings.Contains(err.Error(), "typed 32 of 43 characters") || len(r.texts) != 1 {
		t.Fatalf("guarded type: %v after runs %q; want a stop after the first run", err, r.texts)
	}
}

func TestWaylandUnsupported(t *testing.T) {
	in, r := newWlTest(t)
	ctx := context.Background()
	if err := in.HoldKey(ctx, "shift", 0); !errors.Is(err, ErrInputUnsupported) {
		t.Fatalf("HoldKey: %v", err)
	}
	if err := in.Click(ctx, input.ButtonLeft, 1, []string{"shift"}); !errors.Is(err, ErrInputUnsupported) {
		t.Fatalf("shift+click: %v", err)
	}
	if err := in.Key(ctx, "Num_Lock"); !errors.Is(err, ErrInputUnsupported) {
		t.Fatalf("Num_Lock: %v", err)
	}
	if len(r.calls) != 0 {
		t.Fatalf("unsupported input reached the helper: %v", r.calls)
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	if err := in.Move(ctx, 1, 1); !errors.Is(err, input.ErrClosed) {
		t.Fatalf("Move after Close: %v", err)
	}
}
