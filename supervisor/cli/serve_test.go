package cli

import (
	"strings"
	"testing"
)

func TestMainServesByDefault(t *testing.T) {
	// Flags alone select serve: a bad serve flag is a serve usage error.
	var stderr strings.Builder
	code := Main(t.Context(), []string{"--coordinates", "percent"}, Stdio{In: strings.NewReader(""), Out: &strings.Builder{}, Err: &stderr})
	if code != 1 || !strings.Contains(stderr.String(), "deskhand serve: --coordinates") {
		t.Errorf("Main(--coordinates percent) = %d, stderr %q; want serve's error about --coordinates", code, stderr.String())
	}
}
