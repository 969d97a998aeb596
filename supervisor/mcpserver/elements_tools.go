package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/input"
)

// The element tools' arguments, with seed 002's names and shapes: its
// numbers are "number" in the schemas, and each tool reads them as whole
// numbers where it needs them.
type (
	// appPID names the app; its description is the same in every tool.
	appPID struct {
		PID num `json:"pid" jsonschema:"The app's process id, from list_apps."`
	}
	getAppStateArgs struct {
		appPID
		WindowID    num  `json:"windowId,omitempty" jsonschema:"The window to read (its id from list_apps); default the app's active or first window."`
		DisableDiff bool `json:"disableDiff,omitempty" jsonschema:"Return the whole tree instead of what changed since the last state of the window."`
		// The default is defaultMaxDepth.
		MaxDepths num `json:"max_depths,omitempty" jsonschema:"How deep to read the tree (default 60); only to limit an oversized tree."`
	}
	elemClickArgs struct {
		appPID
		ElementID  elemID      `json:"element_id" jsonschema:"The element to click, from the latest get_app_state; with x and y, the window's id (\"0\")."`
		X          num         `json:"x,omitempty" jsonschema:"With y: where to click, in pixels of the latest get_app_state screenshot."`
		Y          num         `json:"y,omitempty" jsonschema:"With x: where to click."`
		Button     mouseButton `json:"button,omitempty" jsonschema:"The mouse button (default left)."`
		ClickCount num         `json:"clickCount,omitempty" jsonschema:"1 clicks (default), 2 double-clicks, 3 triple-clicks, 0 hovers without clicking."`
	}
	elemScrollArgs struct {
		appPID
		ElementID elemID    `json:"element_id" jsonschema:"The element to scroll: prefer a visible item inside the content. With x and y, the id of the window (\"0\")."`
		X         num       `json:"x,omitempty" jsonschema:"With y: where to scroll, in pixels of the latest get_app_state screenshot, instead of at the element."`
		Y         num       `json:"y,omitempty" jsonschema:"With x: where to scroll."`
		Direction direction `json:"direction,omitempty" jsonschema:"Which way to scroll (default down)."`
		Pages     num       `json:"pages,omitempty" jsonschema:"How many mouse-wheel notches to scroll (default 1)."`
	}
	// scrollEitherArgs is scroll when both families are offered: the
	// coordinate form or the element form, neither required as a whole
	// (eitherForm).
	scrollEitherArgs struct {
		scrollArgs
		elemScrollArgs
	}
	elemDragArgs struct {
		appPID
		ElementID elemID `json:"element_id" jsonschema:"The window's element id (\"0\")."`
		FromX     num    `json:"fromX,omitempty" jsonschema:"Where the drag starts."`
		FromY     num    `json:"fromY,omitempty" jsonschema:"Where the drag starts."`
		ToX       num    `json:"toX,omitempty" jsonschema:"Where the drag ends."`
		ToY       num    `json:"toY,omitempty" jsonschema:"Where the drag ends."`
	}
	typeTextArgs struct {
		appPID
		Text      string `json:"text" max:"40000" jsonschema:"The text to type."`
		ElementID elemID `json:"element_id,omitempty" jsonschema:"The text element to type into; omit to type into the focused element."`
	}
	pressKeyArgs struct {
		appPID
		Key       string   `json:"key" max:"64" jsonschema:"The key to press."`
		Modifiers keyNames `json:"modifiers,omitempty" jsonschema:"Modifier keys held: ctrl, shift, alt, super/cmd."`
		ElementID elemID   `json:"element_id,omitempty" jsonschema:"An element to focus first."`
	}
	performActionArgs struct {
		appPID
		ElementID elemID `json:"element_id,omitempty" jsonschema:"The element, from the latest get_app_state."`
		Action    string `json:"action" max:"200" jsonschema:"The action's name exactly as listed."`
	}
	setValueArgs struct {
		appPID
		ElementID elemID          `json:"element_id,omitempty" jsonschema:"The element, from the latest get_app_state."`
		Value     json.RawMessage `json:"value" jsonschema:"The value: boolean, number, string or {horizontal_scroll_percent, vertical_scroll_percent}."`
	}
	waitForArgs struct {
		PID         num    `json:"pid,omitempty" jsonschema:"The app's process id, from list_apps."`
		Role        string `json:"role,omitempty" max:"100" jsonschema:"The element's role, such as \"push button\" or \"dialog\"."`
		Name        string `json:"name,omitempty" jsonschema:"A substring of the element's name (case does not matter)."`
		State       string `json:"state,omitempty" max:"100" jsonschema:"A state the element has, such as \"checked\", \"busy\" or \"showing\"."`
		Gone        bool   `json:"gone,omitempty" jsonschema:"Wait until no element matches."`
		WindowTitle string `json:"window_title,omitempty" jsonschema:"Wait for a window whose title contains this."`
		Region      region `json:"region,omitzero" jsonschema:"[x0, y0, x1, y1] in pixels of the latest get_app_state screenshot."`
		StableMS    num    `json:"stable_ms,omitempty" jsonschema:"Wait until the region has not changed for this many milliseconds."`
		Timeout     num    `json:"timeout,omitempty" jsonschema:"How long to wait at most, in seconds."`
	}
	mouseButton string   // left, right or middle
	keyNames    []string // never null
	// elemID is an element id as the model may write it: "12", 12, or
	// "[12]" as the tree shows it; set when given.
	elemID struct {
		id  int
		set bool
	}
)

func (*scrollEitherArgs) eitherForm() {}

func (b *mouseButton) UnmarshalJSON(raw []byte) error {
	return oneOf((*string)(b), raw, "left", "right", "middle")
}
func (keyNames) expected() string { return `a list of modifier names such as ["ctrl", "shift"]` }
func (e *elemID) UnmarshalJSON(raw []byte) (err error) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		s = string(bytes.TrimSpace(raw))
	}
	e.id, err = parseElementID(s)
	e.set = err == nil
	return err
}

func init() {
	argTypes[reflect.TypeFor[mouseButton]()] = &jsonschema.Schema{Type: "string", Enum: []any{"left", "right", "middle"}}
	argTypes[reflect.TypeFor[keyNames]()] = &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}}
	argTypes[reflect.TypeFor[elemID]()] = &jsonschema.Schema{Type: "string"}
	argTypes[reflect.TypeFor[json.RawMessage]()] = &jsonschema.Schema{}
	register(
		&Tool{
			Name:  "list_apps",
			Title: "List running apps",
			Description: "List the running applications with their pid, name, windows and whether each is approved for this session and at which tier " +
				"(read: its state may be read; click: plain clicks and scrolling; full: everything). Call it first to find the pid of the app to use.",
			ReadOnly: true, Idempotent: true,
			Families: elementFamilies,
			Gate:     looking,
			Parse:    func(p *parser, a *args) (*step, error) { return p.listApps(a.tool) },
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
			Parse:    func(p *parser, a *args) (*step, error) { return p.getAppState(a.tool, a.v.(*getAppStateArgs)) },
		},
		&Tool{
			Name:        "launch_app",
			Title:       "Launch an app",
			Description: "Launch an installed application by its desktop-entry id (such as \"org.gnome.Calculator\") or name, wait until its window appears, and report its pid.",
			Args:        openApplicationArgs{},
			OpenWorld:   true,
			Families:    elementFamilies,
			Gate:        func(*Action) GateKind { return GateKind{Input: true, Launch: true} },
			Parse:       func(p *parser, a *args) (*step, error) { return p.launchApp(a.tool, a.v.(*openApplicationArgs).App) },
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
			Parse:    func(p *parser, a *args) (*step, error) { return p.elemClick(a.tool, a.v.(*elemClickArgs)) },
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
			Parse:    func(p *parser, a *args) (*step, error) { return p.elemScroll(a.tool, a.v.(*elemScrollArgs)) },
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
			Parse: func(p *parser, a *args) (*step, error) { return p.elemDrag(a.tool, a.v.(*elemDragArgs)) },
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
			Parse: func(p *parser, a *args) (*step, error) { return p.elemTypeText(a.tool, a.v.(*typeTextArgs)) },
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
			Parse: func(p *parser, a *args) (*step, error) { return p.elemPressKey(a.tool, a.v.(*pressKeyArgs)) },
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
			Parse:    func(p *parser, a *args) (*step, error) { return p.performAction(a.tool, a.v.(*performActionArgs)) },
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
			Parse: func(p *parser, a *args) (*step, error) { return p.setValue(a.tool, a.v.(*setValueArgs)) },
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
			Parse:    func(p *parser, a *args) (*step, error) { return p.waitFor(a.tool, a.v.(*waitForArgs)) },
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
	in := a.v.(*scrollEitherArgs)
	if elem {
		if err := p.s.need(a, elemScrollArgs{}); err != nil {
			return nil, err
		}
		return p.elemScroll(a.tool, &in.elemScrollArgs)
	}
	for _, f := range elemForm {
		if a.has(f) && !slices.Contains(coordForm, f) {
			return nil, fmt.Errorf("scroll: %q belongs to the element form, which needs pid and element_id; without them give coordinate and scroll_direction", f)
		}
	}
	if err := p.s.need(a, scrollArgs{}); err != nil {
		return nil, err
	}
	return p.scroll(a.tool, &in.scrollArgs)
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

func (p *parser) elemClick(tool string, in *elemClickArgs) (*step, error) {
	r, err1 := in.ref(tool, in.ElementID, noElement)
	at, err2 := xy(tool, in.X, in.Y, "x", "y")
	count, err3 := whole(tool, "clickCount", in.ClickCount, 1, 0, 3, "0 to hover, 1–3 clicks")
	if err := cmp.Or(err1, err2, err3); err != nil {
		return nil, err
	}
	b := cmp.Or(string(in.Button), "left")
	btn := Button(b)
	plain := btn == ButtonLeft && count == 1 && !at.ok
	return p.elemStep(elemOp{
		act: Action{Tool: tool, Button: btn, Count: count},
		ref: r,
		quick: func(t *target, act *Action) bool {
			return plain && r.id != 0 && pressAction(t, act)
		},
		plan: func(ctx context.Context, t *target, act *Action) error {
			if plain && pressAction(t, act) {
				return nil
			}
			return t.aim(tool, at, act)
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
				if err := p.a11yAct(ctx, t, bridge.A11yActRequest{Op: "action", Args: map[string]any{"action": act.Op}, Expect: t.expectOf()}); err != nil {
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

func (p *parser) elemScroll(tool string, in *elemScrollArgs) (*step, error) {
	r, err1 := in.ref(tool, in.ElementID, noElement)
	at, err2 := xy(tool, in.X, in.Y, "x", "y")
	var err3 error
	if v := in.Pages.v; in.Pages.set && (v <= 0 || v > maxScrollAmount) {
		err3 = fmt.Errorf("%s: pages %v is out of range: give notches from 1 to %d", tool, v, maxScrollAmount)
	}
	if err := cmp.Or(err1, err2, err3); err != nil {
		return nil, err
	}
	dir, pages := cmp.Or(string(in.Direction), "down"), 1
	if in.Pages.set {
		pages = max(1, int(math.Round(in.Pages.v)))
	}
	return p.elemStep(elemOp{
		act: Action{Tool: tool},
		ref: r,
		plan: func(ctx context.Context, t *target, act *Action) error {
			return t.aim(tool, at, act)
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

func (p *parser) elemDrag(tool string, in *elemDragArgs) (*step, error) {
	r, err1 := in.ref(tool, in.ElementID, noElement)
	fromXY, err2 := xy(tool, in.FromX, in.FromY, "fromX", "fromY")
	toXY, err3 := xy(tool, in.ToX, in.ToY, "toX", "toY")
	if err := cmp.Or(err1, err2, err3); err != nil {
		return nil, err
	}
	if !fromXY.ok || !toXY.ok {
		return nil, fmt.Errorf("%s needs fromX, fromY, toX and toY: pixels of the latest get_app_state screenshot", tool)
	}
	return p.elemStep(elemOp{
		act: Action{Tool: tool},
		ref: r,
		plan: func(ctx context.Context, t *target, act *Action) error {
			from, err := fromXY.on(t.state)
			if err != nil {
				return fmt.Errorf("%s: from: %w", tool, err)
			}
			to, err := toXY.on(t.state)
			if err != nil {
				return fmt.Errorf("%s: to: %w", tool, err)
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

func (p *parser) elemTypeText(tool string, in *typeTextArgs) (*step, error) {
	r, err := in.ref(tool, in.ElementID, noElement)
	text := in.Text
	if err := cmp.Or(err, checkTypeText(tool, text)); err != nil {
		return nil, err
	}
	n := utf8.RuneCountInString(text)
	st := p.elemStep(elemOp{
		act: Action{Tool: tool, Text: text},
		ref: r,
		plan: func(ctx context.Context, t *target, act *Action) error {
			if t == nil {
				return p.s.focusedIn(ctx, r.pid, tool)
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
				if err := p.a11yAct(ctx, t, bridge.A11yActRequest{Op: "insert_text", Args: map[string]any{"text": text}}); err != nil {
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
func keyCombo(tool, key string, mods keyNames) (string, error) {
	key = strings.TrimSpace(key)
	if len(key) > 1 && (strings.Contains(key, "+") || strings.Contains(key, " ")) {
		return "", fmt.Errorf("%s: key %q looks like a combination: pass the last key as key and the others in modifiers, such as key \"c\" with modifiers [\"ctrl\"]", tool, key)
	}
	if alias, ok := keyAliases[strings.ToLower(key)]; ok {
		key = alias
	}
	parts := make([]string, 0, len(mods)+1)
	for _, m := range mods {
		name, ok := modifierAliases[strings.ToLower(strings.TrimSpace(m))]
		if !ok {
			return "", fmt.Errorf("%s: modifier %q is not one of ctrl, shift, alt, super (cmd)", tool, m)
		}
		if !slices.Contains(parts, name) {
			parts = append(parts, name)
		}
	}
	combo := strings.Join(append(parts, key), "+")
	if _, err := input.ParseKeys(combo); err != nil {
		return "", fmt.Errorf("%s: %w", tool, err)
	}
	return combo, nil
}

func (p *parser) elemPressKey(tool string, in *pressKeyArgs) (*step, error) {
	r, err1 := in.ref(tool, in.ElementID, noElement)
	combo, err2 := keyCombo(tool, in.Key, in.Modifiers)
	if err := cmp.Or(err1, err2); err != nil {
		return nil, err
	}
	st := p.elemStep(elemOp{
		act: Action{Tool: tool, Keys: combo},
		ref: r,
		plan: func(ctx context.Context, t *target, act *Action) error {
			return p.s.focusedIn(ctx, r.pid, tool)
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

func (p *parser) performAction(tool string, in *performActionArgs) (*step, error) {
	r, err := in.ref(tool, in.ElementID, 0)
	if err != nil {
		return nil, err
	}
	name := in.Action
	return p.elemStep(elemOp{
		act: Action{Tool: tool, Op: name, Background: true},
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
			if err := p.a11yAct(ctx, t, bridge.A11yActRequest{Op: "action", Args: map[string]any{"action": act.Op}}); err != nil {
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

// elementInstructions tell the model how the element tools go together.
const elementInstructions = "To act on an app through its accessibility tree: call list_apps for its pid, then get_app_state(pid) for its elements and a screenshot of its window, " +
	"and act by element_id with click, type_text, set_value, perform_action, press_key or scroll. Prefer element ids to coordinates; " +
	"element actions that the accessibility API can do run in the background, without moving the pointer or taking the focus. " +
	"After acting, call get_app_state again: it lists what changed, and an id is good only while its element is in the latest state."
