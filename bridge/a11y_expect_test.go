package bridge

import (
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
