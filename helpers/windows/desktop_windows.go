package main

import (
	"fmt"
	"image"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	user32   = windows.NewLazySystemDLL("user32.dll")
	gdi32    = windows.NewLazySystemDLL("gdi32.dll")
	kernel32 = windows.NewLazySystemDLL("kernel32.dll")
	shcore   = windows.NewLazySystemDLL("shcore.dll")
	dwmapi   = windows.NewLazySystemDLL("dwmapi.dll")

	pSetProcessDpiAwarenessContext = user32.NewProc("SetProcessDpiAwarenessContext")
	pSetProcessDPIAware            = user32.NewProc("SetProcessDPIAware")
	pEnumDisplayMonitors           = user32.NewProc("EnumDisplayMonitors")
	pGetMonitorInfoW               = user32.NewProc("GetMonitorInfoW")
	pGetDpiForMonitor              = shcore.NewProc("GetDpiForMonitor")
	pGetDC                         = user32.NewProc("GetDC")
	pReleaseDC                     = user32.NewProc("ReleaseDC")
	pCreateCompatibleDC            = gdi32.NewProc("CreateCompatibleDC")
	pCreateDIBSection              = gdi32.NewProc("CreateDIBSection")
	pSelectObject                  = gdi32.NewProc("SelectObject")
	pBitBlt                        = gdi32.NewProc("BitBlt")
	pDeleteObject                  = gdi32.NewProc("DeleteObject")
	pDeleteDC                      = gdi32.NewProc("DeleteDC")
	pEnumWindows                   = user32.NewProc("EnumWindows")
	pIsWindowVisible               = user32.NewProc("IsWindowVisible")
	pIsIconic                      = user32.NewProc("IsIconic")
	pGetWindowTextW                = user32.NewProc("GetWindowTextW")
	pGetWindowRect                 = user32.NewProc("GetWindowRect")
	pGetClientRect                 = user32.NewProc("GetClientRect")
	pClientToScreen                = user32.NewProc("ClientToScreen")
	pGetForegroundWindow           = user32.NewProc("GetForegroundWindow")
	pGetWindowLongW                = user32.NewProc("GetWindowLongW")
	pShowWindowAsync               = user32.NewProc("ShowWindowAsync")
	pOpenClipboard                 = user32.NewProc("OpenClipboard")
	pCloseClipboard                = user32.NewProc("CloseClipboard")
	pEmptyClipboard                = user32.NewProc("EmptyClipboard")
	pGetClipboardData              = user32.NewProc("GetClipboardData")
	pSetClipboardData              = user32.NewProc("SetClipboardData")
	pCreateWindowExW               = user32.NewProc("CreateWindowExW")
	pGlobalAlloc                   = kernel32.NewProc("GlobalAlloc")
	pGlobalLock                    = kernel32.NewProc("GlobalLock")
	pGlobalUnlock                  = kernel32.NewProc("GlobalUnlock")
	pGlobalFree                    = kernel32.NewProc("GlobalFree")
	pDwmGetWindowAttribute         = dwmapi.NewProc("DwmGetWindowAttribute")
)

// Window calls belong to the thread that made the helper's windows (the
// clipboard's), so the serving goroutine stays on the main thread.
func init() { runtime.LockOSThread() }

type winRect struct{ Left, Top, Right, Bottom int32 }

func (r winRect) rect() rect {
	return rect{int(r.Left), int(r.Top), int(r.Right - r.Left), int(r.Bottom - r.Top)}
}

type monitorInfoEx struct {
	Size    uint32
	Monitor winRect
	Work    winRect
	Flags   uint32
	Device  [32]uint16
}

type bitmapInfoHeader struct {
	Size                         uint32
	Width, Height                int32
	Planes, BitCount             uint16
	Compression, SizeImage       uint32
	XPelsPerMeter, YPelsPerMeter int32
	ClrUsed, ClrImportant        uint32
	_                            [4]byte // one RGBQUAD of bmiColors
}

// winDesktop is the desktop over Win32: GDI for pixels, user32 for windows
// and the clipboard.
type winDesktop struct {
	clipOwner uintptr // a message-only window: SetClipboardData needs an owner
}

func newDesktop() desktop {
	// Per-monitor DPI awareness makes every coordinate a physical pixel on
	// every monitor, as SendInput and BitBlt see them.
	const perMonitorAwareV2 = ^uintptr(3) // DPI_AWARENESS_CONTEXT -4
	if pSetProcessDpiAwarenessContext.Find() == nil {
		pSetProcessDpiAwarenessContext.Call(perMonitorAwareV2)
	} else if pSetProcessDPIAware.Find() == nil {
		pSetProcessDPIAware.Call()
	}
	return &winDesktop{}
}

func (d *winDesktop) Displays() ([]display, error) {
	var list []display
	cb := windows.NewCallback(func(hmon, hdc, r, data uintptr) uintptr {
		mi := monitorInfoEx{Size: uint32(unsafe.Sizeof(monitorInfoEx{}))}
		if ok, _, _ := pGetMonitorInfoW.Call(hmon, uintptr(unsafe.Pointer(&mi))); ok == 0 {
			return 1
		}
		name := windows.UTF16ToString(mi.Device[:])
		b := mi.Monitor.rect()
		dpi := uint32(96)
		if pGetDpiForMonitor.Find() == nil {
			var x, y uint32
			if hr, _, _ := pGetDpiForMonitor.Call(hmon, 0, uintptr(unsafe.Pointer(&x)), uintptr(unsafe.Pointer(&y))); hr == 0 && x > 0 {
				dpi = x
			}
		}
		mm := func(px int) int { return int(float64(px)*25.4/float64(dpi) + 0.5) }
		list = append(list, display{
			ID: fnv1a(name), Name: name, Origin: point{b.X, b.Y},
			Logical: size{b.Width, b.Height}, Physical: size{b.Width, b.Height},
			Scale: float64(dpi) / 96, Primary: mi.Flags&1 != 0, MM: size{mm(b.Width), mm(b.Height)},
		})
		return 1
	})
	if ok, _, err := pEnumDisplayMonitors.Call(0, 0, cb, 0); ok == 0 {
		return nil, newError(codeDisplayUnavailable, "listing monitors: %v", err)
	}
	if len(list) == 0 {
		return nil, newError(codeDisplayUnavailable, "no monitors")
	}
	if !anyPrimary(list) {
		list[0].Primary = true
	}
	return list, nil
}

func anyPrimary(list []display) bool {
	for _, d := range list {
		if d.Primary {
			return true
		}
	}
	return false
}

func (d *winDesktop) Grab(r rect) (*image.RGBA, error) {
	screen, _, err := pGetDC.Call(0)
	if screen == 0 {
		return nil, newError(codeCaptureFailed, "getting the screen DC: %v", err)
	}
	defer pReleaseDC.Call(0, screen)
	mem, _, err := pCreateCompatibleDC.Call(screen)
	if mem == 0 {
		return nil, newError(codeCaptureFailed, "creating a memory DC: %v", err)
	}
	defer pDeleteDC.Call(mem)
	bi := bitmapInfoHeader{Size: 40, Width: int32(r.Width), Height: -int32(r.Height), Planes: 1, BitCount: 32}
	var bits unsafe.Pointer
	bmp, _, err := pCreateDIBSection.Call(mem, uintptr(unsafe.Pointer(&bi)), 0, uintptr(unsafe.Pointer(&bits)), 0, 0)
	if bmp == 0 {
		return nil, newError(codeCaptureFailed, "creating a %dx%d bitmap: %v", r.Width, r.Height, err)
	}
	defer pDeleteObject.Call(bmp)
	old, _, _ := pSelectObject.Call(mem, bmp)
	defer pSelectObject.Call(mem, old)
	const srcCopy, captureBlt = 0x00CC0020, 0x40000000
	if ok, _, err := pBitBlt.Call(mem, 0, 0, uintptr(r.Width), uintptr(r.Height), screen,
		uintptr(int32(r.X)), uintptr(int32(r.Y)), srcCopy|captureBlt); ok == 0 {
		return nil, newError(codeCaptureFailed, "BitBlt: %v", err)
	}
	src := unsafe.Slice((*byte)(bits), r.Width*r.Height*4)
	img := image.NewRGBA(r.image())
	for i := 0; i < len(src); i += 4 { // BGRX to RGBA
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = src[i+2], src[i+1], src[i], 255
	}
	return img, nil
}

func (d *winDesktop) Windows(includeHidden bool) ([]window, *uint32, error) {
	var hwnds []uintptr
	cb := windows.NewCallback(func(h, _ uintptr) uintptr {
		hwnds = append(hwnds, h)
		return 1
	})
	pEnumWindows.Call(cb, 0) // top of the z-order first
	fg, _, _ := pGetForegroundWindow.Call()
	var list []window
	var focused *uint32
	for _, h := range hwnds {
		visible := call(pIsWindowVisible, h) != 0
		iconic := call(pIsIconic, h) != 0
		title := windowText(h)
		if !visible && !(includeHidden && (iconic || title != "")) {
			continue
		}
		if visible && !iconic && cloaked(h) {
			visible = false // a UWP window parked off the current desktop
			if !includeHidden {
				continue
			}
		}
		w := window{ID: uint32(h), Title: title, Minimized: iconic, Hidden: !visible || iconic,
			Focused: h == fg, App: windowApp(h)}
		w.Bounds = frameBounds(h)
		var cr winRect
		pGetClientRect.Call(h, uintptr(unsafe.Pointer(&cr)))
		var origin struct{ X, Y int32 }
		pClientToScreen.Call(h, uintptr(unsafe.Pointer(&origin)))
		w.Client = rect{int(origin.X), int(origin.Y), int(cr.Right), int(cr.Bottom)}
		const gwlStyle = ^uintptr(15) // -16
		const wsPopup, wsCaption = 0x80000000, 0x00C00000
		style := uint32(call(pGetWindowLongW, h, gwlStyle))
		w.OverrideRedirect = style&wsPopup != 0 && style&wsCaption == 0
		if !w.Hidden && (w.Bounds.Width <= 0 || w.Bounds.Height <= 0) {
			continue // shows no pixels and takes no click
		}
		if w.Focused {
			id := w.ID
			focused = &id
		}
		list = append(list, w)
	}
	return list, focused, nil
}

func call(p *windows.LazyProc, args ...uintptr) uintptr {
	r, _, _ := p.Call(args...)
	return r
}

func windowText(h uintptr) string {
	buf := make([]uint16, 512)
	n := call(pGetWindowTextW, h, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	return windows.UTF16ToString(buf[:n])
}

// frameBounds is the window's visible frame: DWM's extended frame bounds
// leave out Windows 10's invisible resize borders that GetWindowRect counts.
func frameBounds(h uintptr) rect {
	var r winRect
	const extendedFrameBounds = 9
	if pDwmGetWindowAttribute.Find() == nil {
		if hr, _, _ := pDwmGetWindowAttribute.Call(h, extendedFrameBounds, uintptr(unsafe.Pointer(&r)), unsafe.Sizeof(r)); hr == 0 && r.Right > r.Left {
			return r.rect()
		}
	}
	pGetWindowRect.Call(h, uintptr(unsafe.Pointer(&r)))
	return r.rect()
}

func cloaked(h uintptr) bool {
	var v uint32
	const dwmwaCloaked = 14
	if pDwmGetWindowAttribute.Find() != nil {
		return false
	}
	hr, _, _ := pDwmGetWindowAttribute.Call(h, dwmwaCloaked, uintptr(unsafe.Pointer(&v)), 4)
	return hr == 0 && v != 0
}

// windowApp is the app of window h: its process and executable. The
// window class is left out: any program may register any class, so an
// app keyed on it could pass for another (X11's WM_CLASS is weighed
// against the executable; on Windows the executable is the identity).
func windowApp(h uintptr) app {
	var a app
	var pid uint32
	windows.GetWindowThreadProcessId(windows.HWND(h), &pid)
	if pid == 0 {
		return a
	}
	p := int(pid)
	a.PID = &p
	if exe, err := processImage(pid); err == nil {
		a.Exe = &exe
		base := filepath.Base(strings.ReplaceAll(exe, `\`, "/"))
		a.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	return a
}

func processImage(pid uint32) (string, error) {
	proc, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return "", fmt.Errorf("opening process %d: %w", pid, err)
	}
	defer windows.CloseHandle(proc)
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n := uint32(len(buf))
	if err := windows.QueryFullProcessImageName(proc, 0, &buf[0], &n); err != nil {
		return "", fmt.Errorf("reading the image of process %d: %w", pid, err)
	}
	return windows.UTF16ToString(buf[:n]), nil
}

const (
	swMinimize = 6
	swRestore  = 9
)

// Hide and Restore ask without waiting on the window's program
// (ShowWindowAsync): ShowWindow sends to the window's thread, so one
// program that stops answering would stop the helper. Each waits ≤ 1 s
// for the change and reports only the windows that made it.
func (d *winDesktop) Hide(ids []uint32) ([]uint32, error) {
	var asked []uint32
	for _, id := range ids {
		h := uintptr(id)
		if call(pIsWindowVisible, h) == 0 || call(pIsIconic, h) != 0 {
			continue
		}
		pShowWindowAsync.Call(h, swMinimize)
		asked = append(asked, id)
	}
	return settle(asked, true), nil
}

func (d *winDesktop) Restore(ids []uint32) ([]uint32, error) {
	// Bottom-most first keeps their stacking order among themselves.
	all, _, err := d.Windows(true)
	if err != nil {
		return nil, err
	}
	var asked []uint32
	for i := len(all) - 1; i >= 0; i-- {
		id := all[i].ID
		if !containsID(ids, id) || !all[i].Hidden {
			continue
		}
		pShowWindowAsync.Call(uintptr(id), swRestore)
		asked = append(asked, id)
	}
	return settle(asked, false), nil
}

// settle waits ≤ 1 s until every window in ids is (or is no longer)
// minimized and returns the ones that are.
func settle(ids []uint32, iconic bool) []uint32 {
	pending := func(id uint32) bool { return (call(pIsIconic, uintptr(id)) != 0) != iconic }
	for deadline := time.Now().Add(time.Second); slices.ContainsFunc(ids, pending) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	return slices.DeleteFunc(ids, pending)
}

func containsID(ids []uint32, id uint32) bool {
	for _, v := range ids {
		if v == id {
			return true
		}
	}
	return false
}

const cfUnicodeText = 13

// openClipboard retries for up to 2 s: another program may hold it.
func (d *winDesktop) openClipboard() error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		ok, _, err := pOpenClipboard.Call(d.clipOwner)
		if ok != 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return newError(codeClipboardUnavailable, "opening the clipboard: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (d *winDesktop) ClipboardRead() (string, error) {
	if err := d.openClipboard(); err != nil {
		return "", err
	}
	defer pCloseClipboard.Call()
	h, _, _ := pGetClipboardData.Call(cfUnicodeText)
	if h == 0 {
		return "", newError(codeClipboardUnavailable, "the clipboard holds no text")
	}
	p, _, err := pGlobalLock.Call(h)
	if p == 0 {
		return "", newError(codeClipboardUnavailable, "reading the clipboard: %v", err)
	}
	defer pGlobalUnlock.Call(h)
	return windows.UTF16PtrToString((*uint16)(pointer(p))), nil
}

func (d *winDesktop) ClipboardWrite(text string) error {
	if d.clipOwner == 0 {
		const hwndMessage = ^uintptr(2) // -3
		class, _ := windows.UTF16PtrFromString("STATIC")
		h, _, err := pCreateWindowExW.Call(0, uintptr(unsafe.Pointer(class)), 0, 0, 0, 0, 0, 0, hwndMessage, 0, 0, 0)
		if h == 0 {
			return newError(codeClipboardUnavailable, "creating the clipboard owner window: %v", err)
		}
		d.clipOwner = h
	}
	utf16, err := windows.UTF16FromString(text)
	if err != nil {
		return newError(codeInvalidParams, "the text holds a NUL character")
	}
	size := uintptr(len(utf16) * 2)
	const gmemMoveable = 2
	mem, _, err := pGlobalAlloc.Call(gmemMoveable, size)
	if mem == 0 {
		return fmt.Errorf("allocating %d bytes for the clipboard: %w", size, err)
	}
	p, _, _ := pGlobalLock.Call(mem)
	copy(unsafe.Slice((*uint16)(pointer(p)), len(utf16)), utf16)
	pGlobalUnlock.Call(mem)
	if err := d.openClipboard(); err != nil {
		pGlobalFree.Call(mem)
		return err
	}
	defer pCloseClipboard.Call()
	pEmptyClipboard.Call()
	if h, _, err := pSetClipboardData.Call(cfUnicodeText, mem); h == 0 {
		pGlobalFree.Call(mem)
		return newError(codeClipboardUnavailable, "setting the clipboard: %v", err)
	}
	return nil // the system owns mem now
}

// pointer turns memory the system handed out as a uintptr (GlobalLock's)
// into a pointer; the memory is not Go's, so the GC need not track it.
func pointer(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }
