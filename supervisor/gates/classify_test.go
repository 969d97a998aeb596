package gates

import (
	"testing"

	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// TestEveryToolIsClassified: each tool the server gates as an action has
// a gate kind in its registry entry, so a new tool cannot ship judged
// only by the strictest fallback.
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
		if _, ok := mcpserver.Classify(&mcpserver.Action{Tool: name}); !ok {
			t.Errorf("tool %q has no gate kind in its registry entry", name)
		}
	}
}
