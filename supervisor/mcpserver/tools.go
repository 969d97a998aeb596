package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// coordWords says what a coordinate means in the server's mode.
func (s *Server) coordWords() string {
	if s.mode == geometry.ModeNormalized {
		return "percentages (0–100) of the latest screenshot's width and height"
	}
	return "pixels of the latest screenshot, origin top-left"
}

// The argument types the coordinate tools share; argTypes gives their
// shapes and bounds, and each checks its own when decoded.
type (
	seconds     struct{ num } // 0 to maxWait
	wheelClicks struct{ num } // 1 to maxScrollAmount
	presses     struct{ num } // 1 to maxKeyRepeat
	direction   string        // up, down, left or right
	// toggle is a boolean, on nil when not given.
	toggle struct{ on *bool }
	// displayRef is a display's name, or its numeric id.
	displayRef string
)

func (s *seconds) UnmarshalJSON(b []byte) error { return s.within(b, 0, maxWait, false, "seconds") }
func (s seconds) time() time.Duration           { return time.Duration(s.v * float64(time.Second)) }
func (w *wheelClicks) UnmarshalJSON(b []byte) error {
	return w.within(b, 1, maxScrollAmount, true, "wheel clicks")
}
func (p *presses) UnmarshalJSON(b []byte) error { return p.within(b, 1, maxKeyRepeat, true, "presses") }
func (d *direction) UnmarshalJSON(b []byte) error {
	return oneOf((*string)(d), b, "up", "down", "left", "right")
}
func (t *toggle) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &t.on) }
func (toggle) expected() string                { return "true or false" }
func (d *displayRef) UnmarshalJSON(b []byte) error {
	var n json.Number
	err := json.Unmarshal(b, (*string)(d))
	if err != nil && json.Unmarshal(b, &n) == nil {
		*d, err = displayRef(n), nil
	}
	return err
}
func (displayRef) expected() string { return "a display name or numeric id" }

// oneOf decodes a string that must be one of options, in any case.
func oneOf(dst *string, b []byte, options ...string) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	if v := strings.ToLower(strings.TrimSpace(s)); slices.Contains(options, v) {
		*dst = v
		return nil
	}
	return badValue(fmt.Sprintf("%q is not one of %s", s, strings.Join(quoteAll(options), ", ")))
}

func init() {
	number := &jsonschema.Schema{Type: "number"}
	argTypes[reflect.TypeFor[point]()] = &jsonschema.Schema{Type: "array", Items: number, MinItems: jsonschema.Ptr(2), MaxItems: jsonschema.Ptr(2)}
	argTypes[reflect.TypeFor[region]()] = &jsonschema.Schema{Type: "array", Items: number, MinItems: jsonschema.Ptr(4), MaxItems: jsonschema.Ptr(4)}
	argTypes[reflect.TypeFor[seconds]()] = &jsonschema.Schema{Type: "number", Minimum: jsonschema.Ptr(0.0), Maximum: jsonschema.Ptr(maxWait)}
	argTypes[reflect.TypeFor[wheelClicks]()] = &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(1.0), Maximum: jsonschema.Ptr(float64(maxScrollAmount))}
	argTypes[reflect.TypeFor[presses]()] = &jsonschema.Schema{Type: "integer", Minimum: jsonschema.Ptr(1.0), Maximum: jsonschema.Ptr(float64(maxKeyRepeat))}
	argTypes[reflect.TypeFor[direction]()] = &jsonschema.Schema{Type: "string", Enum: []any{"up", "down", "left", "right"}}
	argTypes[reflect.TypeFor[num]()] = number
	argTypes[reflect.TypeFor[toggle]()] = &jsonschema.Schema{Type: "boolean"}
}

// showChange asks for an image of what the action changed (effect.go).
type showChange struct {
	ShowChange toggle `json:"show_change,omitempty" jsonschema:"true returns, with the result, an image of just the region the action changed, at screenshot scale: a cheaper look than a new screenshot. Omit for the server's default."`
}

func (s *showChange) shown() *bool { return s.ShowChange.on }

type (
	zoomArgs struct {
		Region region `json:"region" jsonschema:"[x0, y0, x1, y1]: top-left and bottom-right corners of the region, in {coords}."`
	}
	switchDisplayArgs struct {
		Display displayRef `json:"display" jsonschema:"The display's name or numeric id, as listed by screenshot."`
	}
	clickArgs struct {
		Coordinate point  `json:"coordinate,omitzero" jsonschema:"Where to click: [x, y] in {coords}."`
		Text       string `json:"text,omitempty" jsonschema:"Modifier keys to hold during the click, joined with \"+\": \"shift\", \"ctrl\", \"alt\", \"super\", e.g. \"ctrl+shift\". Omit for none."`
		showChange
	}
	mouseMoveArgs struct {
		Coordinate point `json:"coordinate" jsonschema:"Where to move the pointer: [x, y] in {coords}."`
	}
	dragArgs struct {
		StartCoordinate point  `json:"start_coordinate,omitzero" jsonschema:"Where the drag starts: [x, y] in {coords}."`
		Coordinate      point  `json:"coordinate" jsonschema:"Where the drag ends: [x, y] in {coords}."`
		Text            string `json:"text,omitempty" jsonschema:"Modifier keys to hold during the drag, joined with \"+\": \"shift\", \"ctrl\", \"alt\", \"super\", e.g. \"ctrl+shift\". Omit for none."`
		showChange
	}
	mouseDownArgs struct {
		Coordinate point `json:"coordinate,omitzero" jsonschema:"Where to press the button: [x, y] in {coords}."`
	}
	mouseUpArgs struct {
		Coordinate point `json:"coordinate,omitzero" jsonschema:"Where to release the button: [x, y] in {coords}."`
	}
	scrollArgs struct {
		Coordinate      point       `json:"coordinate,omitzero" jsonschema:"Where to scroll: [x, y] in {coords}."`
		ScrollDirection direction   `json:"scroll_direction" jsonschema:"Which way to scroll the content into view: down shows what is below."`
		ScrollAmount    wheelClicks `json:"scroll_amount,omitempty" jsonschema:"How many mouse-wheel clicks to scroll (default 3)."`
		Text            string      `json:"text,omitempty" jsonschema:"Modifier keys to hold during the scroll, joined with \"+\": \"shift\", \"ctrl\", \"alt\", \"super\", e.g. \"ctrl+shift\". Omit for none."`
		showChange
	}
	typeArgs struct {
		Text string `json:"text" max:"40000" jsonschema:"The text to type."`
		showChange
	}
	keyArgs struct {
		Text   string  `json:"text" jsonschema:"The key combination(s) to press, e.g. \"ctrl+s\" or \"Escape\"."`
		Repeat presses `json:"repeat,omitempty" jsonschema:"How many times to press it (default 1)."`
		showChange
	}
	holdKeyArgs struct {
		Text     string  `json:"text" jsonschema:"The key or combination to hold."`
		Duration seconds `json:"duration" jsonschema:"How long to hold it, in seconds (0–{max_wait})."`
	}
	waitArgs struct {
		Duration seconds `json:"duration" jsonschema:"How long to wait, in seconds."`
	}
	openApplicationArgs struct {
		App string `json:"app" jsonschema:"The application's desktop-entry id or name."`
	}
	writeClipboardArgs struct {
		Text string `json:"text" max:"524288" jsonschema:"The text to put on the clipboard."`
	}
)

func init() {
	click := func(name, title, what, verb string, button Button, count int, gate func(*Action) GateKind) *Tool {
		return &Tool{
			Name:  name,
			Title: title,
			Description: what + " at coordinate ([x, y] in {coords}), or where the pointer is when coordinate is omitted. " +
				"text optionally names modifier keys held during the click, such as \"shift\" or \"ctrl\".",
			Args:        clickArgs{},
			Destructive: true, OpenWorld: true, Batchable: true,
			Families: coordinateFamilies,
			Gate:     gate,
			Parse:    func(p *parser, a *args) (*step, error) { return p.click(a.tool, a.v.(*clickArgs), verb, button, count) },
		}
	}
	register(
		&Tool{
			Name:  "screenshot",
			Title: "Take a screenshot",
			Description: "Take a screenshot of the selected display (the primary one unless switch_display chose another) and return it as an image. " +
				"Coordinates for every other tool are [x, y] in {coords}, so take a new screenshot whenever the screen may have changed. " +
				"The result names the display shown and lists the others.",
			ReadOnly: true, Idempotent: true, Batchable: true, BatchLast: true,
			Families: coordinateFamilies,
			Gate:     looking,
			Parse:    func(p *parser, a *args) (*step, error) { return p.screenshot() },
		},
		&Tool{
			Name:  "zoom",
			Title: "Zoom into a region",
			Description: "Return a higher-resolution view of a region of the latest screenshot, to read small text or inspect details. " +
				"region is [x0, y0, x1, y1]: the top-left and bottom-right corners in {coords}. " +
				"The zoomed image is only for looking: coordinates for the other tools still refer to the full screenshot.",
			Args:     zoomArgs{},
			ReadOnly: true, Idempotent: true,
			Families: coordinateFamilies,
			Gate:     looking,
			Parse:    func(p *parser, a *args) (*step, error) { return p.zoom(a.tool, a.v.(*zoomArgs)) },
		},
		&Tool{
			Name:  "switch_display",
			Title: "Switch display",
			Description: "Select the display (monitor) that screenshots show and coordinates refer to, by its name (such as \"HDMI-1\") or numeric id " +
				"as the screenshot result lists them. Returns a screenshot of that display.",
			Args:     switchDisplayArgs{},
			ReadOnly: true, Idempotent: true,
			Families: coordinateFamilies,
			Gate:     looking,
			Parse: func(p *parser, a *args) (*step, error) {
				return p.switchDisplay(a.tool, string(a.v.(*switchDisplayArgs).Display))
			},
		},
		&Tool{
			Name:        "cursor_position",
			Title:       "Get the pointer position",
			Description: "Return the mouse pointer's position as [x, y] in {coords}.",
			ReadOnly:    true, Idempotent: true,
			Families: coordinateFamilies,
			Gate:     looking,
			Parse:    func(p *parser, a *args) (*step, error) { return p.cursorPosition() },
		},
		click("left_click", "Left click", "Click the left mouse button", "Left-clicked", ButtonLeft, 1, plainClick("a left click")),
		click("double_click", "Double click", "Double-click the left mouse button", "Double-clicked", ButtonLeft, 2, plainClick("a double click")),
		click("triple_click", "Triple click", "Triple-click the left mouse button (selects a line or paragraph of text)", "Triple-clicked", ButtonLeft, 3, plainClick("a triple click")),
		click("right_click", "Right click", "Click the right mouse button (usually opens a context menu)", "Right-clicked", ButtonRight, 1, otherClick("a right click")),
		click("middle_click", "Middle click", "Click the middle mouse button (pastes the primary selection in many Linux applications)", "Middle-clicked", ButtonMiddle, 1, otherClick("a middle click")),
		&Tool{
			Name:        "mouse_move",
			Title:       "Move the pointer",
			Description: "Move the mouse pointer to coordinate ([x, y] in {coords}) without clicking, to hover or to position it for left_mouse_down.",
			Args:        mouseMoveArgs{},
			Idempotent:  true, OpenWorld: true, Batchable: true,
			Families: coordinateFamilies,
			Gate: func(*Action) GateKind {
				return GateKind{Input: true, PointTier: catalog.TierRead, What: "moving the pointer", BareOK: true}
			},
			Parse: func(p *parser, a *args) (*step, error) { return p.mouseMove(a.tool, a.v.(*mouseMoveArgs)) },
		},
		&Tool{
			Name:  "left_click_drag",
			Title: "Drag",
			Description: "Press the left mouse button at start_coordinate (default: where the pointer is), move to coordinate and release it there: " +
				"drag and drop, move a slider or a window, select text. Both are [x, y] in {coords}. " +
				"text optionally names modifier keys held for the whole drag, such as \"shift\" to extend a selection.",
			Args:        dragArgs{},
			Destructive: true, OpenWorld: true, Batchable: true,
			Families: coordinateFamilies,
			Gate: func(a *Action) GateKind {
				return GateKind{Input: true, Keys: a.Keys != "", OneCombo: true, PointTier: catalog.TierFull, What: "dragging" + holding(a.Keys), BareOK: true, CheckPixels: true}
			},
			Parse: func(p *parser, a *args) (*step, error) { return p.drag(a.tool, a.v.(*dragArgs)) },
		},
		&Tool{
			Name:  "left_mouse_down",
			Title: "Press the left button",
			Description: "Press and hold the left mouse button, at coordinate ([x, y] in {coords}) if given, else where the pointer is. " +
				"Move with mouse_move and release with left_mouse_up; the button is also released when a later action fails or the client disconnects.",
			Args:        mouseDownArgs{},
			Destructive: true, OpenWorld: true, Batchable: true,
			Families: coordinateFamilies,
			Gate:     buttonGate,
			Parse: func(p *parser, a *args) (*step, error) {
				return p.mouseButton(a.tool, a.v.(*mouseDownArgs).Coordinate, true)
			},
		},
		&Tool{
			Name:        "left_mouse_up",
			Title:       "Release the left button",
			Description: "Release the left mouse button, at coordinate ([x, y] in {coords}) if given (the pointer moves there first), else where the pointer is.",
			Args:        mouseUpArgs{},
			Destructive: true, OpenWorld: true, Batchable: true,
			Families: coordinateFamilies,
			Gate:     buttonGate,
			Parse: func(p *parser, a *args) (*step, error) {
				return p.mouseButton(a.tool, a.v.(*mouseUpArgs).Coordinate, false)
			},
		},
		&Tool{
			Name:        "scroll",
			Title:       "Scroll",
			Description: scrollDescription,
			Args:        scrollArgs{},
			Destructive: true, OpenWorld: true, Batchable: true,
			// With all the tools, scroll takes the element form too
			// (scrollEither).
			Families: []string{ToolsCoordinates},
			Gate:     scrollGate,
			Parse:    func(p *parser, a *args) (*step, error) { return p.scroll(a.tool, a.v.(*scrollArgs)) },
		},
		&Tool{
			Name:  "type",
			Title: "Type text",
			Description: fmt.Sprintf("Type text into the focused element exactly as given, whatever the keyboard layout: letters, accented and non-Latin characters, emoji. "+
				"\"\\n\" presses Return and \"\\t\" Tab. Click the field first to focus it. At most %d characters; put longer text on the clipboard with write_clipboard and paste it.", maxTypeRunes),
			Args:        typeArgs{},
			Destructive: true, OpenWorld: true, Batchable: true,
			Families: coordinateFamilies,
			Gate:     keyboard("typing", false),
			Parse:    func(p *parser, a *args) (*step, error) { return p.typeText(a.tool, a.v.(*typeArgs).Text) },
		},
		&Tool{
			Name:  "key",
			Title: "Press keys",
			Description: "Press a key or key combination, xdotool-style: key names joined with \"+\", such as \"Return\", \"ctrl+c\", \"ctrl+shift+t\", \"alt+F4\" or \"super\". " +
				"Several combinations separated by spaces are pressed one after another (\"ctrl+a ctrl+c\"). " +
				"Names are X keysyms (BackSpace, Tab, Escape, Delete, Home, Page_Down, Left, F5, …) or the aliases ctrl, alt, shift, super/cmd/meta, enter, esc, pageup, pagedown, del; case does not matter. " +
				"Only keys that type characters and ordinary editing, navigation, function, keypad and media keys are sent; keys that switch XKB controls (StickyKeys_Enable), click through MouseKeys (Pointer_Button1) or act on the X server (Terminate_Server, VT switches) are refused. " +
				fmt.Sprintf("repeat presses it all that many times (1–%d, default 1), such as Down 5 times.", maxKeyRepeat),
			Args:        keyArgs{},
			Destructive: true, OpenWorld: true, Batchable: true,
			Families: coordinateFamilies,
			Gate:     keyboard("pressing keys", false),
			Parse:    func(p *parser, a *args) (*step, error) { return p.key(a.tool, a.v.(*keyArgs)) },
		},
		&Tool{
			Name:        "hold_key",
			Title:       "Hold keys",
			Description: "Hold a key or key combination (named as for key, e.g. \"shift\" or \"ctrl+alt\") down for duration seconds, then release it. A held key does not autorepeat; to type a character several times, use type. The hold stops early, with an error, if an app that may not receive keys comes to the front.",
			Args:        holdKeyArgs{},
			Destructive: true, OpenWorld: true, Batchable: true,
			Families: coordinateFamilies,
			Gate:     keyboard("holding keys", true),
			Parse:    func(p *parser, a *args) (*step, error) { return p.holdKey(a.tool, a.v.(*holdKeyArgs)) },
		},
		&Tool{
			Name:        "wait",
			Title:       "Wait",
			Description: fmt.Sprintf("Wait duration seconds (0–%g) for the screen to settle, for example while an application starts or a page loads.", maxWait),
			Args:        waitArgs{},
			ReadOnly:    true, Idempotent: true, Batchable: true,
			Families: coordinateFamilies,
			// Waiting for the screen to settle includes the settling of
			// deskhand's own last action.
			Gate:  func(*Action) GateKind { return GateKind{Settles: true} },
			Parse: func(p *parser, a *args) (*step, error) { return p.wait(a.tool, a.v.(*waitArgs)) },
		},
		&Tool{
			Name:  "open_application",
			Title: "Open an application",
			Description: "Launch an installed application by its desktop-entry id (such as \"org.gnome.Calculator\" or \"xterm\") or its name (\"Calculator\"), " +
				"wait until its window appears, and report it. An unknown name fails with a list of close matches.",
			Args:      openApplicationArgs{},
			OpenWorld: true,
			Families:  coordinateFamilies,
			// Judged by the gates' launch check.
			Gate: func(*Action) GateKind { return GateKind{Input: true, Launch: true} },
			Parse: func(p *parser, a *args) (*step, error) {
				return p.openApplication(a.tool, a.v.(*openApplicationArgs).App)
			},
		},
		&Tool{
			Name:        "read_clipboard",
			Title:       "Read the clipboard",
			Description: "Return the text on the clipboard.",
			ReadOnly:    true, Idempotent: true,
			Families: coordinateFamilies,
			Gate:     func(*Action) GateKind { return GateKind{Input: true, ReadsClipboard: true} },
			Parse:    func(p *parser, a *args) (*step, error) { return p.readClipboard() },
		},
		&Tool{
			Name:        "write_clipboard",
			Title:       "Write the clipboard",
			Description: "Put text on the clipboard, replacing what is there; paste it with key ctrl+v (ctrl+shift+v in a terminal).",
			Args:        writeClipboardArgs{},
			Destructive: true, Idempotent: true,
			Families: coordinateFamilies,
			Gate:     func(*Action) GateKind { return GateKind{Input: true, WritesClipboard: true} },
			Parse: func(p *parser, a *args) (*step, error) {
				return p.writeClipboard(a.tool, a.v.(*writeClipboardArgs).Text)
			},
		},
	)
}

// The gate kinds the coordinate tools share. Points over no window at
// all (the bare root window) are allowed for the left button and the
// pointer, which do nothing there or drop what is dragged; right and
// middle clicks and the wheel are refused there, since window managers
// open their launcher menus on them (openbox: right click for the root
// menu, middle for the window list; the wheel switches desktops).

// looking is the gate kind of tools that only look: the lock, the turn
// and the hiding apply, the tier checks do not.
func looking(*Action) GateKind { return GateKind{} }

func buttonGate(*Action) GateKind {
	return GateKind{Input: true, PointTier: catalog.TierFull, What: "pressing or releasing the mouse button", BareOK: true, CheckPixels: true}
}

// keyboard: keys go to the focused window; oneCombo when they are held
// together rather than pressed one after another.
func keyboard(what string, oneCombo bool) func(*Action) GateKind {
	return func(*Action) GateKind { return GateKind{Input: true, Keys: true, OneCombo: oneCombo, What: what} }
}

// plainClick: the click tier for a plain click; modifiers make it
// keyboard input, which needs the full tier.
func plainClick(what string) func(*Action) GateKind {
	return func(a *Action) GateKind {
		if a.Keys != "" {
			return GateKind{Input: true, Keys: true, OneCombo: true, PointTier: catalog.TierFull, What: what + holding(a.Keys), BareOK: true, CheckPixels: true}
		}
		return GateKind{Input: true, PointTier: catalog.TierClick, What: what, BareOK: true, CheckPixels: true}
	}
}

// otherClick: right and middle clicks need the full tier, and a point on
// a window.
func otherClick(what string) func(*Action) GateKind {
	return func(a *Action) GateKind {
		return GateKind{Input: true, Keys: a.Keys != "", OneCombo: true, PointTier: catalog.TierFull, What: what + holding(a.Keys), CheckPixels: true}
	}
}

const scrollDescription = "Scroll the view under coordinate ([x, y] in {coords}; default: where the pointer is) by scroll_amount mouse-wheel clicks " +
	"(default 3) in scroll_direction. text optionally names modifier keys held while scrolling, such as \"ctrl\" to zoom or \"shift\" to scroll sideways."

// scrollGate: modifiers turn the wheel into keyboard input (ctrl+wheel
// zooms), so a scroll holding them needs the full tier, like a click
// does. The element form of scroll names its app by pid.
func scrollGate(a *Action) GateKind {
	tier := catalog.TierClick
	k := GateKind{Input: true, What: "scrolling", CheckPixels: true}
	if a.Keys != "" {
		tier = catalog.TierFull
		k.Keys, k.What = true, "scrolling holding "+a.Keys
	}
	k.PointTier = tier
	if a.PID != 0 {
		k.PIDTier = tier
	}
	return k
}
