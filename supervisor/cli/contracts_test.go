package cli

import (
	"strings"
	"testing"
)

// TestServeContractFlags: unknown image presets and tool profiles are
// refused before anything starts, naming the choices; serve --help
// documents both.
func TestServeContractFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--image-preset", "llama"}, "anthropic, openai, gemini"},
		{[]string{"serve", "--tool-profile", "gemini"}, "default or openai"},
	} {
		var stderr strings.Builder
		code := Main(t.Context(), tc.args, Stdio{In: strings.NewReader(""), Out: &strings.Builder{}, Err: &stderr})
		if code == 0 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("Main(%q) = %d, stderr %q; want an error containing %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	var help strings.Builder
	Main(t.Context(), []string{"serve", "--help"}, Stdio{Out: &help, Err: &strings.Builder{}})
	for _, want := range []string{"-tool-profile", "-image-preset", "computer_toolset_20260801", "computer_call_output", `"scale" receipt`} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("serve --help lacks %q", want)
		}
	}
}
