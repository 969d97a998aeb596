package keycodes

/*
#cgo LDFLAGS: -lxcb
#include <stdlib.h>
#include <sys/socket.h>
#include <xcb/xcb.h>
#include <xcb/xcbext.h>

// dh_xw_send sends WarpPointer to (x, y) in dst, and GetInputFocus behind
// it, whose reply shows that the server has processed the warp, in one
// write. 0 when the connection is broken.
static int dh_xw_send(xcb_connection_t *c, unsigned int dst, int x, int y, unsigned int *seq) {
	xcb_warp_pointer(c, XCB_NONE, dst, 0, 0, 0, 0, (int16_t)x, (int16_t)y);
	*seq = xcb_get_input_focus(c).sequence;
	return xcb_flush(c) > 0;
}

// dh_xw_error discards the events queued on c (MappingNotify reaches
// every client, asked for or not) and returns the code of the first X
// error among them, 0 if none. The warp's error, if any, came before the
// reply that follows it, so it is queued by the time that reply is read.
static int dh_xw_error(xcb_connection_t *c, int *major, int *minor) {
	int code = 0;
	xcb_generic_event_t *ev;
	while ((ev = xcb_poll_for_queued_event(c)) != NULL) {
		if (ev->response_type == 0 && code == 0) {
			xcb_generic_error_t *e = (xcb_generic_error_t *)ev;
			code = e->error_code;
			*major = e->major_code;
			*minor = e->minor_code;
		}
		free(ev);
	}
	return code;
}

// dh_xw_abandon shuts the connection's socket, from any thread, so that a
// wait on it ends as a broken connection.
static void dh_xw_abandon(int fd) { shutdown(fd, SHUT_RDWR); }
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/deskhand/deskhand/supervisor/desktop/x11/xcb"
)

// xwarp is the X11 backend's connection for warpNow (warp.go): XCB, whose
// connections any thread may use, where Xlib keeps per-thread state.
type xwarp struct {
	c    *C.xcb_connection_t
	fd   C.int // for abandon, which must not touch c
	root uint32
	// seq is the GetInputFocus behind a warp whose answer was not
	// awaited in full; stuck says there is one.
	seq   C.uint
	stuck bool
	// sent counts the warps sent, for tests.
	sent int
}

// openWarp connects to display name; nil when that fails, and then
// every move goes through the worker.
func openWarp(name string) *xwarp {
	conn, root, err := xcb.Open(name)
	if err != nil {
		return nil
	}
	c := (*C.xcb_connection_t)(conn)
	return &xwarp{c: c, fd: C.xcb_get_file_descriptor(c), root: root}
}

func (w *xwarp) close() { C.xcb_disconnect(w.c) }

func (w *xwarp) abandon() { C.dh_xw_abandon(w.fd) }

func (w *xwarp) broken() bool { return C.xcb_connection_has_error(w.c) != 0 }

// ready: robotgo's connection and ours have nothing in flight. Every
// operation ends with sync, which clears both marks; a mark still set
// means a request whose processing nothing has waited for, which a warp
// on another connection could overtake.
func (x *x11) ready() bool {
	return x.xw != nil && !x.xw.stuck && !x.dirty && !x.pointerDirty &&
		x.alive() == nil && !x.xw.broken()
}

func (x *x11) warp(px, py int, wait time.Duration) (bool, error) {
	w := x.xw
	w.sent++
	if C.dh_xw_send(w.c, C.uint(w.root), C.int(px), C.int(py), &w.seq) == 0 {
		return true, x.warpLost()
	}
	switch xcb.Wait(unsafe.Pointer(w.c), uint32(w.seq), wait) {
	case xcb.NotYet:
		w.stuck = true
		return false, nil
	case xcb.Broken:
		return true, x.warpLost()
	}
	return true, x.warpError()
}

func (x *x11) pending() bool { return x.xw != nil && x.xw.stuck }

func (x *x11) settle() error {
	w := x.xw
	w.stuck = false
	if xcb.Wait(unsafe.Pointer(w.c), uint32(w.seq), -1) != xcb.Answered {
		return x.warpLost()
	}
	return x.warpError()
}

func (x *x11) warpLost() error {
	return fmt.Errorf("the connection to X display %q is lost (the X server exited or restarted); restart deskhand or open a new Input", x.name)
}

// warpError reports an X error the warp caused, the way check does.
func (x *x11) warpError() error {
	var major, minor C.int
	code := C.dh_xw_error(x.xw.c, &major, &minor)
	if code == 0 {
		return nil
	}
	return fmt.Errorf("X server rejected a request (%s; request %d.%d) on display %q",
		xErrorName(int(code)), int(major), int(minor), x.name)
}

// xErrorName names a core X protocol error by its code.
func xErrorName(code int) string {
	names := []string{"", "BadRequest", "BadValue", "BadWindow", "BadPixmap", "BadAtom",
		"BadCursor", "BadFont", "BadMatch", "BadDrawable", "BadAccess", "BadAlloc",
		"BadColor", "BadGC", "BadIDChoice", "BadName", "BadLength", "BadImplementation"}
	if code > 0 && code < len(names) {
		return names[code]
	}
	return fmt.Sprintf("X error %d", code)
}
