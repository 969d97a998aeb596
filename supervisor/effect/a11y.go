package effect

import (
	"slices"

	"github.com/deskhand/deskhand/bridge"
)

// Elements is what an element action changed in the accessibility tree
// of the window it acted in: the element itself and the window in
// detail, the other elements counted.
type Elements struct {
	// Target is the acted-on element's change, nil when it did not change.
	Target *Change
	// Window is the window's own change (its title, its states), nil when
	// none.
	Window *Change
	// Changed counts the other elements whose name, value or states
	// changed; Added and Removed the elements that came and went.
	Changed, Added, Removed int
}

// Empty says nothing changed.
func (e Elements) Empty() bool {
	return e.Target == nil && e.Window == nil && e.Changed+e.Added+e.Removed == 0
}

// Change is how one element changed.
type Change struct {
	Role string
	// Name is the element's name before the action.
	Name string
	// Gone says the element left the tree.
	Gone bool
	// NameTo and ValueFrom/ValueTo are set when they changed.
	NameTo             *string
	ValueFrom, ValueTo *string
	// StatesOn and StatesOff are the states it gained and lost.
	StatesOn, StatesOff []string
}

// DiffA11y compares two reads of a window's tree, taken before and after
// an action on the element whose ref is target ("" for none). Elements
// are the same when their refs are.
func DiffA11y(before, after *bridge.A11yTree, target string) Elements {
	var d Elements
	if before == nil || after == nil {
		return d
	}
	now := map[string]bridge.A11yNode{}
	for _, n := range after.Nodes {
		now[n.Ref] = n
	}
	was := map[string]bool{}
	for _, n := range before.Nodes {
		was[n.Ref] = true
		m, ok := now[n.Ref]
		var c *Change
		if ok {
			c = diffNode(n, m)
		} else {
			c = &Change{Role: n.Role, Name: n.Name, Gone: true}
		}
		switch {
		case n.Ref == target:
			d.Target = c
		case n.Ref == before.Window.Ref && c != nil:
			d.Window = c
		case !ok:
			d.Removed++
		case c != nil:
			d.Changed++
		}
	}
	for _, n := range after.Nodes {
		if !was[n.Ref] {
			d.Added++
		}
	}
	// The helper may list the window apart from its nodes.
	if d.Window == nil && before.Window.Title != after.Window.Title && before.Window.Ref == after.Window.Ref {
		to := after.Window.Title
		d.Window = &Change{Role: "window", Name: before.Window.Title, NameTo: &to}
	}
	return d
}

// diffNode is how n became m, nil when it did not change.
func diffNode(n, m bridge.A11yNode) *Change {
	c := &Change{Role: n.Role, Name: n.Name}
	if n.Name != m.Name {
		c.NameTo = &m.Name
	}
	if !equalPtr(n.Value, m.Value) {
		c.ValueFrom, c.ValueTo = n.Value, m.Value
	}
	for _, s := range m.States {
		if !slices.Contains(n.States, s) {
			c.StatesOn = append(c.StatesOn, s)
		}
	}
	for _, s := range n.States {
		if !slices.Contains(m.States, s) {
			c.StatesOff = append(c.StatesOff, s)
		}
	}
	if c.NameTo == nil && c.ValueFrom == nil && c.ValueTo == nil && len(c.StatesOn)+len(c.StatesOff) == 0 {
		return nil
	}
	return c
}

func equalPtr(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
