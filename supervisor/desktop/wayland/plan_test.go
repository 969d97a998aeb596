//go:build unix

package wayland

import (
	"errors"
	"strings"
	"testing"
)

func TestPlanDisplay(t *testing.T) {
	native := []string{"WAYLAND_DISPLAY=wayland-1"}
	x := []string{"DISPLAY=:0", "WAYLAND_DISPLAY=wayland-1"}
	none := []string{}
	ok := func() error { return nil }
	root := func() error { return errors.New("sway refuses to run as root") }
	for _, tc := range []struct {
		flag   string
		env    []string
		usable func() error
		want   Plan
		note   bool
	}{
		{"auto", native, ok, Plan{Session: "wayland-1"}, false},
		{"off", native, ok, Plan{Session: "wayland-1"}, false},
		{"auto", x, ok, Plan{X11: "auto"}, false},
		{"auto", none, ok, Plan{X11: "auto"}, false},
		{"1280x720", native, ok, Plan{Sway: true, Width: 1280, Height: 720}, false},
		{"1280x720", native, root, Plan{X11: "1280x720"}, true},
		{"1280x720", x, ok, Plan{X11: "1280x720"}, false},
		{"1280x720", none, ok, Plan{X11: "1280x720"}, false},
		{"sway:800x600", none, ok, Plan{Sway: true, Width: 800, Height: 600}, false},
		{"Sway", x, ok, Plan{Sway: true, Width: 1920, Height: 1080}, false},
		{"xvfb:800x600", native, ok, Plan{X11: "800x600"}, false},
		{"xvfb", native, ok, Plan{X11: "1920x1080"}, false},
		{"bogus", native, ok, Plan{X11: "bogus"}, false},
	} {
		got, err := PlanDisplay(tc.flag, tc.env, tc.usable)
		if err != nil {
			t.Errorf("PlanDisplay(%q, %q): %v", tc.flag, tc.env, err)
			continue
		}
		if (got.Note != "") != tc.note {
			t.Errorf("PlanDisplay(%q, %q) note %q, want one: %v", tc.flag, tc.env, got.Note, tc.note)
		}
		got.Note = ""
		if got != tc.want {
			t.Errorf("PlanDisplay(%q, %q) = %+v, want %+v", tc.flag, tc.env, got, tc.want)
		}
	}
	if _, err := PlanDisplay("sway:1280x720", native, root); err == nil || !strings.Contains(err.Error(), "root") {
		t.Errorf("sway as root: %v, want the root refusal", err)
	}
	if _, err := PlanDisplay("sway:12x", native, ok); err == nil {
		t.Error("sway:12x planned without error")
	}
}
