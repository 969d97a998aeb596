package mcpserver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/supervisor/geometry"
)

// toolSpec is one tool: its schema and how its arguments become a step.
type toolSpec struct {
	name        string
	title       string
	description string
	props       []prop
	required    []string

	readOnly    bool
	destructive bool
	idempotent  bool
	openWorld   bool

	// batchable tools may appear in computer_batch; batch marks
	// computer_batch itself.
	batchable bool
	batch     bool
	// openAI marks the computer tool of the openai profile.
	openAI bool

	parse func(p *parser, a *args) (*step, error)

	// schema and accepts, when set, are a registry entry's derived
	// schema and argument names.
	schema  map[string]any
	accepts []string
}

type prop struct {
	name   string
	schema map[string]any
}

// fields lists the argument names the tool accepts.
func (t *toolSpec) fields() []string {
	if t.accepts != nil {
		return t.accepts
	}
	out := make([]string, len(t.props))
	for i, p := range t.props {
		out[i] = p.name
	}
	return out
}

func (t *toolSpec) inputSchema() map[string]any {
	if t.schema != nil {
		return t.schema
	}
	props := map[string]any{}
	for _, p := range t.props {
		props[p.name] = p.schema
	}
	schema := map[string]any{
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	}
	if len(t.required) > 0 {
		schema["required"] = slices.Clone(t.required)
	}
	return schema
}

func (t *toolSpec) tool(geometry.Mode) *mcp.Tool {
	destructive, openWorld := t.destructive, t.openWorld
	return &mcp.Tool{
		Name:        t.name,
		Title:       t.title,
		Description: t.description,
		InputSchema: t.inputSchema(),
		Annotations: &mcp.ToolAnnotations{
			Title:           t.title,
			ReadOnlyHint:    t.readOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  t.idempotent,
			OpenWorldHint:   &openWorld,
		},
	}
}

// coordWords says what a coordinate means in the server's mode.
func (s *Server) coordWords() string {
	if s.mode == geometry.ModeNormalized {
		return "percentages (0–100) of the latest screenshot's width and height"
	}
	return "pixels of the latest screenshot, origin top-left"
}

func (s *Server) coordProp(name, role string) prop {
	return prop{name, map[string]any{
		"type":        "array",
		"items":       map[string]any{"type": "number"},
		"minItems":    2,
		"maxItems":    2,
		"description": fmt.Sprintf("%s: [x, y] in %s.", role, s.coordWords()),
	}}
}

func modifiersProp(what string) prop {
	return prop{"text", map[string]any{
		"type":        "string",
		"description": fmt.Sprintf(`Modifier keys to hold during the %s, joined with "+": "shift", "ctrl", "alt", "super", e.g. "ctrl+shift". Omit for none.`, what),
	}}
}

// showChangeProp asks for an image of what the action changed (effect.go).
var showChangeProp = prop{"show_change", map[string]any{
	"type":        "boolean",
	"description": "true returns, with the result, an image of just the region the action changed, at screenshot scale: a cheaper look than a new screenshot. Omit for the server's default.",
}}

func durationProp(what string) prop {
	return prop{"duration", map[string]any{
		"type":        "number",
		"minimum":     0,
		"maximum":     maxWait,
		"description": what,
	}}
}

func init() {
	register(&Tool{
		Name:        "cursor_position",
		Title:       "Get the pointer position",
		Description: "Return the mouse pointer's position as [x, y] in {coords}.",
		ReadOnly:    true, Idempotent: true,
		Families: coordinateFamilies,
		Gate:     looking,
		Parse:    func(p *parser, a *args) (*step, error) { return p.cursorPosition() },
	})
}

// looking is the gate kind of tools that only look: the lock, the turn
// and the hiding apply, the tier checks do not.
func looking(*Action) GateKind { return GateKind{} }

// batchActions are the tools computer_batch runs, in the order its schema
// lists them.
var batchActions = []string{
	"left_click", "double_click", "triple_click", "right_click", "middle_click",
	"mouse_move", "left_click_drag", "left_mouse_down", "left_mouse_up", "scroll",
	"type", "key", "hold_key", "wait", "screenshot",
}

// toolSpecs returns every tool, in the order clients list them.
// ActionTools names every tool of the default profile whose calls the
// gates check as actions (Action.Tool): all but computer_batch, whose
// actions are checked one by one under their own names, and the consent
// tools, which the gates never see; plus the teaching tools teach_step
// and teach_batch, whose steps are checked under their names as they are
// shown (and their actions under their own). The openai profile's computer tool
// runs these same actions.
func (s *Server) ActionTools() []string {
	var names []string
	for _, t := range s.toolSpecs() {
		if !t.batch && !t.openAI {
			names = append(names, t.name)
		}
	}
	// The teaching tools are gated as actions (the showing of each
	// step) whether or not this server offers them.
	names = append(names, teachActionTools...)
	slices.Sort(names)
	return names
}

func (s *Server) toolSpecs() []*toolSpec {
	cw := s.coordWords()
	click := func(name, title, what string, button Button, count int) *toolSpec {
		return &toolSpec{
			name:  name,
			title: title,
			description: fmt.Sprintf("%s at coordinate ([x, y] in %s), or where the pointer is when coordinate is omitted. "+
				"text optionally names modifier keys held during the click, such as \"shift\" or \"ctrl\".", what, cw),
			props:       []prop{s.coordProp("coordinate", "Where to click"), modifiersProp("click"), showChangeProp},
			destructive: true, openWorld: true, batchable: true,
			parse: func(p *parser, a *args) (*step, error) { return p.click(a, button, count) },
		}
	}
	tools := []*toolSpec{
		{
			name:  "screenshot",
			title: "Take a screenshot",
			description: "Take a screenshot of the selected display (the primary one unless switch_display chose another) and return it as an image. " +
				"Coordinates for every other tool are [x, y] in " + cw + ", so take a new screenshot whenever the screen may have changed. " +
				"The result names the display shown and lists the others.",
			readOnly: true, idempotent: true, batchable: true,
			parse: func(p *parser, a *args) (*step, error) { return p.screenshot() },
		},
		{
			name:  "zoom",
			title: "Zoom into a region",
			description: "Return a higher-resolution view of a region of the latest screenshot, to read small text or inspect details. " +
				"region is [x0, y0, x1, y1]: the top-left and bottom-right corners in " + cw + ". " +
				"The zoomed image is only for looking: coordinates for the other tools still refer to the full screenshot.",
			props: []prop{{"region", map[string]any{
				"type":        "array",
				"items":       map[string]any{"type": "number"},
				"minItems":    4,
				"maxItems":    4,
				"description": "[x0, y0, x1, y1]: top-left and bottom-right corners of the region, in " + cw + ".",
			}}},
			required: []string{"region"},
			readOnly: true, idempotent: true,
			parse: func(p *parser, a *args) (*step, error) { return p.zoom(a) },
		},
		{
			name:  "switch_display",
			title: "Switch display",
			description: "Select the display (monitor) that screenshots show and coordinates refer to, by its name (such as \"HDMI-1\") or numeric id " +
				"as the screenshot result lists them. Returns a screenshot of that display.",
			props: []prop{{"display", map[string]any{
				"type":        "string",
				"description": "The display's name or numeric id, as listed by screenshot.",
			}}},
			required: []string{"display"},
			readOnly: true, idempotent: true,
			parse: func(p *parser, a *args) (*step, error) { return p.switchDisplay(a) },
		},
		lookupTool("cursor_position", ProfileDefault, ToolsCoordinates).spec(s),
		click("left_click", "Left click", "Click the left mouse button", ButtonLeft, 1),
		click("double_click", "Double click", "Double-click the left mouse button", ButtonLeft, 2),
		click("triple_click", "Triple click", "Triple-click the left mouse button (selects a line or paragraph of text)", ButtonLeft, 3),
		click("right_click", "Right click", "Click the right mouse button (usually opens a context menu)", ButtonRight, 1),
		click("middle_click", "Middle click", "Click the middle mouse button (pastes the primary selection in many Linux applications)", ButtonMiddle, 1),
		{
			name:        "mouse_move",
			title:       "Move the pointer",
			description: "Move the mouse pointer to coordinate ([x, y] in " + cw + ") without clicking, to hover or to position it for left_mouse_down.",
			props:       []prop{s.coordProp("coordinate", "Where to move the pointer")},
			required:    []string{"coordinate"},
			idempotent:  true, openWorld: true, batchable: true,
			parse: func(p *parser, a *args) (*step, error) { return p.mouseMove(a) },
		},
		{
			name:  "left_click_drag",
			title: "Drag",
			description: "Press the left mouse button at start_coordinate (default: where the pointer is), move to coordinate and release it there: " +
				"drag and drop, move a slider or a window, select text. Both are [x, y] in " + cw + ". " +
				"text optionally names modifier keys held for the whole drag, such as \"shift\" to extend a selection.",
			props:       []prop{s.coordProp("start_coordinate", "Where the drag starts"), s.coordProp("coordinate", "Where the drag ends"), modifiersProp("drag"), showChangeProp},
			required:    []string{"coordinate"},
			destructive: true, openWorld: true, batchable: true,
			parse: func(p *parser, a *args) (*step, error) { return p.drag(a) },
		},
		{
			name:  "left_mouse_down",
			title: "Press the left button",
			description: "Press and hold the left mouse button, at coordinate ([x, y] in " + cw + ") if given, else where the pointer is. " +
				"Move with mouse_move and release with left_mouse_up; the button is also released when a later action fails or the client disconnects.",
			props:       []prop{s.coordProp("coordinate", "Where to press the button")},
			destructive: true, openWorld: true, batchable: true,
			parse: func(p *parser, a *args) (*step, error) { return p.mouseButton(a, "left_mouse_down", true) },
		},
		{
			name:        "left_mouse_up",
			title:       "Release the left button",
			description: "Release the left mouse button, at coordinate ([x, y] in " + cw + ") if given (the pointer moves there first), else where the pointer is.",
			props:       []prop{s.coordProp("coordinate", "Where to release the button")},
			destructive: true, openWorld: true, batchable: true,
			parse: func(p *parser, a *args) (*step, error) { return p.mouseButton(a, "left_mouse_up", false) },
		},
		{
			name:  "scroll",
			title: "Scroll",
			description: "Scroll the view under coordinate ([x, y] in " + cw + "; default: where the pointer is) by scroll_amount mouse-wheel clicks " +
				"(default 3) in scroll_direction. text optionally names modifier keys held while scrolling, such as \"ctrl\" to zoom or \"shift\" to scroll sideways.",
			props: []prop{
				s.coordProp("coordinate", "Where to scroll"),
				{"scroll_direction", map[string]any{
					"type":        "string",
					"enum":        []string{"up", "down", "left", "right"},
					"description": "Which way to scroll the content into view: down shows what is below.",
				}},
				{"scroll_amount", map[string]any{
					"type":        "integer",
					"minimum":     1,
					"maximum":     maxScrollAmount,
					"description": "How many mouse-wheel clicks to scroll (default 3).",
				}},
				modifiersProp("scroll"),
				showChangeProp,
			},
			required:    []string{"scroll_direction"},
			destructive: true, openWorld: true, batchable: true,
			parse: func(p *parser, a *args) (*step, error) { return p.scroll(a) },
		},
		{
			name:  "type",
			title: "Type text",
			description: fmt.Sprintf("Type text into the focused element exactly as given, whatever the keyboard layout: letters, accented and non-Latin characters, emoji. "+
				"\"\\n\" presses Return and \"\\t\" Tab. Click the field first to focus it. At most %d characters; put longer text on the clipboard with write_clipboard and paste it.", maxTypeRunes),
			props: []prop{{"text", map[string]any{
				"type":        "string",
				"description": "The text to type.",
			}}, showChangeProp},
			required:    []string{"text"},
			destructive: true, openWorld: true, batchable: true,
			parse: func(p *parser, a *args) (*step, error) { return p.typeText(a) },
		},
		{
			name:  "key",
			title: "Press keys",
			description: "Press a key or key combination, xdotool-style: key names joined with \"+\", such as \"Return\", \"ctrl+c\", \"ctrl+shift+t\", \"alt+F4\" or \"super\". " +
				"Several combinations separated by spaces are pressed one after another (\"ctrl+a ctrl+c\"). " +
				"Names are X keysyms (BackSpace, Tab, Escape, Delete, Home, Page_Down, Left, F5, …) or the aliases ctrl, alt, shift, super/cmd/meta, enter, esc, pageup, pagedown, del; case does not matter. " +
				"Only keys that type characters and ordinary editing, navigation, function, keypad and media keys are sent; keys that switch XKB controls (StickyKeys_Enable), click through MouseKeys (Pointer_Button1) or act on the X server (Terminate_Server, VT switches) are refused. " +
				fmt.Sprintf("repeat presses it all that many times (1–%d, default 1), such as Down 5 times.", maxKeyRepeat),
			props: []prop{{"text", map[string]any{
				"type":        "string",
				"description": "The key combination(s) to press, e.g. \"ctrl+s\" or \"Escape\".",
			}}, {"repeat", map[string]any{
				"type":        "integer",
				"minimum":     1,
				"maximum":     maxKeyRepeat,
				"description": "How many times to press it (default 1).",
			}}, showChangeProp},
			required:    []string{"text"},
			destructive: true, openWorld: true, batchable: true,
			parse: func(p *parser, a *args) (*step, error) { return p.key(a) },
		},
		{
			name:        "hold_key",
			title:       "Hold keys",
			description: "Hold a key or key combination (named as for key, e.g. \"shift\" or \"ctrl+alt\") down for duration seconds, then release it. A held key does not autorepeat; to type a character several times, use type. The hold stops early, with an error, if an app that may not receive keys comes to the front.",
			props: []prop{
				{"text", map[string]any{"type": "string", "description": "The key or combination to hold."}},
				durationProp(fmt.Sprintf("How long to hold it, in seconds (0–%g).", maxWait)),
			},
			required:    []string{"text", "duration"},
			destructive: true, openWorld: true, batchable: true,
			parse: func(p *parser, a *args) (*step, error) { return p.holdKey(a) },
		},
		{
			name:        "wait",
			title:       "Wait",
			description: fmt.Sprintf("Wait duration seconds (0–%g) for the screen to settle, for example while an application starts or a page loads.", maxWait),
			props:       []prop{durationProp("How long to wait, in seconds.")},
			required:    []string{"duration"},
			readOnly:    true, idempotent: true, batchable: true,
			parse: func(p *parser, a *args) (*step, error) { return p.wait(a) },
		},
		{
			name:  "computer_batch",
			title: "Run a batch of actions",
			description: "Run several actions in one call, in order: faster than one call each when the next steps are predictable. " +
				"actions is a list of objects, each with \"action\" (one of " + strings.Join(batchActions[:len(batchActions)-1], ", ") +
				", or screenshot as the last action) and that tool's arguments, e.g. " +
				`[{"action": "left_click", "coordinate": [100, 200]}, {"action": "type", "text": "hello"}, {"action": "key", "text": "Return"}, {"action": "screenshot"}]. ` +
				"Every action's arguments are checked before any runs; then they run in order and the batch stops at the first failure, " +
				"reporting the completed actions, the failed one with its error, and those not run. " +
				"All coordinates refer to the screenshot that existed before the batch. End with a screenshot action to see the result. " +
				fmt.Sprintf("A batch may take at most %g s in all, counted as the sum of its wait and hold_key durations plus %g s per action and %g s per typed character; a longer batch is refused before anything runs, so split it.",
					maxBatchDuration.Seconds(), batchStepAllowance.Seconds(), batchTypeAllowance.Seconds()),
			props: []prop{{"actions", map[string]any{
				"type":        "array",
				"minItems":    1,
				"maxItems":    maxBatchActions,
				"description": fmt.Sprintf("The actions to run, in order; %g s in all at most.", maxBatchDuration.Seconds()),
				"items":       s.batchItemSchema(),
			}}},
			required:    []string{"actions"},
			destructive: true, openWorld: true, batch: true,
		},
		{
			name:  "open_application",
			title: "Open an application",
			description: "Launch an installed application by its desktop-entry id (such as \"org.gnome.Calculator\" or \"xterm\") or its name (\"Calculator\"), " +
				"wait until its window appears, and report it. An unknown name fails with a list of close matches.",
			props: []prop{{"app", map[string]any{
				"type":        "string",
				"description": "The application's desktop-entry id or name.",
			}}},
			required:  []string{"app"},
			openWorld: true,
			parse:     func(p *parser, a *args) (*step, error) { return p.openApplication(a) },
		},
		{
			name:        "read_clipboard",
			title:       "Read the clipboard",
			description: "Return the text on the clipboard.",
			readOnly:    true, idempotent: true,
			parse: func(p *parser, a *args) (*step, error) { return p.readClipboard() },
		},
		{
			name:        "write_clipboard",
			title:       "Write the clipboard",
			description: "Put text on the clipboard, replacing what is there; paste it with key ctrl+v (ctrl+shift+v in a terminal).",
			props: []prop{{"text", map[string]any{
				"type":        "string",
				"description": "The text to put on the clipboard.",
			}}},
			required:    []string{"text"},
			destructive: true, idempotent: true,
			parse: func(p *parser, a *args) (*step, error) { return p.writeClipboard(a) },
		},
	}
	return s.withFamilies(tools)
}

// batchItemSchema is the schema of one computer_batch action: "action"
// plus the union of the batchable tools' arguments.
func (s *Server) batchItemSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"action": map[string]any{
				"type":        "string",
				"enum":        slices.Clone(batchActions),
				"description": "The tool to run; the other fields are its arguments.",
			},
			"coordinate":       s.coordProp("coordinate", "Target of a pointer action").schema,
			"start_coordinate": s.coordProp("start_coordinate", "Start of left_click_drag").schema,
			"text": map[string]any{
				"type":        "string",
				"description": "Text for type, key combination for key and hold_key, modifier keys for clicks, drags and scrolls.",
			},
			"repeat":           map[string]any{"type": "integer", "minimum": 1, "maximum": maxKeyRepeat, "description": "How many times key presses its keys."},
			"scroll_direction": map[string]any{"type": "string", "enum": []string{"up", "down", "left", "right"}},
			"scroll_amount":    map[string]any{"type": "integer", "minimum": 1, "maximum": maxScrollAmount},
			"duration":         map[string]any{"type": "number", "minimum": 0, "maximum": maxWait, "description": "Seconds, for wait and hold_key."},
		},
		"required": []string{"action"},
	}
}

func (s *Server) spec(name string) *toolSpec {
	for _, t := range s.tools {
		if t.name == name {
			return t
		}
	}
	return nil
}
