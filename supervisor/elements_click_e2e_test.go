//go:build unix

package supervisor_test

import (
	"context"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/internal/desktoptest"
)

// okBounds returns the "@(x,y wxh)" of zenity's OK button in a state.
func okBounds(t *testing.T, state string) string {
	t.Helper()
	m := regexp.MustCompile(`\] push button "OK"[^@\n]*(@\([^)]*\))`).FindStringSubmatch(state)
	if m == nil {
		t.Fatalf("the OK button has no bounds in the state:\n%s", state)
	}
	return m[1]
}

// TestElementsClickChecksInOneRequest: a click by element id checks the
// element and acts in one helper request (a11y_act with expect), and the
// check still holds: once the dialog has moved behind the model's back,
// the click on its OK is refused with "call get_app_state again" and
// zenity neither prints nor exits (the evidence: its output file and its
// process); after a fresh state the same click goes through and zenity
// prints the entry's text.
func TestElementsClickChecksInOneRequest(t *testing.T) {
	d := a11yDesktop(t)
	dlg, out := zenity(t, d, "--entry", "--title", "element click", "--text", "Name:", "--entry-text", "moved", "--width", "400")
	d.Move(t, dlg.ID, 100, 100, 0, 0)
	e := elementsServer(t, d, "full")
	state := e.waitState(dlg.PID, `push button "OK"`)
	ok := elementID(t, state, "push button", "OK")
	was := okBounds(t, state)

	// The helper's own read (a helper of the test's, not deskhand's
	// session) shows when the toolkit reports the move.
	c := bridge.New(bridge.Options{Path: desktoptest.HelperPath(t), Env: d.Env(), CallTimeout: 30 * time.Second})
	t.Cleanup(func() { c.Close() })
	if err := c.Start(context.Background()); err != nil {
		t.Fatalf("starting a helper: %v", err)
	}
	okAt := func() bridge.A11yRect {
		tree, err := c.A11yTree(context.Background(), bridge.A11yTreeRequest{PID: dlg.PID})
		if err != nil {
			t.Fatalf("a11y_tree: %v", err)
		}
		for _, n := range tree.Nodes {
			if n.Role == "push button" && n.Name == "OK" && n.Bounds != nil {
				return *n.Bounds
			}
		}
		t.Fatalf("no OK button with bounds in the tree")
		return bridge.A11yRect{}
	}
	before := okAt()
	d.Move(t, dlg.ID, 400, 300, 0, 0)
	deadline := time.Now().Add(30 * time.Second)
	for okAt() == before {
		if time.Now().After(deadline) {
			t.Fatalf("the OK button never left %+v (state: %s) after the move", before, was)
		}
		time.Sleep(100 * time.Millisecond)
	}
	e.bad("click", map[string]any{"pid": dlg.PID, "element_id": ok}, "has changed since state", "call get_app_state again")
	// Nothing was clicked: zenity has printed nothing and still runs (a
	// click that landed prints and exits within a frame).
	time.Sleep(500 * time.Millisecond)
	if b, _ := os.ReadFile(out); len(b) != 0 {
		t.Fatalf("zenity printed %q: the refused click went through", b)
	}
	// The harness reaps zenity (its own Wait): a gone pid means it exited.
	if err := syscall.Kill(dlg.PID, 0); err != nil {
		t.Fatalf("zenity exited (%v): the refused click went through", err)
	}

	state = e.state(dlg.PID, map[string]any{"disableDiff": true})
	ok = elementID(t, state, "push button", "OK")
	res := e.ok("click", map[string]any{"pid": dlg.PID, "element_id": ok})
	if !strings.Contains(resultText(res), "in the background") {
		t.Errorf("click by id did not run through the accessibility API: %s", resultText(res))
	}
	waitFile(t, out, "moved")
}
