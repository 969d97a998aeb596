package check

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// licence is the one licence of the repository and of every package built
// from it.
const licence = "Apache-2.0"

// TestOneLicence: LICENSE is the Apache License 2.0, and every manifest
// (npm packages, their lockfiles' root entries, the .mcpb bundle, the
// Cargo workspace) declares that one; a private npm package, which is
// never published, may declare none.
func TestOneLicence(t *testing.T) {
	root := repoRoot(t)
	text, err := os.ReadFile(filepath.Join(root, "LICENSE"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(text), "Apache License\n                           Version 2.0, January 2004") {
		t.Errorf("LICENSE is not the Apache License 2.0")
	}
	out, err := exec.Command("git", "-C", root, "ls-files", "*package.json", "*package-lock.json", "packaging/mcpb/manifest.json").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var n int
	for _, rel := range strings.Fields(string(out)) {
		data, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			License  string `json:"license"`
			Private  bool   `json:"private"`
			Packages map[string]struct {
				License string `json:"license"`
			} `json:"packages"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("parsing %s: %v", rel, err)
		}
		got := m.License
		if strings.HasSuffix(rel, "package-lock.json") {
			got = m.Packages[""].License // the package itself, not its dependencies
		}
		if got == "" && (m.Private || strings.HasSuffix(rel, "package-lock.json")) {
			continue
		}
		if got != licence {
			t.Errorf("%s declares licence %q, want %q", rel, got, licence)
		}
		n++
	}
	cargo, err := os.ReadFile(filepath.Join(root, "Cargo.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^license = "([^"]*)"`).FindSubmatch(cargo); m == nil || string(m[1]) != licence {
		t.Errorf("Cargo.toml's workspace licence is %q, want %q", m, licence)
	}
	if n == 0 {
		t.Error("found no package manifests")
	}
}
