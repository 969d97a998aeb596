package keycodes

/*
#cgo LDFLAGS: -lX11
#include <X11/Xlib.h>
#include <X11/XKBlib.h>

// dh_get_controls reads the XKB controls deskhand guards.
static int dh_get_controls(Display *d, unsigned int *enabled, unsigned int *dflt_btn, unsigned int *ax_options) {
	XkbDescPtr x = XkbAllocKeyboard();
	if (x == NULL) return 0;
	if (XkbGetControls(d, XkbAllControlsMask, x) != Success || x->ctrls == NULL) {
		XkbFreeKeyboard(x, 0, True);
		return 0;
	}
	*enabled = x->ctrls->enabled_ctrls;
	*dflt_btn = x->ctrls->mk_dflt_btn;
	*ax_options = x->ctrls->ax_options;
	XkbFreeKeyboard(x, 0, True);
	return 1;
}

// dh_set_controls sets the enabled controls in affect to values, and the
// MouseKeys default button and AccessX options, leaving every other
// control (RepeatKeys among them) as it is.
static int dh_set_controls(Display *d, unsigned int affect, unsigned int values, unsigned int dflt_btn, unsigned int ax_options) {
	if (!XkbChangeEnabledControls(d, XkbUseCoreKbd, affect, values)) return 0;
	XkbDescPtr x = XkbAllocKeyboard();
	if (x == NULL) return 0;
	if (XkbGetControls(d, XkbAllControlsMask, x) != Success || x->ctrls == NULL) {
		XkbFreeKeyboard(x, 0, True);
		return 0;
	}
	x->ctrls->mk_dflt_btn = dflt_btn;
	x->ctrls->ax_options = ax_options;
	Bool ok = XkbSetControls(d, XkbMouseKeysMask | XkbAccessXKeysMask, x);
	XkbFreeKeyboard(x, 0, True);
	return ok;
}
*/
import "C"

import "fmt"

func (x *x11) controls() (xkbControls, error) {
	var enabled, dflt, ax C.uint
	if C.dh_get_controls(x.dpy, &enabled, &dflt, &ax) == 0 {
		if err := x.check(); err != nil {
			return xkbControls{}, fmt.Errorf("reading the XKB controls: %w", err)
		}
		return xkbControls{}, fmt.Errorf("reading the XKB controls of X display %q failed", x.name)
	}
	return xkbControls{enabled: uint32(enabled), mouseKeysButton: uint8(dflt), accessXOptions: uint16(ax)}, nil
}

func (x *x11) setControls(c xkbControls) error {
	x.dirty = true
	if C.dh_set_controls(x.dpy, C.uint(guardedControls), C.uint(c.enabled&guardedControls), C.uint(c.mouseKeysButton), C.uint(c.accessXOptions)) == 0 {
		return fmt.Errorf("XKB refused to set the controls on X display %q", x.name)
	}
	return x.sync()
}
