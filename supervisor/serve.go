package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/installer"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/executor"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

// ServeOptions configure Serve: what `deskhand serve`'s flags say, already
// checked (package cli).
type ServeOptions struct {
	// Helper is the capture helper's path; "" looks for one (FindHelper).
	Helper string
	// VirtualDisplay is auto, off or WIDTHxHEIGHT (see x11.PlanDisplay).
	VirtualDisplay string
	Mode           geometry.Mode
	Limits         geometry.Limits
	// ImagePreset names the preset Limits came from, "" for none.
	ImagePreset string
	ToolProfile string
	Format      string
	JPEGQuality int
	// StateDir keeps the state file and the turn journal: "" the
	// default, "none" nothing.
	StateDir string
	Consent  ConsentOptions
	Safety   SafetyOptions
	// HTTP serves Streamable HTTP when its Addr is set (Check it first),
	// else In and Out carry MCP stdio.
	HTTP   HTTPOptions
	In     io.Reader
	Out    io.Writer
	Logger *slog.Logger
}

// Serve serves the computer-use tools until the client disconnects or ctx
// is done, then gives the computer back.
func Serve(ctx context.Context, o ServeOptions) error {
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	safetyCfg := &safetyConfig{SafetyOptions: o.Safety}
	locate := LocateOptions{Explicit: o.Helper}
	locate.Install.ManifestURLs = ManifestURLsFromEnv()
	locate.Install.Logger = logger.With("component", "installer")
	// A helper that must be downloaded is installed on the first tool call
	// that needs it, once a client is connected to see the progress as
	// MCP log notifications.
	var notify atomic.Pointer[func(string)]
	locate.Install.Progress = func(e installer.Event) {
		if e.Message == "" {
			return
		}
		logger.Info("installing the capture helper: " + e.Message)
		if n := notify.Load(); n != nil {
			(*n)("installing the capture helper: " + e.Message)
		}
	}
	// The helper is found again, and so verified again, before every
	// start: restarts after a crash too.
	locator := &helperLocator{opts: locate}
	defer locator.Close()
	helperOpts := bridge.Options{Logger: logger.With("component", "helper"), Locate: locator.locate, CallTimeout: helperCallTimeout}
	local := locate
	local.NoDownload = true
	found, err := FindHelper(ctx, local)
	warmUp := err == nil
	switch {
	case err == nil:
		found.Release()
		logger.Debug("using helper", "path", found.Path, "from", string(found.Source), "version", found.Version, "note", found.Note)
	case errors.Is(err, errNoLocalHelper) && os.Getenv("DESKHAND_NO_DOWNLOAD") == "":
		logger.Info("no capture helper on this machine yet: it will be downloaded, verified and installed on first use")
	default:
		return err
	}

	// The display: the user's, or a private virtual one.
	plat, err := openPlatform(ctx, o.VirtualDisplay, logger)
	if err != nil {
		return err
	}
	defer plat.Close()
	xdisplay := plat.Display()

	stateDir := o.StateDir
	if stateDir == "" {
		if stateDir, err = geometry.DefaultStateDir(); err != nil {
			return err
		}
	}
	statePath := ""
	if stateDir != "none" {
		statePath = geometry.StatePath(stateDir, xdisplay)
		// A private desktop dies with deskhand, and what it hid with it.
		if !plat.Private() {
			safetyCfg.journalDir = stateDir
		}
	}

	// The input announces each key press to the Escape watcher (started
	// with the safety layer, below), which tells deskhand's own Escapes
	// from the user's by them.
	var escape atomic.Pointer[func(uint8)]
	in, err := plat.OpenInput(func(code uint8) {
		if own := escape.Load(); own != nil {
			(*own)(code)
		}
	})
	if err != nil {
		return err
	}
	defer in.Close()
	helperOpts.Env = plat.HelperEnv()
	helper := bridge.New(helperOpts)
	defer helper.Close()
	// Warm a local helper up while the client initializes; a failure shows
	// up again, with its reason, on the first tool call that needs it.
	if warmUp {
		go func() {
			if err := helper.Start(ctx); err != nil && ctx.Err() == nil {
				logger.Warn("starting the capture helper", "path", found.Path, "err", err)
			}
		}()
	}
	exec, err := executor.New(executor.Options{Helper: helper, Input: in, Launcher: plat.Launcher(helper), Logger: logger.With("component", "executor")})
	if err != nil {
		return err
	}
	consentMgr, err := newConsent(o.Consent, helper, logger.With("component", "consent"))
	if err != nil {
		return err
	}
	safe, err := newSafety(safetyCfg, plat, helper, exec, consentMgr.Session(), logger)
	if err != nil {
		return err
	}
	// Runs before the helper and the input close: the turn's end needs
	// them to give the desktop back.
	defer safe.close(cleanup.ReasonExit)
	if safe.ownKey != nil {
		escape.Store(&safe.ownKey)
	}
	safe.repairLeftovers(ctx)
	serverOpts := mcpserver.Options{
		Executor:    exec,
		Mode:        o.Mode,
		Limits:      o.Limits,
		ImagePreset: o.ImagePreset,
		ToolProfile: o.ToolProfile,
		Format:      o.Format,
		JPEGQuality: o.JPEGQuality,
		StatePath:   statePath,
		Display:     xdisplay,
		Consent:     consentMgr,
		Logger:      logger.With("component", "mcp"),
		Version:     Version,
	}
	if o.HTTP.Addr != "" {
		return serveHTTP(ctx, httpServe{flags: &o.HTTP, base: serverOpts, consent: o.Consent, stateless: consentMgr,
			helper: helper, safety: safe, logger: logger, notify: &notify})
	}
	safe.options(&serverOpts, consentMgr.Session())
	srv, err := mcpserver.New(serverOpts)
	if err != nil {
		return err
	}
	notifyClients := func(msg string) { srv.Notify(ctx, "info", msg) }
	notify.Store(&notifyClients)
	logger.Info("serving MCP on stdio", "server", mcpserver.ServerName, "display", xdisplay, "coordinates", string(o.Mode), "state", statePath)
	transport := &mcpserver.StdioTransport{Reader: o.In, Writer: o.Out, Logger: logger.With("component", "stdio")}
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

// helperCallTimeout bounds each capture helper call. Every method answers
// well within a second (hide and restore wait up to one for the window
// manager), but the helper's X calls have no deadline of their own: on a
// stopped X server it is this deadline that kills it and tells the model.
const helperCallTimeout = 5 * time.Second
