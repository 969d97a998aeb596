//go:build unix

package supervisor_test

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStateCaptureMasked: get_app_state takes the window's screenshot in
// the same helper request as the tree (the helper advertises
// a11y.capture), and that screenshot is masked exactly as a capture is:
// an unapproved window lying over the app's window, whose unique colour
// the real screen shows there, leaves none of it in the state's image.
func TestStateCaptureMasked(t *testing.T) {
	e, pid := maskedEntry(t)
	for _, full := range []bool{true, false} {
		res := e.ok("get_app_state", map[string]any{"pid": pid, "disableDiff": full})
		var data struct {
			Image map[string]any `json:"image"`
		}
		if len(res.Content) < 3 {
			t.Fatalf("get_app_state gave %d content blocks, want image, text and data", len(res.Content))
		}
		if tc, ok := res.Content[2].(*mcp.TextContent); !ok || json.Unmarshal([]byte(tc.Text), &data) != nil {
			t.Fatalf("get_app_state's third block is not its JSON data: %#v", res.Content[2])
		}
		shot := data.Image
		if shot["with_tree"] != true {
			t.Fatalf("get_app_state's screenshot was not taken with the tree (image data %v); the test would not cover the combined request", shot)
		}
		img := imageOf(t, res)
		if b := img.Bounds(); b.Dx() < 500 {
			t.Fatalf("the state's screenshot is only %dx%d", b.Dx(), b.Dy())
		}
		if n := countColor(img, secretColor, 0); n > 0 {
			t.Errorf("get_app_state's screenshot, taken with the tree, shows the unapproved window's colour in %d pixels", n)
		}
	}
}
