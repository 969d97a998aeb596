package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/installer"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/consent"
	"github.com/deskhand/deskhand/supervisor/desktop"
	"github.com/deskhand/deskhand/supervisor/executor"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/input"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
	"github.com/deskhand/deskhand/supervisor/record"
)

// ServeOptions configure Serve: what `deskhand serve`'s flags say, already
// checked (package cli).
type ServeOptions struct {
	// Helper is the capture helper's path; "" looks for one (FindHelper).
	Helper string
	// VirtualDisplay is auto, off, WIDTHxHEIGHT, sway:WIDTHxHEIGHT or
	// xvfb:WIDTHxHEIGHT (see wayland.PlanDisplay and x11.PlanDisplay).
	VirtualDisplay string
	Mode           geometry.Mode
	Limits         geometry.Limits
	// ImagePreset names the preset Limits came from, "" for none.
	ImagePreset string
	ToolProfile string
	// Tools is the tool family (mcpserver.ToolFamilies), "" for all.
	Tools       string
	Format      string
	JPEGQuality int
	// Effect is how input actions report their effect (its Source is
	// set here, from the helper).
	Effect mcpserver.EffectOptions
	// ClickPress is how long each click holds the button (serve's
	// --click-press-ms; 0 is allowed and means no hold).
	ClickPress time.Duration
	// Teach offers the teaching tools: TeachAuto ("" too) when the
	// helper can show the overlay, TeachOn always, TeachOff never.
	Teach string
	// StateDir keeps the state file and the turn journal: "" the
	// default, "none" nothing.
	StateDir string
	// RecordText keeps typed text and clipboard contents in the action
	// record, which redacts them by default.
	RecordText bool
	Consent    ConsentOptions
	Safety     SafetyOptions
	// HTTP serves Streamable HTTP when its Addr is set (Check it first),
	// else In and Out carry MCP stdio.
	HTTP HTTPOptions
	In   io.Reader
	Out  io.Writer
	// Logger gets every log line (stdout belongs to MCP); nil discards
	// them.
	Logger *slog.Logger
}

// Serve serves the computer-use tools until the client disconnects or ctx
// is done, then gives the computer back. Its steps, in order: find the
// helper, open the desktop, place the state files, open the input and
// the helper, build the safety layer, serve.
func Serve(ctx context.Context, o ServeOptions) error {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// A problem found before the MCP handshake (no display, no window
	// manager, a corrupt pre-approval file, no helper) is served to the
	// client instead of ending the process, which a client shows only as
	// "disconnected": every tool call returns it, with its fix.
	fail := func(err error) error {
		if o.HTTP.Addr != "" || ctx.Err() != nil {
			return err
		}
		return serveUnavailable(ctx, o, err, logger)
	}
	// Tells connected clients of a helper download in progress, once
	// the transport is up.
	var notify atomic.Pointer[func(string)]
	locator, helperOpts, local, err := findHelper(ctx, o.Helper, logger, &notify)
	if err != nil {
		return fail(err)
	}
	// The helper is found again, and so verified again, before every
	// start: restarts after a crash too.
	defer locator.Close()

	// The display: the user's, or a private virtual one.
	plat, err := openPlatform(ctx, o.VirtualDisplay, logger)
	if err != nil {
		return fail(err)
	}
	defer plat.Close()
	statePath, journalDir, err := stateFiles(o.StateDir, plat)
	if err != nil {
		return fail(err)
	}

	var escape atomic.Pointer[func(uint8)]
	in, err := openInput(plat, &escape)
	if err != nil {
		return fail(err)
	}
	defer in.Close()
	if err := in.SetClickPress(o.ClickPress); err != nil {
		return fail(err)
	}
	helperOpts.Env = plat.HelperEnv()
	helper := bridge.New(helperOpts)
	defer helper.Close()
	if local != nil {
		warmUp(ctx, helper, local.Path, logger)
	}

	exec, err := executor.New(executor.Options{Helper: helper, Input: in, Launcher: plat.Launcher(helper), Logger: logger.With("component", "executor")})
	if err != nil {
		return fail(err)
	}
	consentMgr, err := newConsent(o.Consent, helper, plat, logger.With("component", "consent"))
	if err != nil {
		return fail(err)
	}
	safe, err := newSafety(&safetyConfig{SafetyOptions: o.Safety, journalDir: journalDir}, plat, helper, exec, consentMgr.Session(), logger)
	if err != nil {
		return fail(err)
	}
	// Runs before the helper and the input close: the turn's end needs
	// them to give the desktop back.
	defer safe.close(cleanup.ReasonExit)
	if safe.ownKey != nil {
		escape.Store(&safe.ownKey)
	}
	safe.repairLeftovers(ctx)
	teach, err := newTeachSwitch(ctx, o.Teach, helper, local != nil, logger.With("component", "teach"))
	if err != nil {
		return fail(err)
	}

	serverOpts := o.serverOptions(logger)
	serverOpts.Executor = exec
	serverOpts.StatePath = statePath
	serverOpts.Display = plat.Display()
	serverOpts.Consent = consentMgr
	if statePath != "" {
		rec, err := record.Open(filepath.Dir(statePath), o.RecordText, 0)
		if err != nil {
			return fail(err)
		}
		defer rec.Close()
		serverOpts.Record = rec
	}
	effectOpts := o.Effect
	effectOpts.Source = helper
	serverOpts.Effect = &effectOpts
	if o.HTTP.Addr != "" {
		return serveHTTP(ctx, httpServe{flags: &o.HTTP, base: serverOpts, consent: o.Consent, stateless: consentMgr,
			helper: helper, safety: safe, logger: logger, notify: &notify, teach: teach})
	}
	return serveStdio(ctx, o.In, o.Out, serverOpts, consentMgr, safe, &notify, teach, logger)
}

// findHelper prepares the capture helper's options: the locator that
// finds (and, with no local one, downloads) the helper before each start,
// and the local helper found now, nil when the first tool call is to
// download one.
func findHelper(ctx context.Context, explicit string, logger *slog.Logger, notify *atomic.Pointer[func(string)]) (*helperLocator, bridge.Options, *Located, error) {
	locate := LocateOptions{Explicit: explicit}
	locate.Install.ManifestURLs = ManifestURLsFromEnv()
	locate.Install.Logger = logger.With("component", "installer")
	// A helper that must be downloaded is installed on the first tool call
	// that needs it, once a client is connected to see the progress as
	// MCP log notifications, and as progress notifications of that call
	// when it asked for them (stdio).
	locate.Install.Progress = func(e installer.Event) {
		if e.Message == "" {
			return
		}
		logger.Info("installing the capture helper: " + e.Message)
		if n := notify.Load(); n != nil {
			(*n)("installing the capture helper: " + e.Message)
		}
	}
	locator := &helperLocator{opts: locate}
	opts := bridge.Options{Logger: logger.With("component", "helper"), Locate: locator.locate, CallTimeout: helperCallTimeout}
	local := locate
	local.NoDownload = true
	found, err := FindHelper(ctx, local)
	switch {
	case err == nil:
		found.Release()
		logger.Debug("using helper", "path", found.Path, "from", string(found.Source), "version", found.Version, "note", found.Note)
		return locator, opts, &found, nil
	case errors.Is(err, errNoLocalHelper) && os.Getenv("DESKHAND_NO_DOWNLOAD") == "":
		logger.Info("no capture helper on this machine yet: it will be downloaded, verified and installed on first use")
		return locator, opts, nil, nil
	default:
		locator.Close()
		return nil, bridge.Options{}, nil, err
	}
}

// stateFiles places serve's state under stateDir ("" the default, "none"
// nothing): the state file of plat's display, and the directory of the
// turn journal, "" when none is kept.
func stateFiles(stateDir string, plat desktop.Platform) (statePath, journalDir string, err error) {
	if stateDir == "" {
		if stateDir, err = geometry.DefaultStateDir(); err != nil {
			return "", "", err
		}
	}
	if stateDir == "none" {
		return "", "", nil
	}
	statePath = geometry.StatePath(stateDir, plat.Display())
	// A private desktop dies with deskhand, and what it hid with it.
	if !plat.Private() {
		journalDir = stateDir
	}
	return statePath, journalDir, nil
}

// openInput opens plat's input, which announces each key press to the
// Escape watcher set in escape once the safety layer has started it: the
// watcher tells deskhand's own Escapes from the user's by them.
func openInput(plat desktop.Platform, escape *atomic.Pointer[func(uint8)]) (*input.Input, error) {
	return plat.OpenInput(func(code uint8) {
		if own := escape.Load(); own != nil {
			(*own)(code)
		}
	})
}

// warmUp starts a local helper while the client initializes; a failure
// shows up again, with its reason, on the first tool call that needs it.
func warmUp(ctx context.Context, helper *bridge.Client, path string, logger *slog.Logger) {
	go func() {
		if err := helper.Start(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("starting the capture helper", "path", path, "err", err)
		}
	}()
}

// serveStdio serves one MCP client on in and out until it disconnects or
// ctx is done, and ends the turn for the reason that was.
func serveStdio(ctx context.Context, in io.Reader, out io.Writer, opts mcpserver.Options, consentMgr *consent.Manager, safe *safety, notify *atomic.Pointer[func(string)], teach *teachSwitch, logger *slog.Logger) error {
	safe.options(&opts, consentMgr.Session())
	srv, err := mcpserver.New(opts)
	if err != nil {
		return err
	}
	teach.attach(srv)
	notifyClients := func(msg string) {
		srv.Notify(ctx, "info", msg)
		srv.Progress(ctx, msg)
	}
	notify.Store(&notifyClients)
	logger.Info("serving MCP on stdio", "server", mcpserver.ServerName, "display", opts.Display, "coordinates", string(opts.Mode), "state", opts.StatePath)
	if f, ok := out.(*os.File); ok {
		bridge.GrowPipe(f)
	}
	if f, ok := in.(*os.File); ok {
		if polled := bridge.PollPipe(f); polled != f {
			defer polled.Close()
			in = polled
		}
	}
	transport := &mcpserver.StdioTransport{Reader: in, Writer: out, Logger: logger.With("component", "stdio")}
	err = srv.Run(ctx, transport)
	if ctx.Err() != nil {
		safe.close(cleanup.ReasonExit)
	} else {
		safe.close(cleanup.ReasonDisconnect)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("serving MCP: %w", err)
	}
	logger.Info("client disconnected; stopping")
	return nil
}

// serverOptions are the MCP server's options that serve's flags set.
func (o *ServeOptions) serverOptions(logger *slog.Logger) mcpserver.Options {
	return mcpserver.Options{
		Mode:        o.Mode,
		Limits:      o.Limits,
		ImagePreset: o.ImagePreset,
		ToolProfile: o.ToolProfile,
		Tools:       o.Tools,
		Format:      o.Format,
		JPEGQuality: o.JPEGQuality,
		Logger:      logger.With("component", "mcp"),
		Version:     Version,
	}
}

// serveUnavailable serves MCP on stdio with every tool answering why
// deskhand could not start, until the client disconnects, then returns
// that reason, so the exit status and stderr still carry it.
func serveUnavailable(ctx context.Context, o ServeOptions, reason error, logger *slog.Logger) error {
	logger.Error("deskhand could not start; serving MCP so that every tool call returns the reason", "err", reason)
	opts := o.serverOptions(logger)
	opts.Unavailable = reason
	srv, err := mcpserver.New(opts)
	if err != nil {
		return errors.Join(reason, err)
	}
	transport := &mcpserver.StdioTransport{Reader: o.In, Writer: o.Out, Logger: logger.With("component", "stdio")}
	if err := srv.Run(ctx, transport); err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
		logger.Warn("serving MCP", "err", err)
	}
	return reason
}

// helperCallTimeout bounds each capture helper call. Every method answers
// well within a second (hide and restore wait up to one for the window
// manager), but the helper's X calls have no deadline of their own: on a
// stopped X server it is this deadline that kills it and tells the model.
const helperCallTimeout = 5 * time.Second
