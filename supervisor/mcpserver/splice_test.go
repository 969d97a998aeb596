package mcpserver

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/bridge"
)

// recordingExecutor remembers the image of every capture it returns.
type recordingExecutor struct {
	*fakeExecutor
	images [][]byte
}

func (r *recordingExecutor) Capture(ctx context.Context, req bridge.CaptureRequest) (*bridge.Capture, error) {
	img, err := r.fakeExecutor.Capture(ctx, req)
	if err == nil {
		r.images = append(r.images, img.Data)
	}
	return img, err
}

// TestStdioSplicesImages serves over StdioTransport, where results carry
// placeholders that the transport replaces, and checks that a real client
// receives every image byte for byte, alone and in a batch.
func TestStdioSplicesImages(t *testing.T) {
	exec := &recordingExecutor{fakeExecutor: newFake()}
	s, err := New(Options{Executor: exec})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	toServer, fromClient := io.Pipe()
	toClient, fromServer := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx, &StdioTransport{Reader: toServer, Writer: fromServer}) }()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: toClient, Writer: fromClient}, nil)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	calls := []struct {
		tool   string
		args   map[string]any
		images int // captures the call takes
	}{
		{"screenshot", map[string]any{}, 1},
		{"zoom", map[string]any{"region": []int{10, 10, 400, 300}}, 1},
		{"computer_batch", map[string]any{"actions": []any{
			map[string]any{"action": "mouse_move", "coordinate": []int{5, 5}},
			map[string]any{"action": "screenshot"},
		}}, 1},
	}
	for _, c := range calls {
		before := len(exec.images)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("CallTool(%s): %v", c.tool, err)
		}
		if res.IsError {
			t.Fatalf("%s is an error: %s", c.tool, text(res))
		}
		if got := len(exec.images) - before; got < c.images {
			t.Fatalf("%s took %d captures, want at least %d", c.tool, got, c.images)
		}
		want := exec.images[len(exec.images)-1]
		var got []byte
		for _, content := range res.Content {
			if img, ok := content.(*mcp.ImageContent); ok {
				got = img.Data
			}
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the client got %d image bytes (%.12q), want the capture's %d", c.tool, len(got), got, len(want))
		}
	}
	sp := s.splice.Load()
	sp.mu.Lock()
	n := len(sp.images)
	sp.mu.Unlock()
	if n != 0 {
		t.Errorf("the splicer still holds %d images after every result was sent", n)
	}
	cs.Close()
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Errorf("server did not stop")
	}
}
