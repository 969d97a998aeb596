package supervisor

import (
	"context"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/supervisor/executor"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// offersTeaching reports whether a client of srv sees teach_step.
func offersTeaching(t *testing.T, srv *mcpserver.Server) bool {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, ct := mcp.NewInMemoryTransports()
	go func() { _ = srv.MCP().Run(ctx, st) }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "teach-switch-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == "teach_step" })
}

func newTestServer(t *testing.T) *mcpserver.Server {
	t.Helper()
	// The tool list is all this test reads; no tool runs.
	srv, err := mcpserver.New(mcpserver.Options{Executor: (*executor.Executor)(nil)})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// TestTeachSwitch: servers attached before the decision get the teaching
// tools when teaching turns out to be available, and never when it does
// not; servers attached after it get the decision at once.
func TestTeachSwitch(t *testing.T) {
	for _, on := range []bool{true, false} {
		sw := &teachSwitch{}
		before := newTestServer(t)
		sw.attach(before)
		sw.decide(on)
		after := newTestServer(t)
		sw.attach(after)
		for name, srv := range map[string]*mcpserver.Server{"attached before": before, "attached after": after} {
			if got := offersTeaching(t, srv); got != on {
				t.Errorf("teaching available %v: a server %s the decision offers teach_step = %v", on, name, got)
			}
		}
	}
	if _, err := newTeachSwitch(context.Background(), "sometimes", nil, false, nil); err == nil {
		t.Error(`newTeachSwitch("sometimes") = nil error, want a refusal`)
	}
}
