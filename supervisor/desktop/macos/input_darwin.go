package macos

import (
	"github.com/deskhand/deskhand/supervisor/desktop/keycodes"
	"github.com/deskhand/deskhand/supervisor/input"
)

// openInput posts Quartz events, with shortcuts sent through the layout.
func openInput(opts keycodes.Options, s *Shortcuts) (*input.Input, error) {
	be, err := keycodes.NewQuartz(opts, s)
	if err != nil {
		return nil, err
	}
	return input.New(be), nil
}
