/*
 * shapedwin: an override-redirect window with X Shape extension shapes,
 * for the safety tests (safety_shape_e2e_test.go): a cursor overlay or a
 * drag icon, as other programs make them.
 *
 *   shapedwin CLASS X Y W H RRGGBB VISIBLE INPUT
 *
 * VISIBLE and INPUT are "full", "none" or "x,y,w,h" (relative to the
 * window): the bounding and input shapes. It prints "ready 0x<id>" once the
 * window is mapped, then stays until killed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#include <X11/Xatom.h>
#include <X11/extensions/shape.h>

static void set_shape(Display *d, Window w, int kind, const char *spec) {
	XRectangle r;
	int n = 1;
	if (strcmp(spec, "full") == 0)
		return;
	if (strcmp(spec, "none") == 0) {
		n = 0;
	} else {
		int x, y, wd, ht;
		if (sscanf(spec, "%d,%d,%d,%d", &x, &y, &wd, &ht) != 4) {
			fprintf(stderr, "bad shape %s\n", spec);
			exit(2);
		}
		r.x = x, r.y = y, r.width = wd, r.height = ht;
	}
	XShapeCombineRectangles(d, w, kind, 0, 0, &r, n, ShapeSet, Unsorted);
}

int main(int argc, char **argv) {
	if (argc != 9) {
		fprintf(stderr, "usage: shapedwin CLASS X Y W H RRGGBB VISIBLE INPUT\n");
		return 2;
	}
	Display *d = XOpenDisplay(NULL);
	if (!d) {
		fprintf(stderr, "cannot open display\n");
		return 1;
	}
	int ev, er;
	if (!XShapeQueryExtension(d, &ev, &er)) {
		fprintf(stderr, "no Shape extension\n");
		return 1;
	}
	XSetWindowAttributes a;
	a.override_redirect = True;
	a.background_pixel = strtoul(argv[6], NULL, 16);
	Window w = XCreateWindow(d, DefaultRootWindow(d), atoi(argv[2]), atoi(argv[3]),
		atoi(argv[4]), atoi(argv[5]), 0, CopyFromParent, InputOutput, CopyFromParent,
		CWOverrideRedirect | CWBackPixel, &a);
	XClassHint hint = {argv[1], argv[1]};
	XSetClassHint(d, w, &hint);
	long pid = getpid();
	XChangeProperty(d, w, XInternAtom(d, "_NET_WM_PID", False), XA_CARDINAL, 32,
		PropModeReplace, (unsigned char *)&pid, 1);
	set_shape(d, w, ShapeBounding, argv[7]);
	set_shape(d, w, ShapeInput, argv[8]);
	XMapRaised(d, w);
	XSync(d, False);
	printf("ready 0x%lx\n", w);
	fflush(stdout);
	for (;;) {
		XEvent e;
		XNextEvent(d, &e);
	}
}
