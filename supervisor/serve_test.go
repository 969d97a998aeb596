package supervisor

import (
	"strings"
	"testing"
)

func TestVirtualDisplayPlan(t *testing.T) {
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
		start, w, h, err := virtualDisplayPlan(tt.flag, tt.display)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("virtualDisplayPlan(%q, %q) error = %v, want one containing %q", tt.flag, tt.display, err, tt.err)
			}
			continue
		}
		if err != nil || start != tt.start || w != tt.w || h != tt.h {
			t.Errorf("virtualDisplayPlan(%q, %q) = %v, %d, %d, %v; want %v, %d, %d", tt.flag, tt.display, start, w, h, err, tt.start, tt.w, tt.h)
		}
	}
}

func TestMainServesByDefault(t *testing.T) {
	// Flags alone select serve: a bad serve flag is a serve usage error.
	var stderr strings.Builder
	code := Main(t.Context(), []string{"--coordinates", "percent"}, Stdio{In: strings.NewReader(""), Out: &strings.Builder{}, Err: &stderr})
	if code != 1 || !strings.Contains(stderr.String(), "deskhand serve: --coordinates") {
		t.Errorf("Main(--coordinates percent) = %d, stderr %q; want serve's error about --coordinates", code, stderr.String())
	}
	stderr.Reset()
	if code := Main(t.Context(), []string{"serve", "--help"}, Stdio{Out: &strings.Builder{}, Err: &stderr}); code != 0 || !strings.Contains(stderr.String(), "--virtual-display") && !strings.Contains(stderr.String(), "-virtual-display") {
		t.Errorf("serve --help = %d, %q", code, stderr.String())
	}
}
