//go:build unix

package x11

/*
#cgo LDFLAGS: -lxcb
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <xcb/xcb.h>
#include <xcb/xcbext.h>

// DAMAGE, sent raw (libxcb-damage is not among the build's libraries):
// XCB writes the major opcode and the length, the body the rest.
enum { dh_damage_query_version = 0, dh_damage_create = 1, dh_damage_subtract = 3,
       dh_damage_delta_rectangles = 1, dh_damage_notify = 0 };

static unsigned int dh_damage_send(xcb_connection_t *c, uint8_t major, uint8_t minor,
                                   uint32_t *body, size_t words, int reply, int checked) {
	struct iovec parts[3];
	((uint8_t *)body)[1] = minor;
	parts[2].iov_base = body;
	parts[2].iov_len = words * 4;
	xcb_protocol_request_t req = { .count = 1, .ext = NULL, .opcode = major, .isvoid = !reply };
	return xcb_send_request(c, checked ? XCB_REQUEST_CHECKED : 0, parts + 2, &req);
}

// dh_damage_start follows DAMAGE on the root window at the
// DeltaRectangles level: 1 with the extension's major opcode, first event
// and the damage object's id filled in, 0 where the server has no DAMAGE
// 1.1 or refused. It waits for replies; the caller bounds it.
static int dh_damage_start(xcb_connection_t *c, uint32_t root, uint8_t *major, uint8_t *first_event, uint32_t *damage) {
	xcb_query_extension_reply_t *ext = xcb_query_extension_reply(c, xcb_query_extension(c, 6, "DAMAGE"), NULL);
	if (ext == NULL) return 0;
	int present = ext->present;
	*major = ext->major_opcode;
	*first_event = ext->first_event;
	free(ext);
	if (!present) return 0;

	uint32_t version[3] = { 0, 1, 1 };
	unsigned int seq = dh_damage_send(c, *major, dh_damage_query_version, version, 3, 1, 1);
	xcb_generic_error_t *err = NULL;
	void *reply = xcb_wait_for_reply(c, seq, &err);
	free(reply);
	if (reply == NULL || err != NULL) {
		free(err);
		return 0;
	}
	*damage = xcb_generate_id(c);
	uint32_t create[4] = { 0, *damage, root, dh_damage_delta_rectangles };
	seq = dh_damage_send(c, *major, dh_damage_create, create, 4, 0, 1);
	err = xcb_request_check(c, (xcb_void_cookie_t){ seq });
	if (err != NULL) {
		free(err);
		return 0;
	}
	return 1;
}

// dh_damage_drain takes the events XCB holds (reading the socket first,
// without waiting, when read is set) and writes each DamageNotify into out
// as x, y, width, height and the full sequence number of the last request
// the server had processed when it was sent, up to max of them: the
// count, or -1 when an error came (a refused subtract: reports may be
// lost) or the connection broke.
static int dh_damage_drain(xcb_connection_t *c, uint8_t first_event, int read, int32_t *out, int max) {
	int n = 0;
	while (n < max) {
		xcb_generic_event_t *ev = read ? xcb_poll_for_event(c) : xcb_poll_for_queued_event(c);
		if (ev == NULL) {
			return xcb_connection_has_error(c) ? -1 : n;
		}
		int type = ev->response_type & 0x7f;
		if (type == 0) {
			free(ev);
			return -1;
		}
		if (type == first_event + dh_damage_notify) {
			// level, sequence, drawable, damage, timestamp; then the area.
			const uint8_t *b = (const uint8_t *)ev;
			int16_t x, y;
			uint16_t w, h;
			memcpy(&x, b + 16, 2);
			memcpy(&y, b + 18, 2);
			memcpy(&w, b + 20, 2);
			memcpy(&h, b + 22, 2);
			int32_t *o = out + 5 * n;
			o[0] = x;
			o[1] = y;
			o[2] = w;
			o[3] = h;
			o[4] = (int32_t)ev->full_sequence;
			n++;
		}
		free(ev);
	}
	return n;
}

// dh_xping_send sends GetInputFocus (a request every server answers at
// once) and flushes it; 0 when the connection is broken. With damage set,
// a DamageSubtract that empties its region goes first (see drawn.go).
static unsigned int dh_xping_send(xcb_connection_t *c, uint8_t damage_major, uint32_t damage) {
	if (damage != 0) {
		uint32_t subtract[4] = { 0, damage, 0, 0 };
		dh_damage_send(c, damage_major, dh_damage_subtract, subtract, 4, 0, 0);
	}
	xcb_get_input_focus_cookie_t ck = xcb_get_input_focus(c);
	if (xcb_flush(c) <= 0) return 0;
	return ck.sequence;
}

*/
import "C"

import (
	"context"
	"errors"
	"time"
	"unsafe"

	"github.com/deskhand/deskhand/supervisor/desktop/x11/xcb"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// pingSlice is how long one wait for a ping's reply blocks before ctx is
// looked at again.
const pingSlice = 50 * time.Millisecond

// xping is the display gate's own connection, for its one round trip per
// action: an XCB request and a poll for its reply, made on the calling
// thread, where xgb's reply passes through its reader and writer
// goroutines and a timeout goroutine of ours. It also follows DAMAGE on
// the root window, where the server has it (drawn.go).
type xping struct {
	c *C.xcb_connection_t
	// damage is the DAMAGE object, 0 when drawing is not followed.
	damage      C.uint32_t
	damageMajor C.uint8_t
	damageEvent C.uint8_t
}

// openPing connects to display, bounded as connect is.
func openPing(ctx context.Context, display string) (*xping, error) {
	return openWithin(ctx, func() (*xping, error) {
		conn, root, err := xcb.Open(display)
		if err != nil {
			return nil, err
		}
		c := (*C.xcb_connection_t)(conn)
		p := &xping{c: c}
		if C.dh_damage_start(c, C.uint32_t(root), &p.damageMajor, &p.damageEvent, &p.damage) == 0 {
			p.damage = 0
		}
		return p, nil
	}, (*xping).close)
}

// followsDrawing is true when the connection follows DAMAGE.
func (p *xping) followsDrawing() bool { return p.damage != 0 }

// ping makes one round trip, bounded by ctx and a second. Following
// DAMAGE, it empties the damage region first, in the request before the
// one whose sequence number it sets in subtracted.
func (p *xping) ping(ctx context.Context, subtracted *uint32) error {
	seq := C.dh_xping_send(p.c, p.damageMajor, p.damage)
	if seq == 0 {
		return errors.New("the connection is broken")
	}
	*subtracted = uint32(seq) - 1
	deadline := time.Now().Add(time.Second)
	for {
		switch xcb.Wait(unsafe.Pointer(p.c), uint32(seq), pingSlice) {
		case xcb.Answered:
			return nil
		case xcb.Broken:
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

// drawnBatch is how many rectangles one drain call takes.
const drawnBatch = 64

// drain hands each rectangle DAMAGE reported to add, with the sequence
// number of the last request of ours the server had processed then: the
// reports XCB already holds, and with read those waiting on the socket
// too (it does not wait for more). false when reports may have been lost.
func (p *xping) drain(read bool, add func(r geometry.Rect, seq uint32)) bool {
	if p.damage == 0 {
		return false
	}
	var out [5 * drawnBatch]C.int32_t
	r := C.int(0)
	if read {
		r = 1
	}
	for {
		n := int(C.dh_damage_drain(p.c, p.damageEvent, r, &out[0], drawnBatch))
		if n < 0 {
			return false
		}
		for i := range n {
			o := out[5*i:]
			add(geometry.Rect{X: int(o[0]), Y: int(o[1]), Width: int(o[2]), Height: int(o[3])}, uint32(o[4]))
		}
		if n < drawnBatch {
			return true
		}
	}
}

// stopFollowing stops asking for and reading DAMAGE's reports.
func (p *xping) stopFollowing() { p.damage = 0 }

func (p *xping) close() { C.xcb_disconnect(p.c) }
