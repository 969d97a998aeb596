package bridge

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
)

func TestA11yExpectChanged(t *testing.T) {
	at := &A11yRect{X: 10, Y: 20, Width: 30, Height: 40}
	seen := A11yExpect{Role: "check box", Name: "A", Bounds: at}
	hidden := &A11yRect{X: math.MinInt32, Y: math.MinInt32, Width: 5, Height: 5}
	for _, tc := range []struct {
		exp  A11yExpect
		node A11yNode
		want string
	}{
		{seen, A11yNode{Role: "check box", Name: "A", Bounds: &A11yRect{X: 10, Y: 20, Width: 30, Height: 40}}, ""},
		{seen, A11yNode{Role: "push button", Name: "A", Bounds: at}, `its role was "check box", now "push button"`},
		{seen, A11yNode{Role: "check box", Name: "B", Bounds: at}, `its name was "A", now "B"`},
		{seen, A11yNode{Role: "check box", Name: "A", Bounds: &A11yRect{X: 11, Y: 20, Width: 30, Height: 40}}, "it was at 30x40+10+20, now at 30x40+11+20"},
		{seen, A11yNode{Role: "check box", Name: "A"}, "it was at 30x40+10+20, now at an unknown place"},
		// Unknown places compare equal however the toolkit spells them.
		{A11yExpect{Role: "check box", Name: "A"}, A11yNode{Role: "check box", Name: "A", Bounds: hidden}, ""},
		{A11yExpect{Role: "check box", Name: "A", Bounds: hidden}, A11yNode{Role: "check box", Name: "A", Bounds: &A11yRect{X: 1, Y: 1}}, ""},
	} {
		if got := tc.exp.Changed(tc.node); got != tc.want {
			t.Errorf("%+v.Changed(%+v) = %q, want %q", tc.exp, tc.node, got, tc.want)
		}
	}
}

func TestStaleChange(t *testing.T) {
	changed := &Error{Name: ErrNameStaleElement, Message: `element :1.2/x has changed (its name was "A", now "B"); nothing was done`}
	if why, ok := StaleChange(changed); !ok || why != `its name was "A", now "B"` {
		t.Errorf("StaleChange(%v) = %q, %v", changed, why, ok)
	}
	for _, err := range []error{
		&Error{Name: ErrNameStaleElement, Message: "element :1.2/x no longer exists (gone)"},
		&Error{Name: ErrNameUnsupported, Message: "element :1.2/x has changed (x); nothing was done"},
		errors.New("element has changed (x); nothing was done"),
	} {
		if why, ok := StaleChange(err); ok {
			t.Errorf("StaleChange(%v) = %q, true; want false", err, why)
		}
	}
}

// An op's own parameters travel beside pid, ref and op, and cannot
// replace them.
func TestA11yActRequestWire(t *testing.T) {
	req := A11yActRequest{PID: 7, Ref: ":1.5/e", Op: "insert_text", Args: map[string]any{"text": "Ada", "op": "focus", "pid": 1},
		Expect: &A11yExpect{Role: "text", Name: "Name"}}
	got, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"expect":{"role":"text","name":"Name","bounds":null},"op":"insert_text","pid":7,"ref":":1.5/e","text":"Ada"}`
	if string(got) != want {
		t.Errorf("a11y_act request on the wire:\n got %s\nwant %s", got, want)
	}
}
