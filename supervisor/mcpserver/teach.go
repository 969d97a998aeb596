package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// Guided teaching (seed 000, "Guided teaching"): the model teaches the
// user a task step by step. Each step shows deskhand's tooltip next to an
// anchor with an explanation and a preview of what comes next; only the
// user answers it. Next runs the step's actions while the user watches,
// Exit ends the lesson with nothing run.
//
// The tooltip is the helper's overlay (Executor.TeachShow). Its buttons
// ignore synthetic input, so deskhand's own clicks cannot press them, and
// the server refuses every action aimed inside it while it is up
// (checkOverlay) as well. Showing a step passes the gates like any action
// (kill switch, display, access, lock and turn, hiding unapproved apps);
// each of its actions passes them again when it runs. The wait for the
// user gives the desktop's action slot back, so it blocks no other call,
// but it ends with the call's context: the user's Escape or the end of
// the turn takes the tooltip down and stops the lesson.

// Limits of a teaching call.
const (
	maxTeachSteps = 50
	// teachPollInterval is how often the wait asks the helper for the
	// user's answer.
	teachPollInterval = 100 * time.Millisecond
	// maxTeachWait bounds one step's wait for the user, so a lesson left
	// unattended gives the computer back.
	maxTeachWait = 30 * time.Minute
)

// teachState is the server's teaching state.
type teachState struct {
	mu      sync.Mutex
	offered bool
	// busy is set while a teaching call runs: one lesson step at a time,
	// since one overlay exists at a time.
	busy bool
	// overlay is where the tooltip is, while it is up.
	overlay *geometry.Rect
	// granted is set by request_teach_access, for the consent session's
	// revocation count then (an Escape since withdraws it).
	granted    bool
	grantEpoch int
}

// EnableTeaching offers the teaching tools, once; a server made with
// Options.Teach has them from the start. Clients connected meanwhile are
// told that the tool list changed. It does nothing for a profile or
// family that has no teaching tools (the openai profile, whose one tool
// cannot teach; the elements family).
func (s *Server) EnableTeaching() {
	tools := s.specs(s.profile, func(t *Tool) bool { return t.Teaching && (!t.Consent || s.consent != nil) })
	if len(tools) == 0 {
		return
	}
	s.teach.mu.Lock()
	if s.teach.offered {
		s.teach.mu.Unlock()
		return
	}
	s.teach.offered = true
	s.teach.mu.Unlock()
	for _, spec := range tools {
		s.mcp.AddTool(spec.tool(s.mode), spec.Handler(s))
	}
}

// teachEnvelope's arguments: a teach_step, or one step of teach_batch.
type teachStepArgs struct {
	Explanation string      `json:"explanation" max:"2000" jsonschema:"What this step is about, for the user to read in the tooltip."`
	NextPreview string      `json:"next_preview" max:"2000" jsonschema:"What clicking Next will do, such as \"I will type your name in the Name field\"."`
	Anchor      point       `json:"anchor,omitzero" jsonschema:"Where the tooltip points (optional): [x, y] in {coords}."`
	Actions     []batchItem `json:"actions,omitempty" jsonschema:"The actions Next runs, as computer_batch takes them, such as [{\"action\": \"left_click\", \"coordinate\": [100, 200]}, {\"action\": \"type\", \"text\": \"hello\"}]; empty or omitted for a step that only explains."`
	// raw is a teach_batch step as given, decoded as its own call.
	raw json.RawMessage
}

func (t *teachStepArgs) UnmarshalJSON(raw []byte) error { t.raw = raw; return nil }

type teachBatchArgs struct {
	Steps []teachStepArgs `json:"steps" jsonschema:"The steps, in order."`
}

// finishTeachStep completes the schema of a step: its actions are
// computer_batch's.
func (s *Server) finishTeachStep(step map[string]any) {
	actions := arrayProp(step, "actions", 0, maxBatchActions)
	s.finishBatchItem(actions["items"].(map[string]any))
}

func init() {
	register(&Tool{
		Name:  "request_teach_access",
		Title: "Request access to applications for teaching",
		Description: "Ask the user for permission to teach them a task in applications, with the teaching tools teach_step and teach_batch; call it before them. " +
			"It follows the same rules as request_access: the user approves or declines each app, and each grant flag, in a dialog (or by pre-approval), each app gets its tier, " +
			"and Escape withdraws everything. An app approved here is approved for the ordinary tools too. A request_access approval alone does not enable teaching.",
		Args:       requestAccessArgs{},
		Idempotent: true,
		Teaching:   true, Consent: true,
		Families: coordinateFamilies,
		Handler:  func(s *Server) mcp.ToolHandler { return s.handleRequestTeachAccess },
	}, &Tool{
		Name:  "teach_step",
		Title: "Teach one step",
		Description: "Show the user one step of a lesson in a tooltip on the screen and wait for them: explanation says what this step is about, next_preview what happens when they click Next. " +
			"anchor ([x, y] in {coords}) places the tooltip beside what the step is about. " +
			"When the user clicks Next, actions run (the computer_batch action schema, checked like computer_batch actions before anything is shown) while the user watches, and the result carries a fresh screenshot. " +
			"When the user clicks Exit or presses Escape, the result is {exited: true} and nothing runs: end the lesson. " +
			"Only the user can answer the tooltip; clicks at its position are refused. Call request_teach_access first.",
		Args:        teachStepArgs{},
		Destructive: true, OpenWorld: true,
		Teaching: true,
		Families: coordinateFamilies,
		// Showing a step puts deskhand's own tooltip up and sends nothing
		// to any app: the lock, the turn and the hiding apply, the tier
		// checks do not. The step's actions pass the gates one by one
		// under their own names when the user clicks Next.
		Gate:    looking,
		Schema:  func(s *Server, schema map[string]any) { s.finishTeachStep(schema) },
		Handler: func(s *Server) mcp.ToolHandler { return s.teachHandler("teach_step", s.runTeachStep) },
	}, &Tool{
		Name:  "teach_batch",
		Title: "Teach several steps",
		Description: "Teach several steps in one call: each step is shown as teach_step shows it, one after another, and the user clicks Next to run its actions or Exit to stop. " +
			"Every step's explanation, next_preview, anchor and actions are checked before the first tooltip shows; one invalid step and nothing is shown or run. " +
			"All anchors and coordinates of the batch are [x, y] in {coords} of the screenshot taken BEFORE the batch, even when a step takes a screenshot; anchor the next batch against the screenshot this one returns. " +
			"An action that fails stops the batch after what completed; the result lists the steps completed, the one that failed or that the user exited at, and those remaining. " +
			"A batch whose steps ran actions returns a final screenshot. Call request_teach_access first.",
		Args:        teachBatchArgs{},
		Destructive: true, OpenWorld: true,
		Teaching: true,
		Families: coordinateFamilies,
		Gate:     looking,
		Schema: func(s *Server, schema map[string]any) {
			step := arrayProp(schema, "steps", 1, maxTeachSteps)["items"].(map[string]any)
			delete(step, "additionalProperties")
			s.finishTeachStep(step)
		},
		Handler: func(s *Server) mcp.ToolHandler { return s.teachHandler("teach_batch", s.runTeachBatch) },
	})
}

// handleRequestTeachAccess is request_access, which also approves the
// session for teaching when it grants anything.
func (s *Server) handleRequestTeachAccess(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	epoch := s.consent.Session().Revocations()
	res, err := s.handleRequestAccess(ctx, req)
	if err != nil || res == nil || res.IsError || len(res.InputRequests) > 0 {
		return res, err
	}
	s.teach.mu.Lock()
	s.teach.granted, s.teach.grantEpoch = true, epoch
	s.teach.mu.Unlock()
	return res, nil
}

// teachRefusal says why the teaching tools may not run yet, nil when they
// may.
func (s *Server) teachRefusal() error {
	if s.consent == nil {
		return nil
	}
	sess := s.consent.Session()
	if sess.Stopped() {
		return ErrStoppedByUser
	}
	s.teach.mu.Lock()
	ok := s.teach.granted && s.teach.grantEpoch == sess.Revocations()
	s.teach.mu.Unlock()
	if !ok || !sess.Granted() {
		return errors.New("teaching is not approved for this session yet. Call request_teach_access first, with the apps the lesson uses and a reason the user will see; then take a screenshot")
	}
	return nil
}

// teachEnvelope is one checked step of a lesson.
type teachEnvelope struct {
	explanation string
	nextPreview string
	anchor      *geometry.Point
	names       []string
	steps       []*step
}

// parseTeachEnvelope checks one step: its texts, its anchor (converted
// through p, so against p's screenshot) and its actions.
func (s *Server) parseTeachEnvelope(p *parser, tool string, in *teachStepArgs) (*teachEnvelope, error) {
	env := &teachEnvelope{explanation: in.Explanation, nextPreview: in.NextPreview}
	for _, f := range []struct{ name, v, what string }{
		{"explanation", in.Explanation, "what this step is about, for the user to read"},
		{"next_preview", in.NextPreview, "what clicking Next will do"},
	} {
		if strings.TrimSpace(f.v) == "" {
			return nil, fmt.Errorf("%s: %q is empty; give %s", tool, f.name, f.what)
		}
	}
	anchor, _, err := p.point(tool, "anchor", in.Anchor)
	if err != nil {
		return nil, err
	}
	env.anchor = anchor
	if len(in.Actions) > maxBatchActions {
		return nil, fmt.Errorf("%s: %d actions is over the limit of %d per step; split them over several steps", tool, len(in.Actions), maxBatchActions)
	}
	var total time.Duration
	for i, item := range in.Actions {
		st, name, err := s.parseBatchAction(p, item.raw, i, len(in.Actions))
		if err != nil {
			return nil, fmt.Errorf("%s: action %d (%s) is invalid: %w", tool, i+1, nameOr(name), err)
		}
		if total += batchStepAllowance + st.takes; total > maxBatchDuration {
			return nil, fmt.Errorf("%s: action %d (%s) brings the step to %g s, over the limit of %g s for one step; split it over several steps", tool, i+1, name, total.Seconds(), maxBatchDuration.Seconds())
		}
		env.names = append(env.names, name)
		env.steps = append(env.steps, st)
	}
	return env, nil
}

// teachHandler adapts a teaching tool: unlike the others it takes the
// action slot itself, since it gives it back while it waits for the user.
func (s *Server) teachHandler(name string, run func(ctx context.Context, sess *session, raw []byte) *mcp.CallToolResult) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		sess := s.sessionFor(req.Session)
		if s.actx != nil {
			var done context.CancelFunc
			ctx, done = s.actx(ctx)
			defer done()
		}
		if err := s.teachRefusal(); err != nil {
			return errorResult(fmt.Errorf("%s: %w", name, err)), nil
		}
		s.teach.mu.Lock()
		if s.teach.busy {
			s.teach.mu.Unlock()
			return errorResult(fmt.Errorf("%s: another teaching step is on the screen, waiting for the user; wait for that call to return before the next step", name)), nil
		}
		s.teach.busy = true
		s.teach.mu.Unlock()
		defer func() {
			s.teach.mu.Lock()
			s.teach.busy = false
			s.teach.mu.Unlock()
		}()
		start := time.Now()
		res := run(ctx, sess, req.Params.Arguments)
		if res.IsError {
			s.releaseAll(ctx, name+" failed")
		}
		s.log.Debug("tool call", "tool", name, "error", res.IsError, "took", time.Since(start))
		return res, nil
	}
}

// takeSlot waits for the desktop's action slot (see Server.act).
func (s *Server) takeSlot(ctx context.Context, tool string) error {
	select {
	case s.act <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s was cancelled while waiting for the previous action to finish (%v)", tool, context.Cause(ctx))
	}
}

func (s *Server) giveSlot() { <-s.act }

func (s *Server) runTeachStep(ctx context.Context, sess *session, raw []byte) *mcp.CallToolResult {
	const tool = "teach_step"
	in := &teachStepArgs{}
	if _, err := s.decodeArgs(tool, raw, in); err != nil {
		return errorResult(fmt.Errorf("nothing was shown: %w", err))
	}
	if err := s.takeSlot(ctx, tool); err != nil {
		return errorResult(err)
	}
	held := true
	defer func() {
		if held {
			s.giveSlot()
		}
	}()
	p, err := s.newParser(ctx, sess, nil)
	if err != nil {
		return errorResult(err)
	}
	env, err := s.parseTeachEnvelope(p, tool, in)
	if err != nil {
		return errorResult(fmt.Errorf("nothing was shown: %w", err))
	}
	choice, err := s.showAndWait(ctx, sess, tool, env, nil, &held)
	if err != nil {
		return s.teachStopped(tool, err, nil)
	}
	if choice == bridge.TeachExit {
		return (&outcome{
			text: "The user clicked Exit: the lesson is over and nothing ran. Do not show more steps; ask the user what they want to do next.",
			data: map[string]any{"exited": true, "choice": choice},
		}).result()
	}
	done, err := s.runTeachActions(ctx, sess, env)
	if err != nil {
		return s.teachActionFailed(tool, env, done, err)
	}
	shot, err := s.runStep(ctx, sess, mustScreenshot(p))
	data := map[string]any{"exited": false, "choice": choice, "completed": done}
	var b strings.Builder
	fmt.Fprintf(&b, "The user clicked Next")
	if len(done) == 0 {
		b.WriteString("; the step had no actions.")
	} else {
		fmt.Fprintf(&b, "; ran its %d actions:", len(done))
		for _, e := range done {
			fmt.Fprintf(&b, " %d. %s: %s", e.Index+1, e.Action, e.Result)
		}
	}
	out := &outcome{data: data}
	if err != nil {
		fmt.Fprintf(&b, " The screenshot after it could not be taken (%v); take one before the next step.", err)
	} else {
		b.WriteString(" " + shot.text)
		data["screenshot"] = shot.data
		out.image = shot.image
	}
	out.text = b.String()
	return out.result()
}

func mustScreenshot(p *parser) *step {
	st, _ := p.screenshot()
	return st
}

// showAndWait passes the showing of a step through the gates, shows the
// tooltip and waits for the user's choice with the action slot given back
// (*held tracks whether the caller holds it). The tooltip is down again
// when it returns, with the slot held unless ctx ended.
func (s *Server) showAndWait(ctx context.Context, sess *session, tool string, env *teachEnvelope, pos *BatchPosition, held *bool) (string, error) {
	act := Action{Tool: tool, Session: sess.id, Batch: pos}
	if err := s.checkGates(ctx, &act); err != nil {
		return "", err
	}
	req := bridge.TeachShowRequest{Explanation: env.explanation, NextPreview: env.nextPreview, Anchor: env.anchor}
	if pos != nil {
		req.Step, req.Total = pos.Index+1, pos.Count
	}
	shown, err := s.exec.TeachShow(ctx, req)
	if err != nil {
		var be *bridge.Error
		if errors.As(err, &be) && (be.Code == bridge.CodeMethodNotFound || be.Code == bridge.CodeUnsupported) {
			return "", fmt.Errorf("this desktop's capture helper cannot show the teaching tooltip (%v); teaching is not available here, so explain the steps in your reply instead", err)
		}
		return "", fmt.Errorf("showing the teaching tooltip: %w", err)
	}
	bounds := shown.Bounds
	s.log.Debug("teaching tooltip shown", "tool", tool, "bounds", rectWords(shown.Bounds), "next", rectWords(shown.Next), "exit", rectWords(shown.Exit))
	s.teach.mu.Lock()
	s.teach.overlay = &bounds
	s.teach.mu.Unlock()

	*held = false
	s.giveSlot()
	choice, werr := s.waitForChoice(ctx)
	// The tooltip goes down before the slot is taken again: whatever
	// runs next must not find it on the screen.
	s.teach.mu.Lock()
	s.teach.overlay = nil
	s.teach.mu.Unlock()
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	herr := s.exec.TeachHide(hctx)
	cancel()
	if werr != nil {
		return "", werr
	}
	if herr != nil {
		return "", fmt.Errorf("taking the teaching tooltip down: %w", herr)
	}
	if err := s.takeSlot(ctx, tool); err != nil {
		return "", err
	}
	*held = true
	return choice, nil
}

// rectWords is a rectangle as the logs give it: "X,Y,WxH".
func rectWords(r geometry.Rect) string {
	return fmt.Sprintf("%d,%d,%dx%d", r.X, r.Y, r.Width, r.Height)
}

// waitForChoice polls the overlay until the user chose, the overlay went
// away without a choice, or ctx ended.
func (s *Server) waitForChoice(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, maxTeachWait, fmt.Errorf("the user did not answer the teaching tooltip within %v", maxTeachWait))
	defer cancel()
	tick := time.NewTicker(teachPollInterval)
	defer tick.Stop()
	for {
		st, err := s.exec.TeachPoll(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return "", stoppedErr(ctx)
			}
			return "", fmt.Errorf("reading the user's answer to the teaching tooltip: %w", err)
		}
		if st.Choice != "" {
			return st.Choice, nil
		}
		if !st.Visible {
			return "", errors.New("the teaching tooltip went away before the user answered it (the capture helper may have restarted); show the step again")
		}
		select {
		case <-ctx.Done():
			return "", stoppedErr(ctx)
		case <-tick.C:
		}
	}
}

// errTeachStopped marks a lesson that ended while waiting for the user.
var errTeachStopped = errors.New("the lesson was stopped while the tooltip waited for the user")

func stoppedErr(ctx context.Context) error {
	return fmt.Errorf("%w: %v", errTeachStopped, context.Cause(ctx))
}

// runTeachActions runs a step's actions through the gates, in order, until
// one fails; done lists those that completed.
func (s *Server) runTeachActions(ctx context.Context, sess *session, env *teachEnvelope) (done []batchEntry, err error) {
	done = []batchEntry{}
	if len(env.steps) == 0 {
		return done, nil
	}
	ctx, cancel := context.WithTimeoutCause(ctx, maxBatchDuration, fmt.Errorf("the step's actions ran past their limit of %g s", maxBatchDuration.Seconds()))
	defer cancel()
	for i, st := range env.steps {
		st.action.Batch = &BatchPosition{Index: i, Count: len(env.steps)}
		out, err := s.runStep(ctx, sess, st)
		if err != nil {
			return done, fmt.Errorf("action %d (%s) failed: %w", i+1, env.names[i], err)
		}
		done = append(done, batchEntry{Index: i, Action: env.names[i], Result: out.text})
	}
	return done, nil
}

// teachStopped reports a step that never ran: the gates refused showing
// it, the helper failed, or the wait ended without the user's answer.
func (s *Server) teachStopped(tool string, err error, data map[string]any) *mcp.CallToolResult {
	if data == nil {
		data = map[string]any{}
	}
	text := fmt.Sprintf("%s: nothing ran: %v.", tool, err)
	if errors.Is(err, errTeachStopped) {
		data["exited"] = true
		text += " The lesson is over; stop and ask the user how to continue."
	}
	data["error"] = err.Error()
	res := (&outcome{text: text, data: data}).result()
	res.IsError = true
	return res
}

// teachActionFailed reports a teach_step whose actions stopped at a
// failure.
func (s *Server) teachActionFailed(tool string, env *teachEnvelope, done []batchEntry, err error) *mcp.CallToolResult {
	failed := batchEntry{Index: len(done), Action: env.names[len(done)], Error: err.Error()}
	remaining := []batchEntry{}
	for i := len(done) + 1; i < len(env.names); i++ {
		remaining = append(remaining, batchEntry{Index: i, Action: env.names[i]})
	}
	text := fmt.Sprintf("%s: the user clicked Next, but %v. %d of %d actions completed. Held buttons and keys were released; take a screenshot to see the current state.", tool, err, len(done), len(env.names))
	res := (&outcome{text: text, data: map[string]any{"exited": false, "completed": done, "failed": failed, "remaining": remaining}}).result()
	res.IsError = true
	return res
}

// teachStepEntry reports one step of a teach_batch.
type teachStepEntry struct {
	Index   int          `json:"index"` // 0-based
	Actions []batchEntry `json:"actions,omitempty"`
	Error   string       `json:"error,omitempty"`
}

func (s *Server) runTeachBatch(ctx context.Context, sess *session, raw []byte) *mcp.CallToolResult {
	const tool = "teach_batch"
	in := &teachBatchArgs{}
	if _, err := s.decodeArgs(tool, raw, in); err != nil {
		return errorResult(err)
	}
	items := in.Steps
	if len(items) == 0 {
		return errorResult(fmt.Errorf("%s: \"steps\" is empty; give at least one step", tool))
	}
	if len(items) > maxTeachSteps {
		return errorResult(fmt.Errorf("%s: %d steps is over the limit of %d per batch; split the lesson into several batches", tool, len(items), maxTeachSteps))
	}
	if err := s.takeSlot(ctx, tool); err != nil {
		return errorResult(err)
	}
	held := true
	defer func() {
		if held {
			s.giveSlot()
		}
	}()

	// Every envelope is checked, and every anchor and coordinate
	// converted, against the one screenshot before the batch: a
	// screenshot a step takes does not move later steps' points.
	p, err := s.newParser(ctx, sess, nil)
	if err != nil {
		return errorResult(err)
	}
	_, _ = p.shot()
	envs := make([]*teachEnvelope, len(items))
	for i, item := range items {
		step := fmt.Sprintf("step %d", i+1)
		_, err := s.decodeArgs(step, item.raw, &item)
		if err == nil {
			envs[i], err = s.parseTeachEnvelope(p, step, &item)
		}
		if err != nil {
			return s.teachBatchResult(teachBatchInvalid, i, len(items), nil, err, nil)
		}
	}

	var done []teachStepEntry
	anyActions := false
	for i, env := range envs {
		pos := &BatchPosition{Index: i, Count: len(envs)}
		choice, err := s.showAndWait(ctx, sess, tool, env, pos, &held)
		if err != nil {
			return s.teachBatchResult(teachBatchStopped, i, len(envs), done, err, nil)
		}
		if choice == bridge.TeachExit {
			return s.teachBatchResult(teachBatchExited, i, len(envs), done, nil, nil)
		}
		ran, err := s.runTeachActions(ctx, sess, env)
		if err != nil {
			s.releaseAll(ctx, tool+" failed")
			return s.teachBatchResult(teachBatchFailed, i, len(envs), append(done, teachStepEntry{Index: i, Actions: ran, Error: err.Error()}), err, nil)
		}
		anyActions = anyActions || len(env.steps) > 0
		done = append(done, teachStepEntry{Index: i, Actions: ran})
	}
	var final *outcome
	if anyActions {
		shot, err := s.runStep(ctx, sess, mustScreenshot(p))
		if err != nil {
			s.log.Debug("taking the closing screenshot of a teach_batch", "err", err)
		} else {
			final = shot
		}
	}
	return s.teachBatchResult(teachBatchDone, len(envs), len(envs), done, nil, final)
}

type teachBatchStatus int

const (
	teachBatchDone teachBatchStatus = iota
	teachBatchInvalid
	teachBatchStopped // the gates refused a step, or the wait ended
	teachBatchExited
	teachBatchFailed
)

// teachBatchResult reports a teach_batch: the completed steps, the one it
// stopped at (failed or exited) and those remaining.
func (s *Server) teachBatchResult(status teachBatchStatus, at, n int, steps []teachStepEntry, err error, final *outcome) *mcp.CallToolResult {
	completed := []teachStepEntry{}
	var failed *teachStepEntry
	for _, e := range steps {
		if e.Error != "" {
			failed = &e
			continue
		}
		completed = append(completed, e)
	}
	if status == teachBatchInvalid || status == teachBatchStopped {
		failed = &teachStepEntry{Index: at, Error: err.Error()}
	}
	remaining := []teachStepEntry{}
	for i := 0; i < n; i++ {
		// The step exited at ran nothing, so it remains; a failed or
		// invalid one is reported as failed.
		if i > at || (i == at && status == teachBatchExited) || (i < at && status == teachBatchInvalid) {
			remaining = append(remaining, teachStepEntry{Index: i})
		}
	}
	data := map[string]any{"completed": completed, "remaining": remaining, "exited": status == teachBatchExited || (status == teachBatchStopped && errors.Is(err, errTeachStopped))}
	if failed != nil {
		data["failed"] = failed
	}
	var b strings.Builder
	switch status {
	case teachBatchDone:
		fmt.Fprintf(&b, "The user went through all %d steps.", n)
		for _, e := range completed {
			fmt.Fprintf(&b, " Step %d: %d actions.", e.Index+1, len(e.Actions))
		}
	case teachBatchInvalid:
		fmt.Fprintf(&b, "Nothing was shown or run: step %d of %d is invalid: %v. Fix that step and send the batch again.", at+1, n, err)
	case teachBatchStopped:
		fmt.Fprintf(&b, "The batch stopped at step %d of %d, before it ran anything: %v.", at+1, n, err)
		if errors.Is(err, errTeachStopped) {
			b.WriteString(" The lesson is over; stop and ask the user how to continue.")
		}
	case teachBatchExited:
		fmt.Fprintf(&b, "The user clicked Exit at step %d of %d: the lesson is over and that step ran nothing. Do not show more steps; ask the user what they want to do next.", at+1, n)
	case teachBatchFailed:
		fmt.Fprintf(&b, "The batch stopped at step %d of %d: the user clicked Next, but %v. Held buttons and keys were released; take a screenshot to see the current state.", at+1, n, err)
	}
	if status != teachBatchDone && status != teachBatchInvalid {
		fmt.Fprintf(&b, " Steps completed: %d; remaining: %d.", len(completed), len(remaining))
	}
	out := &outcome{text: b.String(), data: data}
	if final != nil {
		out.text += " " + final.text
		out.image = final.image
		data["screenshot"] = final.data
	}
	res := out.result()
	res.IsError = status == teachBatchInvalid || status == teachBatchStopped || status == teachBatchFailed
	return res
}

// checkOverlay refuses an action aimed inside the teaching tooltip while
// it is up: its buttons are the user's answer, never the model's.
func (s *Server) checkOverlay(a *Action) error {
	s.teach.mu.Lock()
	overlay := s.teach.overlay
	s.teach.mu.Unlock()
	if overlay == nil {
		return nil
	}
	for _, pt := range []*geometry.Point{a.From, a.Target} {
		if pt != nil && overlay.Contains(*pt) {
			return fmt.Errorf("screen point (%d, %d) is on deskhand's teaching tooltip, whose Next and Exit buttons only the user may press. "+
				"Wait for the user to answer it (teach_step or teach_batch returns then); do not click it yourself", pt.X, pt.Y)
		}
	}
	return nil
}
