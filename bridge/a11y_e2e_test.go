//go:build unix

package bridge_test

// End-to-end tests of the helper's accessibility methods (a11y_*): the real
// helper on Xvfb with openbox, a private session bus with at-spi2-core
// (desktoptest.StartAccessibility) and gtk3-/gtk4-widget-factory, driven
// through the bridge client. Effects are read back from the app's own tree
// and the desktop state from xdotool and xwininfo, not from the helper's
// word.

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

type a11yRect struct{ X, Y, Width, Height int }

type a11yNode struct {
	Ref        string                               `json:"ref"`
	Parent     int                                  `json:"parent"`
	Depth      int                                  `json:"depth"`
	Role       string                               `json:"role"`
	Name       string                               `json:"name"`
	Value      *string                              `json:"value"`
	Range      *struct{ Min, Max, Current float64 } `json:"range"`
	States     []string                             `json:"states"`
	Bounds     *a11yRect                            `json:"bounds"`
	Actions    []string                             `json:"actions"`
	Interfaces []string                             `json:"interfaces"`
}

func (n a11yNode) has(state string) bool { return slices.Contains(n.States, state) }

type a11yTree struct {
	Window struct {
		Ref    string    `json:"ref"`
		Title  string    `json:"title"`
		Window uint32    `json:"window"`
		Bounds *a11yRect `json:"bounds"`
	} `json:"window"`
	Nodes     []a11yNode `json:"nodes"`
	Truncated string     `json:"truncated"`
	ElapsedMS int        `json:"elapsed_ms"`
}

// a11yDesktop starts a desktop with accessibility and the helper on it.
func a11yDesktop(t *testing.T) (*desktoptest.Desktop, *bridge.Client) {
	t.Helper()
	desktoptest.Require(t, "Xvfb", "openbox", "xdotool", "xwininfo", "gtk3-widget-factory", "gtk4-widget-factory")
	helper := desktoptest.HelperPath(t)
	d := desktoptest.Start(t, desktoptest.Options{})
	d.StartAccessibility(t)
	c := bridge.New(bridge.Options{Path: helper, Env: d.Env(), Logger: testLogger(t), CallTimeout: 30 * time.Second})
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx(t)); err != nil {
		t.Fatalf("starting helper %s on %s: %v", helper, d.Display(), err)
	}
	return d, c
}

func readTree(t *testing.T, c *bridge.Client, pid int) *a11yTree {
	t.Helper()
	var tree a11yTree
	if err := c.Call(ctx(t), "a11y_tree", map[string]any{"pid": pid, "deadline_ms": 20000}, &tree); err != nil {
		t.Fatalf("a11y_tree(pid %d): %v", pid, err)
	}
	return &tree
}

// waitTree reads the app's tree until ok accepts it: an app registers with
// the registry, and fills its tree, a little after its window maps.
func waitTree(t *testing.T, c *bridge.Client, pid int, ok func(*a11yTree) error) *a11yTree {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		var tree a11yTree
		err := c.Call(ctx(t), "a11y_tree", map[string]any{"pid": pid, "deadline_ms": 20000}, &tree)
		if err == nil {
			err = ok(&tree)
		}
		if err == nil {
			return &tree
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d: %v", pid, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func element(t *testing.T, c *bridge.Client, pid int, ref string) a11yNode {
	t.Helper()
	var r struct {
		Node a11yNode `json:"node"`
	}
	if err := c.Call(ctx(t), "a11y_element", map[string]any{"pid": pid, "ref": ref}, &r); err != nil {
		t.Fatalf("a11y_element(%s): %v", ref, err)
	}
	return r.Node
}

func act(t *testing.T, c *bridge.Client, pid int, ref string, params map[string]any) {
	t.Helper()
	params["pid"], params["ref"] = pid, ref
	var r struct {
		OK bool   `json:"ok"`
		Op string `json:"op"`
	}
	if err := c.Call(ctx(t), "a11y_act", params, &r); err != nil {
		t.Fatalf("a11y_act(%v): %v", params, err)
	}
	if !r.OK || r.Op != params["op"] {
		t.Fatalf("a11y_act(%v) = %+v, want ok and the op back", params, r)
	}
}

// waitElement re-reads an element until cond holds.
func waitElement(t *testing.T, c *bridge.Client, pid int, ref, what string, cond func(a11yNode) bool) a11yNode {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n := element(t, c, pid, ref)
		if cond(n) {
			return n
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: element %s never did; last read %+v", what, ref, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func rolesMissing(tree *a11yTree, roles ...string) error {
	var missing []string
	for _, r := range roles {
		if !slices.ContainsFunc(tree.Nodes, func(n a11yNode) bool { return n.Role == r && n.Bounds != nil }) {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("tree of %d nodes has no %v with bounds", len(tree.Nodes), missing)
	}
	return nil
}

func near(a, b int, tol int) bool { return a-b <= tol && b-a <= tol }

// TestA11yHelperTrees reads both widget factories' trees: buttons, entries,
// check boxes and sliders are there, in pre-order, and the window's bounds
// match xwininfo's geometry of the X window the helper matched.
func TestA11yHelperTrees(t *testing.T) {
	d, c := a11yDesktop(t)
	for _, app := range []desktoptest.App{desktoptest.GTK3WidgetFactory(), desktoptest.GTK4WidgetFactory()} {
		t.Run(app.Name, func(t *testing.T) {
			w := d.StartApp(t, app)
			tree := waitTree(t, c, w.PID, func(tr *a11yTree) error {
				return rolesMissing(tr, "push button", "text", "check box", "slider")
			})
			t.Logf("%s: %d nodes in %d ms, window %+v", app.Name, len(tree.Nodes), tree.ElapsedMS, tree.Window)
			if tree.Truncated != "" {
				t.Errorf("truncated = %q with the default budgets", tree.Truncated)
			}
			for i, n := range tree.Nodes {
				if i == 0 {
					if n.Parent != -1 || n.Depth != 0 {
						t.Fatalf("node 0 = %+v, want the window (parent -1, depth 0)", n)
					}
					continue
				}
				if n.Parent < 0 || n.Parent >= i || tree.Nodes[n.Parent].Depth != n.Depth-1 {
					t.Fatalf("node %d (%s %q) has parent %d, not an earlier node one level up", i, n.Role, n.Name, n.Parent)
				}
			}
			if tree.Window.Window != w.ID {
				t.Errorf("window id = %d, want %d (the app's X window)", tree.Window.Window, w.ID)
			}
			b := tree.Window.Bounds
			if b == nil {
				t.Fatalf("the window has no bounds")
			}
			// GTK 4 draws its client-side decorations' resize border
			// inside the X window, so its accessible window is a few
			// pixels inside the X window.
			const tol = 6
			if !near(b.X, w.Client.X, tol) || !near(b.Y, w.Client.Y, tol) || !near(b.Width, w.Client.Width, 2*tol) || !near(b.Height, w.Client.Height, 2*tol) {
				t.Errorf("window bounds %+v, xwininfo says %v", *b, w.Client)
			}
			for _, n := range tree.Nodes {
				// GTK 3 places widgets of hidden pages at -2147483648;
				// GTK 4 gives them empty bounds.
				if n.Role != "push button" || n.Bounds == nil || n.Bounds.X < -1<<30 || n.Bounds.Width == 0 {
					continue
				}
				if n.Bounds.X < b.X-tol || n.Bounds.Y < b.Y-tol || n.Bounds.X+n.Bounds.Width > b.X+b.Width+tol {
					t.Errorf("button %q at %+v lies outside its window %+v", n.Name, *n.Bounds, *b)
				}
			}
		})
	}
}

// find returns the first node that matches, failing the test otherwise.
func find(t *testing.T, tree *a11yTree, what string, match func(a11yNode) bool) a11yNode {
	t.Helper()
	for _, n := range tree.Nodes {
		if match(n) {
			return n
		}
	}
	t.Fatalf("no %s among %d nodes", what, len(tree.Nodes))
	return a11yNode{}
}

// TestA11yHelperActs acts on gtk3-widget-factory while an xterm covers it
// and has the focus: a toggle button's Click presses it, set_text changes
// an entry, set_value moves a slider, a check box toggles and an expander
// (gtk4-widget-factory's) opens and closes, each read back from the tree; the pointer position and the focused
// window (xdotool) stay as they were.
func TestA11yHelperActs(t *testing.T) {
	d, c := a11yDesktop(t)
	desktoptest.Require(t, "xterm")
	w := d.StartApp(t, desktoptest.GTK3WidgetFactory())
	tree := waitTree(t, c, w.PID, func(tr *a11yTree) error {
		return rolesMissing(tr, "toggle button", "text", "check box", "slider")
	})
	// gtk3-widget-factory has no expander; gtk4-widget-factory's is a
	// button with the expandable state, on page 2, which the tree lists
	// only once it shows.
	w4 := d.StartApp(t, desktoptest.GTK4WidgetFactory())
	tabs := waitTree(t, c, w4.PID, func(tr *a11yTree) error { return rolesMissing(tr, "page tab") })
	page2 := find(t, tabs, "the Page 2 tab", func(n a11yNode) bool {
		return n.Role == "page tab" && n.Name == "Page _2" && len(n.Actions) > 0
	})
	act(t, c, w4.PID, page2.Ref, map[string]any{"op": "action", "action": page2.Actions[0]})
	tree4 := waitTree(t, c, w4.PID, func(tr *a11yTree) error {
		if !slices.ContainsFunc(tr.Nodes, func(n a11yNode) bool { return n.has("expandable") }) {
			return fmt.Errorf("no expandable element among %d nodes", len(tr.Nodes))
		}
		return nil
	})
	cover := d.StartXterm(t, desktoptest.XtermOptions{Title: "cover", Geometry: "200x60+0+0"})
	d.Focus(t, cover.ID)
	d.Run(t, "xdotool", "mousemove", "700", "500")
	pointer := d.Run(t, "xdotool", "getmouselocation")
	focus := d.Run(t, "xdotool", "getwindowfocus")

	usable := func(n a11yNode) bool { return n.has("sensitive") && n.has("showing") }
	t.Run("toggle button", func(t *testing.T) {
		n := find(t, tree, "sensitive toggle button with Click", func(n a11yNode) bool {
			return n.Role == "toggle button" && usable(n) && slices.Contains(n.Actions, "Click") && n.Name == "togglebutton"
		})
		was := n.has("checked")
		act(t, c, w.PID, n.Ref, map[string]any{"op": "action", "action": "Click"})
		waitElement(t, c, w.PID, n.Ref, "toggle on Click", func(m a11yNode) bool { return m.has("checked") != was })
	})
	t.Run("check box", func(t *testing.T) {
		n := find(t, tree, "sensitive check box", func(n a11yNode) bool {
			return n.Role == "check box" && usable(n) && slices.Contains(n.Actions, "Click")
		})
		was := n.has("checked")
		act(t, c, w.PID, n.Ref, map[string]any{"op": "action", "action": "Click"})
		waitElement(t, c, w.PID, n.Ref, "check box toggles", func(m a11yNode) bool { return m.has("checked") != was })
	})
	t.Run("set_text", func(t *testing.T) {
		n := find(t, tree, "editable entry", func(n a11yNode) bool {
			return n.Role == "text" && usable(n) && n.has("editable") && n.has("single-line") && slices.Contains(n.Interfaces, "editable_text")
		})
		act(t, c, w.PID, n.Ref, map[string]any{"op": "set_text", "text": "deskhand a11y"})
		waitElement(t, c, w.PID, n.Ref, "entry text", func(m a11yNode) bool { return m.Value != nil && *m.Value == "deskhand a11y" })
		act(t, c, w.PID, n.Ref, map[string]any{"op": "insert_text", "text": "!"})
		got := waitElement(t, c, w.PID, n.Ref, "inserted text", func(m a11yNode) bool { return m.Value != nil && len(*m.Value) == len("deskhand a11y!") })
		if !strings.Contains(*got.Value, "!") {
			t.Errorf("after insert_text the entry holds %q", *got.Value)
		}
	})
	t.Run("set_value", func(t *testing.T) {
		n := find(t, tree, "sensitive slider", func(n a11yNode) bool {
			return n.Role == "slider" && usable(n) && n.Range != nil && n.Range.Max-n.Range.Min >= 10
		})
		target := math.Round(n.Range.Min + (n.Range.Max-n.Range.Min)*0.75)
		act(t, c, w.PID, n.Ref, map[string]any{"op": "set_value", "value": target})
		waitElement(t, c, w.PID, n.Ref, "slider moves", func(m a11yNode) bool { return m.Range != nil && m.Range.Current == target })
		var herr *bridge.Error
		err := c.Call(ctx(t), "a11y_act", map[string]any{"pid": w.PID, "ref": n.Ref, "op": "set_value", "value": n.Range.Max + 1000}, nil)
		if !errors.As(err, &herr) || herr.Name != "invalid_params" {
			t.Errorf("set_value out of range: %v, want invalid_params", err)
		}
	})
	t.Run("expander", func(t *testing.T) {
		// Combo boxes are expandable too, but opening one grabs the pointer.
		n := find(t, tree4, "expander", func(n a11yNode) bool {
			return n.has("expandable") && n.has("sensitive") && n.Role == "push button" && slices.Contains(n.Actions, "Activate")
		})
		was := n.has("expanded")
		act(t, c, w4.PID, n.Ref, map[string]any{"op": "action", "action": "Activate"})
		waitElement(t, c, w4.PID, n.Ref, "expander toggles", func(m a11yNode) bool { return m.has("expanded") != was })
		act(t, c, w4.PID, n.Ref, map[string]any{"op": "action", "action": "Activate"})
		waitElement(t, c, w4.PID, n.Ref, "expander toggles back", func(m a11yNode) bool { return m.has("expanded") == was })
	})
	t.Run("refusals", func(t *testing.T) {
		n := find(t, tree, "element with actions", func(n a11yNode) bool { return len(n.Actions) > 0 })
		var herr *bridge.Error
		err := c.Call(ctx(t), "a11y_act", map[string]any{"pid": w.PID, "ref": n.Ref, "op": "action", "action": "no such action"}, nil)
		if !errors.As(err, &herr) || herr.Name != "unsupported" || !strings.Contains(herr.Message, "exposes") {
			t.Errorf("unknown action: %v, want unsupported listing the exposed actions", err)
		}
		bus, _, _ := strings.Cut(n.Ref, "/")
		err = c.Call(ctx(t), "a11y_element", map[string]any{"pid": w.PID, "ref": bus + "/org/a11y/atspi/accessible/999999"}, nil)
		if !errors.As(err, &herr) || herr.Name != "stale_element" {
			t.Errorf("a ref that resolves to nothing: %v, want stale_element", err)
		}
		err = c.Call(ctx(t), "a11y_element", map[string]any{"pid": cover.PID, "ref": n.Ref}, nil)
		if !errors.As(err, &herr) || herr.Name != "invalid_params" {
			t.Errorf("a ref of another pid's app: %v, want invalid_params", err)
		}
	})

	if got := d.Run(t, "xdotool", "getmouselocation"); got != pointer {
		t.Errorf("pointer moved: %q, was %q", got, pointer)
	}
	if got := d.Run(t, "xdotool", "getwindowfocus"); got != focus {
		t.Errorf("focus moved to %q, was %q (the xterm)", got, focus)
	}
	if stack := d.Stacking(t); len(stack) == 0 || stack[len(stack)-1] != cover.ID {
		t.Errorf("stacking %v: the covering xterm %#x is no longer on top", stack, cover.ID)
	}
}

// TestA11yHelperApps lists both apps with their pids, toolkits and windows.
func TestA11yHelperApps(t *testing.T) {
	d, c := a11yDesktop(t)
	w3 := d.StartApp(t, desktoptest.GTK3WidgetFactory())
	w4 := d.StartApp(t, desktoptest.GTK4WidgetFactory())
	deadline := time.Now().Add(60 * time.Second)
	for {
		var r struct {
			Available bool `json:"available"`
			Apps      []struct {
				PID     int    `json:"pid"`
				Name    string `json:"name"`
				Windows []struct {
					Window uint32 `json:"window"`
				} `json:"windows"`
			} `json:"apps"`
		}
		if err := c.Call(ctx(t), "a11y_apps", map[string]any{}, &r); err != nil {
			t.Fatal(err)
		}
		if !r.Available {
			t.Fatalf("a11y_apps: available false on a desktop with at-spi: %+v", r)
		}
		var got []string
		for _, a := range r.Apps {
			for _, w := range a.Windows {
				got = append(got, fmt.Sprintf("%d/%d", a.PID, w.Window))
			}
		}
		sort.Strings(got)
		want := []string{fmt.Sprintf("%d/%d", w3.PID, w3.ID), fmt.Sprintf("%d/%d", w4.PID, w4.ID)}
		sort.Strings(want)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a11y_apps pid/window pairs %v, want %v", got, want)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestA11yHelperUnavailable: without an accessibility bus a11y_apps says so
// (with how to enable it) and a11y_tree fails with a11y_unavailable, fast.
func TestA11yHelperUnavailable(t *testing.T) {
	desktoptest.Require(t, "Xvfb", "openbox")
	helper := desktoptest.HelperPath(t)
	d := desktoptest.Start(t, desktoptest.Options{})
	env := append(d.Env(), "DBUS_SESSION_BUS_ADDRESS=unix:path="+d.Dir()+"/no-bus", "AT_SPI_BUS_ADDRESS=")
	c := bridge.New(bridge.Options{Path: helper, Env: env, Logger: testLogger(t)})
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx(t)); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Available bool   `json:"available"`
		Reason    string `json:"reason"`
		Apps      []any  `json:"apps"`
	}
	if err := c.Call(ctx(t), "a11y_apps", nil, &r); err != nil {
		t.Fatal(err)
	}
	if r.Available || r.Apps == nil || len(r.Apps) != 0 || !strings.Contains(r.Reason, "at-spi") {
		t.Errorf("a11y_apps without a bus = %+v, want available false, apps [], a reason saying how to enable at-spi", r)
	}
	var herr *bridge.Error
	err := c.Call(ctx(t), "a11y_tree", map[string]any{"pid": 1}, nil)
	if !errors.As(err, &herr) || herr.Name != "a11y_unavailable" {
		t.Errorf("a11y_tree without a bus: %v, want a11y_unavailable", err)
	}
}
