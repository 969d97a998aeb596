// Deskhand-helper.exe is deskhand's Windows helper: it gives the supervisor
// the screen's pixels, the monitors, the windows, the clipboard, window
// hiding and the accessibility tree, speaking helpers/PROTOCOL.md over its
// stdin and stdout.
//
// Usage:
//
//	deskhand-helper.exe
//
// It is started by deskhand, never by hand; logs go to stderr. Capture is
// GDI BitBlt; masking, the window list and window_at follow EnumWindows'
// z-order; the accessibility methods use UI Automation (not present under
// Wine 8, where the handshake leaves out "a11y"). Tested under Wine on
// Xvfb; the UI Automation code has not run on Windows.
package main

import (
	"log"
	"os"
)

func main() {
	log.SetFlags(0)
	log.SetOutput(os.Stderr)
	os.Exit(serve(os.Stdin, os.Stdout, newDesktop(), newAutomation(), os.Getenv("DESKHAND_HELPER_FAULTS") == "1"))
}
