//go:build !unix

package consent

// lockFile does nothing where flock is missing; one server per user is
// the common case there.
func lockFile(string) (func(), error) { return func() {}, nil }
