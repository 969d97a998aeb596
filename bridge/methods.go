package bridge

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/deskhand/deskhand/bridge/wire"
)

// Point, Size, Rect and App are the protocol's value types, declared in
// package wire so that packages below the helper client share them.
type (
	Point = wire.Point
	Size  = wire.Size
	Rect  = wire.Rect
	App   = wire.App
)

// Display is one monitor (X11: a RandR monitor).
type Display struct {
	// ID is stable for a monitor name (X11: FNV-1a 32 of the name;
	// macOS: the CGDirectDisplayID).
	ID       uint32  `json:"id"`
	Name     string  `json:"name"`
	Origin   Point   `json:"origin"`
	Logical  Size    `json:"logical"`
	Physical Size    `json:"physical"`
	Scale    float64 `json:"scale"`
	Primary  bool    `json:"primary"`
	MM       Size    `json:"mm"`
}

// Bounds is the display's rectangle in the global logical space.
func (d Display) Bounds() Rect {
	return Rect{X: d.Origin.X, Y: d.Origin.Y, Width: d.Logical.Width, Height: d.Logical.Height}
}

// Window is one top-level window.
type Window struct {
	ID        uint32 `json:"id"`
	Title     string `json:"title"`
	App       App    `json:"app"`
	Bounds    Rect   `json:"bounds"` // including the window manager's frame
	Client    Rect   `json:"client"` // the client area
	Minimized bool   `json:"minimized"`
	Hidden    bool   `json:"hidden"`
	Focused   bool   `json:"focused"`
	// Desktop is the virtual desktop number, nil when unknown.
	Desktop *int `json:"desktop"`
	// OverrideRedirect marks a window the window manager does not manage:
	// a menu, tooltip, popup or notification. It cannot be minimized.
	OverrideRedirect bool `json:"override_redirect"`
	// Input, when not nil, is where a pointer event lands in the window
	// (its input shape), if that is not all of Bounds: a drag icon or a
	// cursor overlay lets clicks through to the window below. Empty means
	// nowhere.
	Input []Rect `json:"input,omitempty"`
}

// TakesInputAt reports whether a pointer event at p lands in w (rather
// than passing through it, or missing it).
func (w Window) TakesInputAt(p Point) bool {
	if w.Input == nil {
		return w.Bounds.Contains(p)
	}
	for _, r := range w.Input {
		if r.Contains(p) {
			return true
		}
	}
	return false
}

// WindowList is the answer to windows: Windows in stacking order, top
// first; Focused the active window and Frontmost its app, nil when none.
type WindowList struct {
	Windows   []Window `json:"windows"`
	Focused   *uint32  `json:"focused"`
	Frontmost *App     `json:"frontmost"`
}

// WindowAt is the answer to window_at: the topmost visible window whose
// frame contains the point, and its app; both nil over the bare desktop.
type WindowAt struct {
	Window *Window `json:"window"`
	App    *App    `json:"app"`
}

// Image formats a capture can produce.
const (
	FormatJPEG = "jpeg"
	FormatPNG  = "png"
)

// CaptureRequest asks for a screenshot. The zero value captures the
// primary display at native size as JPEG at quality 80.
type CaptureRequest struct {
	// Display is the display id to capture; nil means the primary.
	// Ignored when Rect is set.
	Display *uint32 `json:"display,omitempty"`
	// Rect captures this rectangle instead of a display.
	Rect *Rect `json:"rect,omitempty"`
	// Width and Height scale the output; give both or neither.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Format is FormatJPEG (default) or FormatPNG.
	Format string `json:"format,omitempty"`
	// Quality is the JPEG quality, 1..100; 0 means the helper's 80.
	Quality int `json:"quality,omitempty"`
	// Mask lists windows painted over in the output.
	Mask []uint32 `json:"mask,omitempty"`
	// MaskOthers paints over every window not in Keep as well, judged
	// from the windows as they are when the pixels are read: a window
	// that opened after the caller's last listing is painted too. A
	// helper that cannot do this ignores it and answers with
	// Capture.MaskOthers false.
	MaskOthers bool     `json:"mask_others,omitempty"`
	Keep       []uint32 `json:"keep,omitempty"`
	// MaskColor is the RGB paint colour; nil means the helper's default.
	MaskColor *[3]uint8 `json:"mask_color,omitempty"`
	// Preview, for the supervisor's gates only (never sent): the image is
	// shown to the model but is not what later clicks are checked against.
	Preview bool `json:"-"`
}

// Capture is a screenshot.
type Capture struct {
	Format string `json:"format"`
	// Data is the encoded image (JPEG or PNG bytes).
	Data   []byte `json:"data"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	// Source is the screen rectangle the image shows, in global logical
	// coordinates.
	Source Rect `json:"source"`
	// Display is the captured display's id, nil for a rectangle capture.
	Display *uint32 `json:"display"`
	// Masked lists the requested windows that were visible and painted
	// over.
	Masked []uint32 `json:"masked"`
	// MaskOthers is true when the helper honoured the request's
	// MaskOthers.
	MaskOthers bool `json:"mask_others"`
	// MaskCover says how much of Source the mask paints over, nil when
	// nothing or when the helper does not tell.
	MaskCover *MaskCover `json:"mask_cover,omitempty"`
	// Note is what the caller's safety layer adds for the model about
	// this image (such as most of it being masked); never from a helper.
	Note string `json:"-"`
	// Method says how the pixels were read: "shm", "get_image" or
	// "screencapturekit".
	Method    string `json:"method"`
	CaptureID uint64 `json:"capture_id"`
	// Reused is true when the helper served its previous image again,
	// because nothing was drawn in Source since it read those pixels and
	// the request shapes the image the same (see PROTOCOL.md); false, or
	// left out, when it read the screen.
	Reused bool `json:"reused"`
	// Displays is, for a display capture by a helper that sends it (the
	// X11 one), the display list the helper placed the capture from,
	// read during the capture; nil otherwise. A caller that keeps the
	// display list between screenshots checks it against this.
	Displays []Display `json:"displays,omitempty"`
	// Base64 is Data's standard base64 text as the helper sent it, when
	// it came as a plain literal: a caller that sends the image on as
	// base64 (an MCP image content) copies this instead of encoding Data
	// again. Nil when the image text had line breaks.
	Base64 []byte `json:"-"`
}

// MaskCover is how much of a capture is masked.
type MaskCover struct {
	// Pixels is the number of source pixels painted over.
	Pixels int64 `json:"pixels"`
	// Window is the window painted over the largest area, if any.
	Window *uint32 `json:"window"`
}

// PatchCheckRequest asks whether the patch around a point changed since
// the last capture.
type PatchCheckRequest struct {
	X int `json:"x"`
	Y int `json:"y"`
	// Size is the patch's odd side length, 1..63; 0 means the helper's 9.
	Size int `json:"size,omitempty"`
	// Tolerance is the largest per-channel difference still counted as
	// equal.
	Tolerance int `json:"tolerance,omitempty"`
}

// PatchCheck is the answer to patch_check.
type PatchCheck struct {
	Changed         bool   `json:"changed"`
	DifferingPixels int    `json:"differing_pixels"`
	MaxDelta        int    `json:"max_delta"`
	CaptureID       uint64 `json:"capture_id"`
}

// Displays lists the monitors, in the helper's order.
func (c *Client) Displays(ctx context.Context) ([]Display, error) {
	var res struct {
		Displays []Display `json:"displays"`
	}
	if err := c.Call(ctx, "displays", nil, &res); err != nil {
		return nil, err
	}
	return res.Displays, nil
}

// Capture takes a screenshot.
func (c *Client) Capture(ctx context.Context, req CaptureRequest) (*Capture, error) {
	var res liftedResult
	if err := c.Call(ctx, "capture", req, &res); err != nil {
		return nil, err
	}
	return decodeCaptureFrom(res.raw, res.blobs)
}

// captureWire is a capture result with its image still base64 text.
type captureWire struct {
	Capture
	Data *string `json:"data"` // shadows Capture.Data
}

// decodeCaptureFrom decodes a capture result and checks that it holds the
// image it claims to: a known format whose bytes start with that format's
// signature, and positive sizes. Its long strings may have been lifted out
// into blobs (see blobStore; nil when none were). The image is base64-decoded
// straight from its literal: through encoding/json, a 280 KB image would
// be scanned twice before being decoded, which costs several times the
// decoding itself.
func decodeCaptureFrom(raw []byte, blobs map[string][]byte) (*Capture, error) {
	var wire captureWire
	if err := json.Unmarshal(raw, &wire); err != nil {
		return nil, fmt.Errorf("%w: its capture result does not decode: %v", ErrProtocol, err)
	}
	shot := wire.Capture
	if wire.Data != nil {
		data, text, err := decodeImageText(*wire.Data, blobs)
		if err != nil {
			return nil, fmt.Errorf("%w: its capture result does not decode: %v", ErrProtocol, err)
		}
		shot.Data, shot.Base64 = data, text
	}
	var magic []byte
	switch shot.Format {
	case FormatJPEG:
		magic = []byte{0xff, 0xd8, 0xff}
	case FormatPNG:
		magic = []byte("\x89PNG\r\n\x1a\n")
	default:
		return nil, fmt.Errorf("%w: its capture result has format %q, want %q or %q", ErrProtocol, shot.Format, FormatJPEG, FormatPNG)
	}
	if !bytes.HasPrefix(shot.Data, magic) {
		return nil, fmt.Errorf("%w: its capture result's %d data bytes are not a %s image", ErrProtocol, len(shot.Data), shot.Format)
	}
	if shot.Width <= 0 || shot.Height <= 0 || shot.Source.Width <= 0 || shot.Source.Height <= 0 {
		return nil, fmt.Errorf("%w: its capture result has an empty size (image %dx%d, source %dx%d)",
			ErrProtocol, shot.Width, shot.Height, shot.Source.Width, shot.Source.Height)
	}
	return &shot, nil
}

// decodeImageText base64-decodes a capture's "data": the string itself,
// or the token standing for a lifted literal. It also returns the base64
// text it decoded, which is valid since it decoded, for the caller to
// pass on without encoding the bytes again (see plainBase64).
func decodeImageText(text string, blobs map[string][]byte) (data, b64 []byte, err error) {
	literal, ok := blobs[text]
	if !ok {
		data, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return nil, nil, err
		}
		return data, plainBase64(data, []byte(text)), nil
	}
	body := literal[1 : len(literal)-1]
	if bytes.IndexByte(body, '\\') >= 0 {
		// An escaped literal (the helper never writes one, base64 needs
		// no escapes): let encoding/json undo the escapes.
		var unescaped string
		if err := json.Unmarshal(literal, &unescaped); err != nil {
			return nil, nil, err
		}
		return decodeImageText(unescaped, nil)
	}
	data = make([]byte, base64.StdEncoding.DecodedLen(len(body)))
	n, err := base64.StdEncoding.Decode(data, body)
	if err != nil {
		return nil, nil, err
	}
	return data[:n], plainBase64(data[:n], body), nil
}

// plainBase64 returns text, the base64 that decoded to data, when it is
// exactly data's encoding; nil when the decoder skipped characters in it
// (Go's skips CR and LF), which must not reach a newline-framed stream.
func plainBase64(data, text []byte) []byte {
	if base64.StdEncoding.EncodedLen(len(data)) != len(text) {
		return nil
	}
	return text
}

// Windows lists the top-level windows, top of the stack first; minimized
// and unmapped ones only with includeHidden.
func (c *Client) Windows(ctx context.Context, includeHidden bool) (*WindowList, error) {
	var res WindowList
	params := struct {
		IncludeHidden bool `json:"include_hidden"`
	}{includeHidden}
	if err := c.Call(ctx, "windows", params, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// WindowAt returns the topmost visible window whose frame contains the
// point (x, y).
func (c *Client) WindowAt(ctx context.Context, x, y int) (*WindowAt, error) {
	var res WindowAt
	if err := c.Call(ctx, "window_at", Point{X: x, Y: y}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// PatchCheck compares the patch around a point in the last capture with
// the live screen.
func (c *Client) PatchCheck(ctx context.Context, req PatchCheckRequest) (*PatchCheck, error) {
	var res PatchCheck
	if err := c.Call(ctx, "patch_check", req, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Selection names one of the desktop's clipboards.
type Selection string

// The selections of the clipboard methods.
const (
	// SelectionClipboard is what copy and paste (ctrl+c, ctrl+v) use.
	SelectionClipboard Selection = "clipboard"
	// SelectionPrimary is X11's PRIMARY selection: the text selected
	// last, which a middle click pastes. Helpers of platforms without one
	// (macOS) answer an *Error named "unsupported".
	SelectionPrimary Selection = "primary"
	// SelectionCutBuffer is X11's legacy cut buffer CUT_BUFFER0, which
	// xterm and other Xt programs fill with every selection and paste
	// from when PRIMARY yields nothing. It belongs to no client, so it
	// outlives the helper. macOS helpers answer "unsupported".
	SelectionCutBuffer Selection = "cut_buffer"
)

// ReadClipboard returns the clipboard's text.
func (c *Client) ReadClipboard(ctx context.Context) (string, error) {
	return c.ReadSelection(ctx, SelectionClipboard)
}

// WriteClipboard puts text on the clipboard; the helper serves it until
// another client takes the clipboard or the helper exits. Text over the
// helper's 1 MiB request cap fails with ErrTooLarge.
func (c *Client) WriteClipboard(ctx context.Context, text string) error {
	return c.WriteSelection(ctx, SelectionClipboard, text)
}

// selectionParam is omitted for the clipboard, the protocol's default.
func selectionParam(sel Selection) Selection {
	if sel == SelectionClipboard {
		return ""
	}
	return sel
}

// ReadSelection returns the text of selection sel.
func (c *Client) ReadSelection(ctx context.Context, sel Selection) (string, error) {
	params := struct {
		Selection Selection `json:"selection,omitempty"`
	}{selectionParam(sel)}
	var res struct {
		Text *string `json:"text"`
	}
	if err := c.Call(ctx, "clipboard_read", params, &res); err != nil {
		return "", err
	}
	if res.Text == nil {
		return "", fmt.Errorf("%w: its clipboard_read result has no text", ErrProtocol)
	}
	return *res.Text, nil
}

// WriteSelection puts text on selection sel, as WriteClipboard does on
// the clipboard; "" clears it.
func (c *Client) WriteSelection(ctx context.Context, sel Selection, text string) error {
	params := struct {
		Text      string    `json:"text"`
		Selection Selection `json:"selection,omitempty"`
	}{text, selectionParam(sel)}
	var res struct {
		OK bool `json:"ok"`
	}
	if err := c.Call(ctx, "clipboard_write", params, &res); err != nil {
		return err
	}
	if !res.OK {
		return fmt.Errorf("%w: its clipboard_write result is not {\"ok\": true}", ErrProtocol)
	}
	return nil
}

// Hide minimizes the windows with the given ids that are visible and
// returns the ones it changed. An unknown id fails the whole call (an
// *Error named "no_such_window") before any window is touched.
func (c *Client) Hide(ctx context.Context, ids []uint32) ([]uint32, error) {
	var res struct {
		Hidden []uint32 `json:"hidden"`
	}
	if err := c.Call(ctx, "hide", windowsParam(ids), &res); err != nil {
		return nil, err
	}
	return res.Hidden, nil
}

// Restore maps the windows back (bottom-most first, so their stacking
// order is kept) and returns the ones it restored.
func (c *Client) Restore(ctx context.Context, ids []uint32) ([]uint32, error) {
	var res struct {
		Restored []uint32 `json:"restored"`
	}
	if err := c.Call(ctx, "restore", windowsParam(ids), &res); err != nil {
		return nil, err
	}
	return res.Restored, nil
}

type windowsParams struct {
	Windows []uint32 `json:"windows"`
}

func windowsParam(ids []uint32) windowsParams {
	if ids == nil {
		ids = []uint32{}
	}
	return windowsParams{Windows: ids}
}

// DesktopEntry is one application desktop entry as the Linux helper's
// index holds it (PROTOCOL.md `apps`): the helper is the one place
// desktop entries are read, for window identity and launching alike.
type DesktopEntry struct {
	ID             string   `json:"id"`
	File           string   `json:"file,omitempty"`
	Name           string   `json:"name,omitempty"`
	GenericName    string   `json:"generic_name,omitempty"`
	StartupWMClass string   `json:"startup_wm_class,omitempty"`
	Exec           []string `json:"exec,omitempty"` // split, field codes kept
	Icon           string   `json:"icon,omitempty"`
	WorkDir        string   `json:"work_dir,omitempty"`
	Terminal       bool     `json:"terminal"`
	Keywords       []string `json:"keywords,omitempty"`
	NoDisplay      bool     `json:"no_display"`
}

// Apps lists the installed applications' desktop entries, most important
// data directory first.
func (c *Client) Apps(ctx context.Context) ([]DesktopEntry, error) {
	var res struct {
		Apps []DesktopEntry `json:"apps"`
	}
	if err := c.Call(ctx, "apps", struct{}{}, &res); err != nil {
		return nil, err
	}
	return res.Apps, nil
}
