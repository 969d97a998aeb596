//go:build !linux

package keycodes

// threadID cannot tell threads apart here; the one-thread check then
// passes trivially.
func threadID() int { return 0 }
