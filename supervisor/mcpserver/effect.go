package mcpserver

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/effect"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// EffectOptions turn on the effect each input action reports (package
// effect): what changed on screen and among the windows.
type EffectOptions struct {
	// Source tells what changed on screen; nil where nothing can tell.
	Source effect.Source
	// Settle bounds the wait; zero fields take effect.DefaultSettle's.
	Settle effect.Settle
	// Crop attaches an image of just what changed to every action's
	// result, unless the call says otherwise (its "show_change").
	Crop bool
	// Off leaves the effect out altogether (New then ignores the rest).
	Off bool
}

// maxRegions is how many changed regions a result lists; the rest are
// counted.
const maxRegions = 3

// effectWatch follows one action. (The actions run one at a time, so
// Server.ongoing needs no lock.)
type effectWatch struct {
	screen *effect.Watch
	before *bridge.WindowList
	// For an element action: the app's state it acted in and the tree of
	// that window before it.
	pid   int
	state *appState
	tree  *bridge.A11yTree
}

func (s *Server) beginEffect(ctx context.Context, sess *session, a *Action) *effectWatch {
	before, err := s.exec.Windows(ctx, false)
	if err != nil {
		s.log.Debug("listing windows before an action", "err", err)
	}
	w := &effectWatch{before: before}
	if a.PID != 0 {
		w.pid, w.state = a.PID, sess.elements().latest(a.PID)
		var xid uint32
		if w.state != nil {
			xid = w.state.xid
		}
		w.tree = s.readElements(ctx, a.PID, xid)
	}
	w.screen = effect.Begin(ctx, s.effect.Source, s.ongoing, s.tail)
	return w
}

// readElements reads the tree of the app's window xid (its default
// window when 0); nil when it cannot be read.
func (s *Server) readElements(ctx context.Context, pid int, xid uint32) *bridge.A11yTree {
	req := bridge.A11yTreeRequest{PID: pid, Window: xid, MaxNodes: defaultMaxNodes, MaxDepth: defaultMaxDepth, DeadlineMS: treeDeadlineMS}
	tree, err := s.exec.A11yTree(ctx, req)
	if err != nil {
		s.log.Debug("reading an app's elements around an action", "pid", pid, "err", err)
		return nil
	}
	return tree
}

// elementEffect makes an element tool that acts on an app (not one that
// only reads) report its effect, with the accessibility diff.
func elementEffect(spec *toolSpec, st *step) {
	if spec.Destructive && st.action.PID != 0 {
		st.effect = true
	}
}

// hidden says whose windows the model must not see into: the apps the
// screenshots mask.
func (s *Server) hidden(w bridge.Window) bool {
	return s.consent != nil && s.consent.Session().Tier(w.App) == catalog.TierNone
}

// endEffect waits for the action to settle and adds what it changed to
// out: a sentence, "effect" in the data and, when asked, the crop.
func (s *Server) endEffect(ctx context.Context, sess *session, w *effectWatch, out *outcome, crop bool) {
	screen := w.screen.End(ctx, s.settle())
	s.ongoing, s.tail = screen.Ongoing, screen.Tail
	// `make bench` measures the settling defaults by these.
	s.log.Debug("effect settled", "first", screen.First, "last", screen.Last, "gap", screen.Gap, "waited", screen.Waited)
	after, err := s.exec.Windows(ctx, false)
	if err != nil {
		s.log.Debug("listing windows after an action", "err", err)
	}
	win := effect.DiffWindows(w.before, after)
	var words []string
	data := map[string]any{}
	var shown []geometry.Rect
	switch {
	case !screen.Known:
		data["screen"] = "unknown"
		data["why"] = screen.Why
		words = append(words, "what changed on screen is unknown ("+screen.Why+")")
	default:
		shown = s.visible(screen.Changed, w.before, after)
		shot, _ := s.frameFor(ctx, sess)
		regions, text := s.describeRegions(shown, shot)
		data["settled_ms"] = screen.Waited.Milliseconds()
		if len(screen.Ongoing) > 0 {
			// Not listed: they may lie in a window the model must not see.
			data["ongoing_left_out"] = true
		}
		if len(shown) == 0 {
			data["screen"] = "no visible change"
			words = append(words, fmt.Sprintf("no visible change within %d ms", screen.Waited.Milliseconds()))
		} else {
			data["screen"] = "changed"
			data["regions"] = regions
			if len(shown) > maxRegions {
				data["more_regions"] = len(shown) - maxRegions
			}
			if screen.StillChanging {
				data["still_changing"] = true
				text += " (still changing when the wait ended)"
			}
			words = append(words, text)
		}
	}
	if !win.Empty() {
		data["windows"] = s.windowData(win)
		words = append(words, s.windowWords(win))
	}
	if w.tree != nil {
		words = append(words, s.elementsEffect(ctx, w, out, data))
	}
	if out.data == nil {
		out.data = map[string]any{}
	}
	out.data["effect"] = data
	out.text += " Effect: " + strings.Join(words, "; ") + "."
	if crop && len(shown) > 0 && out.image == nil {
		s.attachCrop(ctx, sess, shown, out)
	}
}

// withShowChange records the call's "show_change" on its step.
func withShowChange(st *step, a *args) {
	if c, ok := a.v.(interface{ shown() *bool }); ok {
		st.showChange = c.shown()
	}
}

func (s *Server) settle() effect.Settle {
	st := s.effect.Settle
	if st.Quiet <= 0 {
		st.Quiet = effect.DefaultSettle.Quiet
	}
	if st.Cap <= 0 {
		st.Cap = effect.DefaultSettle.Cap
	}
	return st
}

// visible is changed less whatever shows a window the model must not
// see, before or after the action; merged, largest first.
func (s *Server) visible(changed []geometry.Rect, before, after *bridge.WindowList) []geometry.Rect {
	hide := append(effect.Hidden(before, s.hidden), effect.Hidden(after, s.hidden)...)
	cut := func(rs []geometry.Rect) []geometry.Rect {
		for _, h := range hide {
			rs = effect.Subtract(rs, h)
		}
		return rs
	}
	// Merging may span a hidden area again, so it is cut out once more,
	// and the pieces left are not merged again.
	return effect.Largest(cut(effect.Merge(cut(changed))))
}

// describeRegions gives the largest regions in the model's coordinates
// (the screenshot's; screen pixels when there is none), each with its
// share of the screen.
func (s *Server) describeRegions(rects []geometry.Rect, shot *geometry.Shot) ([]map[string]any, string) {
	var out []map[string]any
	var parts []string
	for i, r := range rects {
		if i == maxRegions {
			break
		}
		box := []float64{float64(r.X), float64(r.Y), float64(r.X + r.Width), float64(r.Y + r.Height)}
		share := 0.0
		if shot != nil {
			x0, y0, _ := shot.FromLogical(s.mode, geometry.Point{X: r.X, Y: r.Y})
			x1, y1, _ := shot.FromLogical(s.mode, geometry.Point{X: r.X + r.Width, Y: r.Y + r.Height})
			box = []float64{x0, y0, x1, y1}
			share = float64(r.Width*r.Height) / float64(shot.Logical.Width*shot.Logical.Height)
		}
		region := map[string]any{"region": box}
		if shot != nil {
			region["share"] = math.Round(share*1000) / 1000
			parts = append(parts, fmt.Sprintf("%s (%s of the screen)", fmtCoord(box), percent(share)))
		} else {
			region["screen_rect"] = r
			parts = append(parts, fmt.Sprintf("%s in screen pixels", fmtCoord(box)))
		}
		out = append(out, region)
	}
	text := fmt.Sprintf("changed region %s", strings.Join(parts, ", "))
	if len(rects) > 1 {
		text = fmt.Sprintf("%d regions changed, largest %s", len(rects), strings.Join(parts, ", "))
	}
	return out, text
}

func percent(share float64) string {
	if share < 0.001 {
		return "<0.1%"
	}
	return fmt.Sprintf("%.1f%%", share*100)
}

// describeWindow names a window, its title left out where the app is not
// approved (as the windows' titles are everywhere).
func (s *Server) describeWindow(w bridge.Window) string {
	if s.hidden(w) {
		return fmt.Sprintf("a window of %s (not approved; title withheld)", effectApp(w.App))
	}
	return fmt.Sprintf("%q of %s", w.Title, effectApp(w.App))
}

func effectApp(a bridge.App) string {
	if a.Name != "" {
		return a.Name
	}
	return "an unnamed app"
}

func (s *Server) windowEntry(w bridge.Window) map[string]any {
	m := map[string]any{"id": w.ID, "app": effectApp(w.App)}
	if !s.hidden(w) {
		m["title"] = w.Title
	}
	return m
}

func (s *Server) windowData(d effect.Windows) map[string]any {
	m := map[string]any{}
	list := func(ws []bridge.Window) []map[string]any {
		var out []map[string]any
		for _, w := range ws {
			out = append(out, s.windowEntry(w))
		}
		return out
	}
	if d.Focus != nil {
		m["focus"] = s.windowEntry(*d.Focus)
	}
	if len(d.Opened) > 0 {
		m["opened"] = list(d.Opened)
	}
	if len(d.Closed) > 0 {
		m["closed"] = list(d.Closed)
	}
	var re []map[string]any
	for _, r := range d.Retitled {
		if s.hidden(r.Window) {
			continue
		}
		e := s.windowEntry(r.Window)
		e["from"] = r.From
		re = append(re, e)
	}
	if len(re) > 0 {
		m["retitled"] = re
	}
	return m
}

func (s *Server) windowWords(d effect.Windows) string {
	var parts []string
	for _, w := range d.Opened {
		parts = append(parts, "opened "+s.describeWindow(w))
	}
	for _, w := range d.Closed {
		parts = append(parts, "closed "+s.describeWindow(w))
	}
	for _, r := range d.Retitled {
		if !s.hidden(r.Window) {
			parts = append(parts, fmt.Sprintf("%q of %s is now titled %q", r.From, effectApp(r.Window.App), r.Window.Title))
		}
	}
	if d.Focus != nil {
		parts = append(parts, "focus moved to "+s.describeWindow(*d.Focus))
	}
	return strings.Join(parts, "; ")
}

// attachCrop adds an image of the changed regions' bounds, at the
// screenshot's scale, taken through the same masked capture as
// screenshots.
func (s *Server) attachCrop(ctx context.Context, sess *session, shown []geometry.Rect, out *outcome) {
	shot, err := s.frameFor(ctx, sess)
	if err != nil {
		return
	}
	box := shown[0]
	for _, r := range shown[1:min(len(shown), maxRegions)] {
		box = union(box, r)
	}
	b := shot.Bounds()
	x0, y0 := max(box.X, b.X), max(box.Y, b.Y)
	x1, y1 := min(box.X+box.Width, b.X+b.Width), min(box.Y+box.Height, b.Y+b.Height)
	if x1 <= x0 || y1 <= y0 {
		return
	}
	rect := bridge.Rect{X: x0, Y: y0, Width: x1 - x0, Height: y1 - y0}
	// A preview: the model keeps the screenshot's whole display in view,
	// so clicks outside the crop stay checked against it.
	req := bridge.CaptureRequest{Rect: &rect, Format: s.format, Preview: true}
	w := max(1, rect.Width*shot.Image.Width/shot.Logical.Width)
	h := max(1, rect.Height*shot.Image.Height/shot.Logical.Height)
	if w != rect.Width || h != rect.Height {
		req.Width, req.Height = w, h
	}
	if s.format == FormatJPEG {
		req.Quality = s.quality
	}
	img, err := s.exec.Capture(ctx, req)
	if err != nil {
		s.log.Debug("capturing what an action changed", "err", err)
		return
	}
	mx0, my0, _ := shot.FromLogical(s.mode, geometry.Point{X: x0, Y: y0})
	mx1, my1, _ := shot.FromLogical(s.mode, geometry.Point{X: x1, Y: y1})
	region := []float64{mx0, my0, mx1, my1}
	out.image = s.imageOf(img)
	out.data["effect"].(map[string]any)["image_region"] = region
	out.text += fmt.Sprintf(" The image shows region %s of the screenshot, at its scale.", fmtCoord(region))
}

func union(a, b geometry.Rect) geometry.Rect {
	x0, y0 := min(a.X, b.X), min(a.Y, b.Y)
	x1, y1 := max(a.X+a.Width, b.X+b.Width), max(a.Y+a.Height, b.Y+b.Height)
	return geometry.Rect{X: x0, Y: y0, Width: x1 - x0, Height: y1 - y0}
}

// elementsEffect reads the acted-on window's tree again and adds what
// changed in it to data; it returns the words for it.
func (s *Server) elementsEffect(ctx context.Context, w *effectWatch, out *outcome, data map[string]any) string {
	xid := w.tree.Window.Window
	if xid == 0 && w.state != nil {
		xid = w.state.xid
	}
	after := s.readElements(ctx, w.pid, xid)
	if after == nil {
		data["elements"] = map[string]any{"unknown": true}
		return "the app's elements could not be read again"
	}
	var ref string
	id, isElement := out.data["element_id"].(int)
	if isElement && w.state != nil {
		if i, ok := w.state.byID[id]; ok && id != 0 {
			ref = w.state.nodes[i].node.Ref
		}
	}
	d := effect.DiffA11y(w.tree, after, ref)
	m := map[string]any{"changed": d.Changed, "added": d.Added, "removed": d.Removed}
	var parts []string
	if d.Target != nil {
		m["target"] = changeData(d.Target)
		parts = append(parts, fmt.Sprintf("element %d %s", id, changeWords(d.Target)))
	} else if ref != "" {
		m["target"] = nil
		parts = append(parts, fmt.Sprintf("element %d unchanged", id))
	}
	if d.Window != nil {
		m["window"] = changeData(d.Window)
		parts = append(parts, "the window "+changeWords(d.Window))
	}
	if d.Changed+d.Added+d.Removed > 0 {
		parts = append(parts, fmt.Sprintf("%d other elements changed, %d added, %d removed", d.Changed, d.Added, d.Removed))
	}
	data["elements"] = m
	if len(parts) == 0 {
		return "no change among the app's elements"
	}
	return strings.Join(parts, ", ")
}

func changeData(c *effect.Change) map[string]any {
	m := map[string]any{"role": c.Role, "name": c.Name}
	if c.Gone {
		m["gone"] = true
	}
	if c.NameTo != nil {
		m["name_to"] = *c.NameTo
	}
	if c.ValueFrom != nil || c.ValueTo != nil {
		m["value_from"], m["value_to"] = c.ValueFrom, c.ValueTo
	}
	if len(c.StatesOn) > 0 {
		m["states_on"] = c.StatesOn
	}
	if len(c.StatesOff) > 0 {
		m["states_off"] = c.StatesOff
	}
	return m
}

func changeWords(c *effect.Change) string {
	what := fmt.Sprintf("(%s %q)", c.Role, c.Name)
	if c.Gone {
		return what + " is gone"
	}
	var parts []string
	if c.NameTo != nil {
		parts = append(parts, fmt.Sprintf("is now named %q", *c.NameTo))
	}
	if c.ValueFrom != nil || c.ValueTo != nil {
		str := func(p *string) string {
			if p == nil {
				return "none"
			}
			return strconv.Quote(clip(*p, 80))
		}
		parts = append(parts, fmt.Sprintf("value %s → %s", str(c.ValueFrom), str(c.ValueTo)))
	}
	for _, st := range c.StatesOn {
		parts = append(parts, "+"+st)
	}
	for _, st := range c.StatesOff {
		parts = append(parts, "-"+st)
	}
	return what + " " + strings.Join(parts, " ")
}
