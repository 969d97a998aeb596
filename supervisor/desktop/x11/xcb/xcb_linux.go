//go:build unix

package xcb

/*
#cgo LDFLAGS: -lxcb
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <xcb/xcb.h>
#include <xcb/xcbext.h>

// dh_xcb_open connects to display name and finds the root window of its
// screen; NULL when that fails. It waits for the server's setup reply, so
// the caller bounds it.
static xcb_connection_t *dh_xcb_open(const char *name, unsigned int *root) {
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
	return c;
}

static long long dh_xcb_now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

// dh_xcb_wait waits up to wait_us (forever if negative) for the reply to
// request seq: 1 answered, 0 not in time, -1 the connection broke.
static int dh_xcb_wait(xcb_connection_t *c, unsigned int seq, long long wait_us) {
	long long deadline = dh_xcb_now_us() + wait_us;
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
			long long left = deadline - dh_xcb_now_us();
			if (left <= 0) return 0;
			ms = (int)((left + 999) / 1000);
		}
		struct pollfd p = {.fd = xcb_get_file_descriptor(c), .events = POLLIN};
		if (poll(&p, 1, ms) < 0 && errno != EINTR) return -1;
	}
}
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"
)

// Open connects to display and returns the connection (an
// xcb_connection_t*) and the root window of its screen. It waits for the
// server's setup reply, so the caller bounds it.
func Open(display string) (conn unsafe.Pointer, root uint32, err error) {
	name := C.CString(display)
	defer C.free(unsafe.Pointer(name))
	var r C.uint
	c := C.dh_xcb_open(name, &r)
	if c == nil {
		return nil, 0, fmt.Errorf("XCB cannot connect to %s", display)
	}
	return unsafe.Pointer(c), uint32(r), nil
}

// Wait results.
const (
	Answered = 1
	NotYet   = 0
	Broken   = -1
)

// Wait waits up to wait (for ever when negative) for the reply to request
// seq on conn: Answered, NotYet, or Broken when the connection broke.
func Wait(conn unsafe.Pointer, seq uint32, wait time.Duration) int {
	us := C.longlong(-1)
	if wait >= 0 {
		us = C.longlong(wait.Microseconds())
	}
	return int(C.dh_xcb_wait((*C.xcb_connection_t)(conn), C.uint(seq), us))
}
