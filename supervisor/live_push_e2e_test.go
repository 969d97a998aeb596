//go:build unix

package supervisor_test

// End-to-end test of the pushed windows epoch: the helper tells the
// supervisor when its window table may have changed (windows_changed), so
// gated actions make no windows_epoch round trip, and a window raised
// between two actions is still seen by the second. The helper's own debug
// log, which names every request it answers, is the evidence.
//
//	cargo build --release -p deskhand-helper && go test ./supervisor -run LivePush -v

import (
	"strings"
	"testing"
	"time"
)

// helperAnswered counts the helper's debug records of answering method.
func (r recLog) helperAnswered(method string) int {
	n := 0
	for _, l := range r.Lines() {
		if strings.Contains(l, method+" answered in") {
			n++
		}
	}
	return n
}

// TestLivePushNoEpochRoundTripPerAction: a dozen gated mouse moves and
// clicks reuse the window table without the supervisor asking the helper
// for windows_epoch even once (the helper answers other requests, so its
// log is live); an unapproved window then raised and moved over the
// target is seen by the next click, which is refused and not sent.
func TestLivePushNoEpochRoundTripPerAction(t *testing.T) {
	d, e, logs, secret, x, y := liveScene(t, "push target")
	for i := range 6 {
		e.ok("mouse_move", map[string]any{"coordinate": e.at(x+i, y+2)})
	}
	waitFor(t, "the helper's log of the calls", 10*time.Second, func() bool { return logs.helperAnswered("windows") > 0 })
	if n := logs.helperAnswered("windows_epoch"); n != 0 {
		t.Errorf("the helper answered windows_epoch %d times; want 0, the supervisor should use the epochs the helper pushes", n)
	}

	// The unapproved window goes above everything and over the point; the
	// gates see it only if they heard of the raise.
	clickOverRaisedRefused(t, d, e, secret.ID, x, y)
	if n := logs.helperAnswered("windows_epoch"); n != 0 {
		t.Errorf("the helper answered windows_epoch %d times; want 0", n)
	}
}
