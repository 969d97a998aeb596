package supervisor

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/deskhand/deskhand/"

// The layers, as rules on what a package reaches through its imports,
// directly or not. A name ending in "/" stands for every package under
// it.
var (
	// shared are the packages every platform shares: the seam types
	// (desktop), the safety layer and what it stands on.
	shared = []string{
		"bridge", "bridge/wire", "supervisor/desktop", "supervisor/mcpserver", "supervisor/gates",
		"supervisor/consent", "supervisor/geometry", "supervisor/cleanup", "supervisor/catalog",
		"supervisor/keyblock", "supervisor/effect", "supervisor/record", "supervisor/lock", "supervisor/input",
	}
	// platforms are the desktop platforms and what only they use.
	platforms = []string{"supervisor/desktop/"}
	// above are the packages that compose the platforms with the safety
	// layer and the executor; no platform package reaches them.
	above = []string{"supervisor", "supervisor/cli", "supervisor/mcpserver", "supervisor/gates", "supervisor/executor"}
	// values are plain value types that sit below the helper client.
	values = []string{"bridge/wire", "supervisor/geometry", "supervisor/catalog"}

	layerRules = []struct {
		from, to []string
		why      string
	}{
		{shared, platforms, "a shared package names no platform"},
		{shared, []string{"supervisor", "supervisor/cli", "supervisor/executor"}, "a shared package is below the composition"},
		{platforms, above, "a platform package is below the layer it serves"},
		{values, []string{"bridge"}, "value types are below the helper client"},
	}

	// allowedEdges are the imports the rules let through, each with the
	// reason it is there.
	allowedEdges = map[[2]string]string{}
)

// moduleImports lists, for GOOS goos, each package of the module with its
// imports inside the module, both without the module prefix.
func moduleImports(t *testing.T, goos string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-json=ImportPath,Imports", module+"...")
	cmd.Env = append(cmd.Environ(), "GOOS="+goos)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list for %s: %v\n%s", goos, err, stderr.Bytes())
	}
	graph := map[string][]string{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		from := strings.TrimPrefix(p.ImportPath, module)
		graph[from] = nil
		for _, imp := range p.Imports {
			if to, ok := strings.CutPrefix(imp, module); ok && allowedEdges[[2]string{from, to}] == "" {
				graph[from] = append(graph[from], to)
			}
		}
	}
	return graph
}

func inLayer(pkg string, layer []string) bool {
	for _, l := range layer {
		if pkg == l || strings.HasSuffix(l, "/") && strings.HasPrefix(pkg, l) {
			return true
		}
	}
	return false
}

// layerViolations lists each package of graph that reaches a package a
// rule forbids it, with the chain of imports that gets there.
func layerViolations(graph map[string][]string) []string {
	var out []string
	for from := range graph {
		for _, r := range layerRules {
			if !inLayer(from, r.from) {
				continue
			}
			// Breadth first, so the chain reported is a shortest one.
			via := map[string]string{from: ""}
			for queue := []string{from}; len(queue) > 0; queue = queue[1:] {
				pkg := queue[0]
				if pkg != from && inLayer(pkg, r.to) {
					chain := []string{pkg}
					for p := via[pkg]; p != ""; p = via[p] {
						chain = append([]string{p}, chain...)
					}
					out = append(out, r.why+": "+strings.Join(chain, " → "))
					continue
				}
				for _, next := range graph[pkg] {
					if _, seen := via[next]; !seen {
						via[next] = pkg
						queue = append(queue, next)
					}
				}
			}
		}
	}
	return out
}

// TestImportLayers: imports run only downward, on every OS deskhand
// builds for: shared packages reach no platform package, platform
// packages reach neither the safety layer's top nor the composition, and
// the value types do not reach the helper client.
func TestImportLayers(t *testing.T) {
	// Each OS with the platform package it must see, so that a go list
	// that found nothing cannot pass.
	for goos, platform := range map[string]string{"linux": "x11", "darwin": "macos", "windows": "windows"} {
		graph := moduleImports(t, goos)
		if len(graph["supervisor/desktop"]) == 0 || len(graph["supervisor/desktop/"+platform]) == 0 {
			t.Fatalf("%s: go list found no imports of the seam or of desktop/%s: %v", goos, platform, graph)
		}
		for _, v := range layerViolations(graph) {
			t.Errorf("%s: %s", goos, v)
		}
	}
}
