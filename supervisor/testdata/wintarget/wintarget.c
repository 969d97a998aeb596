/* wintarget: the Windows end-to-end tests' target app. A window titled
 * argv[1], filled with the colour argv[2] (RRGGBB), at argv[4],argv[5]
 * (Wine places its windows itself, after the window manager), with one button in
 * the middle; a click on it writes "clicked" to the file argv[3] and adds
 * " clicked" to the title, which the test reads on the X side. Its window
 * class is argv[6], else "DeskhandTarget": a window chooses its class, so
 * an impostor can take an approved app's.
 * Built with mingw: x86_64-w64-mingw32-gcc -mwindows -o wintarget.exe wintarget.c */
#include <windows.h>
#include <stdio.h>
#include <stdlib.h>

static HBRUSH fill;
static char title[256], marker[1024], class[256];

static LRESULT CALLBACK proc(HWND w, UINT m, WPARAM wp, LPARAM lp) {
	switch (m) {
	case WM_COMMAND:
		if (LOWORD(wp) == 1 && HIWORD(wp) == BN_CLICKED) {
			FILE *f = fopen(marker, "w");
			if (f) { fputs("clicked", f); fclose(f); }
			char t[300];
			snprintf(t, sizeof t, "%s clicked", title);
			SetWindowTextA(w, t);
		}
		return 0;
	case WM_ERASEBKGND: {
		RECT r;
		GetClientRect(w, &r);
		FillRect((HDC)wp, &r, fill);
		return 1;
	}
	case WM_DESTROY:
		PostQuitMessage(0);
		return 0;
	}
	return DefWindowProcA(w, m, wp, lp);
}

int WINAPI WinMain(HINSTANCE inst, HINSTANCE prev, LPSTR cmd, int show) {
	if (__argc < 6) return 2;
	snprintf(title, sizeof title, "%s", __argv[1]);
	snprintf(marker, sizeof marker, "%s", __argv[3]);
	unsigned long rgb = strtoul(__argv[2], NULL, 16);
	fill = CreateSolidBrush(RGB((rgb >> 16) & 0xff, (rgb >> 8) & 0xff, rgb & 0xff));
	WNDCLASSA wc = {0};
	wc.lpfnWndProc = proc;
	wc.hInstance = inst;
	wc.hCursor = LoadCursor(NULL, IDC_ARROW);
	snprintf(class, sizeof class, "%s", __argc > 6 ? __argv[6] : "DeskhandTarget");
	wc.lpszClassName = class;
	RegisterClassA(&wc);
	HWND w = CreateWindowA(class, title, WS_OVERLAPPEDWINDOW | WS_VISIBLE,
		atoi(__argv[4]), atoi(__argv[5]), 400, 300, NULL, NULL, inst, NULL);
	CreateWindowA("BUTTON", "Press", WS_CHILD | WS_VISIBLE | BS_PUSHBUTTON,
		140, 110, 120, 50, w, (HMENU)1, inst, NULL);
	MSG msg;
	while (GetMessageA(&msg, NULL, 0, 0) > 0) {
		TranslateMessage(&msg);
		DispatchMessageA(&msg);
	}
	return 0;
}
