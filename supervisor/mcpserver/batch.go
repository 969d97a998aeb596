package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type (
	// batchItem is one computer_batch action: "action" plus the union of
	// the batchable tools' arguments (its enum comes from the registry).
	batchItem struct {
		Action          string      `json:"action" jsonschema:"The tool to run; the other fields are its arguments."`
		Coordinate      point       `json:"coordinate,omitzero" jsonschema:"Target of a pointer action: [x, y] in {coords}."`
		StartCoordinate point       `json:"start_coordinate,omitzero" jsonschema:"Start of left_click_drag: [x, y] in {coords}."`
		Text            string      `json:"text,omitempty" jsonschema:"Text for type, key combination for key and hold_key, modifier keys for clicks, drags and scrolls."`
		Repeat          presses     `json:"repeat,omitempty" jsonschema:"How many times key presses its keys."`
		ScrollDirection direction   `json:"scroll_direction,omitempty"`
		ScrollAmount    wheelClicks `json:"scroll_amount,omitempty"`
		Duration        seconds     `json:"duration,omitempty" jsonschema:"Seconds, for wait and hold_key."`
		// raw is the action as given, for its tool to decode.
		raw json.RawMessage
	}
	batchArgs struct {
		Actions []batchItem `json:"actions" jsonschema:"The actions to run, in order; {max_batch} s in all at most."`
	}
)

func (b *batchItem) UnmarshalJSON(raw []byte) error { b.raw = raw; return nil }

func init() {
	register(&Tool{
		Name:  "computer_batch",
		Title: "Run a batch of actions",
		Description: "Run several actions in one call, in order: faster than one call each when the next steps are predictable. " +
			"actions is a list of objects, each with \"action\" (one of {batch_actions}) and that tool's arguments, e.g. " +
			`[{"action": "left_click", "coordinate": [100, 200]}, {"action": "type", "text": "hello"}, {"action": "key", "text": "Return"}, {"action": "screenshot"}]. ` +
			"Every action's arguments are checked before any runs; then they run in order and the batch stops at the first failure, " +
			"reporting the completed actions, the failed one with its error, and those not run. " +
			"All coordinates refer to the screenshot that existed before the batch. End with a screenshot action to see the result. " +
			fmt.Sprintf("A batch may take at most %g s in all, counted as the sum of its wait and hold_key durations plus %g s per action and %g s per typed character; a longer batch is refused before anything runs, so split it.",
				maxBatchDuration.Seconds(), batchStepAllowance.Seconds(), batchTypeAllowance.Seconds()),
		Args:        batchArgs{},
		Destructive: true, OpenWorld: true,
		Families: coordinateFamilies,
		Schema: func(s *Server, schema map[string]any) {
			s.finishBatchItem(arrayProp(schema, "actions", 1, maxBatchActions)["items"].(map[string]any))
		},
		Call: func(s *Server, ctx context.Context, sess *session, raw json.RawMessage) *mcp.CallToolResult {
			return s.runBatch(ctx, sess, raw)
		},
	})
}

// batchTools lists the tools computer_batch runs, in registry order:
// those that may run anywhere in a batch, and those only last.
func batchTools() (anywhere, last []string) {
	for _, t := range Tools(ProfileDefault, ToolsCoordinates) {
		switch {
		case t.BatchLast:
			last = append(last, t.Name)
		case t.Batchable:
			anywhere = append(anywhere, t.Name)
		}
	}
	return anywhere, last
}

func batchActions() []string {
	anywhere, last := batchTools()
	return append(anywhere, last...)
}

// batchActionWords names the batch's actions for its description.
func batchActionWords() string {
	anywhere, last := batchTools()
	return strings.Join(anywhere, ", ") + ", or " + strings.Join(last, " or ") + " as the last action"
}

// finishBatchItem completes the schema of one computer_batch action.
func (s *Server) finishBatchItem(item map[string]any) {
	// The union of arguments is only a guide: each action is checked
	// against its own tool.
	delete(item, "additionalProperties")
	item["properties"].(map[string]any)["action"].(map[string]any)["enum"] = batchActions()
}

// batchEntry reports one action of a batch.
type batchEntry struct {
	Index  int    `json:"index"` // 0-based
	Action string `json:"action"`
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
	// Effect is what the action changed (effect.go), for input actions.
	Effect any `json:"effect,omitempty"`
}

// runBatch checks every action of a computer_batch, then runs them in
// order until one fails. Coordinates all refer to the screenshot that
// existed when the batch began.
func (s *Server) runBatch(ctx context.Context, sess *session, raw []byte) *mcp.CallToolResult {
	const tool = "computer_batch"
	in := &batchArgs{}
	if _, err := s.decodeArgs(tool, raw, in); err != nil {
		return errorResult(err)
	}
	items := in.Actions
	if len(items) == 0 {
		return errorResult(fmt.Errorf("%s: \"actions\" is empty; give at least one action", tool))
	}
	if len(items) > maxBatchActions {
		return errorResult(fmt.Errorf("%s: %d actions is over the limit of %d per batch; split them into several batches", tool, len(items), maxBatchActions))
	}

	// Check everything before running anything.
	names := make([]string, len(items))
	steps := make([]*step, len(items))
	p, err := s.newParser(ctx, sess, nil)
	if err != nil {
		return errorResult(err)
	}
	for i, item := range items {
		st, name, err := s.parseBatchAction(p, item.raw, i, len(items))
		names[i] = name
		if err != nil {
			if refused := s.checkWholeGates(ctx, sess, name, err); refused != err {
				return errorResult(fmt.Errorf("%s: %w", tool, refused))
			}
			return s.batchResult(batchInvalid, i, names, nil, fmt.Errorf("action %d (%s) is invalid: %w", i+1, nameOr(name), err), nil)
		}
		steps[i] = st
	}

	return s.runSteps(ctx, sess, names, steps, nil)
}

// runSteps runs a checked batch: it refuses one over maxBatchDuration,
// then runs the steps in order through the gates until one fails. final,
// when set, makes the closing screenshot (OpenAI's computer tool returns
// one whatever happened).
func (s *Server) runSteps(ctx context.Context, sess *session, names []string, steps []*step, final func(ctx context.Context) (*outcome, error)) *mcp.CallToolResult {
	var total time.Duration
	for i, st := range steps {
		total += batchStepAllowance + st.takes
		if total > maxBatchDuration {
			return s.batchResult(batchTooLong, i, names, nil, fmt.Errorf("action %d (%s) brings the batch to %g s, over the limit of %g s for one batch (the waits and holds, plus %g s per action and %g s per typed character); split it into several batches",
				i+1, names[i], total.Round(time.Millisecond).Seconds(), maxBatchDuration.Seconds(), batchStepAllowance.Seconds(), batchTypeAllowance.Seconds()), nil)
		}
	}
	// The estimate bounds the batch; the deadline holds it to that even
	// when the desktop runs slower than the estimate.
	ctx, cancel := context.WithTimeoutCause(ctx, maxBatchDuration, fmt.Errorf("the batch ran past its limit of %g s", maxBatchDuration.Seconds()))
	defer cancel()

	var done []batchEntry
	var last *outcome
	var crops []captioned
	for i, st := range steps {
		st.action.Batch = &BatchPosition{Index: i, Count: len(steps)}
		out, err := s.runStep(ctx, sess, st)
		if err != nil {
			if final != nil {
				// What is held goes before the closing screenshot.
				s.releaseAll(ctx, names[i]+" failed")
			}
			return s.batchResult(batchFailed, i, names, done, err, s.closing(ctx, final), crops...)
		}
		done = append(done, batchEntry{Index: i, Action: names[i], Result: out.text, Effect: out.data["effect"]})
		last = nil
		switch {
		case out.image != nil && st.effect:
			// A crop of what the step changed, asked for by its show_change.
			crops = append(crops, captioned{caption: fmt.Sprintf("Action %d (%s) changed what this image shows:", i+1, names[i]), image: out.image})
		case out.image != nil:
			last = out
		}
	}
	img := last
	if final != nil {
		img = s.closing(ctx, final)
	}
	return s.batchResult(batchDone, len(steps), names, done, nil, img, crops...)
}

// closing takes a batch's closing screenshot, nil when there is none to
// take or it cannot be taken (the batch's own result says why it ended).
func (s *Server) closing(ctx context.Context, final func(ctx context.Context) (*outcome, error)) *outcome {
	if final == nil {
		return nil
	}
	out, err := final(ctx)
	if err != nil {
		s.log.Debug("taking the closing screenshot of a batch", "err", err)
		return nil
	}
	return out
}

func nameOr(name string) string {
	if name == "" {
		return "no action name"
	}
	return name
}

// parseBatchAction checks one batch item: its action name, its place (a
// screenshot only last) and its arguments.
func (s *Server) parseBatchAction(p *parser, item json.RawMessage, i, n int) (*step, string, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(item, &fields); err != nil || fields == nil {
		return nil, "", fmt.Errorf("each action must be an object such as {\"action\": \"left_click\", \"coordinate\": [100, 200]}, got %s", abbreviate(item))
	}
	rawName, ok := fields["action"]
	if !ok {
		return nil, "", fmt.Errorf("it has no \"action\" field; name the tool to run: %s", strings.Join(batchActions(), ", "))
	}
	var name string
	if err := json.Unmarshal(rawName, &name); err != nil {
		return nil, "", fmt.Errorf("\"action\" must be a tool name, got %s", abbreviate(rawName))
	}
	spec := s.spec(name)
	if spec == nil || !spec.Batchable {
		return nil, name, fmt.Errorf("%q cannot run in a batch; the batchable actions are %s", name, strings.Join(batchActions(), ", "))
	}
	if spec.BatchLast && i != n-1 {
		return nil, name, fmt.Errorf("%s may only be the last action of a batch, since every coordinate in a batch refers to the screenshot taken before it", name)
	}
	delete(fields, "action")
	rest, err := json.Marshal(fields)
	if err != nil {
		return nil, name, err
	}
	a, err := s.decodeArgs(name, rest, spec.newArgs())
	if err != nil {
		return nil, name, err
	}
	st, err := spec.Parse(p, a)
	if err != nil {
		return nil, name, err
	}
	withShowChange(st, a)
	return st, name, nil
}

type batchStatus int

const (
	batchDone batchStatus = iota
	batchInvalid
	batchTooLong // like batchInvalid, but no one action is at fault
	batchFailed
)

// batchResult reports a batch: completed, failed (with its error) and
// remaining actions; the final screenshot's image when it ended with one.
// crops are the images of what steps changed, where they asked for them.
func (s *Server) batchResult(status batchStatus, at int, names []string, done []batchEntry, err error, final *outcome, crops ...captioned) *mcp.CallToolResult {
	remaining := []batchEntry{}
	from := at
	if status == batchFailed {
		from = at + 1
	}
	if status == batchInvalid || status == batchTooLong {
		from = 0
	}
	for i := from; i < len(names); i++ {
		if (status == batchInvalid || status == batchTooLong) && i == at {
			continue
		}
		remaining = append(remaining, batchEntry{Index: i, Action: names[i]})
	}
	if done == nil {
		done = []batchEntry{}
	}
	data := map[string]any{"completed": done, "remaining": remaining}
	var b strings.Builder
	switch status {
	case batchDone:
		fmt.Fprintf(&b, "Ran all %d actions:", len(done))
		for _, e := range done {
			fmt.Fprintf(&b, "\n%d. %s: %s", e.Index+1, e.Action, e.Result)
		}
	case batchInvalid:
		data["failed"] = batchEntry{Index: at, Action: names[at], Error: err.Error()}
		fmt.Fprintf(&b, "Nothing was run: %v. Fix that action and send the batch again.", err)
	case batchTooLong:
		data["failed"] = batchEntry{Index: at, Action: names[at], Error: err.Error()}
		fmt.Fprintf(&b, "Nothing was run: %v.", err)
	case batchFailed:
		data["failed"] = batchEntry{Index: at, Action: names[at], Error: err.Error()}
		fmt.Fprintf(&b, "The batch stopped at action %d of %d (%s), which failed: %v.", at+1, len(names), names[at], err)
		if len(done) > 0 {
			b.WriteString(" Completed:")
			for _, e := range done {
				fmt.Fprintf(&b, " %d. %s: %s", e.Index+1, e.Action, e.Result)
			}
		} else {
			b.WriteString(" No action completed.")
		}
		if len(remaining) > 0 {
			b.WriteString(" Not run:")
			for _, e := range remaining {
				fmt.Fprintf(&b, " %d. %s;", e.Index+1, e.Action)
			}
		}
		b.WriteString(" Held buttons and keys were released; take a screenshot to see the current state.")
	}
	out := &outcome{text: b.String(), data: data, crops: crops}
	if final != nil {
		out.image = final.image
		data["screenshot"] = final.data
	}
	res := out.result()
	res.IsError = status != batchDone
	return res
}
