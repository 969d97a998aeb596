//go:build unix

package bridge_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestA11yHelperHiddenPages shows that a11y_tree leaves out what is off
// screen and lists it once it is shown: gtk4-widget-factory's third stack
// page (its colour chooser's Hue slider) is not in the tree while page 1
// shows, and is, with real bounds inside the window, after the page tab
// for page 3 is activated.
func TestA11yHelperHiddenPages(t *testing.T) {
	d, c := a11yDesktop(t)
	w := d.StartApp(t, desktoptest.GTK4WidgetFactory())
	tree := waitTree(t, c, w.PID, func(tr *a11yTree) error {
		return rolesMissing(tr, "page tab", "slider", "check box")
	})
	hue := func(n a11yNode) bool { return n.Role == "slider" && n.Name == "Hue" }
	if i := slices.IndexFunc(tree.Nodes, hue); i >= 0 {
		t.Errorf("page 3's Hue slider is listed (bounds %+v) while page 1 shows", tree.Nodes[i].Bounds)
	}
	tab := find(t, tree, "the Page 3 tab", func(n a11yNode) bool {
		return n.Role == "page tab" && n.Name == "Page _3" && len(n.Actions) > 0
	})
	act(t, c, w.PID, tab.Ref, map[string]any{"op": "action", "action": tab.Actions[0]})
	shown := waitTree(t, c, w.PID, func(tr *a11yTree) error {
		i := slices.IndexFunc(tr.Nodes, hue)
		if i < 0 {
			return fmt.Errorf("no Hue slider among %d nodes", len(tr.Nodes))
		}
		if b := tr.Nodes[i].Bounds; b == nil || b.Width == 0 || b.Height == 0 {
			return fmt.Errorf("the Hue slider has bounds %+v", b)
		}
		return nil
	})
	n := shown.Nodes[slices.IndexFunc(shown.Nodes, hue)]
	if b, win := n.Bounds, shown.Window.Bounds; win == nil || b.X < win.X || b.Y < win.Y || b.X+b.Width > win.X+win.Width || b.Y+b.Height > win.Y+win.Height {
		t.Errorf("the Hue slider at %+v lies outside its window %+v", *b, win)
	}
	t.Logf("page 1: %d nodes, page 3: %d nodes", len(tree.Nodes), len(shown.Nodes))
}
