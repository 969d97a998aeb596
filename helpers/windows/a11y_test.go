package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeUIA is an automation over a fixed tree of fake elements.
type fakeUIA struct {
	unavailable error
	elems       map[string]*fakeElem // by name
	windows     map[uint32]string    // hwnd -> root element name
	done        []string             // "name op arg" of each Do
	refuse      bool
}

type fakeElem struct {
	info     elementInfo
	children []string
	gone     bool
}

func (f *fakeUIA) Available() error { return f.unavailable }

func (f *fakeUIA) Window(hwnd uint32) (element, error) {
	name, ok := f.windows[hwnd]
	if !ok {
		return nil, fmt.Errorf("no window %d", hwnd)
	}
	return name, nil
}

func (f *fakeUIA) Children(e element) ([]element, error) {
	var out []element
	for _, c := range f.elems[e.(string)].children {
		out = append(out, c)
	}
	return out, nil
}

func (f *fakeUIA) Info(e element) (elementInfo, error) {
	el := f.elems[e.(string)]
	if el.gone {
		return elementInfo{}, ErrStale
	}
	return el.info, nil
}

func (f *fakeUIA) Release(element) {}

func (f *fakeUIA) Do(e element, op patternOp, arg any) error {
	if f.refuse {
		return ErrRefused
	}
	f.done = append(f.done, fmt.Sprintf("%s %s %v", e, op, arg))
	return nil
}

func intp(v int) *int { return &v }

func newFakeUIA() *fakeUIA {
	value := "hello"
	f := &fakeUIA{windows: map[uint32]string{7: "win"}, elems: map[string]*fakeElem{
		"win": {info: elementInfo{RuntimeID: []int32{42, 1}, PID: 100, ControlType: "Window", Name: "Demo", Enabled: true,
			Bounds: &rect{0, 0, 400, 300}}, children: []string{"ok", "check", "edit", "slider", "tabs"}},
		"ok": {info: elementInfo{RuntimeID: []int32{42, 2}, PID: 100, ControlType: "Button", Name: "OK", Enabled: true,
			Bounds: &rect{10, 10, 80, 30}, Patterns: []string{"invoke"}}},
		"check": {info: elementInfo{RuntimeID: []int32{42, 3}, PID: 100, ControlType: "CheckBox", Name: "Wrap", Enabled: true,
			Patterns: []string{"toggle"}, Toggle: intp(1)}},
		"edit": {info: elementInfo{RuntimeID: []int32{42, 4}, PID: 100, ControlType: "Edit", Name: "Text", Enabled: true,
			Patterns: []string{"value"}, Value: &value}},
		"slider": {info: elementInfo{RuntimeID: []int32{42, 5}, PID: 100, ControlType: "Slider", Name: "Volume", Enabled: true,
			Patterns: []string{"range_value"}, Range: &valueRange{Min: 0, Max: 10, Current: 3}}},
		"tabs": {info: elementInfo{RuntimeID: []int32{42, 6}, PID: 100, ControlType: "Tab", Name: "Pages", Enabled: true,
			Patterns: []string{"expand_collapse", "scroll"}, Expanded: intp(0)}, children: []string{"hiddenpage"}},
		"hiddenpage": {info: elementInfo{RuntimeID: []int32{42, 7}, PID: 100, ControlType: "Pane", Offscreen: true,
			Bounds: &rect{0, 0, 0, 0}}, children: []string{"deep"}},
		"deep": {info: elementInfo{RuntimeID: []int32{42, 8}, PID: 100, ControlType: "Button", Name: "Hidden"}},
	}}
	return f
}

// fakeDesk serves one window of pid 100 for the a11y methods.
type fakeDesk struct{ noDesk }

type noDesk struct{}

func (noDesk) Displays() ([]display, error)    { return nil, errors.New("none") }
func (noDesk) Grab(rect) (*image.RGBA, error)  { return nil, errors.New("none") }
func (noDesk) Hide([]uint32) ([]uint32, error) { return nil, nil }
func (noDesk) Restore([]uint32) ([]uint32, error) {
	return nil, nil
}
func (noDesk) ClipboardRead() (string, error) { return "", errors.New("none") }
func (noDesk) ClipboardWrite(string) error    { return nil }
func (noDesk) Windows(bool) ([]window, *uint32, error) {
	pid := 100
	return []window{{ID: 7, Title: "Demo", App: app{PID: &pid, Name: "demo"}, Bounds: rect{0, 0, 400, 300}}}, nil, nil
}

func rpc(t *testing.T, s *server, method string, params any) (map[string]any, *rpcError) {
	t.Helper()
	b, _ := json.Marshal(params)
	res, err := s.call(method, b)
	if err != nil {
		return nil, err
	}
	b, _ = json.Marshal(res)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m, nil
}

func TestA11yTree(t *testing.T) {
	f := newFakeUIA()
	s := &server{desk: fakeDesk{}, a11y: &accessibility{api: f}, shook: true}
	res, err := rpc(t, s, "a11y_tree", map[string]any{"pid": 100})
	if err != nil {
		t.Fatal(err)
	}
	var nodes []node
	b, _ := json.Marshal(res["nodes"])
	json.Unmarshal(b, &nodes)
	type row struct {
		Ref, Role, Name string
		Parent, Depth   int
		States, Actions []string
	}
	var got []row
	for _, n := range nodes {
		got = append(got, row{n.Ref, n.Role, n.Name, n.Parent, n.Depth, n.States, n.Actions})
	}
	on := []string{"sensitive", "enabled", "showing", "visible"}
	want := []row{
		{"100/42.1", "frame", "Demo", -1, 0, on, []string{}},
		{"100/42.2", "push button", "OK", 0, 1, on, []string{"invoke"}},
		{"100/42.3", "check box", "Wrap", 0, 1, append(slices.Clone(on), "checked"), []string{"toggle"}},
		{"100/42.4", "entry", "Text", 0, 1, append(slices.Clone(on), "editable"), []string{}},
		{"100/42.5", "slider", "Volume", 0, 1, on, []string{}},
		{"100/42.6", "page tab list", "Pages", 0, 1, append(slices.Clone(on), "expandable"),
			[]string{"expand", "collapse", "scroll_up", "scroll_down", "scroll_left", "scroll_right"}},
		// An offscreen, empty pane is listed without its descendants.
		{"100/42.7", "panel", "", 5, 2, []string{}, []string{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a11y_tree nodes (-want +got):\n%s", diff)
	}
	if _, ok := res["truncated"]; ok {
		t.Errorf("truncated = %v for a tree within budget", res["truncated"])
	}

	res, _ = rpc(t, s, "a11y_tree", map[string]any{"pid": 100, "max_nodes": 3})
	if res["truncated"] != "nodes" || len(res["nodes"].([]any)) != 3 {
		t.Errorf("max_nodes 3: truncated %v with %d nodes, want nodes and 3", res["truncated"], len(res["nodes"].([]any)))
	}
	res, _ = rpc(t, s, "a11y_tree", map[string]any{"pid": 100, "max_depth": 0})
	if res["truncated"] != "depth" || len(res["nodes"].([]any)) != 1 {
		t.Errorf("max_depth 0: truncated %v with %d nodes, want depth and 1", res["truncated"], len(res["nodes"].([]any)))
	}
	if _, err := rpc(t, s, "a11y_tree", map[string]any{"pid": 5}); err == nil || err.Data.Code != codeNoSuchWindow {
		t.Errorf("a11y_tree of a pid without windows = %v, want no_such_window", err)
	}
}

func TestA11yAct(t *testing.T) {
	f := newFakeUIA()
	s := &server{desk: fakeDesk{}, a11y: &accessibility{api: f}, shook: true}
	if _, err := rpc(t, s, "a11y_tree", map[string]any{"pid": 100}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		params map[string]any
		done   string    // the pattern call made, "" for none
		code   errorCode // the error, "" for none
	}{
		{map[string]any{"ref": "100/42.2", "op": "action", "action": "invoke"}, "ok Invoke.Invoke <nil>", ""},
		{map[string]any{"ref": "100/42.3", "op": "action", "action": "toggle"}, "check Toggle.Toggle <nil>", ""},
		{map[string]any{"ref": "100/42.6", "op": "action", "action": "expand"}, "tabs ExpandCollapse.Expand <nil>", ""},
		{map[string]any{"ref": "100/42.6", "op": "action", "action": "scroll_down"}, "tabs Scroll.Scroll [2 4]", ""},
		{map[string]any{"ref": "100/42.4", "op": "set_text", "text": "hi"}, "edit Value.SetValue hi", ""},
		{map[string]any{"ref": "100/42.5", "op": "set_value", "value": 7.5}, "slider RangeValue.SetValue 7.5", ""},
		{map[string]any{"ref": "100/42.2", "op": "focus"}, "ok SetFocus <nil>", ""},
		{map[string]any{"ref": "100/42.2", "op": "scroll_to"}, "ok ScrollItem.ScrollIntoView <nil>", ""},
		{map[string]any{"ref": "100/42.5", "op": "set_value", "value": 11}, "", codeInvalidParams},
		{map[string]any{"ref": "100/42.2", "op": "action", "action": "toggle"}, "", codeUnsupported},
		{map[string]any{"ref": "100/42.2", "op": "insert_text", "text": "x"}, "", codeUnsupported},
		{map[string]any{"ref": "100/42.2", "op": "fly"}, "", codeInvalidParams},
		{map[string]any{"ref": "101/42.2", "op": "focus"}, "", codeInvalidParams},
		{map[string]any{"ref": "100/9.9", "op": "focus"}, "", codeStaleElement},
		{map[string]any{"ref": "100/42.2", "op": "action", "action": "invoke",
			"expect": map[string]any{"role": "push button", "name": "Cancel"}}, "", codeStaleElement},
	}
	for _, tt := range tests {
		f.done = nil
		tt.params["pid"] = 100
		_, err := rpc(t, s, "a11y_act", tt.params)
		var code errorCode
		if err != nil {
			code = err.Data.Code
		}
		if code != tt.code || (tt.done != "" && !slices.Equal(f.done, []string{tt.done})) || (tt.done == "" && len(f.done) > 0) {
			t.Errorf("a11y_act(%v) = error %q, calls %q; want error %q, calls %q", tt.params, code, f.done, tt.code, tt.done)
		}
	}

	f.refuse = true
	if _, err := rpc(t, s, "a11y_act", map[string]any{"pid": 100, "ref": "100/42.2", "op": "action", "action": "invoke"}); err == nil || err.Data.Code != codeUnsupported {
		t.Errorf("a11y_act on a refusing element = %v, want unsupported", err)
	}
	f.elems["ok"].gone = true
	if _, err := rpc(t, s, "a11y_element", map[string]any{"pid": 100, "ref": "100/42.2"}); err == nil || err.Data.Code != codeStaleElement {
		t.Errorf("a11y_element of a gone element = %v, want stale_element", err)
	}
}

func TestA11yUnavailable(t *testing.T) {
	f := &fakeUIA{unavailable: errors.New("CoCreateInstance(CUIAutomation): class not registered")}
	s := &server{desk: fakeDesk{}, a11y: &accessibility{api: f}}
	res, err := rpc(t, s, "handshake", map[string]any{"protocol_versions": []int{1}})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(res["capabilities"].([]any), any("a11y")) {
		t.Errorf("capabilities %v list a11y without UI Automation", res["capabilities"])
	}
	if _, err := rpc(t, s, "a11y_tree", map[string]any{"pid": 100}); err == nil || err.Data.Code != codeUnsupported {
		t.Errorf("a11y_tree without UI Automation = %v, want unsupported", err)
	}
	res, _ = rpc(t, s, "a11y_apps", nil)
	if res["available"] != false {
		t.Errorf("a11y_apps without UI Automation = %v, want available false", res)
	}
}
