//go:build !linux

package input

func openBackend(string) (backend, string, error) { return nil, "", ErrUnsupported }
