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
	desktoptest.Require(t, "Xvfb")
	d := desktoptest.Start(t, desktoptest.Options{WindowManager: "none"})
	c := NewDisplayCheck(d.Display())
	defer c.Close()
	for range 3 {
		if err := c.Check(context.Background()); err != nil {
			t.Fatalf("Check on Xvfb: %v", err)
		}
	}
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
