package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/deskhand/deskhand/bridge"
)

// A screenshot is placed from the display list (which display, at what
// size), and asking the helper for it costs a round trip per screenshot.
// The X11 helper sends the list it placed each display capture from, read
// during that capture, so the server keeps the latest one and places the
// next screenshot from it. The capture's own list then says whether that
// was right: when it differs (a monitor was added, removed, resized or
// renamed), the screenshot is placed again from the capture's list, so a
// screenshot is never placed from a list older than its own pixels. A
// helper that sends no list (Wayland, macOS) is asked each time, as is any
// capture after a failure.

// shotDisplayAttempts bounds the captures of one screenshot while the
// displays keep changing under it.
const shotDisplayAttempts = 3

// shotDisplays is the display list the last display capture carried.
type shotDisplays struct {
	mu   sync.Mutex
	list []bridge.Display // nil: unknown, ask the helper
}

func (k *shotDisplays) get() []bridge.Display {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.list
}

func (k *shotDisplays) set(list []bridge.Display) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.list = list
}

// placedCapture is a screenshot's capture, the display it shows and the
// list that display was chosen from.
type placedCapture struct {
	img      *bridge.Capture
	display  bridge.Display
	displays []bridge.Display
	note     string // why another display than the selected one is shown
}

// captureDisplay captures the session's selected display (else the
// primary one), scaled to the limits, placed from a display list no older
// than the capture's pixels.
func (s *Server) captureDisplay(ctx context.Context, selected *uint32) (*placedCapture, error) {
	displays := s.shotDisplays.get()
	known := displays != nil
	if !known {
		var err error
		if displays, err = s.exec.Displays(ctx); err != nil {
			return nil, fmt.Errorf("listing displays: %w", err)
		}
	}
	for attempt := 1; ; attempt++ {
		d, note, err := pickDisplay(displays, selected)
		if err != nil {
			s.shotDisplays.set(nil)
			return nil, err
		}
		img, err := s.exec.Capture(ctx, s.displayRequest(d))
		if err != nil {
			s.shotDisplays.set(nil)
			var be *bridge.Error
			if known && errors.As(err, &be) && be.Code == bridge.CodeNoSuchDisplay {
				// The kept list named a display that is gone: ask.
				known = false
				if displays, err = s.exec.Displays(ctx); err != nil {
					return nil, fmt.Errorf("listing displays: %w", err)
				}
				continue
			}
			return nil, fmt.Errorf("capturing display %q: %w", d.Name, err)
		}
		if img.Displays == nil {
			s.shotDisplays.set(nil)
			if known {
				// A helper that stopped sending the list (a restart into
				// another backend): place the screenshot from a fresh one.
				known = false
				if displays, err = s.exec.Displays(ctx); err != nil {
					return nil, fmt.Errorf("listing displays: %w", err)
				}
				continue
			}
			return &placedCapture{img: img, display: d, displays: displays, note: note}, nil
		}
		s.shotDisplays.set(img.Displays)
		if slices.Equal(img.Displays, displays) {
			return &placedCapture{img: img, display: d, displays: displays, note: note}, nil
		}
		if attempt == shotDisplayAttempts {
			return nil, errors.New("the displays kept changing during the screenshot (monitors added, removed or resized); take the screenshot again in a moment")
		}
		displays, known = img.Displays, false
	}
}
