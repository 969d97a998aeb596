package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/supervisor/catalog"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// A Tool is the whole declaration of one tool: everything else that needs
// the list of tools (the schemas clients see, the gates' classification,
// computer_batch's actions, the --tools families, the profiles, the
// tests) ranges over the registry, so adding a tool is adding an entry.
type Tool struct {
	Name  string
	Title string
	// Description is what the model reads; "{coords}" stands for what a
	// coordinate means in the server's mode (coordWords).
	Description string
	// Args is the tool's typed argument struct (a zero value, nil for
	// none): the input schema is derived from its fields, their json
	// names and jsonschema descriptions (which may say "{coords}" too),
	// and the types' shapes in argTypes.
	Args any

	ReadOnly, Destructive, Idempotent, OpenWorld bool

	// Batchable tools may run in computer_batch (and teaching steps);
	// BatchLast ones only as the batch's last action.
	Batchable, BatchLast bool
	// Families are the values of --tools (Options.Tools) that offer the
	// tool; Profiles the tool profiles, nil meaning ProfileDefault.
	Families []string
	Profiles []string
	// Teaching tools are offered with the teaching tools (EnableTeaching).
	Teaching bool
	// Consent tools are offered with a consent manager (Options.Consent).
	Consent bool

	// Gate says what the gates hold the tool's actions to; nil for tools
	// the gates never see as actions of their own (computer_batch, whose
	// actions are gated under their own names; the consent tools).
	Gate func(a *Action) GateKind

	// Parse checks a call's arguments into the step that runs it (the
	// handler of an action tool); Call instead answers a whole call
	// itself (computer_batch, the consent tools).
	Parse func(p *parser, a *args) (*step, error)
	Call  func(s *Server, ctx context.Context, sess *session, raw json.RawMessage) *mcp.CallToolResult
	// Handler, for tools outside the action path (the consent and
	// teaching tools), is the go-sdk handler itself.
	Handler func(s *Server) mcp.ToolHandler
	// Schema, when set, finishes the derived input schema with what
	// depends on the registry or the server (computer_batch's enum).
	Schema func(s *Server, schema map[string]any)
}

// GateKind is what the gates hold one action to (package gates).
type GateKind struct {
	// Input: the action sends input or changes the desktop.
	Input bool
	// Keys: it sends key events, which go to the focused window.
	Keys bool
	// OneCombo: Keys is one combination held together (hold_key, a
	// click's modifiers), not combinations pressed one after another.
	OneCombo bool
	// PointTier is the tier the app under each of its points needs;
	// TierNone for actions without points.
	PointTier catalog.Tier
	// What names the action in refusals ("a right click").
	What string
	// BareOK: a point over no window at all is fine.
	BareOK bool
	// CheckPixels: the target's pixels must match the last capture.
	CheckPixels bool
	// PIDTier is the tier the app an element tool names by pid needs
	// (Action.PID); TierNone for tools without one.
	PIDTier catalog.Tier
	// Launch: the action launches Action.App, judged by the launch check.
	Launch bool
	// Settles: the action waits for the screen to settle, deskhand's own
	// last action included.
	Settles bool
	// ReadsClipboard and WritesClipboard: the action reads or replaces
	// the clipboard, which needs the grant flag of that name.
	ReadsClipboard, WritesClipboard bool
}

// Tool families (Options.Tools): the coordinate tools of Anthropic's
// computer toolset, the element tools of seed 002, or both.
const (
	ToolsAll         = "all"
	ToolsCoordinates = "coordinates"
	ToolsElements    = "elements"
)

// ToolFamilies lists the values Options.Tools takes.
var ToolFamilies = []string{ToolsAll, ToolsCoordinates, ToolsElements}

// Families of the two kinds of tool, for Tool.Families.
var (
	coordinateFamilies = []string{ToolsAll, ToolsCoordinates}
	elementFamilies    = []string{ToolsAll, ToolsElements}
)

// registry holds every tool, in the order clients list them.
var registry []*Tool

// register adds tools to the registry; it panics on a name offered twice
// in one family and profile, which is a programming error.
func register(tools ...*Tool) {
	for _, t := range tools {
		for _, o := range registry {
			if o.Name == t.Name && overlaps(o.Families, t.Families) && overlaps(o.profiles(), t.profiles()) {
				panic("mcpserver: tool " + t.Name + " registered twice")
			}
		}
		registry = append(registry, t)
	}
}

func overlaps(a, b []string) bool {
	return slices.ContainsFunc(a, func(x string) bool { return slices.Contains(b, x) })
}

func (t *Tool) profiles() []string {
	if t.Profiles == nil {
		return []string{ProfileDefault}
	}
	return t.Profiles
}

// offered reports whether a server of profile and family offers t.
func (t *Tool) offered(profile, family string) bool {
	return slices.Contains(t.profiles(), profile) && (profile != ProfileDefault || slices.Contains(t.Families, family))
}

// Tools returns the tools a server of profile and family offers, in
// order, teaching and consent tools included.
func Tools(profile, family string) []*Tool {
	var out []*Tool
	for _, t := range registry {
		if t.offered(profile, family) {
			out = append(out, t)
		}
	}
	return out
}

// Classify returns what the gates hold a to, from its tool's entry; ok is
// false for a tool the registry does not classify.
func Classify(a *Action) (k GateKind, ok bool) {
	for _, t := range registry {
		if t.Name == a.Tool && t.Gate != nil {
			return t.Gate(a), true
		}
	}
	return GateKind{}, false
}

// argTypes are the shapes of the argument types tools share, with the
// bounds the models see.
var argTypes = map[reflect.Type]*jsonschema.Schema{}

// inputSchema derives the tool's input schema from its argument struct,
// with the server's words for the placeholders.
func (t *Tool) inputSchema(s *Server) map[string]any {
	schema := map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false}
	if t.Args != nil {
		js, err := jsonschema.ForType(reflect.TypeOf(t.Args), &jsonschema.ForOptions{TypeSchemas: argTypes})
		var b []byte
		if err == nil {
			b, err = json.Marshal(js)
		}
		if err == nil {
			schema = nil
			err = json.Unmarshal([]byte(s.placeholders().Replace(string(b))), &schema)
		}
		if err != nil {
			panic(fmt.Sprintf("mcpserver: deriving the schema of %s: %v", t.Name, err))
		}
	}
	if t.Schema != nil {
		t.Schema(s, schema)
	}
	return schema
}

// placeholders fill in what descriptions cannot spell as constants: what
// a coordinate means in the server's mode, and the limits.
func (s *Server) placeholders() *strings.Replacer {
	return strings.NewReplacer(
		"{coords}", s.coordWords(),
		"{max_wait}", fmt.Sprintf("%g", maxWait),
		"{max_batch}", fmt.Sprintf("%g", maxBatchDuration.Seconds()),
		"{batch_actions}", batchActionWords(),
	)
}

// argNames lists the json names of an argument struct's fields (args a
// struct or a pointer to one, nil for none).
func argNames(args any) []string {
	if args == nil {
		return nil
	}
	var out []string
	for _, f := range reflect.VisibleFields(reflect.Indirect(reflect.ValueOf(args)).Type()) {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// newArgs returns a pointer to a new argument struct of the tool, nil for
// a tool without arguments.
func (t *Tool) newArgs() any {
	if t.Args == nil {
		return nil
	}
	return reflect.New(reflect.TypeOf(t.Args)).Interface()
}

// spec adapts an entry to the server's toolSpec.
func (t *Tool) spec(s *Server) *toolSpec {
	return &toolSpec{Tool: t, description: s.placeholders().Replace(t.Description), schema: t.inputSchema(s)}
}

// toolSpec is a tool as one server offers it: its entry, with the
// server's words in its description and schema.
type toolSpec struct {
	*Tool
	description string
	schema      map[string]any
}

func (t *toolSpec) tool(geometry.Mode) *mcp.Tool {
	destructive, openWorld := t.Destructive, t.OpenWorld
	return &mcp.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.description,
		InputSchema: t.schema,
		Annotations: &mcp.ToolAnnotations{
			Title:           t.Title,
			ReadOnlyHint:    t.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  t.Idempotent,
			OpenWorldHint:   &openWorld,
		},
	}
}

// arrayProp bounds the list argument name of schema, from min items
// (none when 0) to max, and returns its schema: a list argument is
// required or omitted, never null.
func arrayProp(schema map[string]any, name string, min, max int) map[string]any {
	prop := schema["properties"].(map[string]any)[name].(map[string]any)
	prop["type"], prop["maxItems"] = "array", max
	if min > 0 {
		prop["minItems"] = min
	}
	return prop
}

// ActionTools names every tool whose calls the gates check as actions
// (Action.Tool), whatever its family: all but the tools that run others'
// actions, each checked under its own name (computer_batch, the openai profile's computer), and
// the consent tools, which the gates never see.
func (s *Server) ActionTools() []string {
	var names []string
	for _, t := range registry {
		if t.Call == nil && !t.Consent && !slices.Contains(names, t.Name) {
			names = append(names, t.Name)
		}
	}
	slices.Sort(names)
	return names
}

// toolSpecs returns the tools of the default profile in the server's
// family that computer_batch and the openai profile's computer tool can
// run, teaching and consent tools aside; the openai profile offers them
// through its one tool.
func (s *Server) toolSpecs() []*toolSpec {
	return s.specs(ProfileDefault, func(t *Tool) bool { return !t.Teaching && !t.Consent })
}

// specs returns the tools of profile, in the server's family, that pick
// chooses.
func (s *Server) specs(profile string, pick func(*Tool) bool) []*toolSpec {
	var out []*toolSpec
	for _, t := range Tools(profile, s.family) {
		if pick(t) {
			out = append(out, t.spec(s))
		}
	}
	return out
}

func (s *Server) spec(name string) *toolSpec {
	for _, t := range s.tools {
		if t.Name == name {
			return t
		}
	}
	return nil
}
