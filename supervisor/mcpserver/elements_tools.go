package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/input"
)

// wait_for's bounds.
const (
	defaultWaitTimeout = 10.0
	maxWaitTimeout     = 120.0
	waitPoll           = 100 * time.Millisecond
)

// The element tools' arguments, with seed 002's names and shapes: its
// numbers are "number" in the schemas, and each tool reads them as whole
// numbers where it needs them.
type (
	// appPID names the app; its description is the same in every tool.
	appPID struct {
		PID float64 `json:"pid" jsonschema:"The app's process id, from list_apps."`
	}
	getAppStateArgs struct {
		appPID
		WindowID    float64 `json:"windowId,omitempty" jsonschema:"The window to read (its id from list_apps); default the app's active or first window."`
		DisableDiff bool    `json:"disableDiff,omitempty" jsonschema:"Return the whole tree instead of what changed since the last state of the window."`
		// The default is defaultMaxDepth.
		MaxDepths float64 `json:"max_depths,omitempty" jsonschema:"How deep to read the tree (default 60); only to limit an oversized tree."`
	}
	elemClickArgs struct {
		appPID
		ElementID  string      `json:"element_id" jsonschema:"The element to click, from the latest get_app_state; with x and y, the window's id (\"0\")."`
		X          float64     `json:"x,omitempty" jsonschema:"With y: where to click, in pixels of the latest get_app_state screenshot."`
		Y          float64     `json:"y,omitempty" jsonschema:"With x: where to click."`
		Button     mouseButton `json:"button,omitempty" jsonschema:"The mouse button (default left)."`
		ClickCount float64     `json:"clickCount,omitempty" jsonschema:"1 clicks (default), 2 double-clicks, 3 triple-clicks, 0 hovers without clicking."`
	}
	elemScrollArgs struct {
		appPID
		ElementID string    `json:"element_id" jsonschema:"The element to scroll: prefer a visible item inside the content. With x and y, the id of the window (\"0\")."`
		X         float64   `json:"x,omitempty" jsonschema:"With y: where to scroll, in pixels of the latest get_app_state screenshot, instead of at the element."`
		Y         float64   `json:"y,omitempty" jsonschema:"With x: where to scroll."`
		Direction direction `json:"direction,omitempty" jsonschema:"Which way to scroll (default down)."`
		Pages     float64   `json:"pages,omitempty" jsonschema:"How many mouse-wheel notches to scroll (default 1)."`
	}
	// scrollEitherArgs is scroll when both families are offered: the
	// coordinate form or the element form, neither required as a whole.
	scrollEitherArgs struct {
		scrollArgs
		elemScrollArgs
	}
	elemDragArgs struct {
		appPID
		ElementID string  `json:"element_id" jsonschema:"The window's element id (\"0\")."`
		FromX     float64 `json:"fromX,omitempty" jsonschema:"Where the drag starts."`
		FromY     float64 `json:"fromY,omitempty" jsonschema:"Where the drag starts."`
		ToX       float64 `json:"toX,omitempty" jsonschema:"Where the drag ends."`
		ToY       float64 `json:"toY,omitempty" jsonschema:"Where the drag ends."`
	}
	typeTextArgs struct {
		appPID
		Text      string `json:"text" jsonschema:"The text to type."`
		ElementID string `json:"element_id,omitempty" jsonschema:"The text element to type into; omit to type into the focused element."`
	}
	pressKeyArgs struct {
		appPID
		Key       string   `json:"key" jsonschema:"The key to press."`
		Modifiers keyNames `json:"modifiers,omitempty" jsonschema:"Modifier keys held: ctrl, shift, alt, super/cmd."`
		ElementID string   `json:"element_id,omitempty" jsonschema:"An element to focus first."`
	}
	performActionArgs struct {
		appPID
		ElementID string `json:"element_id,omitempty" jsonschema:"The element, from the latest get_app_state."`
		Action    string `json:"action" jsonschema:"The action's name exactly as listed."`
	}
	setValueArgs struct {
		appPID
		ElementID string `json:"element_id,omitempty" jsonschema:"The element, from the latest get_app_state."`
		Value     any    `json:"value" jsonschema:"The value: boolean, number, string or {horizontal_scroll_percent, vertical_scroll_percent}."`
	}
	waitForArgs struct {
		PID         float64 `json:"pid,omitempty" jsonschema:"The app's process id, from list_apps."`
		Role        string  `json:"role,omitempty" jsonschema:"The element's role, such as \"push button\" or \"dialog\"."`
		Name        string  `json:"name,omitempty" jsonschema:"A substring of the element's name (case does not matter)."`
		State       string  `json:"state,omitempty" jsonschema:"A state the element has, such as \"checked\", \"busy\" or \"showing\"."`
		Gone        bool    `json:"gone,omitempty" jsonschema:"Wait until no element matches."`
		WindowTitle string  `json:"window_title,omitempty" jsonschema:"Wait for a window whose title contains this."`
		Region      region  `json:"region,omitzero" jsonschema:"[x0, y0, x1, y1] in pixels of the latest get_app_state screenshot."`
		StableMS    float64 `json:"stable_ms,omitempty" jsonschema:"Wait until the region has not changed for this many milliseconds."`
		Timeout     float64 `json:"timeout,omitempty" jsonschema:"How long to wait at most, in seconds."`
	}
	mouseButton string   // left, right or middle
	keyNames    []string // never null
)

func init() {
	argTypes[reflect.TypeFor[mouseButton]()] = &jsonschema.Schema{Type: "string", Enum: []any{"left", "right", "middle"}}
	argTypes[reflect.TypeFor[keyNames]()] = &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}}
	register(
		&Tool{
			Name:  "list_apps",
			Title: "List running apps",
			Description: "List the running applications with their pid, name, windows and whether each is approved for this session and at which tier " +
				"(read: its state may be read; click: plain clicks and scrolling; full: everything). Call it first to find the pid of the app to use.",
			ReadOnly: true, Idempotent: true,
			Families: elementFamilies,
			Gate:     looking,
			Parse:    func(p *parser, a *args) (*step, error) { return p.listApps(a) },
		},
		&Tool{
			Name:  "get_app_state",
			Title: "Get an app's state",
			Description: "Return the accessibility tree of a window of the app (pid) as text, one element per line: [id] role \"name\" value {states} @(x,y wxh) actions=[…], " +
				"with the bounds in pixels of the attached screenshot of that window; other apps are masked in it. " +
				"After the first state of a window only what changed since the previous one is listed (+ added, ~ changed, - gone); the ids of unchanged elements still hold. " +
				"disableDiff returns the whole tree. windowId picks a window (its X window id, as list_apps shows it); max_depths limits an oversized tree. " +
				"Call it again after acting: an id is good only while its element is in the latest state, unchanged.",
			Args:     getAppStateArgs{},
			ReadOnly: true,
			Families: elementFamilies,
			Gate:     readApp("reading its accessibility tree"),
			Parse:    func(p *parser, a *args) (*step, error) { return p.getAppState(a) },
		},
		&Tool{
			Name:        "launch_app",
			Title:       "Launch an app",
			Description: "Launch an installed application by its desktop-entry id (such as \"org.gnome.Calculator\") or name, wait until its window appears, and report its pid.",
			Args:        openApplicationArgs{},
			OpenWorld:   true,
			Families:    elementFamilies,
			Gate:        func(*Action) GateKind { return GateKind{Input: true, Launch: true} },
			Parse:       func(p *parser, a *args) (*step, error) { return p.launchApp(a) },
		},
		&Tool{
			Name:  "click",
			Title: "Click an element",
			Description: "Click an element by element_id. A plain left click on an element that exposes a press action runs that action through the accessibility API, " +
				"in the background: the pointer does not move and no window is raised or focused. Otherwise the pointer clicks the element's centre. " +
				"clickCount 2 double-clicks, 3 triple-clicks, 0 hovers. With x and y (pixels of the latest get_app_state screenshot) it clicks there instead; pass the window's element_id (\"0\") then. The result says which way it ran.",
			Args:        elemClickArgs{},
			Destructive: true, OpenWorld: true,
			Families: elementFamilies,
			Gate:     elementClickGate,
			Parse:    func(p *parser, a *args) (*step, error) { return p.elemClick(a) },
		},
		&Tool{
			Name:  "scroll",
			Title: "Scroll",
			Description: "Scroll the content under an element by pages mouse-wheel notches in direction, with the pointer over the element's centre; " +
				"with x and y (pixels of the latest get_app_state screenshot), there instead, passing the window's element_id (\"0\").",
			Args:        elemScrollArgs{},
			Destructive: true, OpenWorld: true,
			Families: []string{ToolsElements},
			Gate:     scrollGate,
			Parse:    func(p *parser, a *args) (*step, error) { return p.elemScroll(a) },
		},
		&Tool{
			Name:  "scroll",
			Title: "Scroll",
			Description: scrollDescription + " Or, the element form: pid and element_id (from get_app_state) with direction and pages scroll over that element; " +
				"x and y then are pixels of the latest get_app_state screenshot. Give one form's arguments, not both.",
			Args:        scrollEitherArgs{},
			Destructive: true, OpenWorld: true, Batchable: true,
			Families: []string{ToolsAll},
			Gate:     scrollGate,
			Schema:   func(s *Server, schema map[string]any) { delete(schema, "required") },
			Parse:    func(p *parser, a *args) (*step, error) { return p.scrollEither(a) },
		},
		&Tool{
			Name:  "drag",
			Title: "Drag in a window",
			Description: "Press the left button at (fromX, fromY), move to (toX, toY) and release it, all in pixels of the latest get_app_state screenshot of the window; " +
				"element_id is the window's id (\"0\").",
			Args:        elemDragArgs{},
			Destructive: true, OpenWorld: true,
			Families: elementFamilies,
			Gate: func(*Action) GateKind {
				return GateKind{Input: true, PointTier: catalog.TierFull, PIDTier: catalog.TierFull, What: "dragging", CheckPixels: true}
			},
			Parse: func(p *parser, a *args) (*step, error) { return p.elemDrag(a) },
		},
		&Tool{
			Name:  "type_text",
			Title: "Type text",
			Description: "Type text. With element_id of a text element it is inserted there through the accessibility API, in the background; " +
				"without, it is typed into the app's focused element (its window must have the keyboard focus). Prefer it to set_value for entering text.",
			Args:        typeTextArgs{},
			Destructive: true, OpenWorld: true,
			Families: elementFamilies,
			// Through the accessibility API the text goes to the element
			// only; typed, it goes to the focused window, like type.
			Gate: func(a *Action) GateKind {
				return GateKind{Input: true, Keys: !a.Background, PIDTier: catalog.TierFull, What: "typing"}
			},
			Parse: func(p *parser, a *args) (*step, error) { return p.elemTypeText(a) },
		},
		&Tool{
			Name:  "press_key",
			Title: "Press a key",
			Description: "Press a key, with modifiers held, in the app's focused window (it must have the keyboard focus; element_id first moves the focus to that element inside the app). " +
				"key is one key name: \"a\", \"return\", \"tab\", \"escape\", \"up\", \"home\", \"pagedown\", \"f5\", \"0\"…; do not write combinations into it: " +
				"for ctrl+c pass key \"c\" and modifiers [\"ctrl\"]. Modifiers: ctrl, shift, alt, super (cmd is the Super key on Linux; copy and paste there are ctrl).",
			Args:        pressKeyArgs{},
			Destructive: true, OpenWorld: true,
			Families: elementFamilies,
			Gate: func(*Action) GateKind {
				return GateKind{Input: true, Keys: true, PIDTier: catalog.TierFull, What: "pressing keys"}
			},
			Parse: func(p *parser, a *args) (*step, error) { return p.elemPressKey(a) },
		},
		&Tool{
			Name:  "perform_action",
			Title: "Perform an element's action",
			Description: "Invoke an accessibility action the element exposes (its actions=[…] in get_app_state), such as expanding a row, showing a menu or cancelling, " +
				"through the accessibility API in the background. Only exposed actions run; do not guess names. element_id defaults to the window.",
			Args:        performActionArgs{},
			Destructive: true, OpenWorld: true,
			Families: elementFamilies,
			Gate:     performActionGate,
			Parse:    func(p *parser, a *args) (*step, error) { return p.performAction(a) },
		},
		&Tool{
			Name:  "set_value",
			Title: "Set an element's value",
			Description: "Set an element's value through the accessibility API, in the background: a boolean checks or unchecks a check box, radio button or switch; " +
				"a number sets a slider or spin button (within its range); a string \"expanded\" or \"collapsed\" expands or collapses; " +
				"on the window (element_id \"0\") \"normal\", \"maximized\", \"minimized\" or \"fullscreen\" sets the window's state through the window manager; " +
				"any other string replaces a text element's whole text (newlines included); an object {horizontal_scroll_percent, vertical_scroll_percent} scrolls a scrolled view. " +
				"Prefer type_text for entering text and click for pressing things.",
			Args:        setValueArgs{},
			Destructive: true, OpenWorld: true,
			Families: elementFamilies,
			Gate: func(*Action) GateKind {
				return GateKind{Input: true, PIDTier: catalog.TierFull, What: "setting a value"}
			},
			Parse: func(p *parser, a *args) (*step, error) { return p.setValue(a) },
		},
		// wait_for is offered with all the tools; it is not one of seed
		// 002's.
		&Tool{
			Name:  "wait_for",
			Title: "Wait for a change",
			Description: "Wait, instead of sleeping, until: an element matching role, name (a substring) and state appears in the app's tree (gone: true — until none matches); " +
				"or a window whose title contains window_title appears; or the region [x0, y0, x1, y1] of the latest get_app_state screenshot (default the whole window) has not changed for stable_ms. " +
				fmt.Sprintf("timeout is in seconds (default %g, at most %g). Returns what matched and a fresh state of the app.", defaultWaitTimeout, maxWaitTimeout),
			Args:     waitForArgs{},
			ReadOnly: true,
			Families: []string{ToolsAll},
			Gate:     readApp("waiting on its accessibility tree"),
			Parse:    func(p *parser, a *args) (*step, error) { return p.waitFor(a) },
		},
	)
}

// readApp: an element tool that only reads the app.
func readApp(what string) func(*Action) GateKind {
	return func(*Action) GateKind { return GateKind{PIDTier: catalog.TierRead, What: what} }
}

// elementClickGate: a left click (1–3) needs the click tier, a hover the
// read tier (like mouse_move), right and middle clicks the full tier. The
// coordinate path (an action with a Target) is also held to the tier at
// its point and to the pixels of the latest state's screenshot.
func elementClickGate(a *Action) GateKind {
	switch {
	case a.Button == ButtonRight || a.Button == ButtonMiddle:
		return GateKind{Input: true, PointTier: catalog.TierFull, PIDTier: catalog.TierFull, What: "a " + string(a.Button) + " click", CheckPixels: true}
	case a.Count == 0:
		return GateKind{Input: true, PointTier: catalog.TierRead, PIDTier: catalog.TierRead, What: "moving the pointer", BareOK: true}
	}
	return GateKind{Input: true, PointTier: catalog.TierClick, PIDTier: catalog.TierClick, What: "a left click", CheckPixels: true}
}

// clickActions are the accessibility actions that do what a left click
// on the element does: perform_action with one of them needs the click
// tier; any other action (paste, delete, a toolkit's custom verbs) may
// edit, so it needs the full tier. An allowlist, so that an action name
// deskhand does not know is judged the strict way.
var clickActions = map[string]bool{
	"click": true, "press": true, "activate": true, "toggle": true, "jump": true,
	"expand or contract": true, "expand": true, "collapse": true, "open": true,
	"show menu": true, "showmenu": true, "select": true, "check": true, "uncheck": true,
}

func performActionGate(a *Action) GateKind {
	tier := catalog.TierFull
	if clickActions[strings.ToLower(strings.TrimSpace(a.Op))] {
		tier = catalog.TierClick
	}
	return GateKind{Input: true, PIDTier: tier, What: fmt.Sprintf("the %q action", a.Op)}
}

// scrollEither is scroll when both families are offered: the element
// form when pid or element_id is given, else the coordinate form; an
// argument of the other form is refused.
func (p *parser) scrollEither(a *args) (*step, error) {
	elem := a.has("pid") || a.has("element_id")
	// show_change belongs to both (the element form ignores it).
	either := append(argNames(elemScrollArgs{}), argNames(showChange{})...)
	coordForm, elemForm := argNames(scrollArgs{}), argNames(elemScrollArgs{})
	for _, f := range coordForm {
		if elem && a.has(f) && !slices.Contains(either, f) {
			return nil, fmt.Errorf("scroll: %q belongs to the coordinate form and pid/element_id to the element form; give one form's arguments", f)
		}
	}
	if elem {
		return p.elemScroll(a)
	}
	for _, f := range elemForm {
		if a.has(f) && !slices.Contains(coordForm, f) {
			return nil, fmt.Errorf("scroll: %q belongs to the element form, which needs pid and element_id; without them give coordinate and scroll_direction", f)
		}
	}
	return p.scroll(a)
}

// integer reads a whole-number field in [lo, hi].
func (a *args) integer(name string, required bool, lo, hi int, what string) (int, bool, error) {
	v, ok, err := a.number(name, required, what)
	if err != nil || !ok {
		return 0, ok, err
	}
	if v != math.Trunc(v) || v < float64(lo) || v > float64(hi) {
		return 0, false, fmt.Errorf("%s: %q is %v: give %s, a whole number from %d to %d", a.tool, name, v, what, lo, hi)
	}
	return int(v), true, nil
}

func (a *args) boolean(name string) (bool, error) {
	if !a.has(name) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(a.fields[name], &b); err != nil {
		return false, fmt.Errorf("%s: %q must be true or false, got %s", a.tool, name, abbreviate(a.fields[name]))
	}
	return b, nil
}

func (a *args) pid() (int, error) {
	pid, _, err := a.integer("pid", true, 1, math.MaxInt32, "the app's process id from list_apps")
	return pid, err
}

// argReader reads an element tool's arguments in order and keeps the
// first error, so that a tool reads all its fields and checks once (the
// way bufio.Scanner reports its error at the end).
type argReader struct {
	*args
	err error
}

// check keeps err if it is the first.
func (r *argReader) check(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *argReader) text(name string, required bool, maxBytes int, what string) string {
	s, _, err := r.str(name, required, maxBytes, what)
	r.check(err)
	return s
}

// whole reads an optional whole number in [lo, hi], def when absent.
func (r *argReader) whole(name string, def, lo, hi int, what string) int {
	v, ok, err := r.integer(name, false, lo, hi, what)
	r.check(err)
	if !ok {
		return def
	}
	return v
}

func (r *argReader) flag(name string) bool {
	b, err := r.boolean(name)
	r.check(err)
	return b
}

// choice reads a string field that must be one of options (in any case);
// def when absent.
func (r *argReader) choice(name, def string, options ...string) string {
	what := strings.Join(quoteAll(options), ", ")
	s, ok, err := r.str(name, false, 16, "one of "+what)
	if v := strings.ToLower(strings.TrimSpace(s)); err != nil || !ok || slices.Contains(options, v) {
		r.check(err)
		return cmp.Or(v, def)
	}
	r.check(fmt.Errorf("%s: %s %q is not one of %s", r.tool, name, s, what))
	return def
}

// elemRef is the app an element tool names by pid and, when hasID, the
// element it names by element_id.
type elemRef struct {
	pid   int
	id    int
	hasID bool
}

// What ref does without element_id: idRequired refuses, idOptional names
// no element; an id >= 0 is the default.
const (
	idRequired = -1
	idOptional = -2
)

// ref reads pid and element_id, which may be a string or a number.
func (r *argReader) ref(def int) elemRef {
	pid, err := r.pid()
	r.check(err)
	ref := elemRef{pid: pid, id: def, hasID: def >= 0}
	switch {
	case r.has("element_id"):
		raw := r.fields["element_id"]
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(bytes.TrimSpace(raw))
		}
		id, err := parseElementID(s)
		if err != nil {
			r.check(fmt.Errorf("%s: %w", r.tool, err))
		}
		ref.id, ref.hasID = id, true
	case def == idRequired:
		r.check(r.missing("element_id", "an element id from get_app_state"))
	}
	return ref
}

// shotXY is a point given in pixels of the latest get_app_state
// screenshot; ok false when it was not given.
type shotXY struct {
	x, y float64
	ok   bool
}

// xy reads the optional point (xn, yn): both or neither.
func (r *argReader) xy(xn, yn string) shotXY {
	const what = "pixels of the latest get_app_state screenshot"
	x, okx, err := r.number(xn, false, what)
	r.check(err)
	y, oky, err := r.number(yn, false, what)
	r.check(err)
	if okx != oky {
		r.check(fmt.Errorf("%s: give both %q and %q, or neither", r.tool, xn, yn))
	}
	return shotXY{x, y, okx && oky}
}

// on converts the point to the global logical space through the state's
// screenshot.
func (q shotXY) on(st *appState) (geometry.Point, error) {
	if st.shot.Validate() != nil {
		return geometry.Point{}, errors.New("the latest get_app_state of this app has no screenshot, so coordinates cannot be placed: click by element id instead")
	}
	return st.shot.ToLogical(geometry.ModePixels, q.x, q.y)
}

func (q shotXY) String() string {
	return fmt.Sprintf("[%s, %s] in the screenshot of the window", fmtNum(q.x), fmtNum(q.y))
}

// a11yError turns a helper error into what the model should do.
func a11yError(pid int, err error) error {
	var be *bridge.Error
	if errors.As(err, &be) {
		switch be.Name {
		case bridge.ErrNameA11yUnavailable:
			return fmt.Errorf("the accessibility tree cannot be read on this desktop: %v. Use screenshot and the coordinate tools instead", be)
		case "no_such_window":
			return fmt.Errorf("pid %d has no such window (%v): call list_apps for its windows", pid, be)
		}
	}
	return err
}

// --- list_apps, get_app_state, launch_app ---

func (p *parser) listApps(a *args) (*step, error) {
	return &step{action: Action{Tool: a.tool}, run: func(ctx context.Context) (*outcome, error) {
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

func (p *parser) getAppState(a *args) (*step, error) {
	in := &argReader{args: a}
	pid, err := a.pid()
	in.check(err)
	req := stateRequest{
		pid:      pid,
		window:   uint32(in.whole("windowId", 0, 0, math.MaxUint32, "the window's id from list_apps")),
		full:     in.flag("disableDiff"),
		maxDepth: in.whole("max_depths", 0, 1, maxMaxDepth, "how deep to read the tree"),
	}
	if in.err != nil {
		return nil, in.err
	}
	return &step{action: Action{Tool: a.tool, PID: pid}, image: true, run: func(ctx context.Context) (*outcome, error) {
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

func (p *parser) launchApp(a *args) (*step, error) {
	st, err := p.openApplication(a)
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

// --- actions ---

// elemOp is one element action, in the order it runs: the element its
// ref names is resolved (read afresh and refused when stale), plan fills
// in what the gates judge, the gates check the action, and run acts and
// says what it did. t is nil when ref names no element.
type elemOp struct {
	act Action
	ref elemRef
	// quick, when set, is first shown the element as recorded: when it
	// returns true the action goes ahead without a fresh read, because
	// its request carries the recorded element as Expect and the helper
	// checks and acts in one request.
	quick func(t *target, act *Action) bool
	plan  func(ctx context.Context, t *target, act *Action) error
	run   func(ctx context.Context, t *target, act Action) (*outcome, error)
}

func (p *parser) elemStep(op elemOp) *step {
	op.act.PID = op.ref.pid
	st := &step{action: op.act}
	var t *target
	st.resolve = func(ctx context.Context, act *Action) (err error) {
		r := op.ref
		switch {
		case !r.hasID:
		case op.quick != nil:
			if t, err = recordedElement(p.sess, r.pid, r.id); err != nil || op.quick(t, act) {
				return err
			}
			fallthrough
		default:
			if t, err = p.s.resolveElement(ctx, p.sess, r.pid, r.id); err != nil {
				return err
			}
		}
		return op.plan(ctx, t, act)
	}
	st.run = func(ctx context.Context) (*outcome, error) { return op.run(ctx, t, st.action) }
	return st
}

// a11yAct asks the helper to do req on t's element (or on req.Ref). A
// request that carries Expect is refused as stale when the element
// changed.
func (p *parser) a11yAct(ctx context.Context, t *target, req bridge.A11yActRequest) error {
	req.PID = t.state.pid
	if req.Ref == "" {
		req.Ref = t.fresh.Ref
	}
	err := p.s.exec.A11yAct(ctx, req)
	if err != nil && req.Expect != nil {
		err = t.staleRefusal(err)
	}
	if err != nil {
		err = a11yError(req.PID, err)
	}
	return err
}

// ran says how an element action ran, for its result.
func ran(background bool) (string, string) {
	if background {
		return "through the accessibility API, in the background: the pointer did not move and no window was raised or focused", "accessibility"
	}
	return "with synthetic input", "input"
}

const seeResult = " Call get_app_state to see the result."

func (t *target) desc() string { return fmt.Sprintf("element %d (%s)", t.el.id, describeNode(t.fresh)) }

// aim points a pointer action at the element: at at, if given, else at
// the element's centre.
func (t *target) aim(tool string, at shotXY, act *Action) error {
	on := t.centre
	if at.ok {
		on = func() (geometry.Point, error) { return at.on(t.state) }
	}
	pt, err := on()
	if err != nil {
		return fmt.Errorf("%s: %w", tool, err)
	}
	act.Target = &pt
	return nil
}

// pressAction picks the action a plain left click on the element runs
// through the accessibility API, if it exposes one.
func pressAction(t *target, act *Action) bool {
	name, ok := exposedAction(t.fresh, "click", "press", "activate", "toggle", "jump")
	if ok {
		act.Background, act.Op = true, name
	}
	return ok
}

func (p *parser) elemClick(a *args) (*step, error) {
	in := &argReader{args: a}
	r, at := in.ref(idRequired), in.xy("x", "y")
	b := in.choice("button", "left", "left", "right", "middle")
	count := in.whole("clickCount", 1, 0, 3, "0 to hover, 1–3 clicks")
	if in.err != nil {
		return nil, in.err
	}
	btn := Button(b)
	plain := btn == ButtonLeft && count == 1 && !at.ok
	return p.elemStep(elemOp{
		act: Action{Tool: a.tool, Button: btn, Count: count},
		ref: r,
		quick: func(t *target, act *Action) bool {
			return plain && r.id != 0 && pressAction(t, act)
		},
		plan: func(ctx context.Context, t *target, act *Action) error {
			if plain && pressAction(t, act) {
				return nil
			}
			return t.aim(a.tool, at, act)
		},
		run: func(ctx context.Context, t *target, act Action) (*outcome, error) {
			how, path := ran(act.Background)
			data := map[string]any{"element_id": r.id, "path": path}
			what := t.desc()
			if at.ok {
				what = at.String()
			}
			switch {
			case act.Background:
				if err := p.a11yAct(ctx, t, bridge.A11yActRequest{Op: "action", Action: act.Op, Expect: t.expectOf()}); err != nil {
					return nil, err
				}
				data["action"] = act.Op
				return &outcome{text: fmt.Sprintf("Clicked %s %s (its %q action).", what, how, act.Op) + seeResult, data: data}, nil
			case count == 0:
				if err := p.s.exec.MoveMouse(ctx, *act.Target); err != nil {
					return nil, err
				}
				data["screen_point"] = *act.Target
				return &outcome{text: fmt.Sprintf("Moved the pointer over %s %s.", what, how), data: data}, nil
			}
			if err := p.s.exec.Click(ctx, *act.Target, btn, count, ""); err != nil {
				return nil, err
			}
			data["screen_point"] = *act.Target
			verb := map[int]string{1: "Clicked", 2: "Double-clicked", 3: "Triple-clicked"}[count]
			if btn != ButtonLeft {
				verb = strings.ToUpper(b[:1]) + b[1:] + "-clicked"
			}
			return &outcome{text: fmt.Sprintf("%s %s %s, at screen point (%d, %d).", verb, what, how, act.Target.X, act.Target.Y) + seeResult, data: data}, nil
		},
	}), nil
}

func (p *parser) elemScroll(a *args) (*step, error) {
	a.tool = "scroll"
	in := &argReader{args: a}
	r, at := in.ref(idRequired), in.xy("x", "y")
	dir := in.choice("direction", "down", "up", "down", "left", "right")
	v, ok, err := a.number("pages", false, "mouse-wheel notches")
	in.check(err)
	if ok && (v <= 0 || v > maxScrollAmount) {
		in.check(fmt.Errorf("scroll: pages %v is out of range: give notches from 1 to %d", v, maxScrollAmount))
	}
	if in.err != nil {
		return nil, in.err
	}
	pages := 1
	if ok {
		pages = max(1, int(math.Round(v)))
	}
	return p.elemStep(elemOp{
		act: Action{Tool: a.tool},
		ref: r,
		plan: func(ctx context.Context, t *target, act *Action) error {
			return t.aim(a.tool, at, act)
		},
		run: func(ctx context.Context, t *target, act Action) (*outcome, error) {
			pt := *act.Target
			if err := p.s.exec.Scroll(ctx, pt, dir, pages, ""); err != nil {
				return nil, err
			}
			return &outcome{
				text: fmt.Sprintf("Scrolled %s by %d at screen point (%d, %d) with synthetic input.", dir, pages, pt.X, pt.Y) + seeResult,
				data: map[string]any{"element_id": r.id, "path": "input", "screen_point": pt, "direction": dir, "pages": pages},
			}, nil
		},
	}), nil
}

func (p *parser) elemDrag(a *args) (*step, error) {
	in := &argReader{args: a}
	r, fromXY, toXY := in.ref(idRequired), in.xy("fromX", "fromY"), in.xy("toX", "toY")
	if !fromXY.ok || !toXY.ok {
		in.check(fmt.Errorf("%s needs fromX, fromY, toX and toY: pixels of the latest get_app_state screenshot", a.tool))
	}
	if in.err != nil {
		return nil, in.err
	}
	return p.elemStep(elemOp{
		act: Action{Tool: a.tool},
		ref: r,
		plan: func(ctx context.Context, t *target, act *Action) error {
			from, err := fromXY.on(t.state)
			if err != nil {
				return fmt.Errorf("%s: from: %w", a.tool, err)
			}
			to, err := toXY.on(t.state)
			if err != nil {
				return fmt.Errorf("%s: to: %w", a.tool, err)
			}
			act.From, act.Target = &from, &to
			return nil
		},
		run: func(ctx context.Context, t *target, act Action) (*outcome, error) {
			from, to := *act.From, *act.Target
			if err := p.s.exec.Drag(ctx, from, to, ""); err != nil {
				return nil, err
			}
			return &outcome{
				text: fmt.Sprintf("Dragged from screen point (%d, %d) to (%d, %d) with synthetic input.", from.X, from.Y, to.X, to.Y) + seeResult,
				data: map[string]any{"path": "input", "start_screen_point": from, "screen_point": to},
			}, nil
		},
	}), nil
}

// focusedIn refuses keys when the keyboard focus is not in a window of
// pid: they would go to another app than the one named.
func (s *Server) focusedIn(ctx context.Context, pid int, tool string) error {
	wins, err := s.exec.Windows(ctx, false)
	if err != nil {
		return fmt.Errorf("listing windows: %w", err)
	}
	if f := wins.Frontmost; f == nil || f.PID != pid {
		who := "no window"
		if f != nil {
			who = fmt.Sprintf("pid %d", f.PID)
		}
		return fmt.Errorf("%s would send keys to the focused window, which belongs to %s, not pid %d: click into a window of pid %d first (or, for type_text, pass element_id of a text element)", tool, who, pid, pid)
	}
	return nil
}

func (p *parser) elemTypeText(a *args) (*step, error) {
	in := &argReader{args: a}
	r, text := in.ref(idOptional), in.text("text", true, maxTypeRunes*4, "the text to type")
	if in.check(checkTypeText(a.tool, text)); in.err != nil {
		return nil, in.err
	}
	n := utf8.RuneCountInString(text)
	st := p.elemStep(elemOp{
		act: Action{Tool: a.tool, Text: text},
		ref: r,
		plan: func(ctx context.Context, t *target, act *Action) error {
			if t == nil {
				return p.s.focusedIn(ctx, r.pid, a.tool)
			}
			if !has(t.fresh.Interfaces, "editable_text") {
				return fmt.Errorf("%s does not take text (it has no editable text): pick a text element, or click it and call type_text without element_id", t.desc())
			}
			act.Background, act.Op = true, "insert_text"
			return nil
		},
		run: func(ctx context.Context, t *target, act Action) (*outcome, error) {
			how, path := ran(act.Background)
			if act.Background {
				if err := p.a11yAct(ctx, t, bridge.A11yActRequest{Op: "insert_text", Text: &text}); err != nil {
					return nil, err
				}
				return &outcome{text: fmt.Sprintf("Inserted %d characters into %s %s.", n, t.desc(), how), data: map[string]any{"characters": n, "path": path, "element_id": r.id}}, nil
			}
			if err := p.s.exec.Type(ctx, text); err != nil {
				return nil, err
			}
			return &outcome{text: fmt.Sprintf("Typed %d characters into the focused window %s.", n, how), data: map[string]any{"characters": n, "path": path}}, nil
		},
	})
	st.takes = time.Duration(n) * batchTypeAllowance
	return st, nil
}

// keyAliases maps seed 002's key names that X keysyms spell otherwise.
var keyAliases = map[string]string{
	"return": "Return", "backspace": "BackSpace", "escape": "Escape", "space": "space", "spacebar": "space",
	"up": "Up", "down": "Down", "left": "Left", "right": "Right", "delete": "Delete", "forwarddelete": "Delete",
	"home": "Home", "end": "End", "tab": "Tab", "pageup": "Page_Up", "pagedown": "Page_Down",
}

var modifierAliases = map[string]string{
	"ctrl": "ctrl", "control": "ctrl", "shift": "shift", "alt": "alt", "option": "alt", "opt": "alt",
	"super": "super", "cmd": "super", "command": "super", "meta": "super", "win": "super",
}

// keyCombo reads press_key's key and modifiers as one combination, such
// as "ctrl+c", the way input.ParseKeys reads it.
func (a *args) keyCombo() (string, error) {
	key, _, err := a.str("key", true, 64, `one key name such as "return" or "a"`)
	if err != nil {
		return "", err
	}
	key = strings.TrimSpace(key)
	if len(key) > 1 && (strings.Contains(key, "+") || strings.Contains(key, " ")) {
		return "", fmt.Errorf("%s: key %q looks like a combination: pass the last key as key and the others in modifiers, such as key \"c\" with modifiers [\"ctrl\"]", a.tool, key)
	}
	if alias, ok := keyAliases[strings.ToLower(key)]; ok {
		key = alias
	}
	var mods []string
	if a.has("modifiers") {
		if err := json.Unmarshal(a.fields["modifiers"], &mods); err != nil {
			return "", fmt.Errorf("%s: \"modifiers\" must be a list of modifier names such as [\"ctrl\", \"shift\"], got %s", a.tool, abbreviate(a.fields["modifiers"]))
		}
	}
	parts := make([]string, 0, len(mods)+1)
	for _, m := range mods {
		name, ok := modifierAliases[strings.ToLower(strings.TrimSpace(m))]
		if !ok {
			return "", fmt.Errorf("%s: modifier %q is not one of ctrl, shift, alt, super (cmd)", a.tool, m)
		}
		if !slices.Contains(parts, name) {
			parts = append(parts, name)
		}
	}
	combo := strings.Join(append(parts, key), "+")
	if _, err := input.ParseKeys(combo); err != nil {
		return "", fmt.Errorf("%s: %w", a.tool, err)
	}
	return combo, nil
}

func (p *parser) elemPressKey(a *args) (*step, error) {
	in := &argReader{args: a}
	r := in.ref(idOptional)
	combo, err := a.keyCombo()
	if in.check(err); in.err != nil {
		return nil, in.err
	}
	st := p.elemStep(elemOp{
		act: Action{Tool: a.tool, Keys: combo},
		ref: r,
		plan: func(ctx context.Context, t *target, act *Action) error {
			return p.s.focusedIn(ctx, r.pid, a.tool)
		},
		run: func(ctx context.Context, t *target, act Action) (*outcome, error) {
			if t != nil {
				if err := p.a11yAct(ctx, t, bridge.A11yActRequest{Op: "focus"}); err != nil {
					return nil, fmt.Errorf("focusing element %d: %w", r.id, err)
				}
			}
			if err := p.s.exec.Key(ctx, combo); err != nil {
				return nil, err
			}
			return &outcome{text: fmt.Sprintf("Pressed %s with synthetic input.", combo), data: map[string]any{"keys": combo, "path": "input"}}, nil
		},
	})
	st.takes = batchTypeAllowance
	return st, nil
}

func (p *parser) performAction(a *args) (*step, error) {
	in := &argReader{args: a}
	r, name := in.ref(0), in.text("action", true, 200, "an action the element lists in get_app_state")
	if in.err != nil {
		return nil, in.err
	}
	return p.elemStep(elemOp{
		act: Action{Tool: a.tool, Op: name, Background: true},
		ref: r,
		plan: func(ctx context.Context, t *target, act *Action) error {
			exact, ok := exposedAction(t.fresh, strings.TrimSpace(name))
			switch {
			case ok:
				act.Op = exact
				return nil
			case len(t.fresh.Actions) == 0:
				return fmt.Errorf("%s exposes no actions: use click, or set_value", t.desc())
			}
			return fmt.Errorf("%s does not expose the action %q; it exposes: %s. Use one of those names exactly", t.desc(), name, quoteList(t.fresh.Actions))
		},
		run: func(ctx context.Context, t *target, act Action) (*outcome, error) {
			if err := p.a11yAct(ctx, t, bridge.A11yActRequest{Op: "action", Action: act.Op}); err != nil {
				return nil, err
			}
			how, path := ran(true)
			return &outcome{
				text: fmt.Sprintf("Performed %q on %s %s.", act.Op, t.desc(), how) + seeResult,
				data: map[string]any{"element_id": r.id, "action": act.Op, "path": path},
			}, nil
		},
	}), nil
}

func quoteList(ss []string) string { return strings.Join(quoteAll(ss), ", ") }

// valueOp is what set_value does: the helper calls it takes, and how to
// say it.
type valueOp struct {
	acts []bridge.A11yActRequest
	// window, when set, is a window state for the window manager instead.
	window *windowOp
	say    string
}

func (p *parser) setValue(a *args) (*step, error) {
	in := &argReader{args: a}
	r := in.ref(0)
	if !a.has("value") {
		in.check(a.missing("value", "a boolean, number, string or {horizontal_scroll_percent, vertical_scroll_percent}"))
	}
	if in.err != nil {
		return nil, in.err
	}
	raw := bytes.TrimSpace(a.fields["value"])
	kind := map[byte]string{'t': "bool", 'f': "bool", '"': "string", '{': "object"}[raw[0]]
	if kind == "" {
		if _, err := strconv.ParseFloat(string(raw), 64); err != nil {
			return nil, fmt.Errorf("%s: value %s is not a boolean, number, string or object", a.tool, abbreviate(raw))
		}
		kind = "number"
	}
	var op *valueOp
	return p.elemStep(elemOp{
		act: Action{Tool: a.tool, Op: kind, Background: true},
		ref: r,
		plan: func(ctx context.Context, t *target, act *Action) (err error) {
			if op, err = planValue(t, r.id, kind, raw); err != nil {
				return fmt.Errorf("%s: %w", a.tool, err)
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
	act := func(op string) bridge.A11yActRequest { return bridge.A11yActRequest{Ref: n.Ref, Op: op} }
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
		r := act("action")
		r.Action = name
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
			r := act("action")
			r.Action = name
			return &valueOp{acts: []bridge.A11yActRequest{r}, say: fmt.Sprintf("%s %s", map[bool]string{true: "Expanded", false: "Collapsed"}[want], desc)}, nil
		}
		if w := windowStateWord(s); w != "" && isWindowElement(t, id) {
			return planWindowState(t, desc, w)
		}
		if has(n.Interfaces, "editable_text") {
			r := act("set_text")
			r.Text = &s
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
	return &valueOp{acts: []bridge.A11yActRequest{{Ref: n.Ref, Op: "set_value", Value: &v}}, say: fmt.Sprintf("Set %s to %s", desc, fmtNum(v))}, nil
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
		op.acts = append(op.acts, bridge.A11yActRequest{Ref: n.Ref, Op: "set_value", Value: &v})
		said = append(said, fmt.Sprintf("%s to %g%%", axis, pct))
		delete(want, axis)
	}
	if len(op.acts) == 0 {
		return nil, fmt.Errorf("%s has no scroll bar for that under it: pass the scrolled view's element_id, or use scroll", desc)
	}
	op.say = fmt.Sprintf("Scrolled %s %s", desc, strings.Join(said, " and "))
	return op, nil
}

// --- wait_for ---

func (p *parser) waitFor(a *args) (*step, error) {
	in := &argReader{args: a}
	var pid int
	if a.has("pid") {
		var err error
		pid, err = a.pid()
		in.check(err)
	}
	role := in.text("role", false, 100, "a role such as \"push button\"")
	name := in.text("name", false, 1000, "a substring of the name")
	state := in.text("state", false, 100, "a state such as \"checked\"")
	gone := in.flag("gone")
	title := in.text("window_title", false, 1000, "a substring of a window title")
	hasStable := a.has("stable_ms")
	stable := in.whole("stable_ms", 0, 1, 60000, "milliseconds")
	region, _, err := a.coordinates("region", 4, false, "[x0, y0, x1, y1] in pixels of the latest get_app_state screenshot")
	in.check(err)
	timeout, ok, err := a.number("timeout", false, "seconds")
	in.check(err)
	if !ok {
		timeout = defaultWaitTimeout
	} else if timeout <= 0 || timeout > maxWaitTimeout {
		in.check(fmt.Errorf("%s: timeout %v is out of range: give seconds from 0 to %g", a.tool, timeout, maxWaitTimeout))
	}
	if in.err != nil {
		return nil, in.err
	}
	elem := role != "" || name != "" || state != ""
	modes := 0
	for _, b := range []bool{elem, title != "", hasStable} {
		if b {
			modes++
		}
	}
	switch {
	case modes != 1:
		return nil, fmt.Errorf("%s waits for one thing: an element (role, name, state), a window (window_title) or a still region (stable_ms); give exactly one of them", a.tool)
	case (elem || hasStable) && pid == 0:
		return nil, fmt.Errorf("%s needs pid to wait on an app's elements or its window's pixels", a.tool)
	case region != nil && !hasStable:
		return nil, fmt.Errorf("%s: region goes with stable_ms", a.tool)
	}
	d := time.Duration(timeout * float64(time.Second))
	st := &step{action: Action{Tool: a.tool, PID: pid}, takes: d, image: true}
	st.run = func(outer context.Context) (*outcome, error) {
		ctx, cancel := context.WithTimeout(outer, d)
		defer cancel()
		var matched string
		var req stateRequest
		var err error
		switch {
		case elem:
			matched, req, err = p.s.waitElement(ctx, p.sess, pid, role, name, state, gone)
		case title != "":
			matched, req, err = p.s.waitWindow(ctx, pid, title)
		default:
			matched, req, err = p.s.waitStill(ctx, p.sess, pid, region, time.Duration(stable)*time.Millisecond)
		}
		if errors.Is(err, context.DeadlineExceeded) && context.Cause(ctx) == context.DeadlineExceeded {
			return nil, fmt.Errorf("timed out after %g s: %s. Call get_app_state to see where things are, or wait longer", timeout, matched)
		}
		if err != nil {
			return nil, err
		}
		out, err := p.s.appState(outer, p.sess, req, matched+"\n")
		if err != nil {
			return &outcome{text: matched + " (no fresh state: " + err.Error() + ")", data: map[string]any{"matched": matched}}, nil
		}
		out.data["matched"] = matched
		return out, nil
	}
	return st, nil
}

func matches(n bridge.A11yNode, role, name, state string) bool {
	return (role == "" || strings.EqualFold(n.Role, role)) &&
		(name == "" || strings.Contains(strings.ToLower(n.Name), strings.ToLower(name))) &&
		(state == "" || has(n.States, state))
}

// poll calls f every waitPoll until it reports done, an error, or ctx ends.
func poll(ctx context.Context, f func() (bool, error)) error {
	t := time.NewTicker(waitPoll)
	defer t.Stop()
	for {
		done, err := f()
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (s *Server) waitElement(ctx context.Context, sess *session, pid int, role, name, state string, gone bool) (string, stateRequest, error) {
	req := stateRequest{pid: pid}
	if st := sess.elements().latest(pid); st != nil {
		req.window = st.xid
	}
	what := fmt.Sprintf("an element with role %q, name containing %q and state %q", role, name, state)
	var found string
	err := poll(ctx, func() (bool, error) {
		tree, err := s.exec.A11yTree(ctx, bridge.A11yTreeRequest{PID: pid, Window: req.window, MaxNodes: defaultMaxNodes, MaxDepth: defaultMaxDepth, DeadlineMS: treeDeadlineMS})
		if err != nil {
			return false, a11yError(pid, err)
		}
		for _, n := range tree.Nodes {
			if matches(n, role, name, state) {
				found = describeNode(n)
				return !gone, nil
			}
		}
		return gone, nil
	})
	if err != nil {
		if gone {
			return what + " was still there", req, err
		}
		return what + " did not appear", req, err
	}
	if gone {
		return "No element matches any more: " + what + " is gone.", req, nil
	}
	return fmt.Sprintf("Found %s.", found), req, nil
}

func (s *Server) waitWindow(ctx context.Context, pid int, title string) (string, stateRequest, error) {
	var hit *bridge.Window
	err := poll(ctx, func() (bool, error) {
		wins, err := s.exec.Windows(ctx, false)
		if err != nil {
			return false, fmt.Errorf("listing windows: %w", err)
		}
		for _, w := range wins.Windows {
			// Titles of unapproved apps' windows come back empty.
			if (pid == 0 || w.App.PID == pid) && w.Title != "" && strings.Contains(strings.ToLower(w.Title), strings.ToLower(title)) {
				hit = &w
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Sprintf("no window of an approved app with a title containing %q appeared", title), stateRequest{}, err
	}
	return fmt.Sprintf("Window %d %q of pid %d appeared.", hit.ID, hit.Title, hit.App.PID), stateRequest{pid: hit.App.PID, window: hit.ID}, nil
}

func (s *Server) waitStill(ctx context.Context, sess *session, pid int, region []float64, stable time.Duration) (string, stateRequest, error) {
	st := sess.elements().latest(pid)
	if st == nil || st.shot.Validate() != nil {
		return "", stateRequest{}, fmt.Errorf("wait_for: there is no screenshot of pid %d yet: call get_app_state first; region is in its pixels", pid)
	}
	rect := st.shot.Bounds()
	if region != nil {
		r, err := st.shot.RegionToLogical(geometry.ModePixels, region[0], region[1], region[2], region[3])
		if err != nil {
			return "", stateRequest{}, fmt.Errorf("wait_for: %w", err)
		}
		rect = r
	}
	req := stateRequest{pid: pid, window: st.xid}
	capture := bridge.CaptureRequest{Rect: &bridge.Rect{X: rect.X, Y: rect.Y, Width: rect.Width, Height: rect.Height}, Format: FormatPNG}
	var last []byte
	var since time.Time
	err := poll(ctx, func() (bool, error) {
		img, err := s.exec.Capture(ctx, capture)
		if err != nil {
			return false, fmt.Errorf("capturing the region: %w", err)
		}
		now := time.Now()
		if !bytes.Equal(img.Data, last) {
			last, since = img.Data, now
			return false, nil
		}
		return now.Sub(since) >= stable, nil
	})
	if err != nil {
		return fmt.Sprintf("the region kept changing for %v", stable), req, err
	}
	return fmt.Sprintf("The region %dx%d+%d+%d has not changed for %v.", rect.Width, rect.Height, rect.X, rect.Y, stable), req, nil
}

// elementInstructions tell the model how the element tools go together.
const elementInstructions = "To act on an app through its accessibility tree: call list_apps for its pid, then get_app_state(pid) for its elements and a screenshot of its window, " +
	"and act by element_id with click, type_text, set_value, perform_action, press_key or scroll. Prefer element ids to coordinates; " +
	"element actions that the accessibility API can do run in the background, without moving the pointer or taking the focus. " +
	"After acting, call get_app_state again: it lists what changed, and an id is good only while its element is in the latest state."
