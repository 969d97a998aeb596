//go:build unix

package bridge_test

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// viaTree is a11y_tree's answer with the path that served it.
type viaTree struct {
	a11yTree
	Via string `json:"via"`
}

func readVia(t *testing.T, c *bridge.Client, pid int) *viaTree {
	t.Helper()
	var tree viaTree
	if err := c.Call(ctx(t), "a11y_tree", map[string]any{"pid": pid, "deadline_ms": 20000}, &tree); err != nil {
		t.Fatalf("a11y_tree(pid %d): %v", pid, err)
	}
	return &tree
}

// shape is a tree's structure and identities, one line per node: what
// must not depend on the way it was read.
func shape(tree *a11yTree) string {
	var b strings.Builder
	for _, n := range tree.Nodes {
		fmt.Fprintf(&b, "%d %d %s %q\n", n.Depth, n.Parent, n.Role, n.Name)
	}
	return b.String()
}

// startHelper starts another helper on the desktop with extra environment.
func startHelper(t *testing.T, d *desktoptest.Desktop, env ...string) *bridge.Client {
	t.Helper()
	c := bridge.New(bridge.Options{Path: desktoptest.HelperPath(t), Env: append(d.Env(), env...), Logger: testLogger(t), CallTimeout: 30 * time.Second})
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx(t)); err != nil {
		t.Fatalf("starting helper: %v", err)
	}
	return c
}

// TestA11yHelperDirect shows the tree read over GTK 3's own socket (via
// "p2p"), GTK 4 (which offers none) through the bus, the same trees as a
// plain bus walk without the toolkit caches, and the fall back to the bus
// when the app's socket refuses: its socket file is removed, so connecting
// to the address the app gives fails, as for an app whose socket is gone
// or belongs to another user.
func TestA11yHelperDirect(t *testing.T) {
	d, c := a11yDesktop(t)
	desktoptest.Require(t, "gdbus")
	g3 := d.StartApp(t, desktoptest.GTK3WidgetFactory())
	g4 := d.StartApp(t, desktoptest.GTK4WidgetFactory())
	for _, w := range []*desktoptest.Window{g3, g4} {
		waitTree(t, c, w.PID, func(tr *a11yTree) error { return rolesMissing(tr, "push button", "check box", "slider") })
	}
	plain := startHelper(t, d, "DESKHAND_A11Y_P2P=0", "DESKHAND_A11Y_CACHE=0")

	for _, tc := range []struct {
		name string
		w    *desktoptest.Window
		via  string
	}{{"gtk3", g3, "p2p"}, {"gtk4", g4, "bus"}} {
		fast := readVia(t, c, tc.w.PID)
		if fast.Via != tc.via {
			t.Errorf("%s: a11y_tree via = %q, want %q", tc.name, fast.Via, tc.via)
		}
		// Read the reference last: GTK 4 fills its cache as it is read, and
		// the fast read must match a bus walk even with a full cache.
		fast = readVia(t, c, tc.w.PID)
		ref := readVia(t, plain, tc.w.PID)
		if ref.Via != "bus" {
			t.Errorf("%s: with DESKHAND_A11Y_P2P=0 via = %q, want bus", tc.name, ref.Via)
		}
		if got, want := shape(&fast.a11yTree), shape(&ref.a11yTree); got != want {
			t.Errorf("%s: the tree read via %s (%d nodes) differs from the plain bus walk (%d nodes):\n%s\nwant:\n%s", tc.name, fast.Via, len(fast.Nodes), len(ref.Nodes), got, want)
		}
		t.Logf("%s: %d nodes via %s in %d ms; plain bus walk %d ms", tc.name, len(fast.Nodes), fast.Via, fast.ElapsedMS, ref.ElapsedMS)
	}

	// a11y_act with expect: a changed element is refused and left alone,
	// an unchanged one is acted on, in one request.
	for _, w := range []*desktoptest.Window{g3, g4} {
		tr := readVia(t, c, w.PID)
		box := find(t, &tr.a11yTree, "a check box", func(n a11yNode) bool {
			return n.Role == "check box" && n.has("visible") && n.has("sensitive") && !n.has("indeterminate") && n.Bounds != nil && n.Bounds.Width > 0 && n.Bounds.X > -1<<30 && len(n.Actions) > 0
		})
		was := box.has("checked")
		seen := map[string]any{"role": box.Role, "name": box.Name, "bounds": map[string]int{"x": box.Bounds.X, "y": box.Bounds.Y, "width": box.Bounds.Width, "height": box.Bounds.Height}}
		for _, bad := range []map[string]any{
			{"role": "push button", "name": box.Name, "bounds": seen["bounds"]},
			{"role": box.Role, "name": box.Name + " (renamed)", "bounds": seen["bounds"]},
			{"role": box.Role, "name": box.Name, "bounds": map[string]int{"x": box.Bounds.X + 7, "y": box.Bounds.Y, "width": box.Bounds.Width, "height": box.Bounds.Height}},
		} {
			var res map[string]any
			err := c.Call(ctx(t), "a11y_act", map[string]any{"pid": w.PID, "ref": box.Ref, "op": "action", "action": box.Actions[0], "expect": bad}, &res)
			var be *bridge.Error
			if !errors.As(err, &be) || be.Name != bridge.ErrNameStaleElement || !strings.Contains(be.Message, "has changed") {
				t.Errorf("a11y_act with expect %v = %v, want a stale_element refusal", bad, err)
			}
		}
		// Nothing was done: read back from the app, after the time a toggle
		// would take to show (a click that did land toggles in a frame).
		time.Sleep(300 * time.Millisecond)
		if n := element(t, c, w.PID, box.Ref); n.has("checked") != was {
			t.Fatalf("%s: the check box toggled although every act was refused", w.Title)
		}
		act(t, c, w.PID, box.Ref, map[string]any{"op": "action", "action": box.Actions[0], "expect": seen})
		waitElement(t, c, w.PID, box.Ref, "the check box toggled", func(n a11yNode) bool { return n.has("checked") != was })
	}

	// The address GTK 3 gives, asked the way any client would.
	a11y := d.Accessibility()
	tree := readVia(t, c, g3.PID)
	bus := tree.Window.Ref[:strings.Index(tree.Window.Ref, "/")]
	out := d.Run(t, "gdbus", "call", "-a", a11y.Bus, "-d", bus, "-o", "/org/a11y/atspi/accessible/root", "-m", "org.a11y.atspi.Application.GetApplicationBusAddress")
	m := regexp.MustCompile(`unix:path=([^,']+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("GetApplicationBusAddress of %s = %s, want a unix:path address", bus, out)
	}
	if err := os.Remove(m[1]); err != nil {
		t.Fatalf("removing the app's socket %s: %v", m[1], err)
	}
	refused := startHelper(t, d)
	after := readVia(t, refused, g3.PID)
	if after.Via != "bus" {
		t.Errorf("with the app's socket gone, via = %q, want bus", after.Via)
	}
	if got, want := shape(&after.a11yTree), shape(&tree.a11yTree); got != want {
		t.Errorf("the tree through the bus after the refusal differs from the one over the socket:\n%s\nwant:\n%s", got, want)
	}
	// Actions go the same way: a check box toggles through the bus.
	box := find(t, &after.a11yTree, "a check box", func(n a11yNode) bool {
		return n.Role == "check box" && n.has("showing") && n.has("sensitive") && !n.has("indeterminate") && len(n.Actions) > 0
	})
	was := box.has("checked")
	act(t, refused, g3.PID, box.Ref, map[string]any{"op": "action", "action": box.Actions[0]})
	waitElement(t, refused, g3.PID, box.Ref, "the check box toggled", func(n a11yNode) bool { return n.has("checked") != was })
	// And the first helper, whose connection predates the removal, still
	// reads over it.
	if again := readVia(t, c, g3.PID); again.Via != "p2p" {
		t.Errorf("the connected helper's via = %q after the socket file went, want p2p", again.Via)
	}

	// The direct connection dies with the app: its elements are stale (not
	// a broken bus), and the helper goes on serving the other app.
	if err := g3.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// The harness reaps the app (its own Wait); the pid is gone once it has.
	for deadline := time.Now().Add(20 * time.Second); syscall.Kill(g3.PID, 0) == nil && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	var res map[string]any
	err := c.Call(ctx(t), "a11y_element", map[string]any{"pid": g3.PID, "ref": box.Ref}, &res)
	var be *bridge.Error
	if !errors.As(err, &be) || (be.Name != bridge.ErrNameStaleElement && be.Name != "no_such_window") {
		t.Errorf("a11y_element of the killed app's element = %v, want stale_element", err)
	}
	if g4tree := readVia(t, c, g4.PID); len(g4tree.Nodes) < 100 {
		t.Errorf("after the GTK 3 app died, the GTK 4 tree has %d nodes", len(g4tree.Nodes))
	}
}
