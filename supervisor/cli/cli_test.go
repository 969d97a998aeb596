package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMainDocListsEveryCommand: cmd/deskhand's doc comment, what `go doc`
// shows, names every command Main runs, the help and the hidden ones.
func TestMainDocListsEveryCommand(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "cmd", "deskhand", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	doc, _, ok := strings.Cut(string(src), "\npackage main")
	if !ok {
		t.Fatal("cmd/deskhand/main.go has no package clause")
	}
	names := []string{"help", "clipboard-keeper"}
	for _, c := range commands() {
		names = append(names, c.name)
	}
	for _, name := range names {
		// A listed command starts a line of the command list (a tab after
		// "//"); the internal one is named in the text.
		listed := regexp.MustCompile(`(?m)^//\t` + regexp.QuoteMeta(name) + `\b`).MatchString(doc)
		if !listed && !strings.Contains(doc, " "+name+" ") {
			t.Errorf("the doc comment of cmd/deskhand/main.go does not list the %q command", name)
		}
	}
}
