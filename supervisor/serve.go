package supervisor

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/installer"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/executor"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

const serveUsage = `serve [flags]

Serves the computer-use tools over MCP on stdin and stdout (the MCP stdio
transport), as the server "computer-use": clients show the tools as
mcp__computer-use__screenshot, mcp__computer-use__left_click, and so on.
This is also what deskhand does when run without a command. Logs go to
stderr only.

The display: with --virtual-display auto (the default) deskhand works on the
X display named by DISPLAY, and when DISPLAY is unset it starts a private
1920x1080 virtual desktop (Xvfb and openbox) for the session and stops it on
exit. --virtual-display WIDTHxHEIGHT always starts a private desktop of that
size, leaving the user's own screen alone; --virtual-display off never does.
On macOS deskhand always works on the user's own screen and never starts a
virtual one; every action then needs Screen Recording and Accessibility
(System Settings > Privacy & Security) for the app that runs it.

Examples:

  deskhand serve
  deskhand serve --virtual-display 1920x1080
  deskhand serve --coordinates normalized_0_100 --format png
  deskhand serve --allow xterm --allow org.gnome.Calculator --grant clipboardRead
  deskhand serve --tool-profile openai --image-preset openai
  claude mcp add computer-use -- deskhand serve
  deskhand serve --http :8765

With --http ADDR it serves MCP's Streamable HTTP transport instead, at
http://ADDR/mcp (https with --tls-cert and --tls-key); ADDR without a host
(":8765") listens on 127.0.0.1 only, and a non-loopback address needs TLS
or --http-allow-plaintext. Every request must carry a bearer token
(Authorization: Bearer TOKEN): the one in --http-token-file, else
$DESKHAND_HTTP_TOKEN, else the one in http-token in the config directory
(~/.config/deskhand on Linux), generated (mode 0600) on first start; the
log names the file, never the token. Requests for a Host that is not this server's (DNS rebinding), from
a browser Origin that is not allowed, or with a body over --http-max-body
are refused. Each HTTP session has its own approvals and its own turn:
while one session uses the computer the others get cu_lock_held, and a
session that ends (DELETE, --http-session-timeout) gives the computer
back. Clients of the sessionless protocol (2026-07-28) share one set of
approvals and one turn.

Tool profiles: the default profile offers deskhand's tools, whose names and
arguments are the member tools of Anthropic's computer_toolset_20260801
(screenshot, left_click, key with repeat, scroll and left_click_drag with
modifier keys in text, ...), so a harness forwards each tool_use block as a
tools/call unchanged and returns the result as its tool_result. With
--tool-profile openai there is one tool, computer, that takes the actions of
an OpenAI computer_call (click, double_click, drag, move, scroll, keypress,
type, wait, screenshot), runs them in order through the same safety checks,
and always returns a screenshot for the computer_call_output.

Image presets: --image-preset anthropic (the default limits), openai or
gemini sizes screenshots to that model family's documented image limits;
--max-long-edge and --max-tokens, when given, override the preset's. Every
screenshot's JSON text block has a "scale" receipt: the preset in force
("custom" when the limits are no preset's), the limits and image_to_logical,
the factor from screenshot pixels to screen pixels.

If deskhand is killed mid-turn, the windows it hid and the clipboard it
stashed are written down in the turn journal in --state-dir: the next
deskhand on the display gives them back before it serves (or run
deskhand doctor --repair). Private virtual desktops keep no journal.

Nothing may be used until the model calls request_access and the user
approves the apps in a dialog; with clients that cannot show one, only the
apps pre-approved with --allow or in the pre-approval file (see
deskhand grants) are granted.

Flags:`

type serveFlags struct {
	helper         string
	virtualDisplay string
	coordinates    string
	maxLongEdge    int
	maxTokens      int
	imagePreset    string
	toolProfile    string
	format         string
	jpegQuality    int
	stateDir       string
	logLevel       string
}

func runServe(ctx context.Context, args []string, stdio Stdio) error {
	fs := newFlagSet("serve", serveUsage, stdio)
	var f serveFlags
	fs.StringVar(&f.helper, "helper", "", "path of the capture helper `binary` (default: $DESKHAND_HELPER, then a helper bundled beside this executable, then the installed version, then a verified download on the first tool call)")
	fs.StringVar(&f.virtualDisplay, "virtual-display", envOr("DESKHAND_VIRTUAL_DISPLAY", "auto"),
		"`auto`: use $DISPLAY, or start a private 1920x1080 Xvfb desktop when it is unset; WIDTHxHEIGHT: always start a private desktop of that size; off: never start one (macOS: the user's screen, always)")
	fs.StringVar(&f.coordinates, "coordinates", string(geometry.ModePixels),
		"coordinate `mode` of the tools: pixels (of the latest screenshot) or normalized_0_100 (percent of its width and height)")
	fs.IntVar(&f.maxLongEdge, "max-long-edge", geometry.DefaultMaxLongEdge, "largest screenshot width or height, in `pixels`")
	fs.IntVar(&f.maxTokens, "max-tokens", geometry.DefaultMaxTokens, "largest screenshot size in vision `tokens` of 28x28 pixels (⌈w/28⌉·⌈h/28⌉)")
	fs.StringVar(&f.imagePreset, "image-preset", "", "screenshot size `preset` of a model family: "+strings.Join(geometry.PresetNames(), ", ")+" (default: anthropic's limits)")
	fs.StringVar(&f.toolProfile, "tool-profile", mcpserver.ProfileDefault, "tool `profile`: default (deskhand's tools, named as in Anthropic's computer toolset) or openai (one computer tool taking OpenAI's actions)")
	fs.StringVar(&f.format, "format", mcpserver.FormatJPEG, "screenshot image `format`: jpeg or png")
	fs.IntVar(&f.jpegQuality, "jpeg-quality", mcpserver.DefaultJPEGQuality, "JPEG `quality`, 1-100")
	fs.StringVar(&f.stateDir, "state-dir", "", "`directory` of the state files: the last screenshot's geometry and the selected display, kept across restarts, and the turn journal, which lets a restarted deskhand show again the windows and put back the clipboard a crashed one took (default $XDG_STATE_HOME/deskhand, else ~/.local/state/deskhand; \"none\" keeps nothing)")
	fs.StringVar(&f.logLevel, "log-level", envOr("DESKHAND_LOG", "info"), "stderr log `level`: debug, info, warn or error")
	consentFlags := addConsentFlags(fs)
	safetyFlags := addSafetyFlags(fs)
	inputF := addInputFlags(fs)
	httpF := addHTTPFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	clickPress, err := inputF.clickPress()
	if err != nil {
		return err
	}
	if err := httpF.check(); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stdio.Err, "deskhand serve: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	mode, err := geometry.ParseMode(f.coordinates)
	if err != nil {
		return fmt.Errorf("--coordinates: %w", err)
	}
	limits := geometry.Limits{MaxLongEdge: f.maxLongEdge, MaxTokens: f.maxTokens, TokenPx: geometry.DefaultTokenPx}
	if f.imagePreset != "" {
		preset, err := geometry.LookupPreset(f.imagePreset)
		if err != nil {
			return fmt.Errorf("--image-preset: %w", err)
		}
		// The preset's limits, but for those given as flags too.
		limits = preset.Limits
		fs.Visit(func(fl *flag.Flag) {
			switch fl.Name {
			case "max-long-edge":
				limits.MaxLongEdge = f.maxLongEdge
			case "max-tokens":
				// The flag counts 28x28 patches, whatever the preset's.
				limits.MaxTokens, limits.TokenPx = f.maxTokens, geometry.DefaultTokenPx
			}
		})
		f.imagePreset = preset.Name
	}
	if err := limits.Validate(); err != nil {
		return fmt.Errorf("--max-long-edge/--max-tokens: %w", err)
	}
	if !slices.Contains(mcpserver.ToolProfiles, f.toolProfile) {
		return fmt.Errorf("--tool-profile %q: use %s", f.toolProfile, strings.Join(mcpserver.ToolProfiles, " or "))
	}
	if f.format != mcpserver.FormatJPEG && f.format != mcpserver.FormatPNG {
		return fmt.Errorf("--format %q: use jpeg or png", f.format)
	}
	if f.jpegQuality < 1 || f.jpegQuality > 100 {
		return fmt.Errorf("--jpeg-quality %d: use 1-100", f.jpegQuality)
	}
	logger, err := newLogger(stdio.Err, f.logLevel)
	if err != nil {
		return err
	}
	locate := LocateOptions{Explicit: f.helper}
	locate.Install.ManifestURLs = manifestURLsFromEnv()
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
	plat, err := openPlatform(ctx, f.virtualDisplay, logger)
	if err != nil {
		return err
	}
	defer plat.Close()
	xdisplay := plat.Display()

	stateDir := f.stateDir
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
			safetyFlags.journalDir = stateDir
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
	if err := in.SetClickPress(clickPress); err != nil {
		return err
	}
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
	consentMgr, err := newConsent(consentFlags, helper, logger.With("component", "consent"))
	if err != nil {
		return err
	}
	safe, err := newSafety(safetyFlags, plat, helper, exec, consentMgr.Session(), logger)
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
		Mode:        mode,
		Limits:      limits,
		ImagePreset: f.imagePreset,
		ToolProfile: f.toolProfile,
		Format:      f.format,
		JPEGQuality: f.jpegQuality,
		StatePath:   statePath,
		Display:     xdisplay,
		Consent:     consentMgr,
		Logger:      logger.With("component", "mcp"),
		Version:     Version,
	}
	if httpF.addr != "" {
		return serveHTTP(ctx, httpServe{flags: httpF, base: serverOpts, consent: consentFlags, stateless: consentMgr,
			helper: helper, safety: safe, logger: logger, notify: &notify})
	}
	safe.options(&serverOpts, consentMgr.Session())
	srv, err := mcpserver.New(serverOpts)
	if err != nil {
		return err
	}
	notifyClients := func(msg string) { srv.Notify(ctx, "info", msg) }
	notify.Store(&notifyClients)
	logger.Info("serving MCP on stdio", "server", mcpserver.ServerName, "display", xdisplay, "coordinates", string(mode), "state", statePath)
	transport := &mcpserver.StdioTransport{Reader: stdio.In, Writer: stdio.Out, Logger: logger.With("component", "stdio")}
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
