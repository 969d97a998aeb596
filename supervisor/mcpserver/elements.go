package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// The element tools (seed 002's list_apps, get_app_state, click by
// element_id …) read an app's accessibility tree and act on its elements.
//
// Element ids are small numbers, stable for an element (a helper ref) for
// as long as the session knows the app: the diff after a change shows
// only what changed, so the ids of everything else must still hold. An id
// is good only while its element is in the app's latest state: one from
// an older state whose element has gone, or whose element has since
// changed role, name or bounds (read afresh before every action), is
// refused with "call get_app_state again". Id 0 is always the window the
// state shows, which the coordinate forms (x, y) name as their target.

// Budgets for one tree read; a bigger tree is cut and the result says so.
const (
	defaultMaxNodes = 2000
	defaultMaxDepth = 60
	maxMaxDepth     = 200
	treeDeadlineMS  = 2000
)

// elemNode is one element of a state: what the helper said, its id, and
// its index among the nodes.
type elemNode struct {
	id     int
	parent int // index in state.nodes, -1 for none
	depth  int
	node   bridge.A11yNode
}

// appState is one get_app_state of a window of an app.
type appState struct {
	gen    int
	pid    int
	window bridge.A11yWindow
	// xid is the X window the state shows, 0 when unknown.
	xid uint32
	// shot is the window's screenshot: element coordinates are its
	// pixels. Valid() false when there was none.
	shot  geometry.Shot
	nodes []elemNode // nodes[0] is the window
	byID  map[int]int
}

// appIDs are one app's element ids in a session.
type appIDs struct {
	next   int
	byRef  map[string]int
	latest *appState
	// shown is the latest state of each window (by ref), for the diff.
	shown map[string]*appState
}

// elementStore is one session's element ids, by pid.
type elementStore struct {
	mu   sync.Mutex
	gen  int
	apps map[int]*appIDs
}

func (ss *session) elements() *elementStore {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.elems == nil {
		ss.elems = &elementStore{apps: map[int]*appIDs{}}
	}
	return ss.elems
}

// record numbers the nodes of a tree, keeping the ids of elements seen
// before, and makes it the app's latest state; it returns the state and
// the one shown before of the same window (nil for the first).
func (es *elementStore) record(pid int, tree *bridge.A11yTree, xid uint32, shot geometry.Shot) (cur, prev *appState) {
	es.mu.Lock()
	defer es.mu.Unlock()
	ids := es.apps[pid]
	if ids == nil {
		ids = &appIDs{byRef: map[string]int{}, shown: map[string]*appState{}}
		es.apps[pid] = ids
	}
	es.gen++
	st := &appState{gen: es.gen, pid: pid, window: tree.Window, xid: xid, shot: shot, byID: map[int]int{}}
	win := bridge.A11yNode{Ref: tree.Window.Ref, Parent: -1, Role: "window", Name: tree.Window.Title, Bounds: tree.Window.Bounds}
	nodes := tree.Nodes
	// The helper may list the window itself first, or only its contents
	// with parent -1. at maps the helper's indexes to the state's.
	at := map[int]int{}
	first, offset := 0, 1
	if len(nodes) > 0 && nodes[0].Ref == tree.Window.Ref && nodes[0].Parent < 0 {
		win = nodes[0]
		at[0] = 0
		first, offset = 1, 0
	}
	st.nodes = append(st.nodes, elemNode{id: 0, parent: -1, depth: 0, node: win})
	st.byID[0] = 0
	for hi := first; hi < len(nodes); hi++ {
		n := nodes[hi]
		n.Bounds = knownBounds(n.Bounds)
		id, ok := ids.byRef[n.Ref]
		if !ok {
			ids.next++
			id = ids.next
			ids.byRef[n.Ref] = id
		}
		if _, dup := st.byID[id]; dup {
			// The same element listed twice (a toolkit bug): one id, one
			// place.
			continue
		}
		parent := 0
		if pi, ok := at[n.Parent]; ok && n.Parent >= 0 {
			parent = pi
		}
		at[hi] = len(st.nodes)
		st.byID[id] = len(st.nodes)
		st.nodes = append(st.nodes, elemNode{id: id, parent: parent, depth: max(n.Depth+offset, 1), node: n})
	}
	prev = ids.shown[tree.Window.Ref]
	ids.shown[tree.Window.Ref] = st
	ids.latest = st
	return st, prev
}

// latest returns the app's latest state, nil before its first.
func (es *elementStore) latest(pid int) *appState {
	es.mu.Lock()
	defer es.mu.Unlock()
	if ids := es.apps[pid]; ids != nil {
		return ids.latest
	}
	return nil
}

// issued reports whether the session ever gave out id for pid.
func (es *elementStore) issued(pid, id int) bool {
	es.mu.Lock()
	defer es.mu.Unlock()
	ids := es.apps[pid]
	return ids != nil && id >= 0 && id <= ids.next
}

// errAgain ends every refusal of a stale id.
const callAgain = "call get_app_state again and use an id from its result"

// parseElementID reads an element id as the model may write it: "12",
// 12, or "[12]" as the tree shows it.
func parseElementID(raw string) (int, error) {
	s := strings.TrimSpace(raw)
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	id, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || id < 0 {
		return 0, badValue(fmt.Sprintf("%q is not an element id: give the number in square brackets at the start of an element's line in get_app_state, such as \"12\"", raw))
	}
	return id, nil
}

// target is an element an action resolved: the state it is in, its place
// there and its fresh read.
type target struct {
	state *appState
	el    elemNode
	fresh bridge.A11yNode
}

// resolveElement finds id in the app's latest state and reads the element
// afresh, refusing it when it is gone or changed: the action would land
// on something the model has not seen.
func (s *Server) resolveElement(ctx context.Context, sess *session, pid, id int) (*target, error) {
	t, err := recordedElement(sess, pid, id)
	if err != nil {
		return nil, err
	}
	st, el := t.state, t.el
	fresh, err := s.exec.A11yElement(ctx, pid, el.node.Ref)
	if err != nil {
		var be *bridge.Error
		if errors.As(err, &be) && (be.Name == bridge.ErrNameStaleElement || be.Name == "no_such_window") {
			return nil, fmt.Errorf("element %d (%s) is gone since state %d: %s", id, describeNode(el.node), st.gen, callAgain)
		}
		return nil, fmt.Errorf("reading element %d afresh: %w", id, err)
	}
	fresh.Bounds = knownBounds(fresh.Bounds)
	if id == 0 {
		fresh.Bounds = el.node.Bounds // a window's place is the screenshot's
	}
	if why := changedSince(el.node, *fresh, id == 0); why != "" {
		return nil, fmt.Errorf("element %d has changed since state %d (%s): %s", id, st.gen, why, callAgain)
	}
	return &target{state: st, el: el, fresh: *fresh}, nil
}

// recordedElement finds id in the app's latest state without reading it
// afresh: fresh is the node as recorded. Only for an action whose request
// carries the recorded node as its Expect (see expectOf), so that the
// helper makes the staleness check and the action one request.
func recordedElement(sess *session, pid, id int) (*target, error) {
	es := sess.elements()
	st := es.latest(pid)
	if st == nil {
		return nil, fmt.Errorf("there is no state of pid %d yet: call get_app_state with pid %d first, then use element ids from it", pid, pid)
	}
	i, ok := st.byID[id]
	if !ok {
		if es.issued(pid, id) {
			return nil, fmt.Errorf("element %d is from an older state of pid %d and is not in its latest one (state %d): %s", id, pid, st.gen, callAgain)
		}
		return nil, fmt.Errorf("there is no element %d in the latest state of pid %d: %s", id, pid, callAgain)
	}
	el := st.nodes[i]
	return &target{state: st, el: el, fresh: el.node}, nil
}

// expectOf is what the model saw of the element: the helper refuses the
// action, doing nothing, when the element's role, name or bounds differ.
func (t *target) expectOf() *bridge.A11yExpect {
	return &bridge.A11yExpect{Role: t.el.node.Role, Name: t.el.node.Name, Bounds: t.el.node.Bounds}
}

// staleRefusal turns the helper's refusal of a checked action into the
// "call get_app_state again" refusal; other errors pass through.
func (t *target) staleRefusal(err error) error {
	if why, ok := bridge.StaleChange(err); ok {
		return fmt.Errorf("element %d has changed since state %d (%s): %s", t.el.id, t.state.gen, why, callAgain)
	}
	var be *bridge.Error
	if errors.As(err, &be) && (be.Name == bridge.ErrNameStaleElement || be.Name == "no_such_window") {
		return fmt.Errorf("element %d (%s) is gone since state %d: %s", t.el.id, describeNode(t.el.node), t.state.gen, callAgain)
	}
	return err
}

// changedSince says how an element's identity changed: role, name or
// bounds. A window's name (its title) may change without the element
// being another one.
func changedSince(was, now bridge.A11yNode, window bool) string {
	switch {
	case was.Role != now.Role && !window:
		return fmt.Sprintf("its role was %q, now %q", was.Role, now.Role)
	case was.Name != now.Name && !window:
		return fmt.Sprintf("its name was %q, now %q", was.Name, now.Name)
	case !sameBounds(was.Bounds, now.Bounds):
		return fmt.Sprintf("it was at %s, now at %s", fmtBounds(was.Bounds), fmtBounds(now.Bounds))
	}
	return ""
}

// knownBounds drops the place toolkits give elements they do not show
// (GTK: G_MININT32 corners for the contents of closed popovers).
func knownBounds(r *bridge.A11yRect) *bridge.A11yRect {
	if r == nil || r.X <= math.MinInt32/2 || r.Y <= math.MinInt32/2 || r.Width <= 0 || r.Height <= 0 {
		return nil
	}
	return r
}

func sameBounds(a, b *bridge.A11yRect) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

func fmtBounds(r *bridge.A11yRect) string {
	if r == nil {
		return "an unknown place"
	}
	return fmt.Sprintf("%dx%d+%d+%d", r.Width, r.Height, r.X, r.Y)
}

func describeNode(n bridge.A11yNode) string {
	if n.Name == "" {
		return n.Role
	}
	return fmt.Sprintf("%s %q", n.Role, n.Name)
}

// centre is the middle of an element, in the global logical space.
func (t *target) centre() (geometry.Point, error) {
	b := t.fresh.Bounds
	if b == nil || b.Width <= 0 || b.Height <= 0 {
		return geometry.Point{}, fmt.Errorf("element %d (%s) has no place on the screen the toolkit reports, so it cannot be clicked by position; use perform_action with one of its actions, or click coordinates in the screenshot with element_id \"0\"", t.el.id, describeNode(t.fresh))
	}
	return geometry.Point{X: b.X + b.Width/2, Y: b.Y + b.Height/2}, nil
}

// has reports whether list holds name, ignoring case and the spelling
// of spaces ("single line", "single-line", "single_line").
func has(list []string, name string) bool {
	norm := func(s string) string { return strings.NewReplacer("-", " ", "_", " ").Replace(strings.ToLower(s)) }
	return slices.ContainsFunc(list, func(s string) bool { return norm(s) == norm(name) })
}

// exposedAction returns the element's own spelling of one of names.
func exposedAction(n bridge.A11yNode, names ...string) (string, bool) {
	for _, want := range names {
		for _, a := range n.Actions {
			if strings.EqualFold(a, want) {
				return a, true
			}
		}
	}
	return "", false
}

// States the tree leaves out because nearly every element has them; an
// enabled element that lacks "sensitive" is shown as "disabled".
var commonStates = map[string]bool{
	"showing": true, "visible": true, "sensitive": true, "enabled": true, "focusable": true,
	"opaque": true, "selectable": true, "resizable": true, "single line": true, "multi line": true,
	"horizontal": true, "vertical": true, "active": true, "selectable text": true, "has tooltip": true,
}

func shownStates(n bridge.A11yNode) []string {
	var out []string
	for _, s := range n.States {
		if !commonStates[strings.ReplaceAll(s, "-", " ")] {
			out = append(out, s)
		}
	}
	if len(n.Actions) > 0 && !has(n.States, "sensitive") && !has(n.States, "enabled") {
		out = append(out, "disabled")
	}
	return out
}

// line renders one element: id, role, name, value, states, bounds in the
// state's screenshot pixels, actions.
func (st *appState) line(e elemNode) string {
	n := e.node
	var b strings.Builder
	b.WriteString(strings.Repeat("  ", e.depth))
	fmt.Fprintf(&b, "[%d] %s", e.id, n.Role)
	if n.Name != "" {
		fmt.Fprintf(&b, " %q", clip(n.Name, 200))
	}
	if n.Value != nil && *n.Value != n.Name {
		fmt.Fprintf(&b, " value=%q", clip(*n.Value, 400))
	}
	if r := n.Range; r != nil {
		fmt.Fprintf(&b, " range=%s (%s–%s)", fmtNum(r.Current), fmtNum(r.Min), fmtNum(r.Max))
	}
	if n.Description != "" && n.Description != n.Name {
		fmt.Fprintf(&b, " desc=%q", clip(n.Description, 120))
	}
	if ss := shownStates(n); len(ss) > 0 {
		fmt.Fprintf(&b, " {%s}", strings.Join(ss, ", "))
	}
	if r, ok := st.shotRect(n.Bounds); ok {
		fmt.Fprintf(&b, " @(%d,%d %dx%d)", r.X, r.Y, r.Width, r.Height)
	}
	if len(n.Actions) > 0 {
		fmt.Fprintf(&b, " actions=[%s]", strings.Join(n.Actions, ", "))
	}
	return b.String()
}

// shotRect converts element bounds to the state's screenshot pixels.
func (st *appState) shotRect(r *bridge.A11yRect) (geometry.Rect, bool) {
	if r == nil || st.shot.Validate() != nil {
		return geometry.Rect{}, false
	}
	sx := float64(st.shot.Image.Width) / float64(st.shot.Logical.Width)
	sy := float64(st.shot.Image.Height) / float64(st.shot.Logical.Height)
	x0 := math.Floor(float64(r.X-st.shot.Origin.X) * sx)
	y0 := math.Floor(float64(r.Y-st.shot.Origin.Y) * sy)
	return geometry.Rect{X: int(x0), Y: int(y0), Width: int(math.Round(float64(r.Width) * sx)), Height: int(math.Round(float64(r.Height) * sy))}, true
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", "⏎")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// signature is what the diff compares of an element.
func signature(st *appState, e elemNode) string {
	return st.line(elemNode{id: e.id, depth: 0, node: e.node}) + fmt.Sprintf(" parent=%d", st.nodes[max(e.parent, 0)].id)
}

// render writes the whole tree, or the diff from prev.
func (st *appState) render(prev *appState, full bool) (text string, counts map[string]int) {
	var b strings.Builder
	if prev == nil || full {
		for _, e := range st.nodes {
			b.WriteString(st.line(e))
			b.WriteByte('\n')
		}
		return b.String(), map[string]int{"nodes": len(st.nodes)}
	}
	before := map[string]elemNode{}
	for _, e := range prev.nodes {
		before[e.node.Ref] = e
	}
	var added, changed, removed int
	seen := map[string]bool{}
	for _, e := range st.nodes {
		seen[e.node.Ref] = true
		old, ok := before[e.node.Ref]
		switch {
		case !ok:
			added++
			b.WriteString("+ " + strings.TrimLeft(st.line(e), " ") + parentNote(st, e) + "\n")
		case signature(prev, old) != signature(st, e):
			changed++
			b.WriteString("~ " + strings.TrimLeft(st.line(e), " ") + "\n")
			b.WriteString("    was: " + strings.TrimLeft(prev.line(old), " ") + "\n")
		}
	}
	for _, e := range prev.nodes {
		if !seen[e.node.Ref] {
			removed++
			fmt.Fprintf(&b, "- [%d] %s (gone)\n", e.id, describeNode(e.node))
		}
	}
	return b.String(), map[string]int{"nodes": len(st.nodes), "added": added, "changed": changed, "removed": removed}
}

func parentNote(st *appState, e elemNode) string {
	if e.parent < 0 || e.parent >= len(st.nodes) {
		return ""
	}
	return fmt.Sprintf(" (in [%d])", st.nodes[e.parent].id)
}
