package input

/*
#cgo LDFLAGS: -lxcb
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include <xcb/xcb.h>
#include <xcb/xcbext.h>

// dh_xw_open connects to display name for warps and finds the root window
// of its screen; NULL when that fails. It waits for the server's setup
// reply: the caller runs it within New's open timeout.
static xcb_connection_t *dh_xw_open(const char *name, unsigned int *root, int *fd) {
	int screen = 0;
	xcb_connection_t *c = xcb_connect(name, &screen);
	if (xcb_connection_has_error(c)) {
		xcb_disconnect(c);
		return NULL;
	}
	xcb_screen_iterator_t it = xcb_setup_roots_iterator(xcb_get_setup(c));
	for (; it.rem > 0 && screen > 0; screen--) xcb_screen_next(&it);
	if (it.rem == 0) {
		xcb_disconnect(c);
		return NULL;
	}
	*root = it.data->root;
	*fd = xcb_get_file_descriptor(c);
	return c;
}

// dh_xw_send sends WarpPointer to (x, y) in dst, and GetInputFocus behind
// it, whose reply shows that the server has processed the warp, in one
// write. 0 when the connection is broken.
static int dh_xw_send(xcb_connection_t *c, unsigned int dst, int x, int y, unsigned int *seq) {
	xcb_warp_pointer(c, XCB_NONE, dst, 0, 0, 0, 0, (int16_t)x, (int16_t)y);
	*seq = xcb_get_input_focus(c).sequence;
	return xcb_flush(c) > 0;
}

static long long dh_xw_now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

// dh_xw_wait waits up to wait_us (forever if negative) for the reply to
// request seq: 1 answered, 0 not in time, -1 the connection broke.
static int dh_xw_wait(xcb_connection_t *c, unsigned int seq, long long wait_us) {
	long long deadline = dh_xw_now_us() + wait_us;
	for (;;) {
		void *reply = NULL;
		xcb_generic_error_t *err = NULL;
		if (xcb_poll_for_reply(c, seq, &reply, &err)) {
			free(reply);
			free(err);
			return 1;
		}
		if (xcb_connection_has_error(c)) return -1;
		int ms = -1;
		if (wait_us >= 0) {
			long long left = deadline - dh_xw_now_us();
			if (left <= 0) return 0;
			ms = (int)((left + 999) / 1000);
		}
		struct pollfd p = {.fd = xcb_get_file_descriptor(c), .events = POLLIN};
		if (poll(&p, 1, ms) < 0 && errno != EINTR) return -1;
	}
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
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var root C.uint
	var fd C.int
	c := C.dh_xw_open(cname, &root, &fd)
	if c == nil {
		return nil
	}
	return &xwarp{c: c, fd: fd, root: uint32(root)}
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
	switch C.dh_xw_wait(w.c, w.seq, C.longlong(wait.Microseconds())) {
	case 0:
		w.stuck = true
		return false, nil
	case -1:
		return true, x.warpLost()
	}
	return true, x.warpError()
}

func (x *x11) pending() bool { return x.xw != nil && x.xw.stuck }

func (x *x11) settle() error {
	w := x.xw
	w.stuck = false
	if C.dh_xw_wait(w.c, w.seq, -1) != 1 {
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
