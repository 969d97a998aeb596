//go:build !linux && !darwin

package keycodes

func openBackend(string) (backend, string, error) { return nil, "", ErrUnsupported }
