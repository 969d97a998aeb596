package keycodes

/*
#cgo LDFLAGS: -lX11 -lXtst
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/XKBlib.h>
#include <X11/extensions/XTest.h>

// robotgo keeps its own connection; its C code exports the accessor.
extern Display *XGetMainDisplay(void);

// X errors are recorded here by dh_on_error instead of Xlib's default
// handler, which prints and exits the process. All Xlib calls of this
// package run on one thread, so plain statics suffice.
static int dh_err_code, dh_err_request, dh_err_minor;
static char dh_err_text[160];

// Set when a connection dies (the X server went away). Xlib's default is
// to exit the process; the exit handler below only raises the flag.
static volatile int dh_dead_own, dh_dead_robotgo;

static int dh_on_error(Display *d, XErrorEvent *e) {
	if (dh_err_code == 0) {
		dh_err_code = e->error_code;
		dh_err_request = e->request_code;
		dh_err_minor = e->minor_code;
		XGetErrorText(d, e->error_code, dh_err_text, sizeof dh_err_text);
	}
	return 0;
}

static int dh_on_io_error(Display *d) { return 0; }

static void dh_on_io_exit(Display *d, void *flag) { *(volatile int *)flag = 1; }

static void dh_install_handlers(void) {
	XSetErrorHandler(dh_on_error);
	XSetIOErrorHandler(dh_on_io_error);
}

static void dh_reset_error(void) { dh_err_code = 0; dh_err_text[0] = 0; }

// dh_take_error copies out and clears the recorded X error; 0 if none.
static int dh_take_error(char *text, int size, int *request, int *minor) {
	int code = dh_err_code;
	if (code != 0) {
		strncpy(text, dh_err_text, size - 1);
		text[size - 1] = 0;
		*request = dh_err_request;
		*minor = dh_err_minor;
	}
	dh_reset_error();
	return code;
}

static int dh_dead(void) { return dh_dead_own || dh_dead_robotgo; }

// dh_open connects and checks the extensions this package needs.
// why: 1 cannot connect, 2 no XTEST, 3 no XKEYBOARD.
static Display *dh_open(const char *name, int *why) {
	Display *d = XOpenDisplay(name);
	if (d == NULL) {
		*why = 1;
		return NULL;
	}
	XSetIOErrorExitHandler(d, dh_on_io_exit, (void *)&dh_dead_own);
	int ev, er, maj, min;
	if (!XTestQueryExtension(d, &ev, &er, &maj, &min)) {
		XCloseDisplay(d);
		*why = 2;
		return NULL;
	}
	int op;
	maj = XkbMajorVersion;
	min = XkbMinorVersion;
	if (!XkbQueryExtension(d, &op, &ev, &er, &maj, &min)) {
		XCloseDisplay(d);
		*why = 3;
		return NULL;
	}
	// Keep sending input while another client grabs the server.
	XTestGrabControl(d, True);
	return d;
}

static int dh_watch_robotgo(void) {
	dh_dead_own = 0;
	dh_dead_robotgo = 0;
	dh_reset_error();
	Display *d = XGetMainDisplay();
	if (d == NULL) return 0;
	XSetIOErrorExitHandler(d, dh_on_io_exit, (void *)&dh_dead_robotgo);
	return 1;
}

#define DH_MAX_TYPES 96
#define DH_MAX_ENTRIES 32
#define DH_MAX_LEVELS 8

typedef struct {
	int min_kc, max_kc, num_types;
	unsigned char type_mask[DH_MAX_TYPES];
	unsigned char type_nentries[DH_MAX_TYPES];
	unsigned char entry_mods[DH_MAX_TYPES][DH_MAX_ENTRIES];
	unsigned char entry_level[DH_MAX_TYPES][DH_MAX_ENTRIES];
	int key_type[256]; // -1: the key has no symbols
	unsigned char key_nlevels[256];
	unsigned int key_syms[256][DH_MAX_LEVELS];
	unsigned char key_setmods[256];
	unsigned char key_acts[256][DH_MAX_LEVELS]; // XKB action type by level
} dh_keyboard;

static int dh_state(Display *d, int *group, unsigned char *base, unsigned char *latched, unsigned char *locked) {
	XkbStateRec st;
	if (XkbGetState(d, XkbUseCoreKbd, &st) != Success) return 0;
	*group = st.group;
	*base = st.base_mods;
	*latched = st.latched_mods;
	*locked = st.locked_mods;
	return 1;
}

// dh_read_keyboard copies the XKB map for the given effective group: key
// types, each key's symbols by level, and the modifiers each key's level-1
// SetMods action sets.
static int dh_read_keyboard(Display *d, int group, dh_keyboard *out) {
	memset(out, 0, sizeof *out);
	XkbDescPtr x = XkbGetMap(d, XkbKeyTypesMask | XkbKeySymsMask | XkbKeyActionsMask | XkbModifierMapMask, XkbUseCoreKbd);
	if (x == NULL || x->map == NULL) {
		if (x) XkbFreeKeyboard(x, 0, True);
		return 0;
	}
	out->min_kc = x->min_key_code;
	out->max_kc = x->max_key_code;
	out->num_types = x->map->num_types < DH_MAX_TYPES ? x->map->num_types : DH_MAX_TYPES;
	for (int t = 0; t < out->num_types; t++) {
		XkbKeyTypePtr tp = &x->map->types[t];
		out->type_mask[t] = tp->mods.mask;
		int n = 0;
		for (int e = 0; e < tp->map_count && n < DH_MAX_ENTRIES; e++) {
			if (!tp->map[e].active) continue;
			out->entry_mods[t][n] = tp->map[e].mods.mask;
			out->entry_level[t][n] = tp->map[e].level;
			n++;
		}
		out->type_nentries[t] = n;
	}
	for (int kc = 0; kc < 256; kc++) out->key_type[kc] = -1;
	for (int kc = x->min_key_code; kc <= x->max_key_code; kc++) {
		int n = XkbKeyNumGroups(x, kc);
		if (n <= 0) continue;
		int g = group;
		if (g >= n) {
			unsigned char info = XkbKeyGroupInfo(x, kc);
			switch (XkbOutOfRangeGroupAction(info)) {
			case XkbRedirectIntoRange:
				g = XkbOutOfRangeGroupNumber(info);
				if (g >= n) g = 0;
				break;
			case XkbClampIntoRange:
				g = n - 1;
				break;
			default:
				g = g % n;
			}
		}
		int t = XkbKeyKeyTypeIndex(x, kc, g);
		if (t >= out->num_types) continue;
		XkbKeyTypePtr tp = XkbKeyKeyType(x, kc, g);
		int levels = tp->num_levels < DH_MAX_LEVELS ? tp->num_levels : DH_MAX_LEVELS;
		out->key_type[kc] = t;
		out->key_nlevels[kc] = levels;
		for (int l = 0; l < levels; l++) out->key_syms[kc][l] = XkbKeySymEntry(x, kc, l, g);
		if (XkbKeyHasActions(x, kc)) {
			for (int l = 0; l < levels; l++) {
				XkbAction *la = XkbKeyActionEntry(x, kc, l, g);
				out->key_acts[kc][l] = la != NULL ? la->type : XkbSA_NoAction;
			}
			XkbAction *a = XkbKeyActionEntry(x, kc, 0, g);
			if (a != NULL && a->type == XkbSA_SetMods) {
				out->key_setmods[kc] = (a->mods.flags & XkbSA_UseModMapMods) ? x->map->modmap[kc] : a->mods.mask;
			}
		}
	}
	XkbFreeKeyboard(x, 0, True);
	return 1;
}

// dh_drain discards the events Xlib has already queued on d. Neither this
// package nor robotgo reads events, but every client receives MappingNotify
// (on each keycode this package binds, among others), and Xlib keeps them
// until read.
static void dh_drain(Display *d) {
	XEvent ev;
	while (XEventsQueued(d, QueuedAlready) > 0) XNextEvent(d, &ev);
}

static void dh_drain_robotgo(void) {
	Display *d = XGetMainDisplay();
	if (d != NULL && !dh_dead_robotgo) dh_drain(d);
}

static int dh_buttons(Display *d);

// dh_warp puts the pointer at (x, y) on robotgo's connection and flushes
// it, without waiting for the server (see x11.move).
static void dh_warp(int x, int y) {
	Display *d = XGetMainDisplay();
	if (d == NULL || dh_dead_robotgo) return;
	XWarpPointer(d, None, DefaultRootWindow(d), 0, 0, 0, 0, x, y);
	XFlush(d);
}

// dh_button sends a button event on robotgo's connection, as
// robotgo.Toggle does; sync waits for the server to have processed it,
// otherwise the request is only flushed. 0 means XTEST refused it.
static int dh_button(unsigned int button, Bool down, Bool sync) {
	Display *d = XGetMainDisplay();
	if (d == NULL || dh_dead_robotgo) return 1;
	Status st = XTestFakeButtonEvent(d, button, down, CurrentTime);
	if (sync) XSync(d, False);
	else XFlush(d);
	return st;
}

// dh_wake_robotgo sends a NoOperation request on robotgo's connection, so
// that the server is awake for the request after it (see x11.wake).
static void dh_wake_robotgo(void) {
	Display *d = XGetMainDisplay();
	if (d == NULL || dh_dead_robotgo) return;
	XNoOp(d);
	XFlush(d);
}

static void dh_sync_robotgo(void) {
	Display *d = XGetMainDisplay();
	if (d != NULL && !dh_dead_robotgo) XSync(d, False);
}

// dh_buttons_robotgo is dh_buttons asked on robotgo's connection: its
// answer comes after every request sent on it before.
static int dh_buttons_robotgo(void) {
	Display *d = XGetMainDisplay();
	if (d == NULL || dh_dead_robotgo) return 0;
	return dh_buttons(d);
}

static long dh_now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

// dh_ping_target walks up from w to the first window that advertises
// _NET_WM_PING in WM_PROTOCOLS; None if there is none.
static Window dh_ping_target(Display *d, Window w, Atom net_wm_ping) {
	Window root = DefaultRootWindow(d);
	for (int depth = 0; depth < 32 && w != None && w != root; depth++) {
		Atom *protos = NULL;
		int n = 0;
		int found = 0;
		if (XGetWMProtocols(d, w, &protos, &n)) {
			for (int i = 0; i < n; i++) {
				if (protos[i] == net_wm_ping) found = 1;
			}
			XFree(protos);
		}
		if (found) return w;
		Window r, parent, *kids = NULL;
		unsigned int nkids;
		if (!XQueryTree(d, w, &r, &parent, &kids, &nkids)) return None;
		if (kids) XFree(kids);
		w = parent;
	}
	return None;
}

// dh_ping_focus sends a _NET_WM_PING to the client owning the focused
// window and waits up to timeout_ms for its answer. A client handles its
// events in order, so the answer means it has read every event sent to it
// before the ping. Returns 1 when answered, 0 when the window does not
// support the ping, -1 on timeout.
static int dh_ping_focus(Display *d, long token, int timeout_ms) {
	Atom wm_protocols = XInternAtom(d, "WM_PROTOCOLS", False);
	Atom net_wm_ping = XInternAtom(d, "_NET_WM_PING", False);
	Window start = None;
	int revert;
	XGetInputFocus(d, &start, &revert);
	if (start == PointerRoot) start = None;
	Window target = start == None ? None : dh_ping_target(d, start, net_wm_ping);
	if (target == None) {
		dh_reset_error();
		return 0;
	}
	Window root = DefaultRootWindow(d);

	// The answer goes to the root window with SubstructureNotify and
	// SubstructureRedirect; any client selecting either receives it.
	XSelectInput(d, root, SubstructureNotifyMask);
	XEvent ev;
	memset(&ev, 0, sizeof ev);
	ev.xclient.type = ClientMessage;
	ev.xclient.window = target;
	ev.xclient.message_type = wm_protocols;
	ev.xclient.format = 32;
	ev.xclient.data.l[0] = (long)net_wm_ping;
	ev.xclient.data.l[1] = token;
	ev.xclient.data.l[2] = (long)target;
	XSendEvent(d, target, False, NoEventMask, &ev);
	XFlush(d);

	int result = -1;
	long deadline = dh_now_ms() + timeout_ms;
	while (result < 0 && !dh_dead_own) {
		while (XPending(d) > 0) {
			XNextEvent(d, &ev);
			if (ev.type == ClientMessage && ev.xclient.message_type == wm_protocols &&
			    (Atom)ev.xclient.data.l[0] == net_wm_ping && ev.xclient.data.l[1] == token) {
				result = 1;
				break;
			}
		}
		if (result > 0) break;
		long left = deadline - dh_now_ms();
		if (left <= 0) break;
		struct pollfd p = {ConnectionNumber(d), POLLIN, 0};
		poll(&p, 1, (int)left);
	}
	XSelectInput(d, root, NoEventMask);
	XSync(d, True);
	// A window may vanish while we look at it; such errors are not the
	// caller's.
	dh_reset_error();
	return result;
}

// dh_buttons is the core pointer's button mask as the server has
// processed its events (XQueryPointer): a press or release still queued
// behind another client's synchronous grab is not in it yet.
static int dh_buttons(Display *d) {
	Window root, child;
	int rx, ry, wx, wy;
	unsigned int mask = 0;
	XQueryPointer(d, DefaultRootWindow(d), &root, &child, &rx, &ry, &wx, &wy, &mask);
	return (int)mask;
}

static int dh_bind(Display *d, int code, unsigned int sym) {
	KeySym syms[2] = {sym, sym};
	return XChangeKeyboardMapping(d, code, 2, syms, 1);
}

static int dh_unbind(Display *d, int code) {
	KeySym none[1] = {NoSymbol};
	return XChangeKeyboardMapping(d, code, 1, none, 1);
}

// dh_focus_chain stores the focused window and its ancestors below the
// root in out, innermost first, and returns how many; 0 when no window has
// the focus (None, or PointerRoot: keys then follow the pointer).
static int dh_focus_chain(Display *d, unsigned int *out, int max) {
	Window w = None;
	int revert;
	XGetInputFocus(d, &w, &revert);
	Window root = DefaultRootWindow(d);
	int n = 0;
	while (w != None && w != PointerRoot && w != root && n < max) {
		out[n++] = (unsigned int)w;
		Window r, parent = None, *kids = NULL;
		unsigned int nkids;
		if (!XQueryTree(d, w, &r, &parent, &kids, &nkids)) break;
		if (kids) XFree(kids);
		w = parent;
	}
	// The focus may be on a window that is going away; not an error of
	// the keys that follow.
	dh_reset_error();
	return n;
}

static int dh_key_repeats(Display *d, int code) {
	XKeyboardState st;
	XGetKeyboardControl(d, &st);
	return (st.auto_repeats[code / 8] >> (code % 8)) & 1;
}

static void dh_set_key_repeat(Display *d, int code, int on) {
	XKeyboardControl c;
	c.key = code;
	c.auto_repeat_mode = on ? AutoRepeatModeOn : AutoRepeatModeOff;
	XChangeKeyboardControl(d, KBKey | KBAutoRepeatMode, &c);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"time"
	"unsafe"

	"github.com/go-vgo/robotgo"
)

// x11 drives an X display with two connections: robotgo's (for the pointer:
// robotgo.Move, Toggle, Scroll and Location do one X request each and sync,
// with no built-in sleep once robotgo.MouseSleep is 0) and this package's
// own (for the keyboard, through XTEST and XKB directly: robotgo's key
// functions assume a US layout and its TypeStr remaps keys for non-ASCII
// text without restoring them). A third, over XCB, carries the moves sent
// from callers' goroutines (warp_linux.go) while neither of the others
// has anything in flight.
//
// The server orders requests only within one connection, so before a
// pointer request goes out on robotgo's connection, pending keyboard
// requests on ours are synced (dirty), and before a key event goes out on
// ours, pending pointer requests on robotgo's are (pointerDirty). A
// pointer request is flushed at once but waited for only where something
// needs it processed: a press (the hold counts from there), a release
// (awaitRelease asks on the same connection, whose answer comes after
// it), the end of the operation (sync). So a click costs two round trips,
// not four.
type x11 struct {
	dpy          *C.Display
	robotgo      *C.Display // robotgo's own connection, for abandon
	name         string
	dirty        bool
	pointerDirty bool
	pings        int64
	// xw moves the pointer from callers' threads (warp_linux.go); nil
	// when it could not connect.
	xw *xwarp
}

var (
	handlersOnce sync.Once
	// robotgo keeps one global connection, so one Input at a time.
	robotgoMu    sync.Mutex
	robotgoInUse bool
)

func openBackend(display string) (backend, string, error) {
	name := display
	if name == "" {
		name = os.Getenv("DISPLAY")
	}
	if name == "" {
		return nil, "", errors.New("opening the X display: DISPLAY is not set and Options.Display is empty; run deskhand inside an X session, set DISPLAY (for example :0), or start a virtual display")
	}

	robotgoMu.Lock()
	defer robotgoMu.Unlock()
	if robotgoInUse {
		return nil, "", errors.New("opening the X display: another input.Input is open in this process (robotgo keeps one X connection per process); Close it first")
	}

	handlersOnce.Do(func() {
		C.XInitThreads()
		C.dh_install_handlers()
	})
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var why C.int
	dpy := C.dh_open(cname, &why)
	switch why {
	case 1:
		return nil, "", fmt.Errorf("opening X display %q: cannot connect; check that the X server is running and that DISPLAY and XAUTHORITY point at it", name)
	case 2:
		return nil, "", fmt.Errorf("X display %q has no XTEST extension, which deskhand needs to send input; enable it in the X server (Xvfb and Xorg have it unless started with -extension XTEST)", name)
	case 3:
		return nil, "", fmt.Errorf("X display %q has no XKEYBOARD extension, which deskhand needs to read the keyboard layout; use an X server with XKB (Xorg, Xvfb, Xwayland all have it)", name)
	}

	robotgo.MouseSleep = 0
	robotgo.KeySleep = 0
	if err := robotgo.SetXDisplayName(name); err != nil {
		C.XCloseDisplay(dpy)
		return nil, "", fmt.Errorf("pointing robotgo at X display %q: %w", name, err)
	}
	// Opens robotgo's connection now rather than on the first click, so a
	// failure shows here.
	robotgo.Location()
	if C.dh_watch_robotgo() == 0 {
		C.XCloseDisplay(dpy)
		return nil, "", fmt.Errorf("opening X display %q for robotgo: cannot connect", name)
	}
	robotgoInUse = true
	return &x11{dpy: dpy, robotgo: C.XGetMainDisplay(), name: name, xw: openWarp(name)}, name, nil
}

func (x *x11) close() {
	robotgo.CloseMainDisplay()
	C.XCloseDisplay(x.dpy)
	if x.xw != nil {
		x.xw.close()
	}
	robotgoMu.Lock()
	robotgoInUse = false
	robotgoMu.Unlock()
}

func (x *x11) alive() error {
	if C.dh_dead() != 0 {
		return fmt.Errorf("the connection to X display %q is lost (the X server exited or restarted); restart deskhand or open a new Input", x.name)
	}
	return nil
}

// check returns the first X error since the last check.
func (x *x11) check() error {
	if err := x.alive(); err != nil {
		return err
	}
	var text [160]C.char
	var request, minor C.int
	if C.dh_take_error(&text[0], C.int(len(text)), &request, &minor) == 0 {
		return nil
	}
	return fmt.Errorf("X server rejected a request (%s; request %d.%d) on display %q",
		C.GoString(&text[0]), int(request), int(minor), x.name)
}

// sync waits until the server has processed every request sent so far.
// robotgo syncs its connection after each call, so only ours may have
// requests in flight, and only when dirty: every other request on it
// waits for its reply.
func (x *x11) sync() error {
	if x.dirty {
		C.XSync(x.dpy, C.True) // True: discard queued events, see dh_drain
	}
	x.syncPointer()
	C.dh_drain_robotgo()
	x.dirty = false
	return x.check()
}

// syncPointer waits until the server has processed the pointer requests
// sent on robotgo's connection.
func (x *x11) syncPointer() {
	if x.pointerDirty {
		C.dh_sync_robotgo()
		x.pointerDirty = false
	}
}

// confirmRead pings the focused application (see dh_ping_focus).
func (x *x11) confirmRead(timeout time.Duration) (bool, error) {
	if err := x.sync(); err != nil {
		return false, err
	}
	x.pings++
	switch C.dh_ping_focus(x.dpy, C.long(x.pings), C.int(timeout.Milliseconds())) {
	case 1:
		return true, x.alive()
	case 0:
		return false, x.alive()
	}
	if err := x.alive(); err != nil {
		return false, err
	}
	return false, fmt.Errorf("the focused application did not answer a ping within %s", timeout)
}

// beforePointer orders pending keyboard requests before a pointer request
// on robotgo's connection.
func (x *x11) beforePointer() error {
	if x.dirty {
		return x.sync()
	}
	return x.alive()
}

// move sends one XWarpPointer on robotgo's connection (what robotgo.Move
// sends) and flushes it; the next press, the operation's sync or a
// position read waits for it.
func (x *x11) move(px, py int) error {
	if err := x.beforePointer(); err != nil {
		return err
	}
	C.dh_warp(C.int(px), C.int(py))
	x.pointerDirty = true
	return x.check()
}

// position uses robotgo.Location: one XQueryPointer.
func (x *x11) position() (Point, error) {
	if err := x.beforePointer(); err != nil {
		return Point{}, err
	}
	px, py := robotgo.Location()
	x.pointerDirty = false // a round trip on robotgo's connection
	return Point{X: px, Y: py}, x.check()
}

// wake sends a request that does nothing on robotgo's connection, which
// carries the release that follows (see holdCtx).
func (x *x11) wake() { C.dh_wake_robotgo() }

// The X buttons button sends: the three buttons and the wheel's four.
// (robotgo's wheel names are upside down on X11: its "wheelDown" is
// button 4, which scrolls up; the numbers here are X's.)
func knownButton(b Button) bool { return b >= ButtonLeft && b <= buttonWheelRight }

// releaseWait bounds how long a release waits for the server to process
// it (see awaitRelease): a user holding the same button on their own
// display keeps it down, and deskhand must not wait for them.
const releaseWait = 3 * time.Second

// awaitRelease returns once the server has processed the release of
// button b, so that the application has the whole click queued before any
// key deskhand sends next. A window manager that focuses on click grabs
// the button synchronously: the pointer is frozen, its press and release
// queued in the server, until the manager replays the press; the keyboard
// is not frozen, so keys sent meanwhile reach the application first (a
// click into a text field, then End, then typing, typed where the click
// landed after End had moved the caret). Until the release is processed
// the core button mask still shows the button down.
func (x *x11) awaitRelease(b Button) error {
	if b < ButtonLeft || b > buttonWheelDown {
		x.syncPointer() // buttons 6 and up have no bit in the mask
		return x.check()
	}
	bit := C.int(1) << (7 + uint(b)) // Button1Mask is 1<<8
	deadline := time.Now().Add(releaseWait)
	// A window manager replays the press within a millisecond or two, so
	// the first asks come close together (the runtime's timers would
	// round each wait up to a millisecond); a button the user holds is
	// asked less and less often.
	pause := 100 * time.Microsecond
	// Asked on robotgo's connection, the answer comes after the release
	// request: no XSync before it.
	defer func() { x.pointerDirty = false }()
	for C.dh_buttons_robotgo()&bit != 0 {
		if err := x.alive(); err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return nil
		}
		preciseSleep(pause)
		pause = min(2*pause, 10*time.Millisecond)
	}
	return x.alive()
}

// button sends one XTestFakeButtonEvent on robotgo's connection, as
// robotgo.Toggle does: a press waits for the server to have processed it
// (XSync), a release for the server to have processed the event too
// (awaitRelease, which needs no XSync before it). (robotgo.Click would add
// a 5 ms sleep, and its double click 200 ms.)
func (x *x11) button(b Button, down bool) error {
	if !knownButton(b) {
		return fmt.Errorf("unknown mouse button %d", uint8(b))
	}
	if err := x.beforePointer(); err != nil {
		return err
	}
	if down {
		// Synced: the hold counts from here.
		ok := C.dh_button(C.uint(b), C.True, C.True)
		x.pointerDirty = false
		if cerr := x.check(); cerr != nil {
			return cerr
		}
		if ok == 0 {
			return fmt.Errorf("XTEST refused a press of the %s button", b)
		}
		return nil
	}
	ok := C.dh_button(C.uint(b), C.False, C.False)
	x.pointerDirty = true
	if cerr := x.check(); cerr != nil {
		return cerr
	}
	if ok == 0 {
		return fmt.Errorf("XTEST refused a release of the %s button", b)
	}
	return x.awaitRelease(b)
}

func (x *x11) key(code keycode, down bool) error {
	var press C.Bool
	if down {
		press = C.True
	}
	// A key goes where the pointer is under focus-follows-mouse: the
	// pointer requests before it must have been processed.
	x.syncPointer()
	x.dirty = true
	if C.XTestFakeKeyEvent(x.dpy, C.uint(code), press, C.CurrentTime) == 0 {
		return fmt.Errorf("XTEST refused a key event for keycode %d", code)
	}
	return nil
}

func (x *x11) kbdState() (kbdState, error) {
	var group C.int
	var base, latched, locked C.uchar
	if C.dh_state(x.dpy, &group, &base, &latched, &locked) == 0 {
		if err := x.check(); err != nil {
			return kbdState{}, fmt.Errorf("reading the keyboard state: %w", err)
		}
		return kbdState{}, fmt.Errorf("reading the keyboard state from X display %q failed", x.name)
	}
	return kbdState{base: modMask(base), latched: modMask(latched), locked: modMask(locked), group: int(group)}, nil
}

func (x *x11) keyboard() (keyboard, error) {
	st, err := x.kbdState()
	if err != nil {
		return keyboard{}, err
	}
	raw := (*C.dh_keyboard)(C.malloc(C.sizeof_dh_keyboard))
	defer C.free(unsafe.Pointer(raw))
	if C.dh_read_keyboard(x.dpy, C.int(st.group), raw) == 0 {
		if err := x.check(); err != nil {
			return keyboard{}, fmt.Errorf("reading the keyboard mapping: %w", err)
		}
		return keyboard{}, fmt.Errorf("reading the keyboard mapping from X display %q failed", x.name)
	}
	var kb keyboard
	kb.types = make([]keyType, int(raw.num_types))
	for t := range kb.types {
		n := int(raw.type_nentries[t])
		kt := keyType{mask: modMask(raw.type_mask[t]), entries: make([]typeEntry, n)}
		for e := 0; e < n; e++ {
			kt.entries[e] = typeEntry{mods: modMask(raw.entry_mods[t][e]), level: int(raw.entry_level[t][e])}
		}
		kb.types[t] = kt
	}
	for kc := int(raw.min_kc); kc <= int(raw.max_kc) && kc < 256; kc++ {
		k := keyInfo{code: keycode(kc), typ: int(raw.key_type[kc]), setMods: modMask(raw.key_setmods[kc])}
		if k.typ >= 0 {
			k.syms = make([]Keysym, int(raw.key_nlevels[kc]))
			k.acts = make([]uint8, len(k.syms))
			for l := range k.syms {
				k.syms[l] = Keysym(raw.key_syms[kc][l])
				k.acts[l] = uint8(raw.key_acts[kc][l])
			}
		}
		kb.keys = append(kb.keys, k)
	}
	return kb, nil
}

func (x *x11) latchMods(mask, values modMask) error {
	x.dirty = true
	if C.XkbLatchModifiers(x.dpy, C.XkbUseCoreKbd, C.uint(mask), C.uint(values)) == 0 {
		return errors.New("XKB refused to change latched modifiers")
	}
	return nil
}

func (x *x11) lockMods(mask, values modMask) error {
	x.dirty = true
	if C.XkbLockModifiers(x.dpy, C.XkbUseCoreKbd, C.uint(mask), C.uint(values)) == 0 {
		return errors.New("XKB refused to change locked modifiers")
	}
	return nil
}

func (x *x11) bind(codes []keycode, syms []Keysym) error {
	x.dirty = true
	for i, c := range codes {
		C.dh_bind(x.dpy, C.int(c), C.uint(syms[i]))
	}
	return nil
}

func (x *x11) unbind(codes []keycode) error {
	x.dirty = true
	for _, c := range codes {
		C.dh_unbind(x.dpy, C.int(c))
	}
	return nil
}

// grab grabs the server: until ungrab, only this connection's requests
// (and so its key events) are processed, so nothing can move the focus
// between focusChain and the keys that follow it.
func (x *x11) grab() error {
	x.dirty = true
	C.XGrabServer(x.dpy)
	return x.alive()
}

func (x *x11) ungrab() error {
	x.dirty = true
	C.XUngrabServer(x.dpy)
	return x.sync()
}

func (x *x11) focusChain() ([]uint32, error) {
	var buf [32]C.uint
	n := int(C.dh_focus_chain(x.dpy, &buf[0], C.int(len(buf))))
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(buf[i])
	}
	return out, x.alive()
}

func (x *x11) keyRepeats(code keycode) (bool, error) {
	on := C.dh_key_repeats(x.dpy, C.int(code)) != 0
	return on, x.check()
}

func (x *x11) setKeyRepeat(code keycode, on bool) error {
	x.dirty = true
	var v C.int
	if on {
		v = 1
	}
	C.dh_set_key_repeat(x.dpy, C.int(code), v)
	return nil
}
