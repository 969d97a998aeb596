package macos

import "github.com/deskhand/deskhand/supervisor/input"

// openInput posts Quartz events, with shortcuts sent through the layout.
func openInput(opts input.Options, s *Shortcuts) (*input.Input, error) {
	return input.NewQuartz(opts, s)
}
