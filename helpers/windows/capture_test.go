package main

import (
	"encoding/json"
	"image"
	"image/color"
	"slices"
	"testing"
)

// TestPaintMasks checks that a masked window is painted exactly where it
// shows: not under an unmasked window above it, and that mask_others
// paints everything not kept.
func TestPaintMasks(t *testing.T) {
	// Top first: a kept window over part of a masked one, which is over a
	// third window.
	list := []window{
		{ID: 1, Bounds: rect{0, 0, 4, 4}},
		{ID: 2, Bounds: rect{2, 2, 6, 6}},
		{ID: 3, Bounds: rect{6, 6, 4, 4}},
	}
	red := color.RGBA{255, 0, 0, 255}
	tests := []struct {
		name    string
		req     captureRequest
		painted int // pixels of the 10×10 screen painted
		masked  []uint32
	}{
		{"one window under another", captureRequest{mask: []uint32{2}}, 36 - 4, []uint32{2}},
		{"covered entirely", captureRequest{mask: []uint32{1, 9}}, 16, []uint32{1}},
		{"mask_others keeps one", captureRequest{maskOthers: true, keep: []uint32{1}}, 32 + 16 - 4, []uint32{2, 3}},
		{"mask order, then others top first", captureRequest{mask: []uint32{3}, maskOthers: true, keep: []uint32{1}}, 44, []uint32{3, 2}},
		{"nothing", captureRequest{}, 0, []uint32{}},
	}
	for _, tt := range tests {
		img := image.NewRGBA(image.Rect(0, 0, 10, 10))
		tt.req.color = red
		masked := paintMasks(img, list, &tt.req)
		painted := 0
		for i := 0; i < len(img.Pix); i += 4 {
			if img.Pix[i] == 255 {
				painted++
			}
		}
		if painted != tt.painted || !slices.Equal(masked, tt.masked) {
			t.Errorf("%s: painted %d pixels, masked %v; want %d, %v", tt.name, painted, masked, tt.painted, tt.masked)
		}
	}
}

func TestParseCapture(t *testing.T) {
	good := `{"rect": {"x": 1, "y": 2, "width": 3, "height": 4}, "width": 8, "height": 6, "format": "png", "mask": [5], "mask_color": [1, 2, 3], "quality": null}`
	req, err := parseCapture(json.RawMessage(good))
	if err != nil {
		t.Fatalf("parseCapture(%s) = %v", good, err)
	}
	if *req.rect != (rect{1, 2, 3, 4}) || req.width != 8 || !req.png || req.quality != 80 || req.color != (color.RGBA{1, 2, 3, 255}) {
		t.Errorf("parseCapture(%s) = %+v", good, req)
	}
	for _, bad := range []string{`{"quality": 80.5}`, `{"width": 640}`, `{"mask": [-1]}`, `{"rect": {"x": 0, "y": 0, "width": 10}}`,
		`{"mask_color": [0, 0, 256]}`, `{"width": 8193, "height": 4097}`, `{"format": "gif"}`} {
		if _, err := parseCapture(json.RawMessage(bad)); err == nil || err.Data.Code != codeInvalidParams {
			t.Errorf("parseCapture(%s) = %v, want invalid_params", bad, err)
		}
	}
}
