package macos

import (
	"github.com/deskhand/deskhand/supervisor/desktop/xinput"
	"github.com/deskhand/deskhand/supervisor/input"
)

// openInput posts Quartz events, with shortcuts sent through the layout.
func openInput(opts xinput.Options, s *Shortcuts) (*input.Input, error) {
	be, err := xinput.NewQuartz(opts, s)
	if err != nil {
		return nil, err
	}
	return input.New(be), nil
}
