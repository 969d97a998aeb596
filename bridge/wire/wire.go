// Package wire holds the helper protocol's value types that packages below
// the helper client share (geometry, the app catalog): points, sizes and
// rectangles in the global logical coordinate space, and an app's
// identity. Package bridge names them too.
package wire

// Point is a position in the global logical coordinate space (X11: root
// window pixels; macOS: points from the main display's top-left).
type Point struct {
	X int `json:"x"`
	Y int `json:"y"`
}

// Size is a width and height.
type Size struct {
	Width  int `json:"width"`
	Height int `json:"height"`
}

// Rect is a rectangle in the global logical coordinate space.
type Rect struct {
	X      int `json:"x"`
	Y      int `json:"y"`
	Width  int `json:"width"`
	Height int `json:"height"`
}

// Contains reports whether p lies inside r.
func (r Rect) Contains(p Point) bool {
	return p.X >= r.X && p.Y >= r.Y && p.X < r.X+r.Width && p.Y < r.Y+r.Height
}

// App is an application's identity. Fields the helper could not resolve
// are empty (PID 0).
type App struct {
	PID       int    `json:"pid,omitempty"`
	Name      string `json:"name"`
	Instance  string `json:"instance,omitempty"`   // WM_CLASS instance (Linux)
	Class     string `json:"class,omitempty"`      // WM_CLASS class (Linux)
	Exe       string `json:"exe,omitempty"`        // executable path
	DesktopID string `json:"desktop_id,omitempty"` // desktop entry id without .desktop (Linux)
	BundleID  string `json:"bundle_id,omitempty"`  // macOS
	AUMID     string `json:"aumid,omitempty"`      // App User Model ID of a packaged app (Windows)
}
