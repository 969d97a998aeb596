package windows

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/windows"
)

var (
	procSetWindowsHookEx   = user32.NewProc("SetWindowsHookExW")
	procUnhookWindowsHook  = user32.NewProc("UnhookWindowsHookEx")
	procCallNextHookEx     = user32.NewProc("CallNextHookEx")
	procGetMessage         = user32.NewProc("GetMessageW")
	procPostThreadMessage  = user32.NewProc("PostThreadMessageW")
	procGetModuleHandle    = kernel32.NewProc("GetModuleHandleW")
	procGetCurrentThreadID = kernel32.NewProc("GetCurrentThreadId")
)

const (
	whKeyboardLL  = 13
	wmKeyDown     = 0x0100
	wmSysKeyDown  = 0x0104
	wmQuit        = 0x0012
	llkhfInjected = 0x10
)

// kbdLLHookStruct is KBDLLHOOKSTRUCT.
type kbdLLHookStruct struct {
	vkCode, scanCode, flags, time uint32
	extra                         uintptr
}

// escapeHandler is the watcher's onEscape; the hook procedure is made
// once (windows.NewCallback's callbacks are never freed) and reads it.
var (
	escapeHandler atomic.Pointer[func()]
	hookProcOnce  sync.Once
	hookProc      uintptr
)

// isUserEscape tells the user's Escape from every injected one: Windows
// sets LLKHF_INJECTED on what SendInput sent, deskhand's own keys and any
// other program's, so only a key from a keyboard stops a turn.
func isUserEscape(msg uintptr, kb *kbdLLHookStruct) bool {
	return (msg == wmKeyDown || msg == wmSysKeyDown) && kb.vkCode == vkEscape && kb.flags&llkhfInjected == 0
}

func lowLevelKeyboard(code int, wparam, lparam uintptr) uintptr {
	if code == 0 {
		kb := (*kbdLLHookStruct)(*(*unsafe.Pointer)(unsafe.Pointer(&lparam)))
		if isUserEscape(wparam, kb) {
			if f := escapeHandler.Load(); f != nil {
				// The hook must answer at once (Windows drops a slow
				// low-level hook), so the turn stops on its own goroutine.
				go (*f)()
			}
		}
	}
	r, _, _ := procCallNextHookEx.Call(0, uintptr(code), wparam, lparam)
	return r
}

// WatchEscape calls onEscape for each Escape the user presses, from a
// low-level keyboard hook (WH_KEYBOARD_LL) on a thread of its own that
// pumps its messages, as the hook requires. The user's keys are told from
// injected ones by LLKHF_INJECTED, so own is a no-op. One watch at a time.
func WatchEscape(onEscape func()) (own func(code uint8), stop func(), err error) {
	hookProcOnce.Do(func() { hookProc = windows.NewCallback(lowLevelKeyboard) })
	escapeHandler.Store(&onEscape)
	type started struct {
		tid uintptr
		err error
	}
	ready := make(chan started, 1)
	go func() {
		runtime.LockOSThread() // the hook belongs to this thread, and ends with it
		tid, _, _ := procGetCurrentThreadID.Call()
		mod, _, _ := procGetModuleHandle.Call(0)
		h, _, herr := procSetWindowsHookEx.Call(whKeyboardLL, hookProc, mod, 0)
		if h == 0 {
			ready <- started{err: fmt.Errorf("installing the keyboard hook that hears the user's Escape: %w", herr)}
			return
		}
		ready <- started{tid: tid}
		var msg [64]byte // MSG
		for {
			r, _, _ := procGetMessage.Call(uintptr(unsafe.Pointer(&msg[0])), 0, 0, 0)
			if int32(r) <= 0 {
				break
			}
		}
		procUnhookWindowsHook.Call(h)
	}()
	s := <-ready
	if s.err != nil {
		escapeHandler.Store(nil)
		return nil, nil, s.err
	}
	var once sync.Once
	return func(uint8) {}, func() {
		once.Do(func() {
			escapeHandler.Store(nil)
			procPostThreadMessage.Call(s.tid, wmQuit, 0, 0)
		})
	}, nil
}
