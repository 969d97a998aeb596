//go:build unix

package supervisor_test

import (
	"testing"
)

// TestMaskListingFollowsWindowChanges: the helper places a capture's mask
// from its last window listing again while no window event has arrived
// since; an unapproved window that moves, or opens, between two
// screenshots must still be painted over in the next one.
func TestMaskListingFollowsWindowChanges(t *testing.T) {
	d, secret, e := maskScene(t)
	shots := func(when string) {
		t.Helper()
		// Twice: the second is placed from the listing the first read.
		for i := 1; i <= 2; i++ {
			if n := countColor(imageOf(t, e.ok("screenshot", nil)), secretColor, 0); n > 0 {
				t.Errorf("screenshot %d %s shows the unapproved window in %d pixels", i, when, n)
			}
		}
	}
	shots("at first")

	d.Move(t, secret.ID, 700, 400, 0, 0)
	shots("after the unapproved window moved")

	secretWindow(t, d, 400, 300)
	shots("after another unapproved window opened")

	// The real screen shows both windows: the screenshots hid them.
	if n := countColor(d.Screenshot(t), secretColor, 0); n < 2*300*200 {
		t.Fatalf("the secret colour covers only %d pixels of the real screen, want both windows; the test would prove nothing", n)
	}
}
