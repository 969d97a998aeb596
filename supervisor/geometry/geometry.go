// Package geometry sizes screenshots for a vision model and converts
// between the coordinates a model sends and the display's logical
// coordinates.
//
// A model works in the space of the last screenshot it was shown: pixels of
// that image (ModePixels) or percentages of its width and height
// (ModeNormalized). The server records, for every screenshot, the display
// it shows and the size it was scaled to (a Shot), and converts each
// coordinate through that record. The record, and the display the user
// selected, are kept in a small state file so they survive a restart.
package geometry

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/deskhand/deskhand/bridge/wire"
)

// Point, Size and Rect are the helper protocol's types: positions and
// rectangles in the global logical coordinate space (X11: root window
// pixels), the space every model coordinate is converted into.
type (
	Point = wire.Point
	Size  = wire.Size
	Rect  = wire.Rect
)

// Limits bound a screenshot's size. The defaults are the sizes a Claude
// vision encoder takes without resizing: a long edge of at most 1568 px and
// at most 1568 patches of 28×28 px.
type Limits struct {
	// MaxLongEdge is the largest width or height, in pixels.
	MaxLongEdge int
	// MaxTokens is the largest ⌈w/TokenPx⌉·⌈h/TokenPx⌉.
	MaxTokens int
	// TokenPx is the side of the square patch one token covers.
	TokenPx int
}

// Defaults for Limits.
const (
	DefaultMaxLongEdge = 1568
	DefaultMaxTokens   = 1568
	DefaultTokenPx     = 28
)

// Validate reports limits that no image can meet.
func (l Limits) Validate() error {
	switch {
	case l.MaxLongEdge < 1:
		return fmt.Errorf("max long edge %d is too small: use at least 1 pixel (default %d)", l.MaxLongEdge, DefaultMaxLongEdge)
	case l.MaxTokens < 1:
		return fmt.Errorf("max tokens %d is too small: use at least 1 (default %d)", l.MaxTokens, DefaultMaxTokens)
	case l.TokenPx < 1:
		return fmt.Errorf("token patch size %d is too small: use at least 1 pixel (default %d)", l.TokenPx, DefaultTokenPx)
	}
	return nil
}

func (l Limits) withDefaults() Limits {
	if l.MaxLongEdge <= 0 {
		l.MaxLongEdge = DefaultMaxLongEdge
	}
	if l.MaxTokens <= 0 {
		l.MaxTokens = DefaultMaxTokens
	}
	if l.TokenPx <= 0 {
		l.TokenPx = DefaultTokenPx
	}
	return l
}

// Tokens returns ⌈w/px⌉·⌈h/px⌉, the number of px×px patches that cover a
// w×h image.
func Tokens(w, h, px int) int {
	if w <= 0 || h <= 0 || px <= 0 {
		return 0
	}
	return ((w + px - 1) / px) * ((h + px - 1) / px)
}

// Fits reports whether a w×h image is within the limits.
func (l Limits) Fits(w, h int) bool {
	l = l.withDefaults()
	return w <= l.MaxLongEdge && h <= l.MaxLongEdge && Tokens(w, h, l.TokenPx) <= l.MaxTokens
}

// ScaledSize returns the largest size with the aspect ratio of w×h (the
// short edge rounded to the nearest pixel) that fits the limits. An image
// that already fits keeps its size; nothing is scaled up. Zero limit fields
// take the defaults.
func ScaledSize(w, h int, l Limits) (int, int) {
	if w <= 0 || h <= 0 {
		return 0, 0
	}
	l = l.withDefaults()
	if l.Fits(w, h) {
		return w, h
	}
	long, short := w, h
	if h > w {
		long, short = h, w
	}
	shortFor := func(L int) int {
		s := int(math.Round(float64(L) * float64(short) / float64(long)))
		return max(s, 1)
	}
	// The token count never falls as the long edge grows, so the largest
	// long edge that fits is found by bisection: lo fits, hi does not.
	// A 1×1 image is one token, within any valid budget.
	lo, hi := 1, min(long, l.MaxLongEdge)+1
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if Tokens(mid, shortFor(mid), l.TokenPx) <= l.MaxTokens {
			lo = mid
		} else {
			hi = mid
		}
	}
	if h > w {
		return shortFor(lo), lo
	}
	return lo, shortFor(lo)
}

// Mode is the coordinate convention a model uses.
type Mode string

// The coordinate modes.
const (
	// ModePixels: coordinates are pixels of the latest screenshot image,
	// origin at its top-left corner.
	ModePixels Mode = "pixels"
	// ModeNormalized: coordinates are percentages (0–100) of the latest
	// screenshot's width and height.
	ModeNormalized Mode = "normalized_0_100"
)

// ParseMode accepts "pixels" and "normalized_0_100".
func ParseMode(s string) (Mode, error) {
	switch Mode(strings.TrimSpace(s)) {
	case ModePixels:
		return ModePixels, nil
	case ModeNormalized:
		return ModeNormalized, nil
	}
	return "", fmt.Errorf("unknown coordinate mode %q: use %q or %q", s, ModePixels, ModeNormalized)
}

// Shot is the geometry one screenshot was taken with: which display it
// shows, where that display lies in the global logical space, and the size
// of the image the model was given.
type Shot struct {
	DisplayID   uint32 `json:"display_id"`
	DisplayName string `json:"display_name"`
	// Origin and Logical place the display in the global logical space.
	Origin  Point `json:"origin"`
	Logical Size  `json:"logical"`
	// Physical is the display's size in device pixels.
	Physical Size `json:"physical"`
	// Image is the size of the screenshot image.
	Image Size `json:"image"`
}

// Bounds is the display's rectangle in the global logical space.
func (s Shot) Bounds() Rect {
	return Rect{X: s.Origin.X, Y: s.Origin.Y, Width: s.Logical.Width, Height: s.Logical.Height}
}

// Validate reports a shot whose sizes cannot be converted through.
func (s Shot) Validate() error {
	if s.Logical.Width <= 0 || s.Logical.Height <= 0 || s.Image.Width <= 0 || s.Image.Height <= 0 {
		return fmt.Errorf("screenshot geometry has an empty size (display %dx%d, image %dx%d)",
			s.Logical.Width, s.Logical.Height, s.Image.Width, s.Image.Height)
	}
	return nil
}

// ErrOutside is wrapped by the errors of coordinates that lie outside the
// screenshot.
var ErrOutside = errors.New("coordinate outside the screenshot")

// ToLogical converts the model coordinate (x, y) in mode m to a point in
// the global logical space. A pixel coordinate maps to the logical pixel
// under the centre of that image pixel. Coordinates outside the image, NaN
// and infinities are errors that say the valid range.
func (s Shot) ToLogical(m Mode, x, y float64) (Point, error) {
	if err := s.Validate(); err != nil {
		return Point{}, err
	}
	if err := finite(x, y); err != nil {
		return Point{}, err
	}
	switch m {
	case ModeNormalized:
		if x < 0 || y < 0 || x > 100 || y > 100 {
			return Point{}, fmt.Errorf("%w: coordinate [%s, %s] is outside 0–100; in normalized_0_100 mode x and y are percentages of the screenshot's width and height",
				ErrOutside, num(x), num(y))
		}
		return Point{
			X: s.Origin.X + clampInt(int(math.Floor(x/100*float64(s.Logical.Width))), 0, s.Logical.Width-1),
			Y: s.Origin.Y + clampInt(int(math.Floor(y/100*float64(s.Logical.Height))), 0, s.Logical.Height-1),
		}, nil
	case ModePixels, "":
		if x < 0 || y < 0 || x >= float64(s.Image.Width) || y >= float64(s.Image.Height) {
			return Point{}, fmt.Errorf("%w: coordinate [%s, %s] is outside the %dx%d screenshot; x must be 0–%d and y 0–%d (pixels of the latest screenshot, origin top-left)",
				ErrOutside, num(x), num(y), s.Image.Width, s.Image.Height, s.Image.Width-1, s.Image.Height-1)
		}
		sx := float64(s.Logical.Width) / float64(s.Image.Width)
		sy := float64(s.Logical.Height) / float64(s.Image.Height)
		return Point{
			X: s.Origin.X + clampInt(int(math.Floor((math.Floor(x)+0.5)*sx)), 0, s.Logical.Width-1),
			Y: s.Origin.Y + clampInt(int(math.Floor((math.Floor(y)+0.5)*sy)), 0, s.Logical.Height-1),
		}, nil
	}
	return Point{}, fmt.Errorf("unknown coordinate mode %q", m)
}

// FromLogical converts a point in the global logical space to the model's
// coordinates in mode m (whole pixels, or percentages with two decimals).
// inside is false when p is not on the screenshot's display; the
// coordinates are then extrapolated and only good for a message.
func (s Shot) FromLogical(m Mode, p Point) (x, y float64, inside bool) {
	if s.Validate() != nil {
		return 0, 0, false
	}
	dx, dy := float64(p.X-s.Origin.X), float64(p.Y-s.Origin.Y)
	inside = s.Bounds().Contains(p)
	if m == ModeNormalized {
		x = math.Round((dx+0.5)/float64(s.Logical.Width)*10000) / 100
		y = math.Round((dy+0.5)/float64(s.Logical.Height)*10000) / 100
		return x, y, inside
	}
	x = math.Floor(dx * float64(s.Image.Width) / float64(s.Logical.Width))
	y = math.Floor(dy * float64(s.Image.Height) / float64(s.Logical.Height))
	return x, y, inside
}

// RegionToLogical converts the model region [x0, y0, x1, y1] (top-left and
// bottom-right corners, in mode m) to a rectangle in the global logical
// space covering every logical pixel the region shows.
func (s Shot) RegionToLogical(m Mode, x0, y0, x1, y1 float64) (Rect, error) {
	if err := s.Validate(); err != nil {
		return Rect{}, err
	}
	if err := finite(x0, y0, x1, y1); err != nil {
		return Rect{}, err
	}
	if x1 <= x0 || y1 <= y0 {
		return Rect{}, fmt.Errorf("region [%s, %s, %s, %s] is empty: give [x0, y0, x1, y1] with x1 > x0 and y1 > y0 (top-left, then bottom-right corner)",
			num(x0), num(y0), num(x1), num(y1))
	}
	var limW, limH float64
	var unit string
	switch m {
	case ModeNormalized:
		limW, limH, unit = 100, 100, "percent"
	default:
		limW, limH, unit = float64(s.Image.Width), float64(s.Image.Height), "pixels"
	}
	if x0 < 0 || y0 < 0 || x1 > limW || y1 > limH {
		return Rect{}, fmt.Errorf("%w: region [%s, %s, %s, %s] reaches outside the screenshot; corners must lie within 0–%s × 0–%s (%s of the latest screenshot)",
			ErrOutside, num(x0), num(y0), num(x1), num(y1), num(limW), num(limH), unit)
	}
	fx := float64(s.Logical.Width) / limW
	fy := float64(s.Logical.Height) / limH
	left := clampInt(int(math.Floor(x0*fx)), 0, s.Logical.Width-1)
	top := clampInt(int(math.Floor(y0*fy)), 0, s.Logical.Height-1)
	right := clampInt(int(math.Ceil(x1*fx)), left+1, s.Logical.Width)
	bottom := clampInt(int(math.Ceil(y1*fy)), top+1, s.Logical.Height)
	return Rect{X: s.Origin.X + left, Y: s.Origin.Y + top, Width: right - left, Height: bottom - top}, nil
}

func finite(vs ...float64) error {
	for _, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("coordinate value %v is not a finite number: give numbers such as [640, 400]", v)
		}
	}
	return nil
}

// num formats a coordinate without a trailing ".0".
func num(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%g", v)
}

func clampInt(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}
