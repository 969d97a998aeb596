package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deskhand/deskhand/bridge"
)

// automation is the part of UI Automation the helper uses. uia_windows.go
// implements it over COM; the tests give it a fake. Elements are opaque
// handles the implementation hands out and takes back.
type automation interface {
	// Available says why UI Automation cannot be used (nil when it can).
	Available() error
	// Window returns the element of the top-level window hwnd.
	Window(hwnd uint32) (element, error)
	// Children lists an element's children in the control view.
	Children(e element) ([]element, error)
	// Info reads an element afresh; ErrStale when it is gone.
	Info(e element) (elementInfo, error)
	// Do runs a pattern method on the element: see the pattern constants.
	Do(e element, op patternOp, arg any) error
	// Release lets go of an element the helper no longer refers to.
	Release(e element)
}

type element any

// elementInfo is what the helper reads of an element.
type elementInfo struct {
	RuntimeID   []int32
	PID         int
	ControlType string // UIA's programmatic name without "ControlType.", e.g. "CheckBox"
	Name        string
	Description string
	Bounds      *rect
	Enabled     bool
	Focused     bool
	Offscreen   bool
	Patterns    []string // "invoke", "toggle", "value", "range_value", "expand_collapse", "scroll", "scroll_item"
	Toggle      *int     // ToggleState: 0 off, 1 on, 2 indeterminate
	Expanded    *int     // ExpandCollapseState: 0 collapsed, 1 expanded, 2 partial, 3 leaf
	Value       *string
	ReadOnly    bool
	Range       *valueRange
}

type valueRange = bridge.A11yRange

// patternOp is one pattern method.
type patternOp string

const (
	opInvoke         patternOp = "Invoke.Invoke"
	opToggle         patternOp = "Toggle.Toggle"
	opSetValue       patternOp = "Value.SetValue"            // arg: string
	opSetRange       patternOp = "RangeValue.SetValue"       // arg: float64
	opExpand         patternOp = "ExpandCollapse.Expand"     //
	opCollapse       patternOp = "ExpandCollapse.Collapse"   //
	opScrollIntoView patternOp = "ScrollItem.ScrollIntoView" //
	opScroll         patternOp = "Scroll.Scroll"             // arg: [2]int amounts (UIA ScrollAmount)
	opFocus          patternOp = "SetFocus"
)

// Errors an automation reports.
var (
	// ErrStale means the element is gone.
	ErrStale = errors.New("the element is no longer available")
	// ErrRefused means the element refused the call (UIA_E_ELEMENTNOTENABLED,
	// UIA_E_INVALIDOPERATION).
	ErrRefused = errors.New("the element refused")
)

// actions maps each action name a Node lists to the pattern that does it.
var actions = []struct {
	name, pattern string
	op            patternOp
}{
	{"invoke", "invoke", opInvoke},
	{"toggle", "toggle", opToggle},
	{"expand", "expand_collapse", opExpand},
	{"collapse", "expand_collapse", opCollapse},
	{"scroll_up", "scroll", opScroll},
	{"scroll_down", "scroll", opScroll},
	{"scroll_left", "scroll", opScroll},
	{"scroll_right", "scroll", opScroll},
}

// scrollAmounts are UIA ScrollAmount pairs (horizontal, vertical):
// 0 LargeDecrement, 1 SmallDecrement, 2 NoAmount, 3 LargeIncrement,
// 4 SmallIncrement.
var scrollAmounts = map[string][2]int{
	"scroll_up": {2, 1}, "scroll_down": {2, 4}, "scroll_left": {1, 2}, "scroll_right": {4, 2},
}

// roles maps UIA control types to the protocol's lower-case role names
// (the AT-SPI ones where they exist, so callers need no per-platform table).
var roles = map[string]string{
	"Button": "push button", "CheckBox": "check box", "RadioButton": "radio button",
	"Edit": "entry", "Document": "document text", "Text": "label", "ComboBox": "combo box",
	"List": "list", "ListItem": "list item", "Menu": "menu", "MenuBar": "menu bar",
	"MenuItem": "menu item", "Slider": "slider", "Spinner": "spin button", "Tab": "page tab list",
	"TabItem": "page tab", "Tree": "tree", "TreeItem": "tree item", "Window": "frame",
	"Pane": "panel", "Group": "panel", "ScrollBar": "scroll bar", "ToolBar": "tool bar",
	"StatusBar": "status bar", "Hyperlink": "link", "Image": "image", "ProgressBar": "progress bar",
	"Table": "table", "DataGrid": "table", "DataItem": "table cell", "Header": "header",
	"HeaderItem": "column header", "TitleBar": "title bar", "SplitButton": "push button",
}

// node is one element of a tree answer (helpers/PROTOCOL.md, "A Node").
type node = bridge.A11yNode

// accessibility serves the a11y_* methods over an automation, and
// remembers the elements it handed out refs for.
type accessibility struct {
	api  automation
	refs map[string]element
}

func (a *accessibility) available() error {
	if a.api == nil {
		return errors.New("UI Automation is not built into this helper")
	}
	return a.api.Available()
}

func ref(info elementInfo) string {
	parts := make([]string, len(info.RuntimeID))
	for i, v := range info.RuntimeID {
		parts[i] = fmt.Sprint(v)
	}
	return fmt.Sprintf("%d/%s", info.PID, strings.Join(parts, "."))
}

func toNode(info elementInfo, parent, depth int) node {
	n := node{Ref: ref(info), Parent: parent, Depth: depth, Name: info.Name, Description: info.Description,
		Bounds: (*bridge.A11yRect)(info.Bounds), Range: info.Range, States: []string{}, Actions: []string{}, Interfaces: []string{}}
	n.Role = roles[info.ControlType]
	if n.Role == "" {
		n.Role = strings.ToLower(info.ControlType)
	}
	if info.Value != nil {
		v := *info.Value
		if r := []rune(v); len(r) > 4096 {
			v = string(r[:4096])
		}
		n.Value = &v
	}
	add := func(cond bool, s string) {
		if cond {
			n.States = append(n.States, s)
		}
	}
	add(info.Enabled, "sensitive")
	add(info.Enabled, "enabled")
	add(info.Focused, "focused")
	add(!info.Offscreen, "showing")
	add(!info.Offscreen, "visible")
	add(info.Toggle != nil && *info.Toggle == 1, "checked")
	add(info.Toggle != nil && *info.Toggle == 2, "indeterminate")
	add(info.Expanded != nil && *info.Expanded != 3, "expandable")
	add(info.Expanded != nil && (*info.Expanded == 1 || *info.Expanded == 2), "expanded")
	add(info.Value != nil && !info.ReadOnly, "editable")
	for _, act := range actions {
		if slices.Contains(info.Patterns, act.pattern) {
			n.Actions = append(n.Actions, act.name)
		}
	}
	n.Interfaces = append(n.Interfaces, "component")
	if len(n.Actions) > 0 {
		n.Interfaces = append(n.Interfaces, "action")
	}
	if info.Value != nil {
		n.Interfaces = append(n.Interfaces, "text")
		if !info.ReadOnly {
			n.Interfaces = append(n.Interfaces, "editable_text")
		}
	}
	if info.Range != nil {
		n.Interfaces = append(n.Interfaces, "value")
	}
	return n
}

// treeOptions are a11y_tree's budgets.
type treeOptions struct {
	maxNodes, maxDepth int
	deadline           time.Time
}

// tree reads the window's elements breadth first within the budgets and
// returns them in depth-first pre-order, as the protocol lists nodes.
func (a *accessibility) tree(root element, opts treeOptions) (nodes []node, truncated string, err error) {
	type item struct {
		e        element
		info     elementInfo
		depth    int
		children []int
	}
	info, err := a.api.Info(root)
	if err != nil {
		return nil, "", err
	}
	items := []*item{{e: root, info: info}}
	for i := 0; i < len(items); i++ {
		it := items[i]
		if it.info.Offscreen && (it.info.Bounds == nil || it.info.Bounds.Width == 0 || it.info.Bounds.Height == 0) {
			continue // hidden content: listed, but not its descendants
		}
		if it.depth >= opts.maxDepth {
			if kids, _ := a.api.Children(it.e); len(kids) > 0 && truncated == "" {
				truncated = "depth"
			}
			continue
		}
		if time.Now().After(opts.deadline) {
			truncated = "time"
			break
		}
		kids, err := a.api.Children(it.e)
		if err != nil {
			continue // a child that vanished mid-read leaves a gap, not an error
		}
		for _, k := range kids {
			if len(items) >= opts.maxNodes {
				truncated = "nodes"
				a.api.Release(k)
				continue
			}
			ki, err := a.api.Info(k)
			if err != nil {
				a.api.Release(k)
				continue
			}
			it.children = append(it.children, len(items))
			items = append(items, &item{e: k, info: ki, depth: it.depth + 1})
		}
		if truncated == "nodes" {
			break
		}
	}
	// Refs live until the next tree read, which hands out new ones: an
	// older ref is then stale_element, and the caller reads again.
	for _, e := range a.refs {
		a.api.Release(e)
	}
	a.refs = map[string]element{}
	var walk func(i, parent int)
	walk = func(i, parent int) {
		it := items[i]
		n := toNode(it.info, parent, it.depth)
		a.refs[n.Ref] = it.e
		self := len(nodes)
		nodes = append(nodes, n)
		for _, c := range it.children {
			walk(c, self)
		}
	}
	walk(0, -1)
	return nodes, truncated, nil
}

func (s *server) requireA11y() *rpcError {
	if err := s.a11y.available(); err != nil {
		return newError(codeUnsupported, "UI Automation is not available: %v", err)
	}
	return nil
}

func (s *server) a11yApps(json.RawMessage) (any, *rpcError) {
	if err := s.a11y.available(); err != nil {
		return map[string]any{"available": false, "reason": fmt.Sprintf("UI Automation is not available: %v", err), "apps": []any{}}, nil
	}
	list, _, err := s.desk.Windows(false)
	if err != nil {
		return nil, asRPC(err, codeInternal)
	}
	type win struct {
		Ref    string `json:"ref"`
		Title  string `json:"title"`
		Window uint32 `json:"window"`
		Bounds rect   `json:"bounds"`
	}
	type appEntry struct {
		PID     int    `json:"pid"`
		Name    string `json:"name"`
		Toolkit string `json:"toolkit"`
		Windows []win  `json:"windows"`
	}
	var apps []*appEntry
	for _, w := range list {
		if w.App.PID == nil {
			continue
		}
		i := slices.IndexFunc(apps, func(a *appEntry) bool { return a.PID == *w.App.PID })
		if i < 0 {
			apps = append(apps, &appEntry{PID: *w.App.PID, Name: w.App.Name, Toolkit: "uia", Windows: []win{}})
			i = len(apps) - 1
		}
		e, err := s.a11y.api.Window(w.ID)
		if err != nil {
			continue
		}
		info, err := s.a11y.api.Info(e)
		s.a11y.api.Release(e)
		if err != nil {
			continue
		}
		apps[i].Windows = append(apps[i].Windows, win{Ref: ref(info), Title: w.Title, Window: w.ID, Bounds: w.Bounds})
	}
	return map[string]any{"available": true, "apps": apps}, nil
}

func (s *server) a11yTree(params json.RawMessage) (any, *rpcError) {
	var p struct {
		PID        *int            `json:"pid"`
		Window     *uint32         `json:"window"`
		Title      *string         `json:"title"`
		MaxNodes   *int            `json:"max_nodes"`
		MaxDepth   *int            `json:"max_depth"`
		DeadlineMs *int            `json:"deadline_ms"`
		Capture    json.RawMessage `json:"capture"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	opts, rpcErr := treeBudgets(p.PID, p.MaxNodes, p.MaxDepth, p.DeadlineMs)
	if rpcErr != nil {
		return nil, rpcErr
	}
	if err := s.requireA11y(); err != nil {
		return nil, err
	}
	list, focused, err := s.desk.Windows(false)
	if err != nil {
		return nil, asRPC(err, codeInternal)
	}
	w, rpcErr := pickWindow(list, focused, *p.PID, p.Window, p.Title)
	if rpcErr != nil {
		return nil, rpcErr
	}
	start := time.Now()
	root, err := s.a11y.api.Window(w.ID)
	if err != nil {
		return nil, newError(codeA11yUnavailable, "reading window %d: %v", w.ID, err)
	}
	nodes, truncated, err := s.a11y.tree(root, opts)
	if err != nil {
		s.a11y.api.Release(root)
		return nil, newError(codeA11yUnavailable, "reading window %d: %v", w.ID, err)
	}
	result := map[string]any{
		"window": map[string]any{"ref": nodes[0].Ref, "title": w.Title, "window": w.ID, "bounds": w.Bounds},
		"nodes":  nodes, "elapsed_ms": time.Since(start).Milliseconds(), "via": "uia",
	}
	if truncated != "" {
		result["truncated"] = truncated
	}
	return result, nil
}

func treeBudgets(pid, maxNodes, maxDepth, deadlineMs *int) (treeOptions, *rpcError) {
	opts := treeOptions{maxNodes: 2000, maxDepth: 60}
	ms := 2000
	if pid == nil {
		return opts, newError(codeInvalidParams, "a11y_tree needs pid, an integer")
	}
	for _, b := range []struct {
		v        *int
		to       *int
		min, max int
		name     string
	}{{maxNodes, &opts.maxNodes, 1, 100000, "max_nodes"}, {maxDepth, &opts.maxDepth, 0, 10000, "max_depth"}, {deadlineMs, &ms, 1, 600000, "deadline_ms"}} {
		if b.v == nil {
			continue
		}
		if *b.v < b.min || *b.v > b.max {
			return opts, newError(codeInvalidParams, "%s must be in %d..=%d", b.name, b.min, b.max)
		}
		*b.to = *b.v
	}
	opts.deadline = time.Now().Add(time.Duration(ms) * time.Millisecond)
	return opts, nil
}

// pickWindow chooses a11y_tree's window: by id, else by exact then
// partial title, else the focused one, else the first.
func pickWindow(list []window, focused *uint32, pid int, id *uint32, title *string) (window, *rpcError) {
	var mine []window
	for _, w := range list {
		if w.App.PID != nil && *w.App.PID == pid {
			mine = append(mine, w)
		}
	}
	if len(mine) == 0 {
		return window{}, newError(codeNoSuchWindow, "pid %d has no window", pid)
	}
	matchers := []func(w window) bool{}
	switch {
	case id != nil:
		matchers = append(matchers, func(w window) bool { return w.ID == *id })
	case title != nil:
		matchers = append(matchers, func(w window) bool { return w.Title == *title },
			func(w window) bool { return strings.Contains(w.Title, *title) })
	default:
		matchers = append(matchers, func(w window) bool { return focused != nil && w.ID == *focused },
			func(window) bool { return true })
	}
	for _, m := range matchers {
		if i := slices.IndexFunc(mine, m); i >= 0 {
			return mine[i], nil
		}
	}
	titles := make([]string, len(mine))
	for i, w := range mine {
		titles[i] = fmt.Sprintf("%q", w.Title)
	}
	return window{}, newError(codeNoSuchWindow, "pid %d has no such window; its windows: %s", pid, strings.Join(titles, ", "))
}

// resolve finds a ref handed out by a tree read, checking it belongs to pid.
func (s *server) resolve(pid *int, r *string) (element, *rpcError) {
	if pid == nil || r == nil {
		return nil, newError(codeInvalidParams, "needs pid, an integer, and ref, a string")
	}
	owner, _, ok := strings.Cut(*r, "/")
	if !ok || owner != fmt.Sprint(*pid) {
		return nil, newError(codeInvalidParams, "ref %q does not belong to pid %d", *r, *pid)
	}
	if err := s.requireA11y(); err != nil {
		return nil, err
	}
	e, ok := s.a11y.refs[*r]
	if !ok {
		return nil, newError(codeStaleElement, "element %s is unknown; read the tree again", *r)
	}
	return e, nil
}

func (s *server) fresh(e element, r string) (node, *rpcError) {
	info, err := s.a11y.api.Info(e)
	if err != nil {
		delete(s.a11y.refs, r)
		if errors.Is(err, ErrStale) {
			return node{}, newError(codeStaleElement, "element %s is gone; read the tree again", r)
		}
		return node{}, newError(codeA11yUnavailable, "reading element %s: %v", r, err)
	}
	return toNode(info, -1, 0), nil
}

func (s *server) a11yElement(params json.RawMessage) (any, *rpcError) {
	var p struct {
		PID *int    `json:"pid"`
		Ref *string `json:"ref"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	e, rpcErr := s.resolve(p.PID, p.Ref)
	if rpcErr != nil {
		return nil, rpcErr
	}
	n, rpcErr := s.fresh(e, *p.Ref)
	if rpcErr != nil {
		return nil, rpcErr
	}
	return map[string]any{"node": n}, nil
}

func (s *server) a11yAct(params json.RawMessage) (any, *rpcError) {
	var p struct {
		PID    *int     `json:"pid"`
		Ref    *string  `json:"ref"`
		Op     *string  `json:"op"`
		Action *string  `json:"action"`
		Text   *string  `json:"text"`
		Value  *float64 `json:"value"`
		Expect *struct {
			Role   *string `json:"role"`
			Name   *string `json:"name"`
			Bounds *rect   `json:"bounds"`
		} `json:"expect"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Op == nil {
		return nil, newError(codeInvalidParams, "a11y_act needs op, a string")
	}
	var op patternOp
	var arg any
	switch *p.Op {
	case "action":
		if p.Action == nil {
			return nil, newError(codeInvalidParams, "op action needs action, a string")
		}
	case "set_text":
		if p.Text == nil {
			return nil, newError(codeInvalidParams, "op set_text needs text, a string")
		}
		op, arg = opSetValue, *p.Text
	case "set_value":
		if p.Value == nil {
			return nil, newError(codeInvalidParams, "op set_value needs value, a number")
		}
		op, arg = opSetRange, *p.Value
	case "focus":
		op = opFocus
	case "scroll_to":
		op = opScrollIntoView
	case "insert_text", "select":
		if _, err := s.resolve(p.PID, p.Ref); err != nil {
			return nil, err
		}
		return nil, newError(codeUnsupported, "op %s is not implemented over UI Automation", *p.Op)
	default:
		return nil, newError(codeInvalidParams, "unknown op %q", *p.Op)
	}
	e, rpcErr := s.resolve(p.PID, p.Ref)
	if rpcErr != nil {
		return nil, rpcErr
	}
	n, rpcErr := s.fresh(e, *p.Ref)
	if rpcErr != nil {
		return nil, rpcErr
	}
	if p.Expect != nil {
		if changed := differs(n, p.Expect.Role, p.Expect.Name, p.Expect.Bounds); changed != "" {
			err := newError(codeStaleElement, "element %s has changed (its %s); nothing was done", *p.Ref, changed)
			err.Data.Changed, err.Data.Node = changed, &n
			return nil, err
		}
	}
	if *p.Op == "action" {
		i := slices.IndexFunc(actions, func(a struct {
			name, pattern string
			op            patternOp
		}) bool {
			return a.name == *p.Action
		})
		if i < 0 || !slices.Contains(n.Actions, *p.Action) {
			err := newError(codeUnsupported, "element %s has no action %q; it has %v", *p.Ref, *p.Action, n.Actions)
			err.Data.Actions = n.Actions
			return nil, err
		}
		op = actions[i].op
		if amounts, ok := scrollAmounts[*p.Action]; ok {
			arg = amounts
		}
	}
	if op == opSetRange && n.Range != nil && (*p.Value < n.Range.Min || *p.Value > n.Range.Max) {
		return nil, newError(codeInvalidParams, "value %v is outside %v..=%v", *p.Value, n.Range.Min, n.Range.Max)
	}
	if err := s.a11y.api.Do(e, op, arg); err != nil {
		switch {
		case errors.Is(err, ErrStale):
			return nil, newError(codeStaleElement, "element %s is gone; read the tree again", *p.Ref)
		case errors.Is(err, ErrRefused), errors.Is(err, errNoPattern):
			return nil, newError(codeUnsupported, "element %s: %v; check its states (sensitive, editable)", *p.Ref, err)
		}
		return nil, newError(codeA11yUnavailable, "acting on %s: %v", *p.Ref, err)
	}
	return map[string]any{"ok": true, "op": *p.Op}, nil
}

// errNoPattern is what an automation returns when the element lacks the
// pattern an op needs.
var errNoPattern = errors.New("the element does not support that pattern")

// differs names what of role, name and bounds changed; unknown bounds
// (absent, empty, or far off screen) compare equal.
func differs(n node, role, name *string, bounds *rect) string {
	switch {
	case role != nil && *role != n.Role:
		return "role"
	case name != nil && *name != n.Name:
		return "name"
	case bounds != nil && known(*bounds) && n.Bounds != nil && known(rect(*n.Bounds)) && *bounds != rect(*n.Bounds):
		return "bounds"
	}
	return ""
}

func known(r rect) bool {
	return r.Width > 0 && r.Height > 0 && r.X > -(1<<30) && r.Y > -(1<<30)
}
