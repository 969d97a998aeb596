// Package speedups names the mechanisms that exist only to make deskhand
// faster, so each can be turned off to measure what it saves (`make
// bench`, TestBenchSpeedups) or to rule it out when chasing a bug. Turning
// one off never changes what deskhand does, only how long it takes.
//
// DESKHAND_SPEEDUPS_OFF lists the ones to turn off, separated by commas
// ("splice,drawn"), or "all". The helper reads the same variable for
// its own: "damage", which re-reads only the rows the X server drew in
// (helpers/linux/src/capture/damage.rs).
package speedups

import (
	"os"
	"slices"
	"strings"
)

// The speed-ups, by the name DESKHAND_SPEEDUPS_OFF uses.
const (
	// Splice copies a screenshot's base64 into the stdio frame instead of
	// having the MCP layer encode it (supervisor/mcpserver/splice.go).
	Splice = "splice"
	// Drawn passes a click's staleness check without asking the helper
	// (2.2 ms a click on a quiet machine, TestBenchMCP side by side)
	// where the display (X11 DAMAGE) vouches that nothing was drawn at the
	// target since the helper's reference was read
	// (supervisor/gates/drawn.go). The region-by-region staleness the
	// same record gives stays on: that one is about safety, not speed.
	Drawn = "drawn"
)

// Env is the environment variable that turns speed-ups off.
const Env = "DESKHAND_SPEEDUPS_OFF"

// On reports whether the speed-up name is on: it is unless Env names it
// or says "all".
func On(name string) bool {
	off := strings.Split(os.Getenv(Env), ",")
	return !slices.Contains(off, name) && !slices.Contains(off, "all")
}
