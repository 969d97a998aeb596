package gates

import (
	"slices"
	"testing"

	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// TestEveryToolIsClassified: each tool the server gates as an action has
// exactly one entry in the classification table, and the table names no
// tool the server does not have, so a new tool cannot ship judged only by
// the strictest fallback, and a renamed one cannot leave a stale entry.
func TestEveryToolIsClassified(t *testing.T) {
	srv, err := mcpserver.New(mcpserver.Options{Executor: &fakeExec{}})
	if err != nil {
		t.Fatal(err)
	}
	tools := srv.ActionTools()
	if len(tools) < 20 {
		t.Fatalf("ActionTools() = %v; want the whole coordinate tool surface", tools)
	}
	for _, name := range tools {
		_, inRegistry := mcpserver.Classify(&mcpserver.Action{Tool: name})
		if _, ok := elementKinds[name]; ok == inRegistry {
			t.Errorf("tool %q has no gate kind, or two (its registry entry's Gate and the table elementKinds)", name)
		}
	}
	for name := range elementKinds {
		if !slices.Contains(tools, name) {
			t.Errorf("the classification table has %q, which is not a gated tool of the server", name)
		}
	}
}
