//go:build !darwin

package macos

import (
	"github.com/deskhand/deskhand/supervisor/desktop/keycodes"
	"github.com/deskhand/deskhand/supervisor/input"
)

// openInput: off macOS (where this package is only unit-tested) the
// platform's own input opens; Shortcuts is tested on its own.
func openInput(opts keycodes.Options, _ *Shortcuts) (*input.Input, error) {
	be, err := keycodes.New(opts)
	if err != nil {
		return nil, err
	}
	return input.New(be), nil
}
