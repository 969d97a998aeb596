package cli

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/supervisor/input"
)

func TestClickPressFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
		err  string
	}{
		{nil, input.DefaultClickPress, ""},
		{[]string{"--click-press-ms", "0"}, 0, ""},
		{[]string{"--click-press-ms", "8"}, 8 * time.Millisecond, ""},
		{[]string{"--click-press-ms", "500"}, 500 * time.Millisecond, ""},
		{[]string{"--click-press-ms", "-1"}, 0, "out of range: use 0 to 500"},
		{[]string{"--click-press-ms", "501"}, 0, "out of range: use 0 to 500"},
	} {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		f := addInputFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		got, err := f.clickPress()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want one saying %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %v, %v; want %v", tc.args, got, err, tc.want)
		}
	}
	var help strings.Builder
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(&help)
	addInputFlags(fs)
	fs.PrintDefaults()
	if !strings.Contains(help.String(), "-click-press-ms milliseconds") || !strings.Contains(help.String(), "(default 20)") {
		t.Errorf("--help does not describe --click-press-ms with its default:\n%s", help.String())
	}
}
