//go:build !darwin

package macos

import "github.com/deskhand/deskhand/supervisor/input"

// openInput: off macOS (where this package is only unit-tested) the
// platform's own input opens; Shortcuts is tested on its own.
func openInput(opts input.Options, _ *Shortcuts) (*input.Input, error) {
	return input.New(opts)
}
