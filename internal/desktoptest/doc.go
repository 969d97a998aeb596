//go:build unix

// Package desktoptest starts a real, private X11 desktop for tests: an Xvfb
// server, a window manager (openbox by default) and real applications
// (xterm, a GTK 3 dialog from zenity), and tears all of it down when the
// test ends.
//
// A test asks for a desktop with [Start], then drives it with X tools
// (xprop, xwininfo, wmctrl, xrandr) through [Desktop.Run] or with the
// typed helpers ([Desktop.StartXterm], [Desktop.Focus], [Desktop.Move],
// [Desktop.SetMonitors], ...). Everything the desktop starts runs in its own
// process group and carries the environment variable DESKHAND_DESKTOP_ID with
// a value unique to the desktop; [Desktop.Close] (registered with t.Cleanup)
// stops the groups with SIGTERM, then SIGKILL, and finally sweeps /proc for
// any process still carrying the desktop's id (an xterm's shell, a daemon an
// app forked) so nothing outlives the test.
//
// [Desktop.StartAccessibility] adds what a desktop session has for
// assistive technologies: a private session bus, at-spi-bus-launcher and the
// AT-SPI registry; apps started after it expose their accessibility trees
// (see Accessibility), and the helper finds the bus through Env.
//
// When a tool the desktop needs is missing the test is skipped with the
// reason, except under CI (the CI environment variable is non-empty), where
// it fails: a CI run that silently skips every desktop test proves nothing.
//
// Facts this package relies on, checked on Debian 12 (xvfb 2:21.1.7):
//
//   - Xvfb enables MIT-SHM and XTEST by default (xdpyinfo lists both without
//     any +extension flag); RANDR is enabled explicitly anyway.
//   - Xvfb has a single RandR output named "screen". `xrandr --setmonitor
//     NAME geometry none` adds a virtual monitor but leaves the automatic
//     "screen" monitor covering the whole root window in the list. To get
//     exactly the requested monitors, [Desktop.SetMonitors] gives the real
//     output to one monitor (the primary one, else the first), which removes
//     the automatic monitor, and `none` to the others.
//   - In `xrandr --listmonitors` a leading "+" marks an automatic monitor
//     and "*" the primary one; the server lists the primary monitor first.
//   - openbox sets _NET_FRAME_EXTENTS (1,1,20,5 for xterm with the default
//     theme) and honours USPosition, so `xterm -geometry +X+Y` puts the
//     frame's top-left corner at X,Y. `wmctrl -lG` reports positions offset
//     by the frame extents, so frames here are computed from the client's
//     absolute position (xwininfo) minus _NET_FRAME_EXTENTS.
package desktoptest
