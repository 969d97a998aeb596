package mcpserver

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/deskhand/deskhand/bridge"
)

// fakeA11y is an imaginary app's accessibility tree: one window of pid
// 4242 whose nodes a test edits, and the acts the tools asked for.
type fakeA11y struct {
	mu    sync.Mutex
	nodes []bridge.A11yNode // nodes[0] is the window
	acts  []bridge.A11yActRequest
	gone  map[string]bool
	// onAct changes the tree the way the real app would.
	onAct func(f *fakeA11y, r bridge.A11yActRequest)
}

const fakePID = 4242

func rect(x, y, w, h int) *bridge.A11yRect { return &bridge.A11yRect{X: x, Y: y, Width: w, Height: h} }

func str(s string) *string { return &s }

// widgetFactory fills the tree with a window holding a button, a check
// box, an entry and a slider.
func (f *fakeExecutor) widgetFactory() {
	f.a11y.mu.Lock()
	defer f.a11y.mu.Unlock()
	f.a11y.nodes = []bridge.A11yNode{
		{Ref: ":1.5/win", Parent: -1, Depth: 0, Role: "frame", Name: "Widget Factory", Bounds: rect(100, 100, 800, 600), States: []string{"active", "showing"}, Interfaces: []string{"component"}},
		{Ref: ":1.5/btn", Parent: 0, Depth: 1, Role: "push button", Name: "OK", Bounds: rect(120, 140, 80, 30), States: []string{"sensitive", "showing", "focusable"}, Actions: []string{"click"}, Interfaces: []string{"action", "component"}},
		{Ref: ":1.5/chk", Parent: 0, Depth: 1, Role: "check box", Name: "Bold", Bounds: rect(120, 180, 80, 20), States: []string{"sensitive", "showing", "checkable"}, Actions: []string{"click"}, Interfaces: []string{"action", "component"}},
		{Ref: ":1.5/ent", Parent: 0, Depth: 1, Role: "text", Name: "Name", Value: str(""), Bounds: rect(120, 210, 200, 24), States: []string{"sensitive", "editable", "showing"}, Interfaces: []string{"component", "text", "editable_text"}},
		{Ref: ":1.5/sld", Parent: 0, Depth: 1, Role: "slider", Name: "Volume", Range: &bridge.A11yRange{Min: 0, Max: 100, Current: 30}, Bounds: rect(120, 250, 200, 20), States: []string{"sensitive"}, Interfaces: []string{"component", "value"}},
		{Ref: ":1.5/exp", Parent: 0, Depth: 1, Role: "toggle button", Name: "Details", Bounds: rect(120, 280, 100, 20), States: []string{"sensitive", "expandable"}, Actions: []string{"activate"}, Interfaces: []string{"action", "component"}},
	}
	f.a11y.gone = map[string]bool{}
	f.a11y.onAct = func(a *fakeA11y, r bridge.A11yActRequest) {
		for i := range a.nodes {
			n := &a.nodes[i]
			if n.Ref != r.Ref {
				continue
			}
			switch {
			case r.Op == "action" && n.Role == "check box":
				if has(n.States, "checked") {
					n.States = slices.DeleteFunc(n.States, func(s string) bool { return s == "checked" })
				} else {
					n.States = append(n.States, "checked")
				}
			case r.Op == "set_text":
				n.Value = str(r.Args["text"].(string))
			case r.Op == "insert_text":
				n.Value = str(*n.Value + r.Args["text"].(string))
			case r.Op == "set_value":
				rg := *n.Range // a new value: states hold the old one
				rg.Current = r.Args["value"].(float64)
				n.Range = &rg
			}
		}
	}
}

func (f *fakeExecutor) node(ref string, edit func(n *bridge.A11yNode)) {
	f.a11y.mu.Lock()
	defer f.a11y.mu.Unlock()
	for i := range f.a11y.nodes {
		if f.a11y.nodes[i].Ref == ref {
			edit(&f.a11y.nodes[i])
		}
	}
}

func (f *fakeExecutor) actsDone() []bridge.A11yActRequest {
	f.a11y.mu.Lock()
	defer f.a11y.mu.Unlock()
	return slices.Clone(f.a11y.acts)
}

func (f *fakeExecutor) Windows(ctx context.Context, includeHidden bool) (*bridge.WindowList, error) {
	if err := f.enter("Windows", "%v", includeHidden); err != nil {
		return nil, err
	}
	app := bridge.App{PID: fakePID, Name: "gtk3-widget-factory", Class: "Gtk3-widget-factory"}
	return &bridge.WindowList{
		Windows:   []bridge.Window{{ID: 0x1a00004, Title: "Widget Factory", App: app, Bounds: bridge.Rect{X: 100, Y: 80, Width: 800, Height: 620}, Client: bridge.Rect{X: 100, Y: 100, Width: 800, Height: 600}, Focused: true}},
		Frontmost: &app,
	}, nil
}

func (f *fakeExecutor) A11yApps(ctx context.Context) (*bridge.A11yApps, error) {
	if err := f.enter("A11yApps", ""); err != nil {
		return nil, err
	}
	return &bridge.A11yApps{Available: true, Apps: []bridge.A11yApp{{PID: fakePID, Name: "gtk3-widget-factory", Toolkit: "GTK", Windows: []bridge.A11yWindow{{Ref: ":1.5/win", Title: "Widget Factory"}}}}}, nil
}

func (f *fakeExecutor) A11yTree(ctx context.Context, req bridge.A11yTreeRequest) (*bridge.A11yTree, error) {
	if err := f.enter("A11yTree", "%+v", req); err != nil {
		return nil, err
	}
	f.a11y.mu.Lock()
	defer f.a11y.mu.Unlock()
	if req.PID != fakePID || len(f.a11y.nodes) == 0 {
		return nil, &bridge.Error{Code: bridge.CodeNoSuchWindow, Name: "no_such_window", Message: fmt.Sprintf("pid %d has no accessible window", req.PID)}
	}
	w := f.a11y.nodes[0]
	return &bridge.A11yTree{Window: bridge.A11yWindow{Ref: w.Ref, Title: w.Name, Bounds: w.Bounds}, Nodes: slices.Clone(f.a11y.nodes)}, nil
}

func (f *fakeExecutor) A11yElement(ctx context.Context, pid int, ref string) (*bridge.A11yNode, error) {
	if err := f.enter("A11yElement", "%d %s", pid, ref); err != nil {
		return nil, err
	}
	f.a11y.mu.Lock()
	defer f.a11y.mu.Unlock()
	for _, n := range f.a11y.nodes {
		if n.Ref == ref && !f.a11y.gone[ref] {
			n.Parent, n.Depth = -1, 0
			return &n, nil
		}
	}
	return nil, &bridge.Error{Code: -32012, Name: bridge.ErrNameStaleElement, Message: "the element is gone"}
}

func (f *fakeExecutor) A11yAct(ctx context.Context, req bridge.A11yActRequest) error {
	if err := f.enter("A11yAct", "%+v", req); err != nil {
		return err
	}
	if req.Expect != nil {
		// As the helper does: read afresh, refuse a changed element.
		n, err := f.A11yElement(ctx, req.PID, req.Ref)
		if err != nil {
			return err
		}
		if why := req.Expect.Changed(*n); why != "" {
			return &bridge.Error{Code: -32013, Name: bridge.ErrNameStaleElement, Message: "element " + req.Ref + " has changed (" + why + "); nothing was done"}
		}
	}
	f.a11y.mu.Lock()
	defer f.a11y.mu.Unlock()
	f.a11y.acts = append(f.a11y.acts, req)
	if f.a11y.onAct != nil {
		f.a11y.onAct(&f.a11y, req)
	}
	return nil
}

// idOf finds the id of the element named name in a state's text.
func idOf(t *testing.T, state, role, name string) string {
	t.Helper()
	m := regexp.MustCompile(`\[(\d+)\] ` + regexp.QuoteMeta(role) + ` "` + regexp.QuoteMeta(name) + `"`).FindStringSubmatch(state)
	if m == nil {
		t.Fatalf("no %s %q in the state:\n%s", role, name, state)
	}
	return m[1]
}

// seedElementTools are seed 002's tools: --tools elements offers these,
// with its names and argument shapes, so that a prompt written for it
// works unchanged.
var seedElementTools = []string{
	"list_apps", "get_app_state", "launch_app", "click", "scroll", "drag",
	"type_text", "press_key", "perform_action", "set_value",
}

func TestToolFamilies(t *testing.T) {
	names := func(family string) []string {
		h := start(t, newFake(), Options{Tools: family})
		res, err := h.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range res.Tools {
			out = append(out, tool.Name)
		}
		return out
	}
	sorted := cmpopts.SortSlices(func(a, b string) bool { return a < b })
	if diff := cmp.Diff(seedElementTools, names(ToolsElements), sorted); diff != "" {
		t.Errorf("--tools elements (-seed 002 +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantTools(), names(ToolsCoordinates), sorted); diff != "" {
		t.Errorf("--tools coordinates (-want +got):\n%s", diff)
	}
	// All the tools: both families, and the tools offered only with both.
	all := append(names(ToolsCoordinates), names(ToolsElements)...)
	for _, tool := range Tools(ProfileDefault, ToolsAll) {
		if !slices.Contains(tool.Families, ToolsCoordinates) && !slices.Contains(tool.Families, ToolsElements) {
			all = append(all, tool.Name)
		}
	}
	all = slices.Compact(slices.Sorted(slices.Values(all)))
	if diff := cmp.Diff(all, names(ToolsAll), sorted); diff != "" {
		t.Errorf("--tools all (-want +got):\n%s", diff)
	}
	if _, err := New(Options{Executor: newFake(), Tools: "pixels"}); err == nil || !strings.Contains(err.Error(), "coordinates") {
		t.Errorf("New(Tools: pixels) = %v, want an error naming the families", err)
	}
}

// TestSeedSchemas: --tools elements offers seed 002's argument names.
func TestSeedSchemas(t *testing.T) {
	want := map[string][]string{
		"list_apps":      nil,
		"get_app_state":  {"pid", "windowId", "disableDiff", "max_depths"},
		"launch_app":     {"app"},
		"click":          {"pid", "element_id", "x", "y", "button", "clickCount"},
		"scroll":         {"pid", "element_id", "x", "y", "direction", "pages"},
		"drag":           {"pid", "element_id", "fromX", "fromY", "toX", "toY"},
		"type_text":      {"pid", "text", "element_id"},
		"press_key":      {"pid", "key", "modifiers", "element_id"},
		"perform_action": {"pid", "element_id", "action"},
		"set_value":      {"pid", "element_id", "value"},
	}
	s, err := New(Options{Executor: newFake(), Tools: ToolsElements})
	if err != nil {
		t.Fatal(err)
	}
	for name, fields := range want {
		spec := s.spec(name)
		if spec == nil {
			t.Errorf("no tool %s", name)
			continue
		}
		if diff := cmp.Diff(fields, argNames(spec.Args), cmpopts.SortSlices(func(a, b string) bool { return a < b }), cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s arguments (-seed +got):\n%s", name, diff)
		}
	}
}

func TestElementActions(t *testing.T) {
	fake := newFake()
	fake.widgetFactory()
	h := start(t, fake, Options{})
	apps := text(h.ok("list_apps", map[string]any{}))
	if !strings.Contains(apps, "pid 4242") || !strings.Contains(apps, "(GTK)") {
		t.Errorf("list_apps = %q, want pid 4242 with its toolkit", apps)
	}
	state := text(h.ok("get_app_state", map[string]any{"pid": fakePID}))
	btn := idOf(t, state, "push button", "OK")
	// The window is at 100,80 with its frame; the button 20,60 into it.
	if !strings.Contains(state, "["+btn+`] push button "OK" @(20,60 80x30) actions=[click]`) {
		t.Errorf("state line of the button is not in screenshot pixels:\n%s", state)
	}
	if !strings.Contains(state, `range=30 (0–100)`) {
		t.Errorf("state lacks the slider's range:\n%s", state)
	}
	res := h.ok("click", map[string]any{"pid": fakePID, "element_id": btn})
	if d := structured(t, res); d["path"] != "accessibility" {
		t.Errorf("click path = %v, want accessibility: %s", d["path"], text(res))
	}
	for _, c := range fake.callLog() {
		if strings.HasPrefix(c, "Click") || strings.HasPrefix(c, "MoveMouse") {
			t.Errorf("a background click moved the pointer: %v", fake.callLog())
		}
	}
	// A double click has no accessibility action: the pointer does it, at
	// the element's centre.
	res = h.ok("click", map[string]any{"pid": fakePID, "element_id": btn, "clickCount": 2})
	if d := structured(t, res); d["path"] != "input" {
		t.Errorf("double click path = %v, want input", d["path"])
	}
	if got := fake.actions(); !slices.Contains(got, `Click 160,155 left x2 ""`) {
		t.Errorf("actions = %v, want a double click at the button's centre (160, 155)", got)
	}

	chk := idOf(t, state, "check box", "Bold")
	h.ok("set_value", map[string]any{"pid": fakePID, "element_id": chk, "value": true})
	if msg := text(h.ok("set_value", map[string]any{"pid": fakePID, "element_id": chk, "value": true})); !strings.Contains(msg, "already checked") {
		t.Errorf("second set_value(true) = %q, want already checked", msg)
	}
	ent := idOf(t, state, "text", "Name")
	h.ok("type_text", map[string]any{"pid": fakePID, "element_id": ent, "text": "Ada"})
	sld := idOf(t, state, "slider", "Volume")
	h.ok("set_value", map[string]any{"pid": fakePID, "element_id": sld, "value": 75})
	h.bad("set_value", map[string]any{"pid": fakePID, "element_id": sld, "value": 175}, "outside the range", "0–100")
	h.bad("perform_action", map[string]any{"pid": fakePID, "element_id": btn, "action": "Show Menu"}, `"Show Menu"`, `it exposes: "click"`)
	exp := idOf(t, state, "toggle button", "Details")
	h.ok("perform_action", map[string]any{"pid": fakePID, "element_id": exp, "action": "ACTIVATE"})

	// The diff lists the three elements that changed, and nothing else.
	diff := text(h.ok("get_app_state", map[string]any{"pid": fakePID}))
	if !strings.Contains(diff, "3 changed (~), 0 added (+), 0 gone (-)") {
		t.Errorf("diff header wrong:\n%s", diff)
	}
	for _, want := range []string{"~ [" + chk + `] check box "Bold" {checkable, checked}`, "~ [" + ent + `] text "Name" value="Ada"`, "~ [" + sld + `] slider "Volume" range=75`} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	if strings.Contains(diff, `push button "OK"`) {
		t.Errorf("diff lists the unchanged button:\n%s", diff)
	}
	whole := text(h.ok("get_app_state", map[string]any{"pid": fakePID, "disableDiff": true}))
	if !strings.Contains(whole, `push button "OK"`) {
		t.Errorf("disableDiff state lacks the button:\n%s", whole)
	}

	wantActs := []bridge.A11yActRequest{
		{PID: fakePID, Ref: ":1.5/btn", Op: "action", Args: map[string]any{"action": "click"}},
		{PID: fakePID, Ref: ":1.5/chk", Op: "action", Args: map[string]any{"action": "click"}},
		{PID: fakePID, Ref: ":1.5/ent", Op: "insert_text", Args: map[string]any{"text": "Ada"}},
		{PID: fakePID, Ref: ":1.5/sld", Op: "set_value", Args: map[string]any{"value": 75.0}},
		{PID: fakePID, Ref: ":1.5/exp", Op: "action", Args: map[string]any{"action": "activate"}},
	}
	done := fake.actsDone()
	if d := cmp.Diff(wantActs, done, cmpopts.IgnoreFields(bridge.A11yActRequest{}, "Expect")); d != "" {
		t.Errorf("acts (-want +got):\n%s", d)
	}
	for _, r := range done {
		// The click tool carries what the model saw, for the helper to check.
		if r.Ref == ":1.5/btn" && (r.Expect == nil || r.Expect.Role != "push button") {
			t.Errorf("click %+v went without the recorded node as its expect", r)
		}
	}
}

func TestStaleElementIDs(t *testing.T) {
	fake := newFake()
	fake.widgetFactory()
	h := start(t, fake, Options{})
	h.bad("click", map[string]any{"pid": fakePID, "element_id": "1"}, "call get_app_state with pid 4242 first")
	state := text(h.ok("get_app_state", map[string]any{"pid": fakePID}))
	btn := idOf(t, state, "push button", "OK")
	chk := idOf(t, state, "check box", "Bold")
	h.bad("click", map[string]any{"pid": fakePID, "element_id": "99"}, "no element 99", "call get_app_state again")

	fake.node(":1.5/btn", func(n *bridge.A11yNode) { n.Name = "Cancel" })
	h.bad("click", map[string]any{"pid": fakePID, "element_id": btn}, `name was "OK", now "Cancel"`, "call get_app_state again")
	fake.node(":1.5/chk", func(n *bridge.A11yNode) { n.Bounds = rect(500, 500, 80, 20) })
	h.bad("set_value", map[string]any{"pid": fakePID, "element_id": chk, "value": true}, "was at 80x20+120+180, now at 80x20+500+500", "call get_app_state again")

	// An element gone from the app and from its latest state: its id is
	// from an older state.
	fake.a11y.mu.Lock()
	fake.a11y.nodes = slices.DeleteFunc(fake.a11y.nodes, func(n bridge.A11yNode) bool { return n.Ref == ":1.5/btn" })
	fake.a11y.gone[":1.5/btn"] = true
	fake.a11y.mu.Unlock()
	diff := text(h.ok("get_app_state", map[string]any{"pid": fakePID}))
	if !strings.Contains(diff, "- ["+btn+`] push button "OK" (gone)`) {
		t.Errorf("diff does not mark the button gone:\n%s", diff)
	}
	h.bad("click", map[string]any{"pid": fakePID, "element_id": btn}, "older state", "call get_app_state again")
	if len(fake.actsDone()) != 0 {
		t.Errorf("refused actions acted: %v", fake.actsDone())
	}
}

// TestWaitForElement: wait_for returns once an element matches, and once
// none matches with gone, with a fresh state; without a change it times
// out with an error that says what did not happen.
func TestWaitForElement(t *testing.T) {
	fake := newFake()
	fake.widgetFactory()
	h := start(t, fake, Options{})
	h.ok("get_app_state", map[string]any{"pid": fakePID})
	res := h.ok("wait_for", map[string]any{"pid": fakePID, "role": "push button", "name": "ok"})
	if msg := text(res); !strings.Contains(msg, `Found push button "OK"`) || !strings.Contains(msg, "State 2 of pid 4242") {
		t.Errorf("wait_for(appears) = %q", msg)
	}
	h.bad("wait_for", map[string]any{"pid": fakePID, "role": "dialog", "timeout": 0.3}, "timed out", `role "dialog"`, "did not appear")
	go func() {
		fake.a11y.mu.Lock()
		defer fake.a11y.mu.Unlock()
		fake.a11y.nodes = slices.DeleteFunc(fake.a11y.nodes, func(n bridge.A11yNode) bool { return n.Ref == ":1.5/btn" })
	}()
	res = h.ok("wait_for", map[string]any{"pid": fakePID, "role": "push button", "name": "OK", "gone": true, "timeout": 30})
	if msg := text(res); !strings.Contains(msg, "is gone") || !strings.Contains(msg, `- [1] push button "OK" (gone)`) {
		t.Errorf("wait_for(gone) = %q", msg)
	}
	h.bad("wait_for", map[string]any{"pid": fakePID, "role": "x", "window_title": "y"}, "exactly one")
}

// TestScrollBothForms: with both families, scroll takes the coordinate
// form and the element form, and refuses a mix of the two.
func TestScrollBothForms(t *testing.T) {
	fake := newFake()
	fake.widgetFactory()
	h := start(t, fake, Options{})
	h.ok("screenshot", nil)
	h.ok("scroll", map[string]any{"coordinate": []int{10, 20}, "scroll_direction": "down"})
	state := text(h.ok("get_app_state", map[string]any{"pid": fakePID}))
	btn := idOf(t, state, "push button", "OK")
	res := h.ok("scroll", map[string]any{"pid": fakePID, "element_id": btn, "direction": "up", "pages": 2})
	if d := structured(t, res); d["path"] != "input" {
		t.Errorf("element scroll path = %v", d["path"])
	}
	acts := fake.actions()
	if !slices.ContainsFunc(acts, func(s string) bool { return strings.HasPrefix(s, "Scroll ") && strings.HasSuffix(s, " down 3") }) || !slices.Contains(acts, "Scroll 160,155 up 2") {
		t.Errorf("actions = %q, want the coordinate scroll and one at the button's centre", acts)
	}
	h.bad("scroll", map[string]any{"pid": fakePID, "element_id": btn, "scroll_direction": "up"}, "one form")
	h.bad("scroll", map[string]any{"direction": "up"}, "element form")
}
