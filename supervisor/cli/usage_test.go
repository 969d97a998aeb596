package cli

import (
	"regexp"
	"strings"
	"testing"

	"github.com/deskhand/deskhand/supervisor"
)

// runMain runs Main with its own stdout and stderr, as cmd/deskhand does
// with the process's.
func runMain(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut strings.Builder
	code = Main(t.Context(), args, Stdio{In: strings.NewReader(""), Out: &out, Err: &errOut})
	return code, out.String(), errOut.String()
}

func TestVersionFlags(t *testing.T) {
	want := "deskhand " + supervisor.Version + "\n"
	for _, args := range [][]string{{"--version"}, {"-v"}, {"-version"}, {"version"}} {
		code, out, errOut := runMain(t, args...)
		if code != 0 || out != want || errOut != "" {
			t.Errorf("deskhand %s = %d, stdout %q, stderr %q; want 0, %q on stdout", strings.Join(args, " "), code, out, errOut, want)
		}
	}
}

// TestHelpGoesToStdout: help asked for, in every spelling and for every
// command, is on stdout with exit status 0, so `deskhand help serve | less`
// shows it.
func TestHelpGoesToStdout(t *testing.T) {
	cases := [][]string{{"help"}, {"--help"}, {"-h"}, {"serve", "--help"}, {"serve", "-h"}, {"--help", "serve"}}
	for _, c := range commands() {
		cases = append(cases, []string{"help", c.name})
	}
	for _, args := range cases {
		code, out, errOut := runMain(t, args...)
		if code != 0 || !strings.HasPrefix(out, "Usage: deskhand") && !strings.Contains(out, "\nUsage:") || errOut != "" {
			t.Errorf("deskhand %s = %d, stdout %.80q, stderr %q; want 0 and the help on stdout", strings.Join(args, " "), code, out, errOut)
		}
	}
	if _, out, _ := runMain(t, "help", "serve"); !strings.Contains(out, "\n  -virtual-display") {
		t.Errorf("deskhand help serve lists no -virtual-display flag:\n%s", out)
	}
}

// TestMistypedFlag: a flag that does not exist gets a short message on
// stderr naming the flag meant, and exit status 2, not the whole help.
func TestMistypedFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--virtual-dispaly", "1920x1080"}, "did you mean --virtual-display?"},
		{[]string{"--virtual-dispaly=1920x1080"}, "did you mean --virtual-display?"}, // serve, the default command
		{[]string{"serve", "--allow-origin", "x"}, "did you mean --http-allow-origin?"},
		{[]string{"serve", "--virtual", "off"}, "did you mean --virtual-display?"},
		{[]string{"doctor", "--repiar"}, "did you mean --repair?"},
		{[]string{"install", "--rollbak"}, "did you mean --rollback?"},
		{[]string{"grants", "list", "--config-directory", "x"}, "did you mean --config-dir?"},
	} {
		code, out, errOut := runMain(t, tc.args...)
		name := strings.Join(tc.args, " ")
		if code != 2 || out != "" {
			t.Errorf("deskhand %s = %d, stdout %q; want 2 and nothing on stdout", name, code, out)
		}
		if !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "usage: deskhand ") {
			t.Errorf("deskhand %s: stderr %q; want %q and the usage line", name, errOut, tc.want)
		}
		if n := strings.Count(errOut, "\n"); n > 4 {
			t.Errorf("deskhand %s: stderr has %d lines, want a short usage:\n%s", name, n, errOut)
		}
	}
	// Nothing near: no guess.
	if _, _, errOut := runMain(t, "serve", "--zzzzzzzz"); strings.Contains(errOut, "did you mean") {
		t.Errorf("deskhand serve --zzzzzzzz guesses a flag: %q", errOut)
	}
}

// TestHelpNamesNoInternalDocuments: the help says what things are, not
// which internal reference document they came from.
func TestHelpNamesNoInternalDocuments(t *testing.T) {
	jargon := regexp.MustCompile(`(?i)\bseeds? ?[0-9]{3}\b|computer-use --`)
	texts := [][]string{{"help"}}
	for _, c := range commands() {
		texts = append(texts, []string{"help", c.name})
	}
	for _, args := range texts {
		_, out, errOut := runMain(t, args...)
		if len(out) < 60 {
			t.Errorf("deskhand %s printed %d bytes of help", strings.Join(args, " "), len(out))
		}
		if m := jargon.FindString(out + errOut); m != "" {
			t.Errorf("deskhand %s says %q", strings.Join(args, " "), m)
		}
	}
}
