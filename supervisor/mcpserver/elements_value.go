package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/deskhand/deskhand/bridge"
)

// valueOp is what set_value does: the helper calls it takes, and how to
// say it.
type valueOp struct {
	acts []bridge.A11yActRequest
	// window, when set, is a window state for the window manager instead.
	window *windowOp
	say    string
}

func (p *parser) setValue(tool string, in *setValueArgs) (*step, error) {
	r, err := in.ref(tool, in.ElementID, 0)
	if err != nil {
		return nil, err
	}
	raw := bytes.TrimSpace(in.Value)
	kind := map[byte]string{'t': "bool", 'f': "bool", '"': "string", '{': "object"}[raw[0]]
	if kind == "" {
		if _, err := strconv.ParseFloat(string(raw), 64); err != nil {
			return nil, fmt.Errorf("%s: value %s is not a boolean, number, string or object", tool, abbreviate(raw))
		}
		kind = "number"
	}
	var op *valueOp
	return p.elemStep(elemOp{
		act: Action{Tool: tool, Op: kind, Background: true},
		ref: r,
		plan: func(ctx context.Context, t *target, act *Action) (err error) {
			if op, err = planValue(t, r.id, kind, raw); err != nil {
				return fmt.Errorf("%s: %w", tool, err)
			}
			return nil
		},
		run: func(ctx context.Context, t *target, act Action) (*outcome, error) {
			if op.window != nil {
				return p.s.runWindowState(ctx, r.pid, r.id, op.window, op.say)
			}
			for _, r := range op.acts {
				if err := p.a11yAct(ctx, t, r); err != nil {
					return nil, err
				}
			}
			how, path := ran(true)
			text := op.say + "."
			if len(op.acts) > 0 {
				text = op.say + " " + how + "." + seeResult
			}
			return &outcome{text: text, data: map[string]any{"element_id": r.id, "path": path, "value_kind": kind}}, nil
		},
	}), nil
}

// planValue decides what set_value does with the element, per seed 002.
func planValue(t *target, id int, kind string, raw json.RawMessage) (*valueOp, error) {
	n := t.fresh
	desc := fmt.Sprintf("element %d (%s)", id, describeNode(n))
	act := func(op, key string, v any) bridge.A11yActRequest {
		return bridge.A11yActRequest{Ref: n.Ref, Op: op, Args: map[string]any{key: v}}
	}
	switch kind {
	case "bool":
		var want bool
		_ = json.Unmarshal(raw, &want)
		if !has(n.States, "checkable") && !slices.Contains([]string{"check box", "radio button", "toggle button", "switch", "check menu item", "radio menu item"}, n.Role) {
			return nil, fmt.Errorf("%s cannot be checked: a boolean sets check boxes, radio buttons and switches", desc)
		}
		now := has(n.States, "checked") || has(n.States, "pressed")
		if now == want {
			return &valueOp{say: fmt.Sprintf("%s is already %s; nothing was done", desc, map[bool]string{true: "checked", false: "unchecked"}[want])}, nil
		}
		// Chromium names its check boxes' action for what it does next:
		// "check" or "uncheck".
		name, ok := exposedAction(n, map[bool]string{true: "check", false: "uncheck"}[want], "toggle", "click", "press", "activate")
		if !ok {
			return nil, fmt.Errorf("%s exposes no action to toggle it (it exposes %s): click it instead", desc, quoteList(n.Actions))
		}
		r := act("action", "action", name)
		return &valueOp{acts: []bridge.A11yActRequest{r}, say: fmt.Sprintf("%s %s", map[bool]string{true: "Checked", false: "Unchecked"}[want], desc)}, nil
	case "number":
		v, _ := strconv.ParseFloat(string(raw), 64)
		return numberValue(n, desc, v)
	case "string":
		var s string
		_ = json.Unmarshal(raw, &s)
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "expanded", "collapsed":
			want := strings.EqualFold(strings.TrimSpace(s), "expanded")
			if !has(n.States, "expandable") && !has(n.States, "expanded") && !has(n.States, "collapsed") {
				return nil, fmt.Errorf("%s cannot be expanded or collapsed", desc)
			}
			if has(n.States, "expanded") == want {
				return &valueOp{say: fmt.Sprintf("%s is already %s; nothing was done", desc, strings.ToLower(s))}, nil
			}
			name, ok := exposedAction(n, "expand or contract", "toggle", "activate", "click", "press")
			if !want {
				if c, ok2 := exposedAction(n, "collapse"); ok2 {
					name, ok = c, true
				}
			} else if e, ok2 := exposedAction(n, "expand"); ok2 {
				name, ok = e, true
			}
			if !ok {
				return nil, fmt.Errorf("%s exposes no action to expand or collapse it (it exposes %s)", desc, quoteList(n.Actions))
			}
			r := act("action", "action", name)
			return &valueOp{acts: []bridge.A11yActRequest{r}, say: fmt.Sprintf("%s %s", map[bool]string{true: "Expanded", false: "Collapsed"}[want], desc)}, nil
		}
		if w := windowStateWord(s); w != "" && isWindowElement(t, id) {
			return planWindowState(t, desc, w)
		}
		if has(n.Interfaces, "editable_text") {
			r := act("set_text", "text", s)
			return &valueOp{acts: []bridge.A11yActRequest{r}, say: fmt.Sprintf("Set the text of %s to %d characters", desc, utf8.RuneCountInString(s))}, nil
		}
		if v, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && n.Range != nil {
			return numberValue(n, desc, v)
		}
		if windowStateWord(s) != "" {
			return nil, fmt.Errorf("%s is not a window, so %q cannot set its state: pass element_id \"0\" (the window) to change the window's state", desc, s)
		}
		return nil, fmt.Errorf("%s takes no text (it has no editable text): pick a text element", desc)
	case "object":
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("value %s is not an object", abbreviate(raw))
		}
		return scrollValue(t, desc, obj)
	}
	return nil, fmt.Errorf("value %s has no use for %s", abbreviate(raw), desc)
}

func numberValue(n bridge.A11yNode, desc string, v float64) (*valueOp, error) {
	if n.Range == nil && !has(n.Interfaces, "value") {
		return nil, fmt.Errorf("%s has no value to set: a number sets sliders and spin buttons", desc)
	}
	if r := n.Range; r != nil && (v < r.Min || v > r.Max) {
		return nil, fmt.Errorf("%v is outside the range of %s, %s–%s: give a value in it", v, desc, fmtNum(r.Min), fmtNum(r.Max))
	}
	return &valueOp{acts: []bridge.A11yActRequest{{Ref: n.Ref, Op: "set_value", Args: map[string]any{"value": v}}}, say: fmt.Sprintf("Set %s to %s", desc, fmtNum(v))}, nil
}

// scrollValue sets the scroll bars under the element (or the element, a
// scroll bar) to percentages of their range.
func scrollValue(t *target, desc string, obj map[string]json.RawMessage) (*valueOp, error) {
	want := map[string]float64{}
	for k, v := range obj {
		var f float64
		if k != "horizontal_scroll_percent" && k != "vertical_scroll_percent" {
			return nil, fmt.Errorf("the object takes horizontal_scroll_percent and vertical_scroll_percent, not %q", k)
		}
		if err := json.Unmarshal(v, &f); err != nil || f < 0 || f > 100 {
			return nil, fmt.Errorf("%s must be a percentage from 0 to 100, got %s", k, abbreviate(v))
		}
		want[strings.TrimSuffix(k, "_scroll_percent")] = f
	}
	if len(want) == 0 {
		return nil, errors.New("give horizontal_scroll_percent or vertical_scroll_percent")
	}
	st := t.state
	root := st.byID[t.el.id]
	under := func(i int) bool {
		for ; i >= 0; i = st.nodes[i].parent {
			if i == root {
				return true
			}
			if st.nodes[i].parent == i {
				return false
			}
		}
		return false
	}
	op := &valueOp{}
	var said []string
	for i, e := range st.nodes {
		n := e.node
		if n.Role != "scroll bar" || n.Range == nil || !under(i) {
			continue
		}
		axis := "vertical"
		if has(n.States, "horizontal") || (n.Bounds != nil && n.Bounds.Width > n.Bounds.Height) {
			axis = "horizontal"
		}
		pct, ok := want[axis]
		if !ok {
			continue
		}
		v := n.Range.Min + pct/100*(n.Range.Max-n.Range.Min)
		op.acts = append(op.acts, bridge.A11yActRequest{Ref: n.Ref, Op: "set_value", Args: map[string]any{"value": v}})
		said = append(said, fmt.Sprintf("%s to %g%%", axis, pct))
		delete(want, axis)
	}
	if len(op.acts) == 0 {
		return nil, fmt.Errorf("%s has no scroll bar for that under it: pass the scrolled view's element_id, or use scroll", desc)
	}
	op.say = fmt.Sprintf("Scrolled %s %s", desc, strings.Join(said, " and "))
	return op, nil
}
