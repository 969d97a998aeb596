package check

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMEListsEveryEnvironmentVariable: every DESKHAND_ environment
// variable that deskhand, its helper or the npm launcher reads is in the
// README's table. The code names a variable as a string literal (Go and
// Rust) or as process.env.NAME (the launcher); the X atoms the helper
// names DESKHAND_* are identifiers, not strings, and are left out.
func TestREADMEListsEveryEnvironmentVariable(t *testing.T) {
	root := repoRoot(t)
	out, err := exec.Command("git", "-C", root, "grep", "-ohE", `"DESKHAND_[A-Z0-9_]+"|process\.env\.DESKHAND_[A-Z0-9_]+`, "--",
		"*.go", "*.rs", "*.js", "*.swift",
		":!*_test.go", ":!internal/", ":!packaging/check/", ":!helpers/linux/tests/", ":!helpers/linux/benches/").Output()
	if err != nil {
		t.Fatalf("git grep: %v", err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`DESKHAND_[A-Z0-9_]+`)
	seen := map[string]bool{}
	for _, v := range name.FindAllString(string(out), -1) {
		if seen[v] {
			continue
		}
		seen[v] = true
		if !strings.Contains(string(readme), "| `"+v+"`") && !strings.Contains(string(readme), ", `"+v+"`") {
			t.Errorf("the code reads %s, but the README's table of environment variables does not list it", v)
		}
	}
	if len(seen) < 5 {
		t.Fatalf("found only %d variables in the code: %v", len(seen), seen)
	}
}
