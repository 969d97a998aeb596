// Package mcpserver is deskhand's MCP layer: the computer-use tools
// (screenshot, zoom, clicks, typing, keys, clipboard, applications,
// computer_batch …, and the guided-teaching tools teach_step and teach_batch
// of teach.go) with their schemas, argument checking and dispatch, the
// per-session screenshot geometry every coordinate is converted through,
// and the hook where the safety layer's gates run before each action.
//
// The tools act through an Executor, declared here; package executor
// provides the real one. A tool that cannot do what was asked returns a
// result with IsError set and a message that tells the model what to do
// next; Go errors are kept for protocol failures.
//
// Each tool is one entry of the registry (registry.go, Tool): its typed
// arguments, description, gate kind, families, profiles and handler.
// The schemas, computer_batch's actions, the families and profiles on
// offer and the gates' classification (Classify) are derived from it.
//
// StdioTransport carries MCP over stdin and stdout; unlike the go-sdk's
// own, it answers a malformed line with a JSON-RPC error and keeps
// serving, instead of ending the session.
//
// The tools' names and arguments are those of the member tools of
// Anthropic's computer_toolset_20260801, so a harness forwards each
// tool_use block as a tools/call unchanged. The openai tool profile
// offers instead one tool, computer, that takes the actions of an OpenAI
// computer_call, runs them like computer_batch and always answers with a
// screenshot. Screenshots are sized to geometry.Limits, which may come
// from a model family's preset (geometry.Presets); each screenshot's data
// carries the scale as a receipt.
//
// Options.Tools picks the families: the coordinate tools above, the
// element tools of seed 002 (list_apps, get_app_state, click by
// element_id, type_text, press_key, perform_action, set_value, scroll,
// drag, launch_app; elements.go), which read an app's accessibility tree
// and act on its elements by id, through the accessibility API where it
// can (in the background) and by synthetic input otherwise, or both, with
// wait_for. Where both families want one name (scroll), one tool takes
// either form.
//
// Tool results carry a human-readable text block and, for tools without an
// image, the same facts as structured content. Screenshot and zoom results
// carry the image and the facts as a JSON text block instead of structured
// content: some clients (Claude Code among them) show the model only the
// structured content when it is present and drop the image.
package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/speedups"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/record"
)

// ServerName is the MCP server name, and the name deskhand's docs register
// it under, so clients show the tools as mcp__deskhand__screenshot. Not
// "computer-use": Claude Code reserves that name and refuses to add it.
const ServerName = "deskhand"

// Image formats for screenshots.
const (
	FormatJPEG = bridge.FormatJPEG
	FormatPNG  = bridge.FormatPNG
)

// DefaultJPEGQuality is the JPEG quality used when Options leaves it 0.
const DefaultJPEGQuality = 80

// Options configure a Server.
type Options struct {
	// Executor performs the actions. Required unless Unavailable is set.
	Executor Executor
	// Unavailable, when set, is why this server cannot act: a problem
	// found at startup (no display, a corrupt pre-approval file), with its
	// fix. The tools are offered as usual, so the client connects and the
	// model is told, and every call returns this as a tool error.
	Unavailable error
	// Mode is the coordinate convention; empty means geometry.ModePixels.
	Mode geometry.Mode
	// Limits bound screenshot sizes; zero fields take ImagePreset's, else
	// the defaults.
	Limits geometry.Limits
	// ImagePreset names the geometry.Presets entry the limits come from;
	// every screenshot's receipt names it.
	ImagePreset string
	// ToolProfile chooses the tools offered: ProfileDefault (empty) or
	// ProfileOpenAI.
	ToolProfile string
	// Tools chooses the families of the default profile: ToolsAll (empty),
	// ToolsCoordinates or ToolsElements (see ToolFamilies).
	Tools string
	// Format is FormatJPEG (the default) or FormatPNG.
	Format string
	// JPEGQuality is 1–100; 0 means DefaultJPEGQuality.
	JPEGQuality int
	// StatePath is the state file that keeps the last screenshot's
	// geometry and the selected display across restarts (see
	// geometry.StatePath); empty keeps them in memory only.
	StatePath string
	// Display names the desktop the server drives, as its platform names
	// it (":1" on X11); it is recorded in the state file, and a state of
	// another display is not restored.
	Display string
	// Gates run, in order, before every action (see Gate).
	Gates []Gate
	// ActionContext, when set, derives the context each tool call runs
	// under and returns the function to call when the call is over. The
	// safety layer cancels that context, with a cause the model is shown,
	// to stop a call (and the rest of a batch) when the user takes the
	// computer back.
	ActionContext func(ctx context.Context) (context.Context, context.CancelFunc)
	// Consent, when set, adds the request_access and
	// list_granted_applications tools and the consent instructions.
	Consent *consent.Manager
	// Logger receives the server's records; nil discards them.
	Logger *slog.Logger
	// Version is reported to clients as the server version.
	Version string
	// Record, when set, gets a line per tool call: arguments, the gates'
	// decisions, the result and the duration (package record).
	Record *record.Log
	// Teach offers the teaching tools (request_teach_access, teach_step,
	// teach_batch; teach.go) from the start; EnableTeaching offers them
	// later. The Executor must be able to show the overlay.
	Teach bool
	// OneView makes every MCP session of the server share one view (the
	// screenshot coordinates refer to, the selected display), and keeps
	// held buttons and keys when one ends: for stateless HTTP, where each
	// request is a session of its own.
	OneView bool
	// Effect, when set, makes every input action report what it changed
	// (effect.go).
	Effect *EffectOptions
}

// Server serves the computer-use tools.
type Server struct {
	exec    Executor
	mode    geometry.Mode
	limits  geometry.Limits
	preset  string
	profile string
	family  string
	format  string
	quality int
	gates   []Gate
	actx    func(ctx context.Context) (context.Context, context.CancelFunc)
	consent *consent.Manager
	log     *slog.Logger
	display string
	// inflight is the tool call whose client asked for progress, for
	// Progress; nil when none is running.
	inflight atomic.Pointer[progressTarget]
	// down is Options.Unavailable: every tool call answers it.
	down  error
	tools []*toolSpec
	mcp   *mcp.Server
	teach teachState
	// splice is set while Run serves a StdioTransport (see imageSplicer).
	splice atomic.Pointer[imageSplicer]
	// shotDisplays is the display list the last screenshot's capture
	// carried, for placing the next one without asking (shotdisplays.go).
	shotDisplays shotDisplays

	// act serializes actions: the desktop has one pointer and one
	// keyboard, and every coordinate refers to the screenshot the previous
	// action left behind. A channel, so that a call waiting its turn can
	// give up when its client cancels it.
	act chan struct{}

	mu       sync.Mutex
	sessions map[*mcp.ServerSession]*session
	restored geometry.State
	oneView  bool
	shared   *session // the one view, with oneView
	effect   *EffectOptions
	ongoing  []geometry.Rect // the areas changing by themselves (effect.go)
	tail     []geometry.Rect // the last action's change, still going (effect.go)

	statePath string
	saveMu    sync.Mutex
	pending   *geometry.State
	saving    bool
	saveWG    sync.WaitGroup
}

// session is one MCP session's view: the screenshot its coordinates refer
// to and the display it selected.
type session struct {
	id string

	mu       sync.Mutex
	last     *geometry.Shot
	verified bool // last was taken by this process, or checked against the displays
	selected *uint32
	elems    *elementStore // the element tools' ids, made on first use
}

func (ss *session) snapshot() (last *geometry.Shot, verified bool, selected *uint32) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.last, ss.verified, ss.selected
}

// New returns a Server for opts. It reads the state file but touches
// neither the display nor the executor.
func New(opts Options) (*Server, error) {
	if opts.Executor == nil && opts.Unavailable == nil {
		return nil, errors.New("mcpserver: Options.Executor is required")
	}
	s := &Server{
		act:       make(chan struct{}, 1),
		exec:      opts.Executor,
		mode:      opts.Mode,
		limits:    opts.Limits,
		format:    opts.Format,
		quality:   opts.JPEGQuality,
		gates:     slices.Clone(opts.Gates),
		actx:      opts.ActionContext,
		consent:   opts.Consent,
		log:       opts.Logger,
		display:   opts.Display,
		sessions:  map[*mcp.ServerSession]*session{},
		statePath: opts.StatePath,
		oneView:   opts.OneView,
		down:      opts.Unavailable,
		effect:    opts.Effect,
	}
	if s.effect != nil && s.effect.Off {
		s.effect = nil
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.mode == "" {
		s.mode = geometry.ModePixels
	}
	if _, err := geometry.ParseMode(string(s.mode)); err != nil {
		return nil, err
	}
	if opts.ImagePreset != "" {
		p, err := geometry.LookupPreset(opts.ImagePreset)
		if err != nil {
			return nil, err
		}
		if s.limits.MaxLongEdge == 0 {
			s.limits.MaxLongEdge = p.Limits.MaxLongEdge
		}
		if s.limits.MaxTokens == 0 {
			s.limits.MaxTokens = p.Limits.MaxTokens
		}
		if s.limits.TokenPx == 0 {
			s.limits.TokenPx = p.Limits.TokenPx
		}
	}
	if s.limits.MaxLongEdge == 0 {
		s.limits.MaxLongEdge = geometry.DefaultMaxLongEdge
	}
	if s.limits.MaxTokens == 0 {
		s.limits.MaxTokens = geometry.DefaultMaxTokens
	}
	if s.limits.TokenPx == 0 {
		s.limits.TokenPx = geometry.DefaultTokenPx
	}
	if err := s.limits.Validate(); err != nil {
		return nil, err
	}
	// The receipt names the preset whose limits are in force, whether
	// asked for by name or not; limits of no preset are "custom".
	s.preset = "custom"
	for _, p := range geometry.Presets {
		if p.Limits == s.limits {
			s.preset = p.Name
			break
		}
	}
	switch s.profile = opts.ToolProfile; s.profile {
	case "":
		s.profile = ProfileDefault
	case ProfileDefault, ProfileOpenAI:
	default:
		return nil, fmt.Errorf("unknown tool profile %q: use %s", s.profile, strings.Join(ToolProfiles, " or "))
	}
	switch s.family = opts.Tools; s.family {
	case "":
		s.family = ToolsAll
	case ToolsAll, ToolsCoordinates, ToolsElements:
	default:
		return nil, fmt.Errorf("unknown tool family %q: use %s", s.family, strings.Join(ToolFamilies, ", "))
	}
	if s.profile == ProfileOpenAI && s.family == ToolsElements {
		return nil, fmt.Errorf("the %s tool profile offers the coordinate tools only: use tools %s or %s with it", ProfileOpenAI, ToolsAll, ToolsCoordinates)
	}
	if s.profile == ProfileOpenAI && s.mode != geometry.ModePixels {
		return nil, fmt.Errorf("the %s tool profile takes OpenAI's coordinates, pixels of the screenshot: use coordinate mode %s, not %s", ProfileOpenAI, geometry.ModePixels, s.mode)
	}
	switch s.format {
	case "":
		s.format = FormatJPEG
	case FormatJPEG, FormatPNG:
	default:
		return nil, fmt.Errorf("unknown screenshot format %q: use %q or %q", s.format, FormatJPEG, FormatPNG)
	}
	if s.quality == 0 {
		s.quality = DefaultJPEGQuality
	}
	if s.quality < 1 || s.quality > 100 {
		return nil, fmt.Errorf("JPEG quality %d is out of range: use 1–100", s.quality)
	}
	if s.statePath != "" {
		st, err := geometry.LoadState(s.statePath)
		switch {
		case err != nil:
			s.log.Warn("ignoring the state file", "path", s.statePath, "err", err)
		case st.Display != "" && s.display != "" && st.Display != s.display:
			s.log.Info("state file belongs to another display; not restoring it", "path", s.statePath, "state_display", st.Display, "display", s.display)
		default:
			s.restored = st
			if st.LastShot != nil {
				s.log.Debug("restored the last screenshot's geometry", "display", st.LastShot.DisplayName, "image", st.LastShot.Image)
			}
		}
	}

	version := opts.Version
	if version == "" {
		version = "dev"
	}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: ServerName, Title: "deskhand computer use", Version: version}, &mcp.ServerOptions{
		Instructions: s.instructions(),
		Logger:       slog.New(demote{s.log.Handler()}),
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
	})
	s.mcp.AddReceivingMiddleware(s.trackProgress)
	if opts.Record != nil {
		s.mcp.AddReceivingMiddleware(recordCalls(opts.Record, s.log))
	}
	s.tools = s.toolSpecs()
	offered := s.tools
	if s.profile != ProfileDefault {
		// The computer tool runs deskhand's own tools, which stay known
		// to it but are not offered.
		offered = s.specs(s.profile, func(t *Tool) bool { return !t.Teaching && !t.Consent })
	}
	consentTools := s.specs(s.profile, func(t *Tool) bool { return t.Consent && !t.Teaching })
	if s.down != nil {
		for _, spec := range append(offered, consentTools...) {
			s.mcp.AddTool(spec.tool(s.mode), s.unavailable)
		}
		return s, nil
	}
	for _, spec := range offered {
		s.mcp.AddTool(spec.tool(s.mode), s.handler(spec))
	}
	if s.consent != nil {
		for _, spec := range consentTools {
			s.mcp.AddTool(spec.tool(s.mode), spec.Handler(s))
		}
	}
	if opts.Teach {
		s.EnableTeaching()
	}
	return s, nil
}

func (s *Server) instructions() string {
	coords := "pixels of the latest screenshot, origin top-left"
	if s.mode == geometry.ModeNormalized {
		coords = "percentages (0–100) of the latest screenshot's width and height"
	}
	if s.profile == ProfileOpenAI {
		return "Operate this computer's desktop with the computer tool: send it a computer_call's actions; it runs them in order and returns a screenshot. " +
			"Coordinates are pixels of the latest screenshot, origin top-left. Call it with no actions to take the first screenshot." + s.consentInstructions()
	}
	switch s.family {
	case ToolsElements:
		return elementInstructions + s.consentInstructions()
	case ToolsAll:
		return "Operate this computer's desktop: take a screenshot first, then act with the pointer and keyboard tools. " +
			"Coordinates are [x, y] in " + coords + "; take a new screenshot after the screen changes. " +
			"Use computer_batch for a predictable sequence of actions in one call. " + elementInstructions +
			" To wait for something to happen, use wait_for (an element, a window or a still screen region) rather than wait or sleeping." + s.consentInstructions()
	}
	return "Operate this computer's desktop: take a screenshot first, then act with the pointer and keyboard tools. " +
		"Coordinates are [x, y] in " + coords + "; take a new screenshot after the screen changes. " +
		"Use computer_batch for a predictable sequence of actions in one call." + s.consentInstructions()
}

// MCP returns the underlying go-sdk server, for transports other than
// those Run takes.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// Notify sends msg to every connected client as an MCP log notification
// (notifications/message, logger "deskhand") at level ("info", "warning",
// ...), for clients that asked for logs at that level. It is how work
// that outlives one tool call's text, such as installing the capture
// helper on first use, stays visible to the user.
func (s *Server) Notify(ctx context.Context, level mcp.LoggingLevel, msg string) {
	for ss := range s.mcp.Sessions() {
		if err := ss.Log(ctx, &mcp.LoggingMessageParams{Level: level, Logger: "deskhand", Data: msg}); err != nil {
			s.log.Debug("sending a log notification", "err", err)
		}
	}
}

// progressTarget is a tool call that carried a progress token.
type progressTarget struct {
	ss    *mcp.ServerSession
	token any
	mu    sync.Mutex
	sent  float64
}

// trackProgress remembers the tool call in flight that asked for
// progress (a progressToken in its _meta), for Progress.
func (s *Server) trackProgress(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		call, ok := req.(*mcp.CallToolRequest)
		if !ok || call.Params == nil || call.Params.GetProgressToken() == nil {
			return next(ctx, method, req)
		}
		p := &progressTarget{ss: call.Session, token: call.Params.GetProgressToken()}
		s.inflight.Store(p)
		defer s.inflight.CompareAndSwap(p, nil)
		return next(ctx, method, req)
	}
}

// Progress tells the client whose tool call is in flight what deskhand is
// doing for it (a helper download), as notifications/progress, when that
// call asked for progress; it reports nothing otherwise.
func (s *Server) Progress(ctx context.Context, msg string) {
	p := s.inflight.Load()
	if p == nil {
		return
	}
	p.mu.Lock()
	p.sent++
	n := p.sent
	p.mu.Unlock()
	if err := p.ss.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token, Message: msg, Progress: n}); err != nil {
		s.log.Debug("sending a progress notification", "err", err)
	}
}

// Run serves one client over t until it disconnects or ctx is done, then
// releases every button and key still held and writes the state file.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error {
	if st, ok := t.(*StdioTransport); ok && speedups.On(speedups.Splice) {
		// Only this transport can put an image back in place of its
		// placeholder; results for any other carry their images.
		sp := newImageSplicer()
		st.splice = sp
		s.splice.Store(sp)
		defer s.splice.Store(nil)
	}
	err := s.mcp.Run(ctx, t)
	s.Close()
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// Close releases every button and key still held and waits for pending
// state-file writes. It does not close the executor.
func (s *Server) Close() {
	s.releaseAll(context.Background(), "server stopping")
	s.saveWG.Wait()
}

// sessionFor returns the state of ss, creating it (from the restored state
// file) on first use. When the session ends, whatever it held is released.
func (s *Server) sessionFor(ss *mcp.ServerSession) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sess, ok := s.sessions[ss]; ok {
		return sess
	}
	if s.shared != nil {
		return s.shared
	}
	sess := &session{}
	if s.restored.LastShot != nil {
		shot := *s.restored.LastShot
		sess.last = &shot
	}
	if s.restored.SelectedDisplay != nil {
		sel := *s.restored.SelectedDisplay
		sess.selected = &sel
	}
	if s.oneView {
		s.shared = sess
		return sess
	}
	if ss != nil {
		sess.id = ss.ID()
		s.sessions[ss] = sess
		go func() {
			_ = ss.Wait()
			s.mu.Lock()
			delete(s.sessions, ss)
			s.mu.Unlock()
			s.releaseAll(context.Background(), "client disconnected")
		}()
	}
	return sess
}

// releaseAll releases every mouse button and key the executor holds. It
// runs even when ctx is done.
func (s *Server) releaseAll(ctx context.Context, why string) {
	if s.exec == nil { // an unavailable server never acted
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := s.exec.ReleaseAll(ctx); err != nil {
		s.log.Warn("releasing held buttons and keys", "why", why, "err", err)
		return
	}
	s.log.Debug("released held buttons and keys", "why", why)
}

// persist writes the session's geometry to the state file in the
// background; the latest state wins when writes pile up.
func (s *Server) persist(sess *session) {
	if s.statePath == "" {
		return
	}
	last, _, selected := sess.snapshot()
	st := geometry.State{Display: s.display, LastShot: last, SelectedDisplay: selected, Updated: time.Now().UTC()}
	s.saveMu.Lock()
	s.pending = &st
	if s.saving {
		s.saveMu.Unlock()
		return
	}
	s.saving = true
	s.saveWG.Add(1)
	s.saveMu.Unlock()
	go func() {
		defer s.saveWG.Done()
		for {
			s.saveMu.Lock()
			next := s.pending
			s.pending = nil
			if next == nil {
				s.saving = false
				s.saveMu.Unlock()
				return
			}
			s.saveMu.Unlock()
			if err := geometry.SaveState(s.statePath, *next); err != nil {
				s.log.Warn("writing the state file", "path", s.statePath, "err", err)
			}
		}
	}()
}

// handler adapts a tool to the go-sdk's low-level handler: arguments are
// checked here, with messages a model can act on, rather than by schema
// validation.
// unavailable answers a call to a server that could not start.
func (s *Server) unavailable(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return errorResult(fmt.Errorf("%s: deskhand could not start, so it cannot act: %w. Ask the user to fix this and restart the deskhand MCP server; `deskhand doctor` checks the whole setup", req.Params.Name, s.down)), nil
}

func (s *Server) handler(spec *toolSpec) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		sess := s.sessionFor(req.Session)
		if s.actx != nil {
			var done context.CancelFunc
			ctx, done = s.actx(ctx)
			defer done()
		}
		start := time.Now()
		select {
		case s.act <- struct{}{}:
		case <-ctx.Done():
			return errorResult(fmt.Errorf("%s was cancelled while waiting for the previous action to finish (%v)", spec.Name, context.Cause(ctx))), nil
		}
		res := s.call(ctx, sess, spec, req.Params.Arguments)
		if res.IsError {
			// A failed action may leave something pressed (a drag cut
			// short, or an earlier left_mouse_down): let it all go.
			s.releaseAll(ctx, spec.Name+" failed")
		}
		<-s.act
		s.log.Debug("tool call", "tool", spec.Name, "error", res.IsError, "took", time.Since(start))
		return res, nil
	}
}

// call runs one tool call: arguments, gates, action.
func (s *Server) call(ctx context.Context, sess *session, spec *toolSpec, raw []byte) *mcp.CallToolResult {
	if spec.Call != nil {
		return spec.Call(s, ctx, sess, raw)
	}
	a, err := s.decodeArgs(spec.Name, raw, spec.newArgs())
	if err != nil {
		return errorResult(err)
	}
	p, err := s.newParser(ctx, sess, nil)
	if err != nil {
		return errorResult(err)
	}
	st, err := spec.Parse(p, a)
	if err != nil {
		return errorResult(s.checkWholeGates(ctx, sess, spec.Name, err))
	}
	withShowChange(st, a)
	elementEffect(spec, st)
	out, err := s.runStep(ctx, sess, st)
	if err != nil {
		return errorResult(err)
	}
	return out.result()
}

// runStep resolves an action's runtime facts, checks the gates and runs it.
// An error that came of the action's context ending (the user's Escape, a
// turn ending, the batch limit) says so, whichever stage it cut short.
func (s *Server) runStep(ctx context.Context, sess *session, st *step) (*outcome, error) {
	st.action.Session = sess.id
	if st.resolve != nil {
		if err := st.resolve(ctx, &st.action); err != nil {
			return nil, stopped(ctx, st.action.Tool, err)
		}
	}
	if err := s.checkGates(ctx, &st.action); err != nil {
		return nil, stopped(ctx, st.action.Tool, err)
	}
	var watch *effectWatch
	if st.effect && s.effect != nil {
		watch = s.beginEffect(ctx, sess, &st.action)
	}
	out, err := st.run(ctx)
	if err != nil {
		return nil, stopped(ctx, st.action.Tool, fmt.Errorf("%s: %w", st.action.Tool, err))
	}
	if watch != nil {
		crop := s.effect.Crop
		if st.showChange != nil {
			crop = *st.showChange
		}
		s.endEffect(ctx, sess, watch, out, crop)
	}
	return out, nil
}

// stopped returns the error for an action one of whose stages failed:
// the reason ctx ended when it has, else plain itself.
func stopped(ctx context.Context, tool string, plain error) error {
	ctxErr := ctx.Err()
	if ctxErr == nil {
		return plain
	}
	if cause := context.Cause(ctx); cause != ctxErr {
		return fmt.Errorf("%s was stopped: %v", tool, cause)
	}
	return fmt.Errorf("%s was cancelled (%v); held buttons and keys were released", tool, ctxErr)
}

// checkGates runs every gate on a; the first refusal is the error. At
// debug level it records how long each gate took, which is where `make
// bench` finds the gates' share of an action.
func (s *Server) checkGates(ctx context.Context, a *Action) error {
	// The tooltip is deskhand's own: aiming at it is refused whatever
	// the gates would say about the window under the point.
	if err := s.checkOverlay(a); err != nil {
		record.Note(ctx, "teaching tooltip", a.Tool, err)
		return fmt.Errorf("teaching tooltip: %w", err)
	}
	timed := s.log.Enabled(ctx, slog.LevelDebug)
	var took []any
	start := time.Now()
	for _, g := range s.gates {
		err := g.Check(ctx, a)
		record.Note(ctx, g.Name(), a.Tool, err)
		if err != nil {
			return fmt.Errorf("%s: %w", g.Name(), err)
		}
		if timed {
			now := time.Now()
			took = append(took, strings.ReplaceAll(g.Name(), " ", "_"), now.Sub(start))
			start = now
		}
	}
	if timed {
		s.log.Debug("gates passed", append([]any{"tool", a.Tool}, took...)...)
	}
	return nil
}

// demote lowers the go-sdk's records by one level: its connection
// lifecycle is routine at Info, and a cancelled run (Ctrl-C) is not an
// Error.
type demote struct{ slog.Handler }

func (d demote) Enabled(ctx context.Context, l slog.Level) bool {
	return d.Handler.Enabled(ctx, l-4)
}

func (d demote) Handle(ctx context.Context, r slog.Record) error {
	r.Level -= 4
	return d.Handler.Handle(ctx, r)
}

func (d demote) WithAttrs(as []slog.Attr) slog.Handler { return demote{d.Handler.WithAttrs(as)} }
func (d demote) WithGroup(g string) slog.Handler       { return demote{d.Handler.WithGroup(g)} }

// describeDisplay names a display for the model.
func describeDisplay(d bridge.Display) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q (id %d, %dx%d at +%d+%d", d.Name, d.ID, d.Logical.Width, d.Logical.Height, d.Origin.X, d.Origin.Y)
	if d.Primary {
		b.WriteString(", primary")
	}
	b.WriteString(")")
	return b.String()
}

func describeDisplays(ds []bridge.Display) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = describeDisplay(d)
	}
	return strings.Join(parts, ", ")
}
