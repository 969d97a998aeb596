// Package windows is deskhand's Windows desktop: the interactive session
// the supervisor runs in (display plan and check), input by SendInput,
// the Escape watcher (a low-level keyboard hook), the computer-use lock
// of the session (a named kernel object), app launch by executable, App
// User Model ID or Start-menu shortcut, notifications and doctor's probe.
//
// Everything is pure Go over golang.org/x/sys/windows, so deskhand.exe
// cross-compiles with CGO_ENABLED=0 and needs no C toolchain. The files
// without a _windows suffix hold the logic that does not call Windows
// (key tables, launch plans, the lock record), so their tests run on any
// system; everything that calls Windows is in _windows.go files and is
// exercised end to end under Wine (supervisor/windows_e2e_test.go).
package windows
