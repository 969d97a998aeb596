//go:build unix

package wayland

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/supervisor/cleanup"
)

func TestKeepChecksBeforeStarting(t *testing.T) {
	ctx := context.Background()
	// Nothing had: nothing to keep, and no helper is needed.
	if err := Keep(ctx, "", nil, cleanup.Stash{}); err != nil {
		t.Fatalf("Keep with nothing to keep = %v", err)
	}
	var s cleanup.Stash
	s.Clipboard.Had, s.Clipboard.Text = true, strings.Repeat("x", MaxKeptBytes+1)
	if err := Keep(ctx, "/nonexistent", nil, s); !errors.Is(err, ErrTooLargeToKeep) {
		t.Fatalf("Keep of %d bytes = %v, want ErrTooLargeToKeep", len(s.Clipboard.Text), err)
	}
	s.Clipboard.Text = "text"
	if err := Keep(ctx, "", nil, s); err == nil || !strings.Contains(err.Error(), "no capture helper") {
		t.Fatalf("Keep without a helper = %v", err)
	}
}

func TestKeeperEnvNamesOnlyTheSession(t *testing.T) {
	env := []string{"DISPLAY=:0", "WAYLAND_DISPLAY=wayland-1", "XDG_RUNTIME_DIR=/run/user/1", "SECRET_TOKEN=x", "LANG=C.UTF-8"}
	got := append(keeperBase(env), HelperEnv(env)...)
	for _, want := range []string{"LANG=C.UTF-8", "DESKHAND_HELPER_BACKEND=wayland", "DISPLAY=", "WAYLAND_DISPLAY=wayland-1", "XDG_RUNTIME_DIR=/run/user/1"} {
		if !slices.Contains(got, want) {
			t.Errorf("keeper env %v lacks %s", got, want)
		}
	}
	for _, kv := range got {
		if strings.HasPrefix(kv, "SECRET_TOKEN=") || kv == "DISPLAY=:0" {
			t.Errorf("keeper env carries %s", kv)
		}
	}
}
