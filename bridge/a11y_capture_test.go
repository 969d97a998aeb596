package bridge

import "testing"

// TestA11yTreeCaptureFallback: against a helper without a11y.capture the
// client does not rely on the capture member; it takes the capture asked
// for in a capture request of its own, with the same params (its mask
// included), after the tree.
func TestA11yTreeCaptureFallback(t *testing.T) {
	c, logs := newFake(t, fakeNormal, Options{})
	if err := c.Start(testContext(t)); err != nil {
		t.Fatal(err)
	}
	if c.HandshakeInfo().Has(CapabilityA11yCapture) {
		t.Fatal("the fake helper advertises a11y.capture; the test would not cover the fallback")
	}
	rect := Rect{X: 10, Y: 20, Width: 100, Height: 50}
	tree, err := c.A11yTree(testContext(t), A11yTreeRequest{PID: 12, Capture: &CaptureRequest{Rect: &rect, Format: FormatPNG, Mask: []uint32{0x600007}}})
	if err != nil {
		t.Fatal(err)
	}
	if tree.Window.Title != "fake" {
		t.Errorf("tree window %+v, want the fake's", tree.Window)
	}
	if tree.CaptureErr != nil || tree.Capture == nil {
		t.Fatalf("no capture with the tree: %v", tree.CaptureErr)
	}
	if tree.Capture.Source != rect || tree.Capture.Format != FormatPNG {
		t.Errorf("capture of %+v as %s, want %+v as png", tree.Capture.Source, tree.Capture.Format, rect)
	}
	if len(tree.Capture.Masked) != 1 || tree.Capture.Masked[0] != 0x600007 {
		t.Errorf("capture masked %v, want the window asked for (0x600007)\n%s", tree.Capture.Masked, logs)
	}
}
