// Package input is the platform-free front of deskhand's mouse and
// keyboard input, for the MCP tools (clicks, drags, scrolling, key
// combinations, typing). It checks each request (points on screen, known
// buttons, click counts, key names parsed into allowlisted keysyms, text
// mapped to character keysyms), and hands it to one Backend per platform
// as a gesture: a move, a click, a button held or let go, a drag, wheel
// clicks, key chords, exact text. Backends: desktop/keycodes (X11 through
// XTEST and XKB; macOS through Quartz), desktop/wayland (the helper's
// virtual pointer and keyboard, or KWin's fake input).
//
// Key names follow xdotool and the X keysym names (see [ParseCombo]);
// keysyms are the lingua franca of every backend, which maps them to its
// own codes. Only allowlisted keysyms are sent (allow.go): characters,
// modifiers, and the ordinary editing, navigation, function, keypad,
// input-method, dead and reviewed XF86 keys; anything else, in any
// spelling, is a [KeyNotAllowedError] before a backend sees it.
//
// A [Guard] in the context ([WithGuard]) holds a caller's checks for the
// whole of a keyboard operation: the backend calls its Check before each
// run of keys (at most [TypeRun] characters, never past a line break, or
// one combination), and where the platform names the focused window it
// also verifies the focus is on a window the Guard allows.
//
// Every gesture that presses something releases it before returning,
// except Down and HoldKey (until its duration ends); a backend releases
// what a failed or cancelled gesture pressed, and [Input.ReleaseAll]
// releases everything still held. A backend whose display can stop
// answering bounds its calls and reports [ErrStalled].
package input
