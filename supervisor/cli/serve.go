package cli

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/deskhand/deskhand/supervisor"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/effect"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/mcpserver"
)

const serveUsage = `serve [flags]

Serves the computer-use tools over MCP on stdin and stdout (the MCP stdio
transport), as the server "deskhand": register it under that name, and
clients show the tools as mcp__deskhand__screenshot,
mcp__deskhand__left_click, and so on.
This is also what deskhand does when run without a command. Logs go to
stderr only.

The display: with --virtual-display auto (the default) deskhand works on the
X display named by DISPLAY, and when DISPLAY is unset it starts a private
1920x1080 virtual desktop (Xvfb and openbox) for the session and stops it on
exit. --virtual-display WIDTHxHEIGHT always starts a private desktop of that
size, leaving the user's own screen alone; --virtual-display off never does.
On a native Wayland session (WAYLAND_DISPLAY set, DISPLAY unset) with a
wlroots compositor (sway and the like), auto and off work on that session
through the compositor's screencopy, toplevel, data-control and virtual
input protocols; Escape does not stop deskhand there. In a GNOME session
(XDG_CURRENT_DESKTOP names GNOME) deskhand reaches the screen through
Mutter's ScreenCast and RemoteDesktop, but GNOME tells no app its windows,
so it refuses every screenshot and input action there: pass
--virtual-display WIDTHxHEIGHT for a private desktop. In a KDE Plasma
session (KWin) deskhand works through KWin's ScreenShot2, window list and
fake input, with every gate live, once a desktop entry authorizes the
helper (deskhand doctor prints it). On a Wayland session
--virtual-display WIDTHxHEIGHT starts a private headless sway instead of
Xvfb when sway is installed (its own XDG_RUNTIME_DIR, WAYLAND_DISPLAY and
D-Bus session bus; the user's session is never touched), and falls back to Xvfb when sway is
missing or deskhand runs as root, which sway refuses. sway:WIDTHxHEIGHT
always asks for the private sway (an error as root: run deskhand as your
own user), xvfb:WIDTHxHEIGHT always for Xvfb. The private sway and its apps
stop when deskhand exits, even when it is killed.
On macOS deskhand always works on the user's own screen and never starts a
virtual one; every action then needs Screen Recording and Accessibility
(System Settings > Privacy & Security) for the app that runs it.

Examples:

  deskhand serve
  deskhand serve --virtual-display 1920x1080
  deskhand serve --coordinates normalized_0_100 --format png
  deskhand serve --allow xterm --allow org.gnome.Calculator --grant clipboardRead
  deskhand serve --tool-profile openai --image-preset openai
  deskhand serve --tools elements
  claude mcp add deskhand -- deskhand serve
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
are refused at once and their connection closed; a body must arrive within
--http-read-timeout, and an idle connection is closed after it; at most
--http-max-sessions sessions live at once. Each HTTP session has its own
approvals and its own turn: while one session uses the computer the others
get cu_lock_held, and a session that ends (DELETE, --http-session-timeout)
gives the computer back. Clients of the sessionless protocol (2026-07-28)
share one set of approvals and one turn. The user's Escape withdraws the
approvals of every session, and sessions that start later need the
approval dialog too, until deskhand restarts.

Tool profiles: the default profile offers deskhand's tools, whose names and
arguments are the member tools of Anthropic's computer_toolset_20260801
(screenshot, left_click, key with repeat, scroll and left_click_drag with
modifier keys in text, ...), so a harness forwards each tool_use block as a
tools/call unchanged and returns the result as its tool_result. With
--tool-profile openai there is one tool, computer, that takes the actions of
an OpenAI computer_call (click, double_click, drag, move, scroll, keypress,
type, wait, screenshot), runs them in order through the same safety checks,
and always returns a screenshot for the computer_call_output.

Tool families: --tools all (the default) offers the coordinate tools above
and the element tools; --tools coordinates only the former; --tools
elements only the element tools (list_apps, get_app_state, launch_app,
click, scroll, drag, type_text, press_key, perform_action, set_value),
which read an app's accessibility tree and act on its elements
by id, in the background where the accessibility API can. With both
families scroll takes either form, and wait_for waits for an element, a
window or a still region instead of a fixed time.

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

Guided teaching: the tools request_teach_access, teach_step and teach_batch
show the user a lesson step by step in a tooltip beside what it is about,
with an explanation, a preview of what Next does, and Next and Exit
buttons. Only the user's own clicks answer it: deskhand's synthetic clicks
are ignored by the tooltip and refused by the server. Next runs the step's
actions through the same safety checks as computer_batch; Exit or Escape
ends the lesson with nothing run. The tooltip never appears in
deskhand's screenshots. With --teach auto (the default) the tools are
offered where the capture helper can show the tooltip; --teach on offers
them always (a step fails with an explanation where it cannot be shown),
--teach off never. They go with the coordinate tools: --tools elements
offers none of them.

Nothing may be used until the model calls request_access and the user
approves the apps in a dialog; with clients that cannot show one, only the
apps pre-approved with --allow or in the pre-approval file (see
deskhand grants) are granted.

Flags:`

// serveFlags are serve's flags that are checked and turned into
// supervisor.ServeOptions fields.
type serveFlags struct {
	input       *inputFlags
	coordinates string
	maxLongEdge int
	maxTokens   int
	imagePreset string
	logLevel    string
	effectQuiet int
	effectCap   int
}

// runServe is `deskhand serve`: it parses and checks the flags, then hands
// them to the composition root.
func runServe(ctx context.Context, args []string, stdio Stdio) error {
	fs, f, o := serveFlagSet(stdio)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := o.HTTP.Check(); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stdio.Err, "deskhand serve: unexpected argument %q\n", fs.Arg(0))
		fs.Usage()
		return errUsage
	}
	if err := f.check(fs.FlagSet, o); err != nil {
		return err
	}
	press, err := f.input.clickPress()
	if err != nil {
		return err
	}
	o.ClickPress = press
	logger, err := newLogger(stdio.Err, f.logLevel)
	if err != nil {
		return err
	}
	o.In, o.Out, o.Logger = stdio.In, stdio.Out, logger
	return supervisor.Serve(ctx, *o)
}

// serveFlagSet defines serve's flags: the plain ones into f, to be checked,
// and those that need no checking, or check themselves (HTTPOptions.Check),
// straight into o.
func serveFlagSet(stdio Stdio) (*flagSet, *serveFlags, *supervisor.ServeOptions) {
	fs := newFlagSet("serve", serveUsage, stdio)
	f := &serveFlags{}
	o := &supervisor.ServeOptions{}
	fs.StringVar(&o.Helper, "helper", "", "path of the capture helper `binary` (default: $DESKHAND_HELPER, then a helper bundled beside this executable, then the installed version, then a verified download on the first tool call)")
	fs.StringVar(&o.VirtualDisplay, "virtual-display", envOr("DESKHAND_VIRTUAL_DISPLAY", "auto"),
		"`auto`: use $DISPLAY (or the native Wayland session when only WAYLAND_DISPLAY is set: a wlroots one, KDE's KWin, or GNOME, where every action is refused), or start a private 1920x1080 Xvfb desktop when neither is; WIDTHxHEIGHT: always start a private desktop of that size (a headless sway on a Wayland session when sway can run, else Xvfb); sway:WIDTHxHEIGHT or xvfb:WIDTHxHEIGHT: that private desktop; off: never start one (macOS: the user's screen, always)")
	fs.StringVar(&f.coordinates, "coordinates", string(geometry.ModePixels),
		"coordinate `mode` of the tools: pixels (of the latest screenshot) or normalized_0_100 (percent of its width and height)")
	fs.IntVar(&f.maxLongEdge, "max-long-edge", geometry.DefaultMaxLongEdge, "largest screenshot width or height, in `pixels`")
	fs.IntVar(&f.maxTokens, "max-tokens", geometry.DefaultMaxTokens, "largest screenshot size in vision `tokens` of 28x28 pixels (⌈w/28⌉·⌈h/28⌉)")
	fs.StringVar(&f.imagePreset, "image-preset", "", "screenshot size `preset` of a model family: "+strings.Join(geometry.PresetNames(), ", ")+" (default: anthropic's limits)")
	fs.StringVar(&o.ToolProfile, "tool-profile", mcpserver.ProfileDefault, "tool `profile`: default (deskhand's tools, named as in Anthropic's computer toolset) or openai (one computer tool taking OpenAI's actions)")
	fs.StringVar(&o.Tools, "tools", mcpserver.ToolsAll, "tool `families`: all, coordinates (the screenshot and pointer tools of Anthropic's computer toolset) or elements (the accessibility-tree tools: list_apps, get_app_state, click by element id …)")
	fs.StringVar(&o.Format, "format", mcpserver.FormatJPEG, "screenshot image `format`: jpeg or png")
	fs.IntVar(&o.JPEGQuality, "jpeg-quality", mcpserver.DefaultJPEGQuality, "JPEG `quality`, 1-100")
	fs.StringVar(&o.StateDir, "state-dir", "", "`directory` of the state files: the last screenshot's geometry and the selected display, kept across restarts, and the turn journal, which lets a restarted deskhand show again the windows and put back the clipboard a crashed one took (default $XDG_STATE_HOME/deskhand, else ~/.local/state/deskhand; \"none\" keeps nothing)")
	fs.BoolVar(&o.RecordText, "record-text", false, "keep typed text and clipboard contents in the action record (`deskhand log`), which redacts them by default")
	fs.StringVar(&f.logLevel, "log-level", envOr("DESKHAND_LOG", "info"), "stderr log `level`: debug, info, warn or error")
	fs.StringVar(&o.Teach, "teach", supervisor.TeachAuto, "teaching tools (request_teach_access, teach_step, teach_batch): `auto` offers them when the capture helper can show the tooltip overlay, on always, off never")
	fs.BoolVar(&o.Effect.Off, "no-effect", false, "do not wait for or report what each input action changed on screen (its effect); actions then return at once")
	fs.IntVar(&f.effectQuiet, "effect-quiet-ms", int(effect.DefaultSettle.Quiet.Milliseconds()), "after an input action changed the screen, how long it must stay unchanged before the result reports the action's effect, in `milliseconds`")
	fs.IntVar(&f.effectCap, "effect-cap-ms", int(effect.DefaultSettle.Cap.Milliseconds()), "the longest wait for an input action's effect, and the whole wait when nothing changes (then the result says \"no visible change\"), in `milliseconds`")
	fs.BoolVar(&o.Effect.Crop, "effect-crop", false, "attach to each input action's result an image of just what it changed, at screenshot scale (a call's show_change argument overrides it)")
	addConsentFlags(fs.FlagSet, &o.Consent)
	addSafetyFlags(fs.FlagSet, &o.Safety)
	addHTTPFlags(fs.FlagSet, &o.HTTP)
	f.input = addInputFlags(fs.FlagSet)
	return fs, f, o
}

// check checks the parsed flags and sets what they mean in o: the
// coordinate mode, the image limits, the tool profile and the image
// format.
func (f *serveFlags) check(fs *flag.FlagSet, o *supervisor.ServeOptions) error {
	mode, err := geometry.ParseMode(f.coordinates)
	if err != nil {
		return fmt.Errorf("--coordinates: %w", err)
	}
	o.Mode = mode
	if o.Limits, o.ImagePreset, err = f.imageLimits(fs); err != nil {
		return err
	}
	if !slices.Contains(mcpserver.ToolProfiles, o.ToolProfile) {
		return fmt.Errorf("--tool-profile %q: use %s", o.ToolProfile, strings.Join(mcpserver.ToolProfiles, " or "))
	}
	if !slices.Contains(supervisor.TeachModes, o.Teach) {
		return fmt.Errorf("--teach %q: use %s", o.Teach, strings.Join(supervisor.TeachModes, ", "))
	}
	if !slices.Contains(mcpserver.ToolFamilies, o.Tools) {
		return fmt.Errorf("--tools %q: use %s", o.Tools, strings.Join(mcpserver.ToolFamilies, ", "))
	}
	if o.Tools == mcpserver.ToolsElements && o.ToolProfile == mcpserver.ProfileOpenAI {
		return fmt.Errorf("--tools elements and --tool-profile openai do not go together: the openai profile offers one computer tool over the coordinate tools")
	}
	if o.Format != mcpserver.FormatJPEG && o.Format != mcpserver.FormatPNG {
		return fmt.Errorf("--format %q: use jpeg or png", o.Format)
	}
	if o.JPEGQuality < 1 || o.JPEGQuality > 100 {
		return fmt.Errorf("--jpeg-quality %d: use 1-100", o.JPEGQuality)
	}
	if f.effectQuiet < 1 || f.effectCap < f.effectQuiet || f.effectCap > 10000 {
		return fmt.Errorf("--effect-quiet-ms %d and --effect-cap-ms %d: use 1 ms or more for the quiet time, and a cap from that to 10000 ms", f.effectQuiet, f.effectCap)
	}
	o.Effect.Settle = effect.Settle{Quiet: time.Duration(f.effectQuiet) * time.Millisecond, Cap: time.Duration(f.effectCap) * time.Millisecond}
	return nil
}

// imageLimits are the screenshot limits --image-preset, --max-long-edge
// and --max-tokens ask for, and the preset's canonical name ("" for none).
func (f *serveFlags) imageLimits(fs *flag.FlagSet) (geometry.Limits, string, error) {
	limits := geometry.Limits{MaxLongEdge: f.maxLongEdge, MaxTokens: f.maxTokens, TokenPx: geometry.DefaultTokenPx}
	name := ""
	if f.imagePreset != "" {
		preset, err := geometry.LookupPreset(f.imagePreset)
		if err != nil {
			return geometry.Limits{}, "", fmt.Errorf("--image-preset: %w", err)
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
		name = preset.Name
	}
	if err := limits.Validate(); err != nil {
		return geometry.Limits{}, "", fmt.Errorf("--max-long-edge/--max-tokens: %w", err)
	}
	return limits, name, nil
}

// addConsentFlags adds serve's pre-approval flags.
func addConsentFlags(fs *flag.FlagSet, o *supervisor.ConsentOptions) {
	fs.Var((*stringList)(&o.Allow), "allow", "pre-approve an app for request_access: `APP[=TIER]` (name or id; tier read, click or full), repeatable; adds to the pre-approval file")
	fs.Var((*stringList)(&o.Grant), "grant", "pre-approve a grant `flag` (clipboardRead, clipboardWrite, systemKeyCombos), repeatable or comma-separated")
}

// addSafetyFlags adds serve's flags for the gates, the lock and turn
// cleanup.
func addSafetyFlags(fs *flag.FlagSet, o *supervisor.SafetyOptions) {
	fs.DurationVar(&o.IdleTimeout, "idle-timeout", cleanup.DefaultIdleTimeout,
		"give the computer back (show hidden windows, restore the clipboard, release the lock) after this long without an action; 0 never")
	fs.BoolVar(&o.HideUnapproved, "hide-unapproved", true,
		"minimise the windows of apps the session has not approved while deskhand acts (they are masked in screenshots either way)")
	o.Indicator = true
	fs.Var((*onOff)(&o.Indicator), "indicator", "`on` shows a badge at the top of the screen while deskhand is in control, saying that Escape stops it (never in deskhand's screenshots; clicks pass through it); off shows none")
}

// onOff is a flag that is on or off.
type onOff bool

func (b *onOff) String() string {
	if b != nil && bool(*b) {
		return "on"
	}
	return "off"
}

func (b *onOff) Set(s string) error {
	switch s {
	case "on":
		*b = true
	case "off":
		*b = false
	default:
		return fmt.Errorf("use on or off, not %q", s)
	}
	return nil
}

// addHTTPFlags adds serve's flags for MCP over Streamable HTTP.
func addHTTPFlags(fs *flag.FlagSet, f *supervisor.HTTPOptions) {
	fs.StringVar(&f.Addr, "http", "", "serve MCP over Streamable HTTP on `ADDR` ([HOST]:PORT; a missing host means 127.0.0.1) at path /mcp, instead of stdio")
	fs.StringVar(&f.TokenFile, "http-token-file", "", "`file` holding the bearer token HTTP clients must send, created (mode 0600) with a random token when missing (default: $DESKHAND_HTTP_TOKEN if set, else "+supervisor.HTTPTokenFile+" in the config directory)")
	fs.Var((*stringList)(&f.AllowOrigins), "http-allow-origin", "also accept browser requests from this `origin` (scheme://host[:port]), repeatable; other Origin headers are refused")
	fs.Var((*stringList)(&f.AllowHosts), "http-allow-host", "also accept this `host` name in the Host header (besides localhost, 127.0.0.1, ::1 and the bound address), repeatable; * accepts any")
	fs.Int64Var(&f.MaxBody, "http-max-body", supervisor.DefaultHTTPMaxBody, "largest HTTP request body, in `bytes`")
	fs.DurationVar(&f.SessionTimeout, "http-session-timeout", supervisor.DefaultHTTPSessionTimeout, "close an HTTP session after this long without a request, giving the computer back; 0 never")
	fs.IntVar(&f.MaxSessions, "http-max-sessions", supervisor.DefaultHTTPMaxSessions, "most HTTP `sessions` alive at once; a client initializing one more gets an error")
	fs.DurationVar(&f.ReadTimeout, "http-read-timeout", supervisor.DefaultHTTPReadTimeout, "longest time a client may take to send a request body, and an HTTP connection may stay idle between requests")
	fs.StringVar(&f.TLSCert, "tls-cert", "", "serve HTTPS with this PEM certificate `file` (with --tls-key)")
	fs.StringVar(&f.TLSKey, "tls-key", "", "PEM private key `file` of --tls-cert")
	fs.Var((*stringList)(&f.AuthServers), "http-auth-server", "OAuth authorization server issuer `URL` to advertise in the protected-resource metadata (RFC 9728) at /.well-known/oauth-protected-resource, repeatable")
	fs.Var((*stringList)(&f.Scopes), "http-scope", "OAuth `scope` to advertise in the protected-resource metadata, repeatable")
	fs.StringVar(&f.Resource, "http-resource", "", "the resource `URL` clients reach the MCP endpoint at, for the protected-resource metadata (default: from each request's Host)")
	fs.BoolVar(&f.AllowPlaintext, "http-allow-plaintext", false, "allow --http on a non-loopback address without TLS, for a TLS proxy in front (an ingress, a service mesh)")
}
