//go:build unix

package x11

import (
	"strings"
	"testing"
)

func TestPlanDisplay(t *testing.T) {
	tests := []struct {
		flag, display string
		start         bool
		w, h          int
		err           string
	}{
		{"auto", ":0", false, 0, 0, ""},
		{"auto", "", true, 1920, 1080, ""},
		{"", "", true, 1920, 1080, ""},
		{"1280x800", ":0", true, 1280, 800, ""},
		{"1280x800", "", true, 1280, 800, ""},
		{"off", ":1", false, 0, 0, ""},
		{"off", "", false, 0, 0, "DISPLAY is unset"},
		{"big", ":0", false, 0, 0, "WIDTHxHEIGHT"},
	}
	for _, tt := range tests {
		p, err := PlanDisplay(tt.flag, tt.display)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("PlanDisplay(%q, %q) error = %v, want one containing %q", tt.flag, tt.display, err, tt.err)
			}
			continue
		}
		if err != nil || p.Virtual != tt.start || p.Width != tt.w || p.Height != tt.h || !p.Virtual && p.Display != tt.display {
			t.Errorf("PlanDisplay(%q, %q) = %v, %d, %d, %v; want %v, %d, %d", tt.flag, tt.display, p.Virtual, p.Width, p.Height, err, tt.start, tt.w, tt.h)
		}
	}
}
