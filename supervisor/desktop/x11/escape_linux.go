//go:build linux && cgo

package x11

/*
#cgo LDFLAGS: -lX11 -lXi
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <X11/Xlib.h>
#include <X11/keysym.h>
#include <X11/extensions/XInput2.h>

// Set by the exit handler when the connection dies: Xlib's default would
// exit the whole process.
static void dhw_on_io_exit(Display *d, void *flag) { *(volatile int *)flag = 1; }

typedef struct {
	Display *d;
	int opcode;
	volatile int dead;
} dhw_conn;

// dhw_open connects, checks for XInput 2.0 and selects raw key presses
// and device hierarchy changes on the root window. Raw events go to every
// client that selects them, whoever has the focus or a grab, and carry the
// slave device that produced them. why: 1 cannot connect, 2 no XInput 2.
static int dhw_open(dhw_conn *c, const char *name, int *why) {
	memset(c, 0, sizeof *c);
	c->d = XOpenDisplay(name);
	if (c->d == NULL) {
		*why = 1;
		return 0;
	}
	XSetIOErrorExitHandler(c->d, dhw_on_io_exit, (void *)&c->dead);
	int ev, er;
	if (!XQueryExtension(c->d, "XInputExtension", &c->opcode, &ev, &er)) {
		XCloseDisplay(c->d);
		*why = 2;
		return 0;
	}
	int major = 2, minor = 2;
	if (XIQueryVersion(c->d, &major, &minor) != Success || major < 2 || (major == 2 && minor < 1)) {
		XCloseDisplay(c->d);
		*why = 2;
		return 0;
	}
	// Raw events come from the slave device and again from its master;
	// the master's copy carries the slave as sourceid, so masters only.
	unsigned char raw[XIMaskLen(XI_LASTEVENT)], hier[XIMaskLen(XI_LASTEVENT)];
	memset(raw, 0, sizeof raw);
	memset(hier, 0, sizeof hier);
	XISetMask(raw, XI_RawKeyPress);
	XISetMask(hier, XI_HierarchyChanged);
	XIEventMask masks[2];
	masks[0].deviceid = XIAllMasterDevices;
	masks[0].mask_len = sizeof raw;
	masks[0].mask = raw;
	masks[1].deviceid = XIAllDevices;
	masks[1].mask_len = sizeof hier;
	masks[1].mask = hier;
	XISelectEvents(c->d, DefaultRootWindow(c->d), masks, 2);
	XSync(c->d, False);
	return 1;
}

// dhw_xtest_devices writes the ids of the XTEST slave devices (the ones
// XTEST input, deskhand's own included, comes from) into ids and returns
// their number. The X server names them "<master> XTEST keyboard" and
// "<master> XTEST pointer"; matching on the name needs no request that
// could fail with an X error (the error handler is process-wide and the
// input package owns it).
static int dhw_xtest_devices(dhw_conn *c, int *ids, int max) {
	int n = 0, count = 0;
	XIDeviceInfo *info = XIQueryDevice(c->d, XIAllDevices, &count);
	if (info == NULL) return 0;
	for (int i = 0; i < count && n < max; i++) {
		const char *name = info[i].name;
		if (name == NULL) continue;
		size_t len = strlen(name);
		const char *kb = " XTEST keyboard", *ptr = " XTEST pointer";
		if ((len >= strlen(kb) && strcmp(name + len - strlen(kb), kb) == 0) ||
		    (len >= strlen(ptr) && strcmp(name + len - strlen(ptr), ptr) == 0)) {
			ids[n++] = info[i].deviceid;
		}
	}
	XIFreeDeviceInfo(info);
	return n;
}

// dhw_is_escape reports whether a keycode produces Escape at its first
// level.
static int dhw_is_escape(dhw_conn *c, int keycode) {
	int per = 0;
	KeySym *syms = XGetKeyboardMapping(c->d, (KeyCode)keycode, 1, &per);
	if (syms == NULL) return 0;
	int yes = per > 0 && syms[0] == XK_Escape;
	XFree(syms);
	return yes;
}

// dhw_next handles the events already read or readable without blocking.
// It returns 1 for a raw key press, with *source, *code and *escape (the
// keycode produces Escape) set, 2 when the device hierarchy changed, 0
// when nothing of interest is queued, -1 when the connection is dead.
// Every press is reported, not only Escape: deskhand's own presses are
// counted off by keycode (see Watcher).
static int dhw_next(dhw_conn *c, int *source, int *code, int *escape) {
	while (!c->dead && XPending(c->d) > 0) {
		XEvent ev;
		XNextEvent(c->d, &ev);
		if (ev.type == MappingNotify) {
			XRefreshKeyboardMapping(&ev.xmapping);
			continue;
		}
		XGenericEventCookie *cookie = &ev.xcookie;
		if (cookie->type != GenericEvent || cookie->extension != c->opcode) continue;
		if (!XGetEventData(c->d, cookie)) continue;
		int r = 0;
		if (cookie->evtype == XI_RawKeyPress) {
			XIRawEvent *raw = (XIRawEvent *)cookie->data;
			*source = raw->sourceid ? raw->sourceid : raw->deviceid;
			*code = raw->detail;
			XFreeEventData(c->d, cookie);
			*escape = dhw_is_escape(c, *code);
			return 1;
		} else if (cookie->evtype == XI_HierarchyChanged) {
			r = 2;
		}
		XFreeEventData(c->d, cookie);
		if (r) return r;
	}
	return c->dead ? -1 : 0;
}

// dhw_wait blocks until the connection or the stop pipe is readable.
// Returns 1 for X input, 0 for stop, -1 on error.
static int dhw_wait(dhw_conn *c, int stopfd) {
	struct pollfd p[2];
	p[0].fd = ConnectionNumber(c->d);
	p[0].events = POLLIN;
	p[1].fd = stopfd;
	p[1].events = POLLIN;
	for (;;) {
		int n = poll(p, 2, -1);
		if (n < 0) continue; // EINTR
		if (p[1].revents) return 0;
		if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL)) return -1;
		if (p[0].revents & POLLIN) return 1;
	}
}

static void dhw_close(dhw_conn *c) {
	if (c->d) XCloseDisplay(c->d);
	c->d = NULL;
}
*/
import "C"

import (
	"fmt"
	"os"
	"slices"
	"unsafe"
)

// startWatcher opens the display and runs the event loop on a goroutine.
func startWatcher(w *Watcher, display string) error {
	name := C.CString(display)
	defer C.free(unsafe.Pointer(name))
	conn := (*C.dhw_conn)(C.calloc(1, C.sizeof_dhw_conn))
	var why C.int
	if C.dhw_open(conn, name, &why) == 0 {
		C.free(unsafe.Pointer(conn))
		switch why {
		case 1:
			return fmt.Errorf("watching for Escape: cannot open X display %q", display)
		default:
			return fmt.Errorf("watching for Escape: X display %q has no XInput 2.1 extension, so Escape on the keyboard cannot interrupt deskhand", display)
		}
	}
	r, wr, err := os.Pipe()
	if err != nil {
		C.dhw_close(conn)
		C.free(unsafe.Pointer(conn))
		return err
	}
	w.stop = func() { wr.Close() }
	go func() {
		defer close(w.done)
		defer r.Close()
		defer C.free(unsafe.Pointer(conn))
		defer C.dhw_close(conn)
		xtest := func() []int {
			ids := make([]C.int, 64)
			n := C.dhw_xtest_devices(conn, &ids[0], C.int(len(ids)))
			out := make([]int, int(n))
			for i := range out {
				out[i] = int(ids[i])
			}
			return out
		}
		xtestDevices := xtest()
		w.log.Debug("watching for Escape", "display", display, "xtest_devices", xtestDevices)
		close(w.ready)
		for {
			for {
				var src, code, escape C.int
				switch C.dhw_next(conn, &src, &code, &escape) {
				case 1:
					w.press(slices.Contains(xtestDevices, int(src)), int(src), uint8(code), escape != 0)
					continue
				case 2:
					xtestDevices = xtest()
					continue
				case -1:
					w.log.Warn("the X connection watching for Escape died; Escape no longer interrupts deskhand", "display", display)
					return
				}
				break
			}
			switch C.dhw_wait(conn, C.int(r.Fd())) {
			case 0:
				return
			case -1:
				w.log.Warn("the X connection watching for Escape failed; Escape no longer interrupts deskhand", "display", display)
				return
			}
		}
	}()
	return nil
}
