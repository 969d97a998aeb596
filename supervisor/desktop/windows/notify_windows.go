package windows

import (
	"fmt"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	shell32             = windows.NewLazySystemDLL("shell32.dll")
	procShellNotifyIcon = shell32.NewProc("Shell_NotifyIconW")
	procCreateWindowEx  = user32.NewProc("CreateWindowExW")
	procDestroyWindow   = user32.NewProc("DestroyWindow")
	procLoadIcon        = user32.NewProc("LoadIconW")
)

// notifyIconData is NOTIFYICONDATAW (Vista and later).
type notifyIconData struct {
	size             uint32
	wnd              uintptr
	id, flags, cbMsg uint32
	icon             uintptr
	tip              [128]uint16
	state, stateMask uint32
	info             [256]uint16
	version          uint32
	infoTitle        [64]uint16
	infoFlags        uint32
	guid             windows.GUID
	balloonIcon      uintptr
}

const (
	nimAdd    = 0
	nimDelete = 2
	nifIcon   = 0x2
	nifTip    = 0x4
	nifInfo   = 0x10
	niifInfo  = 0x1

	// notifyShown is how long the icon, and so its balloon, stays.
	notifyShown = 10 * time.Second
)

func copyUTF16(dst []uint16, s string) {
	u, _ := windows.UTF16FromString(s)
	if len(u) > len(dst) {
		u = u[:len(dst)]
		u[len(u)-1] = 0
	}
	copy(dst, u)
}

// Notify shows summary and body as a notification: a balloon from a
// notification-area icon, which Windows 10 and 11 turn into a toast and
// which needs no registered app identity. It returns once the icon is up;
// the icon goes after notifyShown.
func Notify(summary, body string) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // the window belongs to this thread
		defer runtime.UnlockOSThread()
		class, _ := windows.UTF16PtrFromString("STATIC")
		const hwndMessage = ^uintptr(2) // HWND_MESSAGE: a message-only window, never shown
		wnd, _, err := procCreateWindowEx.Call(0, uintptr(unsafe.Pointer(class)), 0, 0, 0, 0, 0, 0, hwndMessage, 0, 0, 0)
		if wnd == 0 {
			done <- fmt.Errorf("showing the notification: %w", err)
			return
		}
		defer procDestroyWindow.Call(wnd)
		icon, _, _ := procLoadIcon.Call(0, 32516) // IDI_INFORMATION
		nid := notifyIconData{wnd: wnd, id: 1, flags: nifIcon | nifTip | nifInfo, icon: icon, infoFlags: niifInfo}
		nid.size = uint32(unsafe.Sizeof(nid))
		copyUTF16(nid.tip[:], "deskhand")
		copyUTF16(nid.infoTitle[:], summary)
		copyUTF16(nid.info[:], body)
		if r, _, err := procShellNotifyIcon.Call(nimAdd, uintptr(unsafe.Pointer(&nid))); r == 0 {
			done <- fmt.Errorf("showing the notification: %w", err)
			return
		}
		done <- nil
		time.Sleep(notifyShown)
		procShellNotifyIcon.Call(nimDelete, uintptr(unsafe.Pointer(&nid)))
	}()
	return <-done
}
