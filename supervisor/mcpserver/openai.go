package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool profiles: the tool surfaces a server can offer.
const (
	// ProfileDefault offers deskhand's own tools, whose names and
	// arguments are those of Anthropic's computer toolset.
	ProfileDefault = "default"
	// ProfileOpenAI offers one tool, computer, that takes a batch of
	// actions in the vocabulary of OpenAI's computer tool.
	ProfileOpenAI = "openai"
)

// ToolProfiles lists the profiles Options.ToolProfile accepts.
var ToolProfiles = []string{ProfileDefault, ProfileOpenAI}

// openAIActions are the action types of OpenAI's computer tool.
var openAIActions = []string{"click", "double_click", "drag", "move", "scroll", "keypress", "type", "wait", "screenshot"}

// The fields each OpenAI action type takes besides "type".
var openAIFields = map[string][]string{
	"click":        {"x", "y", "button", "keys"},
	"double_click": {"x", "y", "keys"},
	"drag":         {"path", "keys"},
	"move":         {"x", "y", "keys"},
	"scroll":       {"x", "y", "scroll_x", "scroll_y", "keys"},
	"keypress":     {"keys"},
	"type":         {"text"},
	"wait":         {},
	"screenshot":   {},
}

// OpenAI's computer tool gives wait no duration; its reference harnesses
// wait two seconds.
const openAIWait = 2 * time.Second

// openAIScrollStep is how many of OpenAI's scroll pixels one wheel click
// stands for: X11 scrolls by wheel clicks, and a click moves most views by
// about this much.
const openAIScrollStep = 100

func init() {
	register(&Tool{
		Name:  "computer",
		Title: "Use the computer",
		Description: "Run OpenAI computer-use actions in order, then return a screenshot of the result. " +
			"actions is the actions list of a computer_call, as the model sent it: click{x, y, button, keys}, double_click{x, y}, drag{path}, move{x, y}, " +
			"scroll{x, y, scroll_x, scroll_y}, keypress{keys}, type{text}, wait{}, screenshot{}. Coordinates are pixels of the latest screenshot. " +
			"Every action's arguments are checked before any runs; the batch stops at the first failure and reports the completed, failed and remaining actions, " +
			"with a screenshot of the screen as it is then. " + fmt.Sprintf("wait waits %g s; a scroll moves %d pixels per mouse-wheel click; a batch may take at most %g s.",
			openAIWait.Seconds(), openAIScrollStep, maxBatchDuration.Seconds()),
		Destructive: true, OpenWorld: true,
		Profiles: []string{ProfileOpenAI},
		Args:     computerArgs{},
		Schema:   func(s *Server, schema map[string]any) { finishComputerSchema(schema) },
		Call: func(s *Server, ctx context.Context, sess *session, raw json.RawMessage) *mcp.CallToolResult {
			return s.runOpenAI(ctx, sess, raw)
		},
	})
}

// The arguments of the computer tool: one action has the fields of every
// type (openAIFields says which each type takes).
type (
	computerArgs struct {
		Actions []openAIAction `json:"actions" jsonschema:"The computer_call's actions, in order. An empty list only takes a screenshot."`
	}
	openAIAction struct {
		Type    openAIType    `json:"type"`
		X       num           `json:"x,omitempty" jsonschema:"Pixels of the latest screenshot, origin top-left."`
		Y       num           `json:"y,omitempty" jsonschema:"Pixels of the latest screenshot, origin top-left."`
		Button  openAIButton  `json:"button,omitempty" jsonschema:"click: the mouse button (default left); back and forward are not supported."`
		Keys    openAIKeyList `json:"keys,omitempty" jsonschema:"keypress: the keys pressed together, such as [\"CTRL\", \"A\"]. Pointer actions: modifier keys held during the action, such as [\"SHIFT\"]."`
		Path    openAIPath    `json:"path,omitempty" jsonschema:"drag: the points the pointer passes through with the left button held, start first."`
		ScrollX num           `json:"scroll_x,omitempty" jsonschema:"scroll: pixels to scroll right (negative: left)."`
		ScrollY num           `json:"scroll_y,omitempty" jsonschema:"scroll: pixels to scroll down (negative: up)."`
		Text    string        `json:"text,omitempty" max:"40000" jsonschema:"type: the text to type."`
		// raw is the action as given, checked against its type's fields.
		raw json.RawMessage
	}
	openAIPoint struct {
		X num `json:"x" jsonschema:"Pixels of the latest screenshot, origin top-left."`
		Y num `json:"y" jsonschema:"Pixels of the latest screenshot, origin top-left."`
	}
	openAIPath    []openAIPoint
	openAIType    string
	openAIButton  string
	openAIKeyList []string // OpenAI sends "keys": null on actions without modifiers.
)

func (a *openAIAction) UnmarshalJSON(raw []byte) error { a.raw = raw; return nil }
func (openAIPath) expected() string                    { return `a list of at least two {"x", "y"} points` }
func (openAIKeyList) expected() string                 { return `a list of key names such as ["CTRL", "C"]` }

func init() {
	var types []any
	for _, t := range openAIActions {
		types = append(types, t)
	}
	argTypes[reflect.TypeFor[openAIType]()] = &jsonschema.Schema{Type: "string", Enum: types}
	argTypes[reflect.TypeFor[openAIButton]()] = &jsonschema.Schema{Type: "string", Enum: []any{"left", "right", "wheel", "back", "forward"}}
	argTypes[reflect.TypeFor[openAIKeyList]()] = &jsonschema.Schema{Types: []string{"array", "null"}, Items: &jsonschema.Schema{Type: "string"}}
}

// finishComputerSchema bounds the computer tool's lists; the union of
// fields is only a guide, each action being checked against its type.
func finishComputerSchema(schema map[string]any) {
	item := arrayProp(schema, "actions", 0, maxBatchActions)["items"].(map[string]any)
	delete(item, "additionalProperties")
	path := item["properties"].(map[string]any)["path"].(map[string]any)
	path["type"], path["minItems"] = "array", 2
	delete(path["items"].(map[string]any), "additionalProperties")
}

// runOpenAI runs the computer tool of the openai profile: OpenAI's
// actions, each translated into deskhand's steps and run like a
// computer_batch, and a closing screenshot whatever happened, since the
// API expects one in every computer_call_output.
func (s *Server) runOpenAI(ctx context.Context, sess *session, raw []byte) *mcp.CallToolResult {
	const tool = "computer"
	in := &computerArgs{}
	if _, err := s.decodeArgs(tool, raw, in); err != nil {
		return errorResult(err)
	}
	items := in.Actions
	if len(items) > maxBatchActions {
		return errorResult(fmt.Errorf("%s: %d actions is over the limit of %d per call; split them", tool, len(items), maxBatchActions))
	}
	p, err := s.newParser(ctx, sess, nil)
	if err != nil {
		return errorResult(err)
	}
	final := func(ctx context.Context) (*outcome, error) {
		st, err := p.screenshot()
		if err != nil {
			return nil, err
		}
		st.action.Batch = &BatchPosition{Index: len(items), Count: len(items) + 1}
		return s.runStep(ctx, sess, st)
	}
	names := make([]string, len(items))
	steps := make([]*step, len(items))
	for i, item := range items {
		st, name, err := s.parseOpenAIAction(p, item.raw)
		names[i] = name
		if err != nil {
			return s.batchResult(batchInvalid, i, names, nil, fmt.Errorf("action %d (%s) is invalid: %w", i+1, nameOr(name), err), s.closing(ctx, final))
		}
		steps[i] = st
	}
	return s.runSteps(ctx, sess, names, steps, final)
}

// parseOpenAIAction checks one OpenAI action and turns it into a step made
// of deskhand's tools, so each goes through the same argument checks and
// gates as when called by name.
func (s *Server) parseOpenAIAction(p *parser, item json.RawMessage) (*step, string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(item, &fields); err != nil || fields == nil {
		return nil, "", fmt.Errorf("each action must be an object such as {\"type\": \"click\", \"x\": 100, \"y\": 200}, got %s", abbreviate(item))
	}
	var kind string
	if raw, ok := fields["type"]; !ok || json.Unmarshal(raw, &kind) != nil {
		return nil, "", fmt.Errorf("it needs a \"type\", one of %s", strings.Join(openAIActions, ", "))
	}
	allowed, ok := openAIFields[kind]
	if !ok {
		return nil, kind, fmt.Errorf("type %q is not an OpenAI computer action; use one of %s", kind, strings.Join(openAIActions, ", "))
	}
	delete(fields, "type")
	if err := refuseUnknown(kind, fields, allowed); err != nil {
		return nil, kind, err
	}
	in := &openAIAction{}
	a, err := s.decodeArgs(kind, item, in)
	if err != nil {
		return nil, kind, err
	}
	// call parses one deskhand tool call with the given arguments.
	call := func(tool string, args map[string]any) (*step, error) {
		js, err := json.Marshal(args)
		if err != nil {
			return nil, err
		}
		spec := s.spec(tool)
		ta, err := s.decodeArgs(tool, js, spec.newArgs())
		if err != nil {
			return nil, err
		}
		st, err := spec.Parse(p, ta)
		if err != nil {
			// The model sent an OpenAI action, not deskhand's tool and
			// arguments: say it in its words.
			return nil, errors.New(openAIWords.Replace(strings.TrimPrefix(err.Error(), tool+": ")))
		}
		return st, nil
	}
	xy := func() ([]float64, error) {
		switch {
		case !in.X.set:
			return nil, a.missing("x", "pixels from the left of the latest screenshot")
		case !in.Y.set:
			return nil, a.missing("y", "pixels from the top of the latest screenshot")
		}
		return []float64{in.X.v, in.Y.v}, nil
	}
	mods, err := openAIKeys(kind, in.Keys, false)
	if err != nil {
		return nil, kind, err
	}
	var st *step
	switch kind {
	case "click", "double_click":
		at, err := xy()
		if err != nil {
			return nil, kind, err
		}
		button := string(in.Button)
		tool := map[string]string{"": "left_click", "left": "left_click", "right": "right_click", "wheel": "middle_click", "middle": "middle_click"}[strings.ToLower(button)]
		if tool == "" {
			return nil, kind, fmt.Errorf("button %q is not supported: use left, right or wheel (back and forward have no X11 equivalent here; press alt+Left or alt+Right instead)", button)
		}
		if kind == "double_click" {
			if tool != "left_click" {
				return nil, kind, fmt.Errorf("double_click with button %q is not supported; only the left button double-clicks", button)
			}
			tool = "double_click"
		}
		st, err = call(tool, withMods(map[string]any{"coordinate": at}, mods))
		if err != nil {
			return nil, kind, err
		}
	case "move":
		if mods != "" {
			return nil, kind, fmt.Errorf("move cannot hold keys (%s); hold them with a click, drag or scroll instead", mods)
		}
		at, err := xy()
		if err != nil {
			return nil, kind, err
		}
		if st, err = call("mouse_move", map[string]any{"coordinate": at}); err != nil {
			return nil, kind, err
		}
	case "drag":
		st, err = s.openAIDrag(a, in.Path, mods, call)
		if err != nil {
			return nil, kind, err
		}
	case "scroll":
		st, err = s.openAIScroll(in, mods, xy, call)
		if err != nil {
			return nil, kind, err
		}
	case "keypress":
		combo, err := openAIKeys(kind, in.Keys, true)
		if err != nil {
			return nil, kind, err
		}
		if st, err = call("key", map[string]any{"text": combo}); err != nil {
			return nil, kind, err
		}
	case "type":
		if !a.has("text") {
			return nil, kind, a.missing("text", "the text to type")
		}
		if st, err = call("type", map[string]any{"text": in.Text}); err != nil {
			return nil, kind, err
		}
	case "wait":
		if st, err = call("wait", map[string]any{"duration": openAIWait.Seconds()}); err != nil {
			return nil, kind, err
		}
	case "screenshot":
		// The tool always ends with a screenshot, and every coordinate of
		// the batch refers to the one taken before it, so one asked for
		// here is that closing screenshot.
		st = &step{
			action: Action{Tool: "screenshot"},
			run: func(context.Context) (*outcome, error) {
				return &outcome{text: "The screenshot is taken at the end of the batch."}, nil
			},
		}
	}
	return st, kind, nil
}

// openAIWords renames deskhand's arguments in error messages to the
// OpenAI action fields they came from.
var openAIWords = strings.NewReplacer(
	`"start_coordinate"`, "the path's first point",
	`"coordinate"`, "(x, y)",
	`modifier keys in "text"`, `the modifier keys in "keys"`,
)

func withMods(args map[string]any, mods string) map[string]any {
	if mods != "" {
		args["text"] = mods
	}
	return args
}

// openAIKeys reads "keys", OpenAI's key names such as ["CTRL", "A"], as a
// deskhand combination ("ctrl+a"); required for keypress.
func openAIKeys(tool string, keys openAIKeyList, required bool) (string, error) {
	switch {
	case keys == nil && required:
		return "", fmt.Errorf("%s needs %q: %s", tool, "keys", `the keys pressed together, such as ["CTRL", "C"] or ["ENTER"]`)
	case len(keys) == 0 && required:
		return "", fmt.Errorf("%s: \"keys\" is empty; name the keys to press, such as [\"ENTER\"]", tool)
	case len(keys) == 0:
		return "", nil
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		if k != " " {
			k = strings.TrimSpace(k)
		}
		if k == "" || (len([]rune(k)) > 1 && strings.ContainsAny(k, " \t\n")) {
			return "", fmt.Errorf("%s: key %d (%q) is not a key name; name one key per item, such as \"CTRL\"", tool, i+1, keys[i])
		}
		names[i] = openAIKeyName(k)
	}
	return strings.Join(names, "+"), nil
}

// openAIKeyName maps one of OpenAI's key names to deskhand's: most
// (ENTER, CTRL, TAB, PAGEUP…) are already aliases, whatever their case.
func openAIKeyName(k string) string {
	switch strings.ToLower(k) {
	case "arrowup":
		return "Up"
	case "arrowdown":
		return "Down"
	case "arrowleft":
		return "Left"
	case "arrowright":
		return "Right"
	case "option":
		return "alt"
	case "capslock":
		return "Caps_Lock"
	case "+":
		return "plus"
	case " ":
		return "space"
	}
	// A letter is the key, not the shifted character: OpenAI writes
	// ctrl+c as ["CTRL", "C"].
	if r := []rune(k); len(r) == 1 {
		return strings.ToLower(k)
	}
	return k
}

// openAIDrag: a two-point path is one left_click_drag; a longer one is a
// press, a move through each point and a release.
func (s *Server) openAIDrag(a *args, path openAIPath, mods string, call func(string, map[string]any) (*step, error)) (*step, error) {
	switch {
	case path == nil:
		return nil, a.missing("path", `the points to drag through, such as [{"x": 10, "y": 20}, {"x": 200, "y": 20}]`)
	case len(path) < 2:
		return nil, fmt.Errorf("drag: \"path\" must be %s, got %s", path.expected(), abbreviate(a.fields["path"]))
	case len(path) > maxBatchActions:
		return nil, fmt.Errorf("drag: the path has %d points, over the limit of %d", len(path), maxBatchActions)
	}
	pts := make([][]float64, len(path))
	for i, pt := range path {
		if !pt.X.set || !pt.Y.set {
			return nil, a.missing(map[bool]string{true: "y", false: "x"}[pt.X.set], fmt.Sprintf("point %d of the path", i+1))
		}
		pts[i] = []float64{pt.X.v, pt.Y.v}
	}
	if len(pts) == 2 {
		return call("left_click_drag", withMods(map[string]any{"start_coordinate": pts[0], "coordinate": pts[1]}, mods))
	}
	if mods != "" {
		return nil, fmt.Errorf("drag: holding keys (%s) works on a two-point path only; give just the start and end points", mods)
	}
	var parts []*step
	down, err := call("left_mouse_down", map[string]any{"coordinate": pts[0]})
	if err != nil {
		return nil, err
	}
	parts = append(parts, down)
	for _, pt := range pts[1 : len(pts)-1] {
		mv, err := call("mouse_move", map[string]any{"coordinate": pt})
		if err != nil {
			return nil, err
		}
		parts = append(parts, mv)
	}
	up, err := call("left_mouse_up", map[string]any{"coordinate": pts[len(pts)-1]})
	if err != nil {
		return nil, err
	}
	return s.chain(append(parts, up)...), nil
}

// openAIScroll turns pixels into wheel clicks: vertical first, then
// horizontal; no scroll at all is a move.
func (s *Server) openAIScroll(in *openAIAction, mods string, xy func() ([]float64, error), call func(string, map[string]any) (*step, error)) (*step, error) {
	at, err := xy()
	if err != nil {
		return nil, err
	}
	sx, sy := in.ScrollX.v, in.ScrollY.v
	clicks := func(px float64) int {
		return min(maxScrollAmount, max(1, int(math.Round(math.Abs(px)/openAIScrollStep))))
	}
	var parts []*step
	for _, axis := range []struct {
		px       float64
		neg, pos string
	}{{sy, "up", "down"}, {sx, "left", "right"}} {
		if axis.px == 0 {
			continue
		}
		dir := axis.pos
		if axis.px < 0 {
			dir = axis.neg
		}
		st, err := call("scroll", withMods(map[string]any{"coordinate": at, "scroll_direction": dir, "scroll_amount": clicks(axis.px)}, mods))
		if err != nil {
			return nil, err
		}
		parts = append(parts, st)
	}
	if len(parts) == 0 {
		return call("mouse_move", map[string]any{"coordinate": at})
	}
	return s.chain(parts...), nil
}

// chain runs steps as one: the first is the step the gates see first;
// each later one is resolved and goes through the gates again before it
// runs, as if it were its own action.
func (s *Server) chain(steps ...*step) *step {
	if len(steps) == 1 {
		return steps[0]
	}
	first := steps[0]
	out := &step{action: first.action, resolve: first.resolve}
	for _, st := range steps {
		out.takes += st.takes
		out.effect = out.effect || st.effect
	}
	out.run = func(ctx context.Context) (*outcome, error) {
		var texts []string
		var last *outcome
		for i, st := range steps {
			if i > 0 {
				st.action.Session, st.action.Batch = out.action.Session, out.action.Batch
				if st.resolve != nil {
					if err := st.resolve(ctx, &st.action); err != nil {
						return nil, err
					}
				}
				if err := s.checkGates(ctx, &st.action); err != nil {
					return nil, fmt.Errorf("%s: %w", st.action.Tool, err)
				}
			}
			o, err := st.run(ctx)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", st.action.Tool, err)
			}
			texts = append(texts, o.text)
			last = o
		}
		return &outcome{text: strings.Join(texts, " "), data: last.data}, nil
	}
	return out
}
