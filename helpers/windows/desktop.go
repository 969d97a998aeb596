package main

import "image"

// desktop is what the helper needs from the window system; the real one is
// in desktop_windows.go. Errors may be *rpcError to choose their code.
type desktop interface {
	Displays() ([]display, error)
	// Grab reads the screen's pixels inside r; the image's Rect is r
	// (global coordinates).
	Grab(r rect) (*image.RGBA, error)
	// Windows lists top-level windows, top first, and the focused one.
	Windows(includeHidden bool) (list []window, focused *uint32, err error)
	// Hide minimizes the visible windows among ids and returns those.
	Hide(ids []uint32) ([]uint32, error)
	// Restore shows the windows again, bottom-most first.
	Restore(ids []uint32) ([]uint32, error)
	ClipboardRead() (string, error)
	ClipboardWrite(text string) error
}

type rect struct {
	X      int `json:"x"`
	Y      int `json:"y"`
	Width  int `json:"width"`
	Height int `json:"height"`
}

func (r rect) image() image.Rectangle { return image.Rect(r.X, r.Y, r.X+r.Width, r.Y+r.Height) }

func (r rect) contains(x, y int) bool {
	return x >= r.X && y >= r.Y && x < r.X+r.Width && y < r.Y+r.Height
}

type point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

type size struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// display is a monitor. On Windows logical equals physical: the helper is
// per-monitor DPI aware, so every coordinate is a physical pixel, and scale
// is the monitor's DPI over 96 for the caller's information.
type display struct {
	ID       uint32  `json:"id"`
	Name     string  `json:"name"`
	Origin   point   `json:"origin"`
	Logical  size    `json:"logical"`
	Physical size    `json:"physical"`
	Scale    float64 `json:"scale"`
	Primary  bool    `json:"primary"`
	MM       size    `json:"mm"`
}

func (d display) bounds() rect {
	return rect{d.Origin.X, d.Origin.Y, d.Physical.Width, d.Physical.Height}
}

type app struct {
	PID       *int    `json:"pid"`
	Name      string  `json:"name"`
	Instance  *string `json:"instance"`
	Class     *string `json:"class"`
	Exe       *string `json:"exe"`
	DesktopID *string `json:"desktop_id"`
	BundleID  *string `json:"bundle_id"`
}

type window struct {
	ID               uint32 `json:"id"`
	Title            string `json:"title"`
	App              app    `json:"app"`
	Bounds           rect   `json:"bounds"`
	Client           rect   `json:"client"`
	Minimized        bool   `json:"minimized"`
	Hidden           bool   `json:"hidden"`
	Focused          bool   `json:"focused"`
	Desktop          int    `json:"desktop"`
	OverrideRedirect bool   `json:"override_redirect"`
}

// fnv1a is the display id of a monitor name (as on X11).
func fnv1a(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}
