package x11

/*
#cgo LDFLAGS: -lxcb
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <xcb/xcb.h>
#include <xcb/xcbext.h>

// dh_xping_open connects to display name; NULL when that fails. It waits
// for the server's setup reply, so the caller bounds it (see openPing).
static xcb_connection_t *dh_xping_open(const char *name) {
	xcb_connection_t *c = xcb_connect(name, NULL);
	if (xcb_connection_has_error(c)) {
		xcb_disconnect(c);
		return NULL;
	}
	return c;
}

static long dh_xping_now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

// dh_xping_send sends GetInputFocus (a request every server answers at
// once) and flushes it; 0 when the connection is broken.
static unsigned int dh_xping_send(xcb_connection_t *c) {
	xcb_get_input_focus_cookie_t ck = xcb_get_input_focus(c);
	if (xcb_flush(c) <= 0) return 0;
	return ck.sequence;
}

// dh_xping_wait waits up to wait_ms for the reply to request seq:
// 1 answered, 0 not yet, -1 the connection broke.
static int dh_xping_wait(xcb_connection_t *c, unsigned int seq, int wait_ms) {
	long deadline = dh_xping_now_ms() + wait_ms;
	for (;;) {
		void *reply = NULL;
		xcb_generic_error_t *err = NULL;
		if (xcb_poll_for_reply(c, seq, &reply, &err)) {
			free(reply);
			free(err);
			return 1;
		}
		if (xcb_connection_has_error(c)) return -1;
		long left = deadline - dh_xping_now_ms();
		if (left <= 0) return 0;
		struct pollfd p = { .fd = xcb_get_file_descriptor(c), .events = POLLIN };
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR) return -1;
	}
}
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unsafe"
)

// pingSlice is how long one wait for a ping's reply blocks before ctx is
// looked at again.
const pingSlice = 50 * time.Millisecond

// xping is the display gate's own connection, for its one round trip per
// action: an XCB request and a poll for its reply, made on the calling
// thread, where xgb's reply passes through its reader and writer
// goroutines and a timeout goroutine of ours.
type xping struct {
	c *C.xcb_connection_t
}

// openPing connects to display, bounded as connect is.
func openPing(ctx context.Context, display string) (*xping, error) {
	return openWithin(ctx, func() (*xping, error) {
		name := C.CString(display)
		defer C.free(unsafe.Pointer(name))
		c := C.dh_xping_open(name)
		if c == nil {
			return nil, fmt.Errorf("XCB cannot connect to %s", display)
		}
		return &xping{c: c}, nil
	}, (*xping).close)
}

// ping makes one round trip, bounded by ctx and a second.
func (p *xping) ping(ctx context.Context) error {
	seq := C.dh_xping_send(p.c)
	if seq == 0 {
		return errors.New("the connection is broken")
	}
	deadline := time.Now().Add(time.Second)
	for {
		switch C.dh_xping_wait(p.c, seq, C.int(pingSlice/time.Millisecond)) {
		case 1:
			return nil
		case -1:
			return errors.New("the connection is broken")
		}
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		if time.Now().After(deadline) {
			return errors.New("no answer within a second")
		}
	}
}

func (p *xping) close() { C.xcb_disconnect(p.c) }
