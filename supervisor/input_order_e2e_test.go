//go:build unix

package supervisor_test

// End-to-end test of the order of a click and the keys after it under a
// window manager that holds clicks: openbox grabs the buttons on client
// windows synchronously (to focus and raise on click) and replays each
// press when it gets to run, while keys are never held. The evidence is
// what a real GTK entry prints and the X server's own button state.

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// pointerButtonDown reports whether the X server has processed a press of
// button 1 of the core pointer and not yet its release (QueryPointer's
// mask: a release held behind a window manager's grab is not in it).
func pointerButtonDown(t *testing.T, x *xgb.Conn) bool {
	t.Helper()
	reply, err := xproto.QueryPointer(x, xproto.Setup(x).DefaultScreen(x).Root).Reply()
	if err != nil {
		t.Fatalf("QueryPointer: %v", err)
	}
	return reply.Mask&xproto.ButtonMask1 != 0
}

// TestClickNotOvertakenByKeys: a click into a text field, then End and
// typing, land in that order although the window manager replays the
// click late. The test stops openbox (SIGSTOP) for the click, which makes
// the replay late for certain, as it sometimes is on a loaded machine
// (TestSafetyWholeStaleness once read "hell worldo"). A click returns only
// once the server has let its release through, so End reaches the entry
// after the click has placed the caret, and the text is typed at the end.
// Without that wait the click returns at once, End goes to the entry
// while the click is still held, and the click then moves the caret back
// into the text.
func TestClickNotOvertakenByKeys(t *testing.T) {
	d := newDesktop(t, desktoptest.Options{})
	const text = "hello hello hello"
	w, out, code := shellApp(t, d, `--entry --title "Order" --text "Order" --entry-text "`+text+`"`)
	d.Move(t, w.ID, 300, 100, 0, 0)
	d.Focus(t, w.ID)
	w = d.WindowInfo(t, w.ID)
	e := gatedServer(t, d, nil, "--allow", "zenity")
	e.access([]string{"zenity"})
	// GTK 3's zenity --entry: the entry spans the client area's width, 35
	// px above the buttons' row; 40 px in is inside the text.
	ex, ey := w.Client.X+40, w.Client.Y+w.Client.Height-76

	x, err := xgb.NewConnDisplay(d.Display())
	if err != nil {
		t.Fatalf("connecting to %s: %v", d.Display(), err)
	}
	t.Cleanup(x.Close)
	_, wm, _ := d.Pids()
	stopped := false
	stop := func(sig syscall.Signal) {
		if stopped == (sig == syscall.SIGSTOP) {
			return
		}
		if err := syscall.Kill(wm, sig); err != nil {
			t.Fatalf("signalling openbox %v: %v", sig, err)
		}
		stopped = sig == syscall.SIGSTOP
	}
	t.Cleanup(func() { stop(syscall.SIGCONT) })

	// A click the stale-screenshot gate refuses (the entry's caret may
	// blink between the screenshot and the click) is tried again after a
	// new screenshot; it never reached the entry.
	var done chan *mcp.CallToolResult
	for attempt := 1; ; attempt++ {
		e.screenshot("screenshot", nil)
		stop(syscall.SIGSTOP)
		done = make(chan *mcp.CallToolResult, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "left_click", Arguments: map[string]any{"coordinate": e.at(ex, ey)}})
			if err != nil {
				res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
			}
			done <- res
		}()
		// The press has reached the server and openbox's grab holds it,
		// or the click was refused before it pressed anything.
		var refused *mcp.CallToolResult
		waitFor(t, "the click's press to reach the X server", 20*time.Second, func() bool {
			select {
			case res := <-done:
				if res.IsError {
					refused = res
					return true
				}
				done <- res
			default:
			}
			return pointerButtonDown(t, x)
		})
		if refused == nil {
			break
		}
		stop(syscall.SIGCONT)
		if msg := resultText(refused); attempt == 5 || !strings.Contains(msg, "stale screenshot") {
			t.Fatalf("left_click was refused: %s", msg)
		}
	}
	var click *mcp.CallToolResult
	select {
	case click = <-done:
		// The click returned while its release is still held: keys sent
		// now overtake it. Send End as the model would, then let openbox
		// replay the click and wait until the entry has it.
		e.ok("key", map[string]any{"text": "End"})
		stop(syscall.SIGCONT)
		waitFor(t, "openbox to replay the click", 20*time.Second, func() bool { return !pointerButtonDown(t, x) })
	case <-time.After(time.Second):
		// The click waits for its release: let openbox run.
		stop(syscall.SIGCONT)
		click = <-done
		e.ok("key", map[string]any{"text": "End"})
	}
	if click.IsError {
		t.Fatalf("left_click failed: %s", resultText(click))
	}
	e.ok("type", map[string]any{"text": " world"})
	e.ok("key", map[string]any{"text": "Return"})
	if status := waitExit(t, code); status != 0 {
		t.Fatalf("the dialog exited %d", status)
	}
	if got, _ := os.ReadFile(out); string(got) != text+" world\n" {
		t.Errorf("the entry read %q, want %q: End reached it before the click that came first", got, text+" world\n")
	}
}
