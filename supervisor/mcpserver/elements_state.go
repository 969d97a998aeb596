package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// list_apps, get_app_state and launch_app: what runs, and one window's
// state (its tree and screenshot).

func (p *parser) listApps(tool string) (*step, error) {
	return &step{action: Action{Tool: tool}, run: func(ctx context.Context) (*outcome, error) {
		return p.s.listApps(ctx)
	}}, nil
}

type listedApp struct {
	PID     int              `json:"pid"`
	Name    string           `json:"name"`
	Toolkit string           `json:"toolkit,omitempty"`
	Tier    string           `json:"tier"`
	Windows []map[string]any `json:"windows"`
}

func (s *Server) tierOf(app bridge.App) catalog.Tier {
	if s.consent == nil {
		return catalog.TierNone
	}
	return s.consent.Session().Tier(app)
}

func (s *Server) listApps(ctx context.Context) (*outcome, error) {
	wins, err := s.exec.Windows(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("listing windows: %w", err)
	}
	tree, terr := s.exec.A11yApps(ctx)
	byPID := map[int]*listedApp{}
	var order []int
	for _, w := range wins.Windows {
		if w.App.PID == 0 || w.OverrideRedirect {
			continue
		}
		la := byPID[w.App.PID]
		if la == nil {
			la = &listedApp{PID: w.App.PID, Name: appLabel(w.App), Tier: tierName(s.tierOf(w.App))}
			byPID[w.App.PID] = la
			order = append(order, w.App.PID)
		}
		win := map[string]any{"window_id": w.ID, "minimized": w.Minimized, "focused": w.Focused}
		if w.Title != "" {
			win["title"] = w.Title
		}
		la.Windows = append(la.Windows, win)
	}
	note := ""
	switch {
	case terr != nil:
		note = fmt.Sprintf("The accessibility tree is not available (%v); get_app_state will fail, so use screenshot and the coordinate tools.", a11yError(0, terr))
	case !tree.Available:
		note = fmt.Sprintf("The accessibility bus is not available (%s); get_app_state will fail, so use screenshot and the coordinate tools.", tree.Reason)
	default:
		for _, app := range tree.Apps {
			if la := byPID[app.PID]; la != nil {
				la.Toolkit = app.Toolkit
			}
		}
	}
	var b strings.Builder
	out := make([]*listedApp, 0, len(order))
	for _, pid := range order {
		la := byPID[pid]
		out = append(out, la)
		fmt.Fprintf(&b, "pid %d: %s", la.PID, la.Name)
		if la.Toolkit != "" {
			fmt.Fprintf(&b, " (%s)", la.Toolkit)
		}
		if la.Tier == "none" {
			b.WriteString(" — not approved: call request_access for it before using it")
		} else {
			fmt.Fprintf(&b, " — approved at the %s tier", la.Tier)
		}
		for _, w := range la.Windows {
			if t, ok := w["title"].(string); ok {
				fmt.Fprintf(&b, "; window %d %q", w["window_id"], t)
			} else {
				fmt.Fprintf(&b, "; window %d", w["window_id"])
			}
			if w["minimized"] == true {
				b.WriteString(" (minimized)")
			}
			if w["focused"] == true {
				b.WriteString(" (focused)")
			}
		}
		b.WriteByte('\n')
	}
	if len(out) == 0 {
		b.WriteString("No app has a window.\n")
	}
	if note != "" {
		b.WriteString(note + "\n")
	}
	b.WriteString("Call get_app_state with an approved app's pid to see its elements.")
	return &outcome{text: b.String(), data: map[string]any{"apps": out}}, nil
}

func tierName(t catalog.Tier) string {
	if t == catalog.TierNone {
		return "none"
	}
	return t.String()
}

func appLabel(app bridge.App) string {
	if e := catalog.Classify(catalog.IdentityOf(app)); e.Name != "" {
		return e.Name
	}
	for _, s := range []string{app.Name, app.Class, app.Instance, app.DesktopID, app.BundleID} {
		if s != "" {
			return s
		}
	}
	return "an unidentified app"
}

type stateRequest struct {
	pid      int
	window   uint32
	full     bool
	maxDepth int
}

func (p *parser) getAppState(tool string, in *getAppStateArgs) (*step, error) {
	pid, err1 := pidOf(tool, in.PID)
	window, err2 := whole(tool, "windowId", in.WindowID, 0, 0, math.MaxUint32, "the window's id from list_apps")
	depth, err3 := whole(tool, "max_depths", in.MaxDepths, 0, 1, maxMaxDepth, "how deep to read the tree")
	if err := cmp.Or(err1, err2, err3); err != nil {
		return nil, err
	}
	req := stateRequest{pid: pid, window: uint32(window), full: in.DisableDiff, maxDepth: depth}
	return &step{action: Action{Tool: tool, PID: pid}, image: true, run: func(ctx context.Context) (*outcome, error) {
		return p.s.appState(ctx, p.sess, req, "")
	}}, nil
}

// appState reads the window's tree and screenshot, records the state and
// renders it (the diff from the window's previous state unless full).
func (s *Server) appState(ctx context.Context, sess *session, req stateRequest, prefix string) (*outcome, error) {
	depth := req.maxDepth
	if depth == 0 {
		depth = defaultMaxDepth
	}
	// The window the tree will most likely be of is known from the window
	// list, so its screenshot is asked for with the tree and taken while
	// the tree is walked; it is used only if the tree turns out to be of
	// that window.
	wins, err := s.exec.Windows(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("listing windows: %w", err)
	}
	treeReq := bridge.A11yTreeRequest{PID: req.pid, Window: req.window, MaxNodes: defaultMaxNodes, MaxDepth: depth, DeadlineMS: treeDeadlineMS}
	var early *shotPlan
	guess := matchWindow(wins, req.pid, bridge.A11yWindow{Window: req.window})
	if guess != nil {
		if plan, err := s.planShot(ctx, &guess.Bounds); err == nil {
			early = plan
			treeReq.Capture = &plan.req
		}
	}
	tree, err := s.exec.A11yTree(ctx, treeReq)
	if err != nil {
		return nil, a11yError(req.pid, err)
	}
	xw := matchWindow(wins, req.pid, tree.Window)
	var rect *bridge.Rect
	switch {
	case xw != nil:
		r := xw.Bounds
		rect = &r
	case tree.Window.Bounds != nil:
		r := tree.Window.Bounds.Rect()
		rect = &r
	}
	var xid uint32
	if xw != nil {
		xid = xw.ID
	}
	var shot geometry.Shot
	var img *bridge.Capture
	var shotErr error
	withTree := early != nil && xw == guess && tree.CaptureErr == nil && tree.Capture != nil
	if withTree {
		shot, img, shotErr = early.finish(tree.Capture)
	} else {
		shot, img, shotErr = s.windowShot(ctx, rect)
	}
	st, prev := sess.elements().record(req.pid, tree, xid, shot)
	body, counts := st.render(prev, req.full)

	var b strings.Builder
	b.WriteString(prefix)
	fmt.Fprintf(&b, "State %d of pid %d, window %q", st.gen, req.pid, tree.Window.Title)
	if xid != 0 {
		fmt.Fprintf(&b, " (window id %d)", xid)
	}
	fmt.Fprintf(&b, ": %d elements.", len(st.nodes))
	if img != nil {
		fmt.Fprintf(&b, " Bounds @(x,y wxh) are pixels of the attached %dx%d screenshot of the window.", img.Width, img.Height)
	} else if shotErr != nil {
		fmt.Fprintf(&b, " No screenshot: %v.", shotErr)
	}
	if xw != nil && !xw.Focused {
		b.WriteString(" Current get_app_state target window is not the focused window.")
	}
	if tree.Truncated != "" {
		fmt.Fprintf(&b, " The tree was cut by the %s budget (%d elements, depth %d, %d ms): what is not listed was not read; pass max_depths or act on what is shown.",
			map[string]string{"nodes": "element-count", "depth": "depth", "time": "time"}[tree.Truncated], defaultMaxNodes, depth, treeDeadlineMS)
	}
	if prev != nil && !req.full {
		if counts["added"]+counts["changed"]+counts["removed"] == 0 {
			fmt.Fprintf(&b, "\nNothing changed since state %d. Pass disableDiff: true for the whole tree.\n", prev.gen)
		} else {
			fmt.Fprintf(&b, "\nChanges since state %d: %d changed (~), %d added (+), %d gone (-); unchanged elements keep their ids. Pass disableDiff: true for the whole tree.\n",
				prev.gen, counts["changed"], counts["added"], counts["removed"])
		}
	} else {
		b.WriteByte('\n')
	}
	b.WriteString(body)

	data := map[string]any{
		"pid": req.pid, "state": st.gen, "window": map[string]any{"title": tree.Window.Title, "window_id": xid},
		"elements": len(st.nodes), "elapsed_ms": tree.ElapsedMS, "diff": prev != nil && !req.full,
	}
	for k, v := range counts {
		data[k] = v
	}
	if tree.Truncated != "" {
		data["truncated"] = tree.Truncated
	}
	out := &outcome{text: b.String(), data: data}
	if img != nil {
		data["image"] = map[string]any{"width": img.Width, "height": img.Height, "format": img.Format, "screen_rect": img.Source, "with_tree": withTree}
		out.image = s.imageOf(img)
	}
	return out, nil
}

// matchWindow finds the X window an accessible window is: by id, else by
// the client area, else by title, else the app's focused or first window.
func matchWindow(list *bridge.WindowList, pid int, w bridge.A11yWindow) *bridge.Window {
	var mine []*bridge.Window
	for i := range list.Windows {
		x := &list.Windows[i]
		if w.Window != 0 && x.ID == w.Window {
			return x
		}
		if x.App.PID == pid && !x.OverrideRedirect {
			mine = append(mine, x)
		}
	}
	if w.Bounds != nil {
		for _, x := range mine {
			if x.Client == w.Bounds.Rect() {
				return x
			}
		}
	}
	for _, x := range mine {
		if w.Title != "" && x.Title == w.Title {
			return x
		}
	}
	for _, x := range mine {
		if x.Focused {
			return x
		}
	}
	if len(mine) > 0 && w.Window == 0 {
		return mine[0]
	}
	return nil
}

// windowShot captures rect, clipped to the display it is most on and
// scaled to the limits; unapproved apps are masked by the gates' executor.
func (s *Server) windowShot(ctx context.Context, rect *bridge.Rect) (geometry.Shot, *bridge.Capture, error) {
	plan, err := s.planShot(ctx, rect)
	if err != nil {
		return geometry.Shot{}, nil, err
	}
	img, err := s.exec.Capture(ctx, plan.req)
	if err != nil {
		return geometry.Shot{}, nil, fmt.Errorf("capturing the window: %w", err)
	}
	return plan.finish(img)
}

// shotPlan is the capture request for a window's screenshot and the
// display it is taken on.
type shotPlan struct {
	req bridge.CaptureRequest
	on  bridge.Display
}

// planShot is the capture request of windowShot, not yet sent.
func (s *Server) planShot(ctx context.Context, rect *bridge.Rect) (*shotPlan, error) {
	if rect == nil {
		return nil, errors.New("the toolkit reports no place for the window")
	}
	displays, err := s.exec.Displays(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing displays: %w", err)
	}
	var best bridge.Rect
	var on bridge.Display
	for _, d := range displays {
		if r := intersect(*rect, d.Bounds()); r.Width*r.Height > best.Width*best.Height {
			best, on = r, d
		}
	}
	if best.Width <= 0 || best.Height <= 0 {
		return nil, errors.New("the window is not on any display")
	}
	w, h := geometry.ScaledSize(best.Width, best.Height, s.limits)
	req := bridge.CaptureRequest{Rect: &best, Format: s.format}
	if w != best.Width || h != best.Height {
		req.Width, req.Height = w, h
	}
	if s.format == FormatJPEG {
		req.Quality = s.quality
	}
	return &shotPlan{req: req, on: on}, nil
}

// finish checks the capture taken for the plan and places it.
func (p *shotPlan) finish(img *bridge.Capture) (geometry.Shot, *bridge.Capture, error) {
	on := p.on
	shot := geometry.Shot{
		DisplayID: on.ID, DisplayName: on.Name,
		Origin:   geometry.Point{X: img.Source.X, Y: img.Source.Y},
		Logical:  geometry.Size{Width: img.Source.Width, Height: img.Source.Height},
		Physical: geometry.Size{Width: img.Source.Width, Height: img.Source.Height},
		Image:    geometry.Size{Width: img.Width, Height: img.Height},
	}
	if err := shot.Validate(); err != nil {
		return geometry.Shot{}, nil, err
	}
	return shot, img, nil
}

func intersect(a, b bridge.Rect) bridge.Rect {
	x0, y0 := max(a.X, b.X), max(a.Y, b.Y)
	x1, y1 := min(a.X+a.Width, b.X+b.Width), min(a.Y+a.Height, b.Y+b.Height)
	if x1 <= x0 || y1 <= y0 {
		return bridge.Rect{}
	}
	return bridge.Rect{X: x0, Y: y0, Width: x1 - x0, Height: y1 - y0}
}

func (p *parser) launchApp(tool, app string) (*step, error) {
	st, err := p.openApplication(tool, app)
	if err != nil {
		return nil, err
	}
	run := st.run
	st.run = func(ctx context.Context) (*outcome, error) {
		out, err := run(ctx)
		if err != nil {
			return nil, err
		}
		out.text = strings.TrimSuffix(out.text, " Take a screenshot to see it.") + launchedA11yNote(out.data) + fmt.Sprintf(" Call get_app_state with pid %v to see its elements.", out.data["pid"])
		return out, nil
	}
	return st, nil
}
