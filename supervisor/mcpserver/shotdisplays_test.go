package mcpserver

import (
	"testing"

	"github.com/deskhand/deskhand/bridge"
)

func (f *fakeExecutor) count(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[method]
}

func (f *fakeExecutor) setDisplays(ds ...bridge.Display) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.displays = ds
}

func (f *fakeExecutor) lastCapture() bridge.CaptureRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.captures[len(f.captures)-1]
}

// shownDisplay is the display a screenshot result says it shows, and the
// names of the others.
func shownDisplay(t *testing.T, h *harness) (name string, width float64, others []string) {
	t.Helper()
	m := structured(t, h.ok("screenshot", nil))
	d := m["display"].(map[string]any)
	for _, o := range m["other_displays"].([]any) {
		others = append(others, o.(map[string]any)["name"].(string))
	}
	return d["name"].(string), d["size"].(map[string]any)["width"].(float64), others
}

func TestScreenshotPlacedFromTheLastCapturesDisplays(t *testing.T) {
	fake := newFake()
	fake.listsDisplays = true
	h := start(t, fake, Options{})
	for range 3 {
		h.ok("screenshot", nil)
	}
	if got := fake.count("Displays"); got != 1 {
		t.Errorf("three screenshots asked for the displays %d times, want once (then from the captures' lists)", got)
	}
	if got := fake.count("Capture"); got != 3 {
		t.Errorf("three screenshots took %d captures, want 3", got)
	}
}

func TestScreenshotFollowsADisplayThatChanged(t *testing.T) {
	fake := newFake()
	fake.listsDisplays = true
	h := start(t, fake, Options{})
	h.ok("screenshot", nil)

	// Same monitor, new size: the capture by its id works, and its list
	// shows the screenshot was placed from an old one.
	fake.setDisplays(display("screen", 0, 0, 1280, 1024, true))
	captures := fake.count("Capture")
	if name, width, _ := shownDisplay(t, h); name != "screen" || width != 1280 {
		t.Errorf("after a resize the screenshot shows %s %v wide, want screen, 1280", name, width)
	}
	if got := fake.count("Capture") - captures; got != 2 {
		t.Errorf("the screenshot after a resize took %d captures, want 2 (placed again from the capture's list)", got)
	}
	if req := fake.lastCapture(); req.Width*1024 != req.Height*1280 && req.Width != 0 {
		t.Errorf("the screenshot after a resize asked for %dx%d, not the 1280x1024 display's shape", req.Width, req.Height)
	}

	// The monitor is gone: the helper knows no such display, so the
	// server asks for the list.
	fake.setDisplays(display("LEFT", 0, 0, 1200, 1080, true), display("RIGHT", 1200, 0, 720, 1080, false))
	asked := fake.count("Displays")
	if name, width, others := shownDisplay(t, h); name != "LEFT" || width != 1200 || len(others) != 1 || others[0] != "RIGHT" {
		t.Errorf("after the monitors changed the screenshot shows %s %v wide and %v, want LEFT, 1200, [RIGHT]", name, width, others)
	}
	if got := fake.count("Displays") - asked; got != 1 {
		t.Errorf("the screenshot after the monitor vanished asked for the displays %d times, want once", got)
	}
	asked = fake.count("Displays")
	h.ok("screenshot", nil)
	if got := fake.count("Displays") - asked; got != 0 {
		t.Errorf("the next screenshot asked for the displays %d times, want none", got)
	}
}

func TestScreenshotAsksForDisplaysWithoutTheCapturesList(t *testing.T) {
	fake := newFake() // a helper whose captures carry no list (Wayland, macOS)
	h := start(t, fake, Options{})
	for range 3 {
		h.ok("screenshot", nil)
	}
	if got := fake.count("Displays"); got != 3 {
		t.Errorf("three screenshots asked for the displays %d times, want 3", got)
	}
}
