package geometry

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestScaledSize(t *testing.T) {
	tests := []struct {
		w, h         int
		lim          Limits
		wantW, wantH int
	}{
		// Fits already: unchanged, never scaled up.
		{1280, 800, Limits{}, 1280, 800},
		{1024, 768, Limits{}, 1024, 768},
		{1366, 768, Limits{}, 1366, 768},
		{1, 1, Limits{}, 1, 1},
		// The token budget binds before the long edge (the helper
		// protocol's own example size for 1920x1080).
		{1920, 1080, Limits{}, 1456, 819},
		{1080, 1920, Limits{}, 819, 1456},
		{3840, 2160, Limits{}, 1456, 819},
		{2560, 1600, Limits{}, 1389, 868},
		{2880, 1800, Limits{}, 1389, 868},
		{1600, 1200, Limits{}, 1269, 952},
		{1568, 1568, Limits{}, 1092, 1092},
		// The long edge binds: an ultra-wide screen and a tall strip.
		{5120, 1440, Limits{}, 1568, 441},
		{100, 10000, Limits{}, 16, 1568},
		// The seed's example: a 2560x1600 Retina panel shown at 1176x735.
		{2560, 1600, Limits{MaxLongEdge: 1176}, 1176, 735},
		// A smaller token budget.
		{1920, 1080, Limits{MaxTokens: 400}, 728, 410},
		// Degenerate sources.
		{0, 100, Limits{}, 0, 0},
		{100, -1, Limits{}, 0, 0},
	}
	for _, tt := range tests {
		gotW, gotH := ScaledSize(tt.w, tt.h, tt.lim)
		if gotW != tt.wantW || gotH != tt.wantH {
			t.Errorf("ScaledSize(%d, %d, %+v) = %dx%d, want %dx%d", tt.w, tt.h, tt.lim, gotW, gotH, tt.wantW, tt.wantH)
		}
	}
}

// TestScaledSizeProperties checks every result against the definition: it
// fits both limits, keeps the aspect ratio to within rounding, is never
// larger than the source, and no larger long edge with the same aspect
// would fit.
func TestScaledSizeProperties(t *testing.T) {
	limits := []Limits{{}, {MaxLongEdge: 1176}, {MaxTokens: 1000}, {MaxLongEdge: 800, MaxTokens: 5000}, {TokenPx: 32}}
	sizes := [][2]int{}
	for _, w := range []int{640, 800, 1024, 1280, 1366, 1440, 1600, 1920, 2048, 2560, 2880, 3440, 3840, 5120, 7680} {
		for _, h := range []int{480, 600, 768, 800, 900, 1050, 1080, 1200, 1440, 1600, 2160, 4320} {
			sizes = append(sizes, [2]int{w, h}, [2]int{h, w})
		}
	}
	for _, lim := range limits {
		l := lim.withDefaults()
		for _, s := range sizes {
			w, h := ScaledSize(s[0], s[1], lim)
			name := fmt.Sprintf("ScaledSize(%d, %d, %+v) = %dx%d", s[0], s[1], lim, w, h)
			if !l.Fits(w, h) {
				t.Errorf("%s: does not fit (long edge %d, %d tokens)", name, max(w, h), Tokens(w, h, l.TokenPx))
			}
			if w > s[0] || h > s[1] {
				t.Errorf("%s: larger than the source", name)
			}
			// The short edge is the long edge times the aspect, rounded.
			long, short, srcLong, srcShort := w, h, s[0], s[1]
			if s[1] > s[0] {
				long, short, srcLong, srcShort = h, w, s[1], s[0]
			}
			want := max(int(math.Round(float64(long)*float64(srcShort)/float64(srcLong))), 1)
			if short != want {
				t.Errorf("%s: short edge %d, want %d for the source's aspect", name, short, want)
			}
			if l.Fits(s[0], s[1]) {
				if w != s[0] || h != s[1] {
					t.Errorf("%s: the source fits, want it unchanged", name)
				}
				continue
			}
			// Maximal: one pixel more on the long edge does not fit.
			next := long + 1
			nextShort := max(int(math.Round(float64(next)*float64(srcShort)/float64(srcLong))), 1)
			if next <= srcLong && next <= l.MaxLongEdge && Tokens(next, nextShort, l.TokenPx) <= l.MaxTokens {
				// Token counts are monotonic, so checking the next size
				// suffices.
				t.Errorf("%s: %dx%d also fits; not the largest", name, next, nextShort)
			}
		}
	}
}

func TestTokens(t *testing.T) {
	tests := []struct{ w, h, px, want int }{
		{28, 28, 28, 1},
		{29, 28, 28, 2},
		{1456, 819, 28, 52 * 30},
		{1568, 1568, 28, 56 * 56},
		{0, 10, 28, 0},
	}
	for _, tt := range tests {
		if got := Tokens(tt.w, tt.h, tt.px); got != tt.want {
			t.Errorf("Tokens(%d, %d, %d) = %d, want %d", tt.w, tt.h, tt.px, got, tt.want)
		}
	}
}

func TestLimitsValidate(t *testing.T) {
	if err := (Limits{MaxLongEdge: DefaultMaxLongEdge, MaxTokens: DefaultMaxTokens, TokenPx: DefaultTokenPx}).Validate(); err != nil {
		t.Errorf("the default limits do not validate: %v", err)
	}
	for _, l := range []Limits{{MaxLongEdge: 0, MaxTokens: 1, TokenPx: 1}, {MaxLongEdge: 1, MaxTokens: -3, TokenPx: 1}, {MaxLongEdge: 1, MaxTokens: 1}} {
		if err := l.Validate(); err == nil {
			t.Errorf("%+v.Validate() = nil, want an error", l)
		}
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"pixels": ModePixels, "normalized_0_100": ModeNormalized, " pixels ": ModePixels} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("percent"); err == nil || !strings.Contains(err.Error(), "normalized_0_100") {
		t.Errorf("ParseMode(%q) error = %v, want one naming the valid modes", "percent", err)
	}
}

// seedShot is the seed's example: a Retina panel of 2560x1600 physical,
// 1280x800 logical pixels, shown to the model at 1176x735.
var seedShot = Shot{
	DisplayID: 1, DisplayName: "Built-in",
	Logical: Size{Width: 1280, Height: 800}, Physical: Size{Width: 2560, Height: 1600}, Image: Size{Width: 1176, Height: 735},
}

// rightShot is a second monitor to the right of a 1920x1080 one, shown at
// its native size.
var rightShot = Shot{
	DisplayID: 2, DisplayName: "HDMI-1", Origin: Point{X: 1920, Y: 0},
	Logical: Size{Width: 1280, Height: 1024}, Physical: Size{Width: 1280, Height: 1024}, Image: Size{Width: 1280, Height: 1024},
}

var fullHDShot = Shot{
	DisplayID: 3, DisplayName: "screen",
	Logical: Size{Width: 1920, Height: 1080}, Physical: Size{Width: 1920, Height: 1080}, Image: Size{Width: 1456, Height: 819},
}

func TestToLogical(t *testing.T) {
	tests := []struct {
		shot Shot
		mode Mode
		x, y float64
		want Point
	}{
		// The seed's conversion: [588, 368] in the 1176x735 image. Each
		// image pixel maps to the logical pixel under its centre, so 368
		// (covering logical rows 400.5–401.6) gives row 401.
		{seedShot, ModePixels, 588, 368, Point{X: 640, Y: 401}},
		{seedShot, ModePixels, 0, 0, Point{X: 0, Y: 0}},
		{seedShot, ModePixels, 1175, 734, Point{X: 1279, Y: 799}},
		{seedShot, ModePixels, 1175.99, 734.5, Point{X: 1279, Y: 799}},
		{seedShot, ModeNormalized, 50, 50, Point{X: 640, Y: 400}},
		{seedShot, ModeNormalized, 0, 0, Point{X: 0, Y: 0}},
		{seedShot, ModeNormalized, 100, 100, Point{X: 1279, Y: 799}},
		{seedShot, ModeNormalized, 25.5, 10, Point{X: 326, Y: 80}},
		// A second monitor: the origin is added.
		{rightShot, ModePixels, 0, 0, Point{X: 1920, Y: 0}},
		{rightShot, ModePixels, 640, 512, Point{X: 2560, Y: 512}},
		{rightShot, ModeNormalized, 50, 50, Point{X: 2560, Y: 512}},
		// The default 1080p scaling.
		{fullHDShot, ModePixels, 728, 409, Point{X: 960, Y: 540}},
		{fullHDShot, ModePixels, 1455, 818, Point{X: 1919, Y: 1079}},
		{fullHDShot, "", 1, 1, Point{X: 1, Y: 1}},
	}
	for _, tt := range tests {
		got, err := tt.shot.ToLogical(tt.mode, tt.x, tt.y)
		if err != nil || got != tt.want {
			t.Errorf("%s.ToLogical(%q, %v, %v) = %v, %v, want %v", tt.shot.DisplayName, tt.mode, tt.x, tt.y, got, err, tt.want)
		}
	}
}

func TestToLogicalErrors(t *testing.T) {
	tests := []struct {
		mode    Mode
		x, y    float64
		outside bool
		want    string
	}{
		{ModePixels, 1176, 10, true, "x must be 0–1175 and y 0–734"},
		{ModePixels, 10, 735, true, "outside the 1176x735 screenshot"},
		{ModePixels, -1, 10, true, "[-1, 10]"},
		{ModePixels, math.NaN(), 10, false, "not a finite number"},
		{ModePixels, 10, math.Inf(1), false, "not a finite number"},
		{ModeNormalized, 100.5, 10, true, "outside 0–100"},
		{ModeNormalized, 10, -0.1, true, "percentages"},
		{ModeNormalized, math.Inf(-1), 0, false, "not a finite number"},
	}
	for _, tt := range tests {
		_, err := seedShot.ToLogical(tt.mode, tt.x, tt.y)
		if err == nil || !strings.Contains(err.Error(), tt.want) || errors.Is(err, ErrOutside) != tt.outside {
			t.Errorf("ToLogical(%q, %v, %v) error = %v, want one containing %q (ErrOutside: %v)", tt.mode, tt.x, tt.y, err, tt.want, tt.outside)
		}
	}
	if _, err := (Shot{}).ToLogical(ModePixels, 1, 1); err == nil {
		t.Errorf("Shot{}.ToLogical = nil error, want one about the empty geometry")
	}
}

// TestRoundTrip: a logical point converted to the model's coordinates and
// back lands on the same point when the image is full size, and within one
// image pixel's footprint when it is scaled down.
func TestRoundTrip(t *testing.T) {
	for _, shot := range []Shot{seedShot, rightShot, fullHDShot} {
		tolX := (shot.Logical.Width + shot.Image.Width - 1) / shot.Image.Width
		tolY := (shot.Logical.Height + shot.Image.Height - 1) / shot.Image.Height
		for gx := shot.Origin.X; gx < shot.Origin.X+shot.Logical.Width; gx += 37 {
			for gy := shot.Origin.Y; gy < shot.Origin.Y+shot.Logical.Height; gy += 41 {
				p := Point{X: gx, Y: gy}
				x, y, inside := shot.FromLogical(ModePixels, p)
				if !inside {
					t.Fatalf("%s.FromLogical(%v) inside = false", shot.DisplayName, p)
				}
				back, err := shot.ToLogical(ModePixels, x, y)
				if err != nil {
					t.Fatalf("%s.ToLogical(FromLogical(%v) = %v, %v): %v", shot.DisplayName, p, x, y, err)
				}
				if d := abs(back.X - p.X); d > tolX || (tolX == 1 && d != 0) {
					t.Errorf("%s: %v -> [%v, %v] -> %v: x off by %d", shot.DisplayName, p, x, y, back, d)
				}
				if d := abs(back.Y - p.Y); d > tolY || (tolY == 1 && d != 0) {
					t.Errorf("%s: %v -> [%v, %v] -> %v: y off by %d", shot.DisplayName, p, x, y, back, d)
				}
				nx, ny, _ := shot.FromLogical(ModeNormalized, p)
				nback, err := shot.ToLogical(ModeNormalized, nx, ny)
				if err != nil || abs(nback.X-p.X) > shot.Logical.Width/10000+1 || abs(nback.Y-p.Y) > shot.Logical.Height/10000+1 {
					t.Errorf("%s: %v -> normalized [%v, %v] -> %v, %v", shot.DisplayName, p, nx, ny, nback, err)
				}
			}
		}
	}
	if _, _, inside := rightShot.FromLogical(ModePixels, Point{X: 100, Y: 100}); inside {
		t.Errorf("rightShot.FromLogical({100, 100}) inside = true for a point on the left monitor")
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func TestRegionToLogical(t *testing.T) {
	tests := []struct {
		shot           Shot
		mode           Mode
		x0, y0, x1, y1 float64
		want           Rect
	}{
		{seedShot, ModePixels, 0, 0, 1176, 735, Rect{X: 0, Y: 0, Width: 1280, Height: 800}},
		{seedShot, ModePixels, 588, 367.5, 1176, 735, Rect{X: 640, Y: 400, Width: 640, Height: 400}},
		{seedShot, ModeNormalized, 25, 25, 75, 75, Rect{X: 320, Y: 200, Width: 640, Height: 400}},
		{rightShot, ModePixels, 10, 20, 110, 70, Rect{X: 1930, Y: 20, Width: 100, Height: 50}},
		{fullHDShot, ModePixels, 0, 0, 1, 1, Rect{X: 0, Y: 0, Width: 2, Height: 2}},
	}
	for _, tt := range tests {
		got, err := tt.shot.RegionToLogical(tt.mode, tt.x0, tt.y0, tt.x1, tt.y1)
		if err != nil || got != tt.want {
			t.Errorf("%s.RegionToLogical(%q, %v, %v, %v, %v) = %+v, %v, want %+v", tt.shot.DisplayName, tt.mode, tt.x0, tt.y0, tt.x1, tt.y1, got, err, tt.want)
		}
	}
	bad := []struct {
		x0, y0, x1, y1 float64
		want           string
	}{
		{10, 10, 10, 20, "is empty"},
		{10, 30, 20, 20, "x1 > x0 and y1 > y0"},
		{0, 0, 1177, 10, "reaches outside"},
		{-5, 0, 10, 10, "reaches outside"},
		{0, math.NaN(), 10, 10, "not a finite number"},
	}
	for _, tt := range bad {
		if _, err := seedShot.RegionToLogical(ModePixels, tt.x0, tt.y0, tt.x1, tt.y1); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("RegionToLogical(%v, %v, %v, %v) error = %v, want one containing %q", tt.x0, tt.y0, tt.x1, tt.y1, err, tt.want)
		}
	}
}

func TestPresets(t *testing.T) {
	for _, p := range Presets {
		if err := p.Limits.Validate(); err != nil {
			t.Errorf("preset %s: %v", p.Name, err)
		}
		got, err := LookupPreset(strings.ToUpper(p.Name))
		if err != nil || got.Name != p.Name {
			t.Errorf("LookupPreset(%q) = %v, %v", strings.ToUpper(p.Name), got.Name, err)
		}
	}
	// A 1920x1080 screen under each preset, worked out from the vendor's
	// rule by hand.
	for name, want := range map[string][2]int{"anthropic": {1456, 819}, "openai": {1650, 928}, "gemini": {1536, 864}} {
		p, _ := LookupPreset(name)
		w, h := ScaledSize(1920, 1080, p.Limits)
		if w != want[0] || h != want[1] {
			t.Errorf("ScaledSize(1920, 1080, %s) = %dx%d, want %dx%d", name, w, h, want[0], want[1])
		}
	}
	if _, err := LookupPreset("llama"); err == nil || !strings.Contains(err.Error(), "anthropic, openai, gemini") {
		t.Errorf("LookupPreset(llama) = %v, want an error listing the presets", err)
	}
}
