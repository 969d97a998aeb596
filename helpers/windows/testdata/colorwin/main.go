//go:build windows

// Colorwin shows a window filled with one colour and prints its Windows
// pid, for the helper's masking tests.
//
// Usage:
//
//	colorwin.exe TITLE R G B [hang]
//
// With hang it never reads its messages, as a program that stopped
// answering.
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	user32 = windows.NewLazySystemDLL("user32.dll")
	gdi32  = windows.NewLazySystemDLL("gdi32.dll")
)

type wndClassEx struct {
	Size, Style                   uint32
	WndProc                       uintptr
	ClsExtra, WndExtra            int32
	Instance, Icon, Cursor, Brush uintptr
	MenuName, ClassName           *uint16
	IconSm                        uintptr
}

// GetMessage reads only the calling thread's windows' messages.
func init() { runtime.LockOSThread() }

func main() {
	rgb := make([]int, 3)
	for i := range rgb {
		rgb[i], _ = strconv.Atoi(os.Args[2+i])
	}
	brush, _, _ := gdi32.NewProc("CreateSolidBrush").Call(uintptr(rgb[0] | rgb[1]<<8 | rgb[2]<<16))
	def := user32.NewProc("DefWindowProcW")
	class, _ := windows.UTF16PtrFromString("DeskhandColour")
	title, _ := windows.UTF16PtrFromString(os.Args[1])
	wc := wndClassEx{Brush: brush, ClassName: class, WndProc: windows.NewCallback(func(h, msg, w, l uintptr) uintptr {
		if msg == 0x0002 { // WM_DESTROY
			os.Exit(0)
		}
		r, _, _ := def.Call(h, msg, w, l)
		return r
	})}
	wc.Size = uint32(unsafe.Sizeof(wc))
	user32.NewProc("RegisterClassExW").Call(uintptr(unsafe.Pointer(&wc)))
	const overlapped, visible = 0x00CF0000, 0x10000000
	user32.NewProc("CreateWindowExW").Call(0, uintptr(unsafe.Pointer(class)), uintptr(unsafe.Pointer(title)),
		overlapped|visible, 100, 100, 400, 300, 0, 0, 0, 0)
	fmt.Println(os.Getpid())
	if len(os.Args) > 5 && os.Args[5] == "hang" {
		for {
			time.Sleep(time.Hour)
		}
	}
	var msg [48]byte
	get, dispatch := user32.NewProc("GetMessageW"), user32.NewProc("DispatchMessageW")
	for {
		if r, _, _ := get.Call(uintptr(unsafe.Pointer(&msg)), 0, 0, 0); r == 0 || int32(r) == -1 {
			return
		}
		dispatch.Call(uintptr(unsafe.Pointer(&msg)))
	}
}
