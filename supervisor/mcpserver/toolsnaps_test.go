package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden tool lists in testdata/tools*.json")

// TestToolSnapshots compares the tool list, as a client receives it, with
// testdata/tools.json (the openai profile's with tools_openai.json), so
// that any change to the tool surface is a reviewed diff. Refresh them
// with `go test ./supervisor/mcpserver -run TestToolSnapshots -update`.
func TestToolSnapshots(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		snapshot(t, start(t, newFake(), Options{Consent: newTestConsent(t), Teach: true}), "tools.json")
	})
	t.Run("openai", func(t *testing.T) {
		snapshot(t, start(t, newFake(), Options{ToolProfile: ProfileOpenAI}), "tools_openai.json")
	})
}

func snapshot(t *testing.T, h *harness, name string) {
	res, err := h.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.MarshalIndent(res.Tools, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no snapshot (%v); run `go test ./supervisor/mcpserver -run TestToolSnapshots -update` and review it", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	// Name the tools that differ.
	byName := func(raw []byte) map[string]string {
		var tools []json.RawMessage
		_ = json.Unmarshal(raw, &tools)
		m := map[string]string{}
		for _, tool := range tools {
			var n struct{ Name string }
			var b bytes.Buffer
			_ = json.Unmarshal(tool, &n)
			_ = json.Indent(&b, tool, "", "  ")
			m[n.Name] = b.String()
		}
		return m
	}
	was, now := byName(want), byName(got)
	for name, tool := range now {
		if was[name] != tool {
			t.Errorf("tool %s differs from %s (or is new); if the change is intended, refresh it with -update and review the diff.\ngot:\n%s", name, path, tool)
		}
	}
	for name := range was {
		if _, ok := now[name]; !ok {
			t.Errorf("tool %s in %s is gone; refresh it with -update if that is intended", name, path)
		}
	}
}
