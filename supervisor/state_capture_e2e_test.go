package supervisor_test

import (
	"encoding/json"
	"image"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStateCaptureMasked: get_app_state takes the window's screenshot in
// the same helper request as the tree (the helper advertises
// a11y.capture), and that screenshot is masked exactly as a capture is:
// an unapproved window lying over the app's window, whose unique colour
// the real screen shows there, leaves none of it in the state's image.
func TestStateCaptureMasked(t *testing.T) {
	d := a11yDesktop(t)
	dlg, _ := zenity(t, d, "--entry", "--title", "masked entry", "--width", "600", "--height", "300")
	d.Move(t, dlg.ID, 100, 100, 0, 0)
	secretWindow(t, d, 300, 150)
	f := d.WindowInfo(t, dlg.ID).Frame
	over := d.Screenshot(t).SubImage(image.Rect(f.X, f.Y, f.X+f.Width, f.Y+f.Height)).(*image.RGBA)
	if n := countColor(over, secretColor, 0); n < 300*100 {
		t.Fatalf("the secret colour covers only %d pixels of the entry dialog's frame on the real screen; the test would prove nothing", n)
	}
	e := elementsServer(t, d, "full", "--hide-unapproved=false", "--format", "png")
	e.waitState(dlg.PID, `push button "OK"`)
	for _, full := range []bool{true, false} {
		res := e.ok("get_app_state", map[string]any{"pid": dlg.PID, "disableDiff": full})
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
