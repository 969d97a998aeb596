//go:build unix

// Package xcb holds what deskhand's own XCB connections share (Linux
// only): the display gate's ping (package x11) and the input's warps
// (package keycodes) each keep a connection of their own, used from the
// calling thread, where Xlib's would need one thread for all calls.
package xcb
