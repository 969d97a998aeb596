package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden tool schemas in testdata/toolsnaps")

// TestToolSnapshots compares every tool's definition, as a client receives
// it, with testdata/toolsnaps/<tool>.json, so that any change to the tool
// surface is a reviewed diff. Refresh them with `go test -run
// TestToolSnapshots -update`.
func TestToolSnapshots(t *testing.T) {
	h := start(t, newFake(), Options{Consent: newTestConsent(t), Teach: true})
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("testdata", "toolsnaps")
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	for _, tool := range res.Tools {
		got, err := json.MarshalIndent(tool, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, '\n')
		path := filepath.Join(dir, tool.Name+".json")
		seen = append(seen, tool.Name+".json")
		if *update {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("tool %s has no snapshot (%v); run `go test ./supervisor/mcpserver -run TestToolSnapshots -update` and review it", tool.Name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("tool %s differs from %s; if the change is intended, refresh it with -update and review the diff.\ngot:\n%s", tool.Name, path, got)
		}
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".json") && !slices.Contains(seen, e.Name()) {
			if *update {
				os.Remove(filepath.Join(dir, e.Name()))
				continue
			}
			t.Errorf("snapshot %s has no tool; delete it (or run with -update)", e.Name())
		}
	}
}
