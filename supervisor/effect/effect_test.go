package effect

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

func r(x, y, w, h int) geometry.Rect { return geometry.Rect{X: x, Y: y, Width: w, Height: h} }

func TestMerge(t *testing.T) {
	tests := []struct {
		name string
		in   []geometry.Rect
		want []geometry.Rect
	}{
		{"apart", []geometry.Rect{r(0, 0, 10, 10), r(100, 100, 20, 20)}, []geometry.Rect{r(100, 100, 20, 20), r(0, 0, 10, 10)}},
		{"near", []geometry.Rect{r(0, 0, 10, 10), r(15, 0, 10, 10)}, []geometry.Rect{r(0, 0, 25, 10)}},
		{"chain", []geometry.Rect{r(0, 0, 10, 10), r(40, 0, 10, 10), r(12, 0, 26, 10)}, []geometry.Rect{r(0, 0, 50, 10)}},
	}
	for _, tt := range tests {
		if got := Merge(tt.in); !cmp.Equal(got, tt.want) {
			t.Errorf("Merge(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestSubtract(t *testing.T) {
	got := Subtract([]geometry.Rect{r(0, 0, 100, 100)}, r(20, 30, 10, 10))
	want := []geometry.Rect{r(0, 0, 100, 30), r(0, 40, 100, 60), r(0, 30, 20, 10), r(30, 30, 70, 10)}
	if !cmp.Equal(got, want) {
		t.Errorf("Subtract = %v, want %v", got, want)
	}
	if got := Subtract([]geometry.Rect{r(0, 0, 10, 10)}, r(0, 0, 10, 10)); len(got) != 0 {
		t.Errorf("Subtract of all = %v, want nothing", got)
	}
}

func TestHidden(t *testing.T) {
	list := &bridge.WindowList{Windows: []bridge.Window{
		{ID: 1, App: bridge.App{Name: "ok"}, Bounds: r(0, 0, 50, 50)},
		{ID: 2, App: bridge.App{Name: "secret"}, Bounds: r(0, 0, 100, 50)},
		{ID: 3, App: bridge.App{Name: "secret"}, Bounds: r(0, 200, 10, 10), Minimized: true},
	}}
	got := Hidden(list, func(w bridge.Window) bool { return w.App.Name == "secret" })
	if want := []geometry.Rect{r(50, 0, 50, 50)}; !cmp.Equal(got, want) {
		t.Errorf("Hidden = %v, want %v", got, want)
	}
}

func TestDiffWindows(t *testing.T) {
	one, two := uint32(1), uint32(2)
	before := &bridge.WindowList{Focused: &one, Windows: []bridge.Window{{ID: 1, Title: "a"}, {ID: 3, Title: "gone"}}}
	after := &bridge.WindowList{Focused: &two, Windows: []bridge.Window{{ID: 1, Title: "a*"}, {ID: 2, Title: "new"}}}
	d := DiffWindows(before, after)
	if len(d.Opened) != 1 || d.Opened[0].ID != 2 || len(d.Closed) != 1 || d.Closed[0].ID != 3 ||
		len(d.Retitled) != 1 || d.Retitled[0].From != "a" || d.Focus == nil || d.Focus.ID != 2 {
		t.Errorf("DiffWindows = %+v", d)
	}
	if d := DiffWindows(before, before); !d.Empty() {
		t.Errorf("DiffWindows(same) = %+v, want empty", d)
	}
}

func TestDiffA11y(t *testing.T) {
	str := func(s string) *string { return &s }
	node := func(ref, name string, value *string, states ...string) bridge.A11yNode {
		return bridge.A11yNode{Ref: ref, Role: "check box", Name: name, Value: value, States: states}
	}
	before := &bridge.A11yTree{Window: bridge.A11yWindow{Ref: "w", Title: "Form"}, Nodes: []bridge.A11yNode{
		node("box", "Agree", nil, "enabled"), node("a", "A", str("1")), node("b", "B", nil), node("c", "C", nil),
	}}
	after := &bridge.A11yTree{Window: bridge.A11yWindow{Ref: "w", Title: "Form *"}, Nodes: []bridge.A11yNode{
		node("box", "Agree", nil, "enabled", "checked"), node("a", "A", str("2")), node("c", "C", nil), node("d", "D", nil), node("e", "E", nil),
	}}
	got := DiffA11y(before, after, "box")
	want := Elements{
		Target:  &Change{Role: "check box", Name: "Agree", StatesOn: []string{"checked"}},
		Window:  &Change{Role: "window", Name: "Form", NameTo: str("Form *")},
		Changed: 1, Added: 2, Removed: 1,
	}
	if !cmp.Equal(got, want) {
		t.Errorf("DiffA11y = %+v, want %+v (%s)", got, want, cmp.Diff(want, got))
	}
	if got := DiffA11y(before, before, "box"); !got.Empty() {
		t.Errorf("DiffA11y(same) = %+v, want empty", got)
	}
	gone := DiffA11y(before, &bridge.A11yTree{Window: before.Window}, "box")
	if gone.Target == nil || !gone.Target.Gone || gone.Removed != 3 {
		t.Errorf("DiffA11y(all gone) = %+v, want the target gone and 3 removed", gone)
	}
}

// script answers ScreenChanges from a list, then with no change.
type script [][]geometry.Rect

func (s *script) ScreenChanges(context.Context) (*bridge.ScreenChanges, error) {
	if len(*s) == 0 {
		return &bridge.ScreenChanges{}, nil
	}
	r := (*s)[0]
	*s = (*s)[1:]
	return &bridge.ScreenChanges{Changed: r}, nil
}

// TestTailIsNotAmbient: the previous action's change, still going when
// its wait ended, is not taken to change by itself: the next action's
// change in the same place is reported.
func TestTailIsNotAmbient(t *testing.T) {
	box := r(16, 400, 32, 16)
	for _, tail := range [][]geometry.Rect{nil, {box}} {
		src := &script{{box}, {box}}
		got := Begin(context.Background(), src, nil, tail).End(context.Background(), Settle{Quiet: 40 * time.Millisecond, Cap: 200 * time.Millisecond})
		if changed := len(got.Changed) > 0; changed != (tail != nil) {
			t.Errorf("with tail %v: Changed = %v, want a change only with the tail", tail, got.Changed)
		}
	}
}
