//go:build unix

package supervisor_test

import (
	"slices"
	"testing"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestScreenshotSeesMonitorChanges changes the RandR monitors between
// screenshots, with no other call in between: the server places a
// screenshot from the display list the previous capture carried, and
// each screenshot must still show the monitors as they are now (the
// capture's own list tells it when they changed).
func TestScreenshotSeesMonitorChanges(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{Width: 1920, Height: 1080, Depth: 24})
	desktoptest.Require(t, "xrandr")
	e := serve(t, d)
	names := func() []string {
		out := []string{e.shot.Display.Name}
		for _, o := range e.shot.OtherDisplays {
			out = append(out, o.Name)
		}
		slices.Sort(out)
		return out
	}

	e.screenshot("screenshot", nil)
	e.screenshot("screenshot", nil) // placed from the kept list
	whole := e.shot.Display
	if whole.Size.Width != 1920 || whole.Size.Height != 1080 || len(e.shot.OtherDisplays) != 0 {
		t.Fatalf("before the change the screenshot shows %+v and %v, want one 1920x1080 display", whole, names())
	}

	d.SetMonitors(t, []desktoptest.Monitor{
		{Name: "LEFT", X: 0, Y: 0, Width: 1200, Height: 1080, Primary: true},
		{Name: "RIGHT", X: 1200, Y: 0, Width: 720, Height: 1080},
	})
	img, _ := e.screenshot("screenshot", nil)
	if got := names(); !slices.Equal(got, []string{"LEFT", "RIGHT"}) {
		t.Errorf("after adding monitors the screenshot lists displays %v, want [LEFT RIGHT]", got)
	}
	if e.shot.Display.Name != "LEFT" || e.shot.Display.Size.Width != 1200 {
		t.Errorf("after adding monitors the screenshot shows display %+v, want LEFT, 1200 wide", e.shot.Display)
	}
	// The image is of LEFT (1200x1080), not of the whole screen.
	if b := img.Bounds(); abs(b.Dx()*1080-b.Dy()*1200) > 1080 {
		t.Errorf("after adding monitors the image is %dx%d, want LEFT's 1200x1080 shape", b.Dx(), b.Dy())
	}

	// LEFT keeps its name (and so its id) but narrows: the capture of it
	// works, and only its list shows it was placed from an old one.
	d.SetMonitors(t, []desktoptest.Monitor{
		{Name: "LEFT", X: 0, Y: 0, Width: 1000, Height: 1080, Primary: true},
		{Name: "RIGHT", X: 1000, Y: 0, Width: 920, Height: 1080},
	})
	img, _ = e.screenshot("screenshot", nil)
	if e.shot.Display.Name != "LEFT" || e.shot.Display.Size.Width != 1000 {
		t.Errorf("after narrowing LEFT the screenshot shows display %+v, want LEFT, 1000 wide", e.shot.Display)
	}
	if b := img.Bounds(); abs(b.Dx()*1080-b.Dy()*1000) > 1080 {
		t.Errorf("after narrowing LEFT the image is %dx%d, want the 1000x1080 shape", b.Dx(), b.Dy())
	}

	d.SetMonitors(t, nil)
	e.screenshot("screenshot", nil)
	if e.shot.Display.Size.Width != 1920 || len(e.shot.OtherDisplays) != 0 {
		t.Errorf("after removing the monitors the screenshot shows %+v and %v, want the one 1920x1080 display", e.shot.Display, names())
	}
}
