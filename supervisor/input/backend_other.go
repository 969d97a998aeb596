//go:build !linux && !darwin

package input

func openBackend(string) (backend, string, error) { return nil, "", ErrUnsupported }
