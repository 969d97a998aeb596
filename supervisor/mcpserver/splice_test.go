package mcpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/bridge"
)

// recordingExecutor remembers the image of every capture it returns;
// with withText its captures carry the image's base64 text too, as the
// bridge's do.
type recordingExecutor struct {
	*fakeExecutor
	withText bool
	images   [][]byte
}

func (r *recordingExecutor) Capture(ctx context.Context, req bridge.CaptureRequest) (*bridge.Capture, error) {
	img, err := r.fakeExecutor.Capture(ctx, req)
	if err == nil {
		r.images = append(r.images, img.Data)
		if r.withText {
			img.Base64 = base64.StdEncoding.AppendEncode(nil, img.Data)
		}
	}
	return img, err
}

// TestStdioSplicesImages serves over StdioTransport, where results carry
// placeholders that the transport replaces, and checks that a real client
// receives every image byte for byte, alone and in a batch, whether the
// splicer encodes the image or copies the helper's base64 text.
func TestStdioSplicesImages(t *testing.T) {
	t.Run("bytes", func(t *testing.T) { testStdioSplicesImages(t, false) })
	t.Run("base64 text", func(t *testing.T) { testStdioSplicesImages(t, true) })
}

func testStdioSplicesImages(t *testing.T, withText bool) {
	exec := &recordingExecutor{fakeExecutor: newFake(), withText: withText}
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

// TestSplicerCopiesTheHelpersText checks that an image registered with
// its base64 text goes out as that text, copied rather than encoded again.
func TestSplicerCopiesTheHelpersText(t *testing.T) {
	sp := newImageSplicer()
	img := []byte("\xff\xd8\xff jpeg bytes")
	text := []byte(base64.StdEncoding.EncodeToString(img))
	ph := sp.placeholder(img, text)
	result, err := json.Marshal(map[string]any{"data": ph})
	if err != nil {
		t.Fatal(err)
	}
	text[0] = 'Z' // what the frame carries is the text given, not a new encoding
	id, err := jsonrpc.MakeID(float64(1))
	if err != nil {
		t.Fatal(err)
	}
	frame, err := sp.frame(&jsonrpc.Response{ID: id, Result: result})
	if err != nil || frame == nil {
		t.Fatalf("frame = %q, %v; want a frame", frame, err)
	}
	var got struct {
		Result struct{ Data string } `json:"result"`
	}
	if err := json.Unmarshal(frame, &got); err != nil {
		t.Fatalf("the frame %q is not JSON: %v", frame, err)
	}
	if got.Result.Data != string(text) {
		t.Errorf("the frame carries %q, want the registered text %q", got.Result.Data, text)
	}
}
