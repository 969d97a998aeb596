//go:build !linux && !darwin

package xinput

func openBackend(string) (backend, string, error) { return nil, "", ErrUnsupported }
