package keycodes

import (
	"errors"

	"github.com/deskhand/deskhand/supervisor/input"
)

// The shared input types this backend works in.
type (
	Keysym = input.Keysym
	Combo  = input.Combo
	Point  = input.Point
	Button = input.Button
	Guard  = input.Guard
)

// The buttons, and the X buttons a scroll wheel sends.
const (
	ButtonLeft   = input.ButtonLeft
	ButtonMiddle = input.ButtonMiddle
	ButtonRight  = input.ButtonRight

	buttonWheelUp    Button = 4
	buttonWheelDown  Button = 5
	buttonWheelLeft  Button = 6
	buttonWheelRight Button = 7
)

// The shared errors, by their short names.
var (
	ErrClosed  = input.ErrClosed
	ErrStalled = input.ErrStalled
)

// ErrUnsupported is returned by New where this backend does not exist
// (anything but Linux with X11 and macOS).
var ErrUnsupported = errors.New("input: in-process input needs X11 on Linux or Quartz on macOS")

var _ input.Backend = (*Input)(nil)
