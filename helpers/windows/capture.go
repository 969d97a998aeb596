package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"slices"

	"golang.org/x/image/draw"
)

// lastCapture keeps the last capture's unmasked native pixels for
// patch_check and patch_baseline.
type lastCapture struct {
	id     int
	source rect
	pixels *image.RGBA
}

type captureParams struct {
	Display    *uint32   `json:"display"`
	Rect       *rectP    `json:"rect"`
	Width      *int      `json:"width"`
	Height     *int      `json:"height"`
	Format     *string   `json:"format"`
	Quality    *int      `json:"quality"`
	Mask       *[]uint32 `json:"mask"`
	MaskOthers *bool     `json:"mask_others"`
	Keep       *[]uint32 `json:"keep"`
	MaskColor  *[]int    `json:"mask_color"`
}

// rectP is a Rect param whose four members are required.
type rectP struct {
	X, Y, Width, Height *int
}

func (p *rectP) UnmarshalJSON(b []byte) error {
	var raw struct {
		X      *int `json:"x"`
		Y      *int `json:"y"`
		Width  *int `json:"width"`
		Height *int `json:"height"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*p = rectP{raw.X, raw.Y, raw.Width, raw.Height}
	return nil
}

func (p *rectP) rect() (rect, *rpcError) {
	if p.X == nil || p.Y == nil || p.Width == nil || p.Height == nil {
		return rect{}, newError(codeInvalidParams, "rect needs integer x, y, width and height")
	}
	if *p.Width < 1 || *p.Height < 1 {
		return rect{}, newError(codeInvalidParams, "rect width and height must be positive")
	}
	return rect{*p.X, *p.Y, *p.Width, *p.Height}, nil
}

// captureRequest is a checked capture request.
type captureRequest struct {
	display       *uint32
	rect          *rect
	width, height int // 0: native
	png           bool
	quality       int
	mask, keep    []uint32
	maskOthers    bool
	color         color.RGBA
}

func parseCapture(params json.RawMessage) (*captureRequest, *rpcError) {
	var p captureParams
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	req := &captureRequest{display: p.Display, quality: 80, color: color.RGBA{24, 24, 24, 255}}
	if p.Rect != nil {
		r, err := p.Rect.rect()
		if err != nil {
			return nil, err
		}
		req.rect = &r
	}
	if (p.Width == nil) != (p.Height == nil) {
		return nil, newError(codeInvalidParams, "give both width and height, or neither")
	}
	if p.Width != nil {
		w, h := *p.Width, *p.Height
		if w < 1 || h < 1 || w > 16384 || h > 16384 {
			return nil, newError(codeInvalidParams, "width and height must be in 1..=16384")
		}
		if w*h > 1<<25 {
			return nil, newError(codeInvalidParams, "width × height %d is over 33554432", w*h)
		}
		req.width, req.height = w, h
	}
	if p.Format != nil {
		switch *p.Format {
		case "png":
			req.png = true
		case "jpeg":
		default:
			return nil, newError(codeInvalidParams, "format must be jpeg or png")
		}
	}
	if p.Quality != nil {
		if *p.Quality < 1 || *p.Quality > 100 {
			return nil, newError(codeInvalidParams, "quality must be in 1..=100")
		}
		req.quality = *p.Quality
	}
	if p.MaskColor != nil {
		c := *p.MaskColor
		if len(c) != 3 || slices.ContainsFunc(c, func(v int) bool { return v < 0 || v > 255 }) {
			return nil, newError(codeInvalidParams, "mask_color must be [r, g, b], each 0..=255")
		}
		req.color = color.RGBA{uint8(c[0]), uint8(c[1]), uint8(c[2]), 255}
	}
	if p.Mask != nil {
		req.mask = *p.Mask
	}
	if p.Keep != nil {
		req.keep = *p.Keep
	}
	req.maskOthers = p.MaskOthers != nil && *p.MaskOthers
	return req, nil
}

func (s *server) capture(params json.RawMessage) (any, *rpcError) {
	req, rpcErr := parseCapture(params)
	if rpcErr != nil {
		return nil, rpcErr
	}
	displays, err := s.desk.Displays()
	if err != nil {
		return nil, asRPC(err, codeDisplayUnavailable)
	}
	var source rect
	var displayID *uint32
	if req.rect != nil {
		source = *req.rect
		if !inside(source, screenBounds(displays)) {
			return nil, newError(codeOutOfBounds, "rectangle %d,%d %dx%d is outside the screen", source.X, source.Y, source.Width, source.Height)
		}
	} else {
		d, ok := pickDisplay(displays, req.display)
		if !ok {
			return nil, newError(codeNoSuchDisplay, "no display with id %d", *req.display)
		}
		source, displayID = d.bounds(), &d.ID
	}
	var list []window
	if len(req.mask) > 0 || req.maskOthers {
		// Listed right before the pixels are read; Windows has no server
		// grab, so a window opened in between is a race the supervisor's
		// staleness checks cover.
		if list, _, err = s.desk.Windows(false); err != nil {
			return nil, asRPC(err, codeInternal)
		}
	}
	native, err := s.desk.Grab(source)
	if err != nil {
		return nil, asRPC(err, codeCaptureFailed)
	}
	out := image.NewRGBA(native.Rect)
	copy(out.Pix, native.Pix)
	masked := paintMasks(out, list, req)
	var img image.Image = out
	if req.width > 0 {
		scaled := image.NewRGBA(image.Rect(0, 0, req.width, req.height))
		draw.CatmullRom.Scale(scaled, scaled.Rect, out, out.Rect, draw.Src, nil)
		img = scaled
	}
	var buf bytes.Buffer
	format := "jpeg"
	if req.png {
		format = "png"
		err = png.Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: req.quality})
	}
	if err != nil {
		return nil, newError(codeInternal, "encoding %s: %v", format, err)
	}
	if buf.Len()*4/3 > 60<<20 {
		return nil, newError(codeInvalidParams, "the encoded image is over the 64 MiB response cap; ask for a smaller size")
	}
	s.captureID++
	s.last = &lastCapture{id: s.captureID, source: source, pixels: native}
	b := img.Bounds()
	result := map[string]any{
		"format": format, "data": base64.StdEncoding.EncodeToString(buf.Bytes()),
		"width": b.Dx(), "height": b.Dy(), "source": source, "display": displayID,
		"masked": masked, "method": "gdi", "capture_id": s.captureID, "reused": false,
	}
	if req.maskOthers {
		result["mask_others"] = true
	}
	return result, nil
}

func pickDisplay(displays []display, id *uint32) (display, bool) {
	for _, d := range displays {
		if (id == nil && d.Primary) || (id != nil && d.ID == *id) {
			return d, true
		}
	}
	return display{}, false
}

// screenBounds is the bounding box of every display.
func screenBounds(displays []display) rect {
	var u image.Rectangle
	for _, d := range displays {
		u = u.Union(d.bounds().image())
	}
	return rect{u.Min.X, u.Min.Y, u.Dx(), u.Dy()}
}

func inside(r, outer rect) bool {
	return r.image().In(outer.image())
}

// paintMasks paints the masked windows' visible parts in img (whose Rect is
// the source in global coordinates) and returns the ids painted: those
// asked for in request order, then those mask_others painted, top first.
// Each pixel belongs to the topmost window containing it, so a masked
// window is painted exactly where it shows.
func paintMasks(img *image.RGBA, list []window, req *captureRequest) []uint32 {
	masked := []uint32{}
	if len(list) == 0 {
		return masked
	}
	paint := func(w window) bool {
		if slices.Contains(req.mask, w.ID) {
			return true
		}
		return req.maskOthers && !slices.Contains(req.keep, w.ID)
	}
	area := img.Rect
	owner := make([]int32, area.Dx()*area.Dy())
	for i := range owner {
		owner[i] = -1
	}
	for i := len(list) - 1; i >= 0; i-- { // bottom first, so the top wins
		r := list[i].Bounds.image().Intersect(area)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			row := owner[(y-area.Min.Y)*area.Dx():]
			for x := r.Min.X; x < r.Max.X; x++ {
				row[x-area.Min.X] = int32(i)
			}
		}
	}
	shown := make([]bool, len(list))
	for i, o := range owner {
		if o < 0 || !paint(list[o]) {
			continue
		}
		shown[o] = true
		p := img.Pix[i*4 : i*4+4 : i*4+4]
		p[0], p[1], p[2], p[3] = req.color.R, req.color.G, req.color.B, 255
	}
	for _, id := range req.mask {
		for i, w := range list {
			if w.ID == id && shown[i] && !slices.Contains(masked, id) {
				masked = append(masked, id)
			}
		}
	}
	for i, w := range list {
		if shown[i] && !slices.Contains(masked, w.ID) {
			masked = append(masked, w.ID)
		}
	}
	return masked
}

func (s *server) patchCheck(params json.RawMessage) (any, *rpcError) {
	var p struct {
		X         *int `json:"x"`
		Y         *int `json:"y"`
		Size      *int `json:"size"`
		Tolerance *int `json:"tolerance"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.X == nil || p.Y == nil {
		return nil, newError(codeInvalidParams, "patch_check needs integer x and y")
	}
	size, tol := 9, 0
	if p.Size != nil {
		size = *p.Size
	}
	if size < 1 || size > 63 || size%2 == 0 {
		return nil, newError(codeInvalidParams, "size must be odd, 1..=63")
	}
	if p.Tolerance != nil {
		tol = *p.Tolerance
	}
	if tol < 0 || tol > 255 {
		return nil, newError(codeInvalidParams, "tolerance must be in 0..=255")
	}
	if s.last == nil {
		return nil, newError(codeNoCapture, "no capture yet")
	}
	half := size / 2
	patch := rect{*p.X - half, *p.Y - half, size, size}
	if !inside(patch, s.last.source) {
		return nil, newError(codeOutOfBounds, "the %d×%d patch at %d,%d is not inside the last capture", size, size, *p.X, *p.Y)
	}
	live, err := s.desk.Grab(patch)
	if err != nil {
		return nil, asRPC(err, codeCaptureFailed)
	}
	differing, maxDelta := compare(s.last.pixels, live, patch, tol)
	return map[string]any{"changed": differing > 0, "differing_pixels": differing,
		"max_delta": maxDelta, "capture_id": s.last.id}, nil
}

func (s *server) patchBaseline(params json.RawMessage) (any, *rpcError) {
	var p struct {
		Tolerance *int `json:"tolerance"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	tol := 0
	if p.Tolerance != nil {
		tol = *p.Tolerance
	}
	if tol < 0 || tol > 255 {
		return nil, newError(codeInvalidParams, "tolerance must be in 0..=255")
	}
	if s.last == nil {
		return nil, newError(codeNoCapture, "no capture yet")
	}
	live, err := s.desk.Grab(s.last.source)
	if err != nil {
		return nil, asRPC(err, codeCaptureFailed)
	}
	differing, _ := compare(s.last.pixels, live, s.last.source, tol)
	s.last.pixels = live
	return map[string]any{"differing_pixels": differing, "capture_id": s.last.id}, nil
}

// compare counts the pixels of area (global coordinates) whose largest
// channel difference between a and b is over tol.
func compare(a, b *image.RGBA, area rect, tol int) (differing, maxDelta int) {
	for y := area.Y; y < area.Y+area.Height; y++ {
		for x := area.X; x < area.X+area.Width; x++ {
			pa, pb := a.Pix[a.PixOffset(x, y):], b.Pix[b.PixOffset(x, y):]
			d := 0
			for c := 0; c < 3; c++ {
				d = max(d, abs(int(pa[c])-int(pb[c])))
			}
			maxDelta = max(maxDelta, d)
			if d > tol {
				differing++
			}
		}
	}
	return differing, maxDelta
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}
