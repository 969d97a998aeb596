package keycodes

/*
#include <sys/socket.h>
#include <X11/Xlib.h>

// dh_abandon shuts the sockets of both connections. It is no Xlib call (it
// only reads the descriptor), so another thread than the worker may make
// it while the worker waits inside Xlib.
static void dh_abandon(Display *own, Display *robotgo) {
	if (own != NULL) shutdown(ConnectionNumber(own), SHUT_RDWR);
	if (robotgo != NULL) shutdown(ConnectionNumber(robotgo), SHUT_RDWR);
}
*/
import "C"

// abandon gives up the connections of an X server that stopped answering,
// for a Close that leaves the stuck worker behind. Without it, robotgo's
// own atexit handler, XCloseDisplay of its connection, waits on the
// server for ever: a normal build never runs it (os.Exit ends the process
// at once), but a -race build does (the race runtime's exit calls the C
// library's exit, which runs the atexit handlers), so such a deskhand did
// not exit while X was stopped. With the sockets shut, every Xlib call on
// them, the atexit one and the worker's stuck one included, fails at once
// as a lost connection, which the I/O error handlers turn into the dead
// flag instead of an exit.
func (x *x11) abandon() {
	C.dh_abandon(x.dpy, x.robotgo)
	if x.xw != nil {
		x.xw.abandon()
	}
}
