//go:build unix

package x11

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/internal/desktoptest"
)

// TestDisplayCheckOnXvfb: a real X server with XTEST passes, again and
// again on one connection; a display that cannot be reached is refused
// with what to check.
func TestDisplayCheckOnXvfb(t *testing.T) {
	d, c := checkedXvfb(t)
	bad := NewDisplayCheck(":4711")
	defer bad.Close()
	err := bad.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cannot be reached") || !strings.Contains(err.Error(), ":4711") {
		t.Fatalf("Check on a display that does not exist: %v", err)
	}
	// The server goes away under an open connection: the check notices
	// at once and does not hang. (It may find a new server that took the
	// display number meanwhile, so only the time is checked.)
	d.Close()
	start := time.Now()
	c.Check(context.Background())
	if took := time.Since(start); took > 3*time.Second {
		t.Fatalf("Check after the X server stopped took %v", took)
	}
}

// checkedXvfb starts a bare Xvfb and a display check of it that has
// passed three times.
func checkedXvfb(t *testing.T) (*desktoptest.Desktop, *DisplayCheck) {
	t.Helper()
	desktoptest.Require(t, "Xvfb")
	d := desktoptest.Start(t, desktoptest.Options{WindowManager: "none"})
	c := NewDisplayCheck(d.Display())
	t.Cleanup(c.Close)
	for range 3 {
		if err := c.Check(context.Background()); err != nil {
			t.Fatalf("Check on Xvfb: %v", err)
		}
	}
	return d, c
}
