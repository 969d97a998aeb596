// Package keycodes is the input backend (input.Backend) for desktops driven
// by keycodes: an X11 display through XTEST and XKB on Linux, and macOS
// through Quartz events (quartz_darwin.go), which it presents as a
// keyboard of X-style keycodes. desktop/x11 and desktop/macos open it.
//
// # Threading
//
// Every Xlib call runs on one goroutine locked to an OS thread, fed
// through a channel; the methods of [Input] are safe for concurrent use,
// run one at a time, take a context and check it between steps (between
// characters, clicks, drag steps and wheel clicks). The thread stays locked
// although the hop to it costs thread wake-ups: Xlib keeps per-thread state
// after a lost connection (see Input.loop). A click holds its button for
// the press time to within microseconds: the last 2 ms of the hold are a
// nanosleep on that thread, since the runtime's timers wake up to a
// millisecond late, and the last 150 µs of it the thread watches the
// clock, since a thread woken from a sleep runs up to 100 µs late on a
// virtual machine; as that begins, a request that does nothing wakes the
// X server for the release. An operation that sends pointer events only
// skips the keyboard guard's five round trips (guard.go), so a mouse move
// is one round trip to the X server. A move skips the hop as well when no
// operation is in flight and the worker would not check the keyboard
// guard (no key held): it is sent from the caller's goroutine on an XCB
// connection of the package's own, and waited for there (warp.go).
//
// # Deadlines
//
// Xlib has no timeouts, so the worker's X calls are timed instead: when one
// has waited for the server longer than the stall timeout (3 s), the caller
// gets input.ErrStalled, and so does every call after it, at once, while the
// worker stays blocked. A move sent from the caller's goroutine waits for
// its answer up to the same timeout, and one that gets none stalls the
// Input the same way; the worker then waits for that answer before it
// sends anything else. The abandoned operation's context is cancelled and
// it may press nothing more. When the server answers again, the worker
// finishes that operation, releases every button and key the Input holds
// and takes calls again. Opening the display is bounded too (10 s), and
// Close gives up on a worker stuck on the display: it shuts the X
// connections' sockets (the XCB one included), so the stuck call fails as a lost connection and
// nothing, robotgo's atexit XCloseDisplay included, waits on the server
// after that.
//
// # Pointer: robotgo
//
// Pointer motion, buttons, the wheel and the pointer position go through
// github.com/go-vgo/robotgo (its cgo X11 backend): Move, Toggle, Scroll and
// Location each send one request and sync, and robotgo.MouseSleep is set to
// 0. Its Click, MultiClick and MoveClick are not used: they add fixed sleeps
// (5 ms, 200 ms, 50 ms) that this package replaces with the timing it
// measured (see input.ClickGap). Its wheel button names are upside down on
// X11, so buttons are chosen by X button number.
//
// # Keyboard: XTEST and XKB directly
//
// robotgo's keyboard functions assume a US layout, and its TypeStr rebinds
// keys for non-ASCII text without restoring them, so the keyboard is driven
// through XTEST and XKB (libX11, libXtst) with cgo:
//
//   - Each character is mapped to its keysym (Latin-1 directly, a legacy
//     keysym such as EuroSign where one exists, else 0x01000000 + the code
//     point), then looked up in the current XKB keymap, in the current group:
//     the keycode, and which modifiers select the level that carries it
//     (Shift, AltGr/level 3, ...), computed from the key's type. The keys that
//     set those modifiers are found by their XKB actions, so a German layout
//     types "@" as AltGr+q and "z" on the key labelled z.
//   - A character the layout lacks (é on US, 日, 🙂) is bound for the moment
//     to a spare keycode (one with no symbols), typed, and the keycode set
//     back to empty. Before restoring, the package makes sure the focused
//     application has read the key events (see remapSettle in input.go);
//     otherwise the application would look the keycode up after the restore
//     and lose the character. Spare keycodes are shared out in rounds when a
//     text needs more than there are.
//   - A locked Caps Lock is unlocked while typing and locked again after.
//
// # Keys with side effects
//
// X servers give a key its XKB action by keysym, and this package binds a
// keysym the layout lacks to a spare keycode, so any keysym it accepted
// would be one the server acts on: Pointer_Button2 middle-clicks through
// MouseKeys, StickyKeys_Enable switches an XKB control on, Terminate_Server
// kills the server. Only allowlisted keysyms are sent (allow.go):
// characters, modifiers, and the ordinary editing, navigation, function,
// keypad, input-method, dead and reviewed XF86 keys; anything else, in any
// spelling including hexadecimal, is a input.KeyNotAllowedError. Each press is
// also checked against what the layout makes of it with the keys before
// it held (ctrl+alt+F1 is XF86Switch_VT_1 on most layouts; a Terminate or
// LockControls action is refused whatever the keysym), and keypad keys
// are refused while MouseKeys is on, since they then move and click the
// pointer. Text typed with [Input.Text] maps only to character keysyms.
//
// XKB controls (StickyKeys, SlowKeys, MouseKeys and the other AccessX
// controls, not RepeatKeys) are recorded when the Input opens and put back
// after any operation that changed them, between the combinations of one
// Key call, by ReleaseAll and by Close; modifiers an operation left
// latched, or locked other than Caps Lock and Num Lock, are released. A
// change made between operations is the user's, and stays (guard.go).
//
// # Safety
//
// The package tracks every button and key it holds. An operation that
// fails or is cancelled releases what it pressed and restores any keycode
// it borrowed; [Input.ReleaseAll] releases everything still held (a Down, a
// HoldKey in progress), and [Input.Close] calls it. X errors are recorded
// rather than passed to Xlib's default handler, and a lost connection to the
// X server makes every call fail with an error instead of Xlib exiting the
// process.
//
// A key held by [Input.HoldChord] does not autorepeat: its autorepeat is
// turned off for the hold and back on after (also by ReleaseAll and Close),
// so that a long hold never types into a window that takes the focus
// meanwhile. An input.Guard in the context (input.WithGuard) holds a caller's
// checks for the whole of a keyboard operation: keys are sent in short
// runs, each after the Guard's Check and with the focus verified, under a
// server grab, to be on a window the Guard allows (see input.Guard).
//
// # Limits
//
// robotgo keeps one X connection per process, so only one Input may be open
// at a time. Input goes to X11 (Xorg, Xvfb, or Xwayland for X clients only).
// If the process is killed while a keycode is borrowed, that keycode keeps
// its temporary symbol until the layout is reloaded (setxkbmap); killed
// during a HoldKey, the held key's autorepeat stays off until `xset r` or
// the X server restarts.
package keycodes
