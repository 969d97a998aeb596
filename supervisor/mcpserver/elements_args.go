package mcpserver

import (
	"errors"
	"fmt"
	"math"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// Checking the element tools' arguments: pid, element_id, points of a
// state's screenshot, and the errors a tool returns about them.

// whole checks a whole-number argument in [lo, hi], def when not given.
func whole(tool, name string, n num, def, lo, hi int, what string) (int, error) {
	if !n.set {
		return def, nil
	}
	if n.v != math.Trunc(n.v) || n.v < float64(lo) || n.v > float64(hi) {
		return 0, fmt.Errorf("%s: %q is %v: give %s, a whole number from %d to %d", tool, name, n.v, what, lo, hi)
	}
	return int(n.v), nil
}

func pidOf(tool string, n num) (int, error) {
	return whole(tool, "pid", n, 0, 1, math.MaxInt32, "the app's process id from list_apps")
}

// elemRef is the app an element tool names by pid and, when hasID, the
// element it names by element_id.
type elemRef struct {
	pid   int
	id    int
	hasID bool
}

// noElement: without element_id, ref names no element.
const noElement = -1

// ref is the app and the element a tool names: id, else def (an id, or
// noElement).
func (a appPID) ref(tool string, id elemID, def int) (elemRef, error) {
	pid, err := pidOf(tool, a.PID)
	r := elemRef{pid: pid, id: def, hasID: def >= 0}
	if id.set {
		r.id, r.hasID = id.id, true
	}
	return r, err
}

// shotXY is a point given in pixels of the latest get_app_state
// screenshot; ok false when it was not given.
type shotXY struct {
	x, y float64
	ok   bool
}

// xy is the point (x, y), named xn and yn: both or neither.
func xy(tool string, x, y num, xn, yn string) (shotXY, error) {
	if x.set != y.set {
		return shotXY{}, fmt.Errorf("%s: give both %q and %q, or neither", tool, xn, yn)
	}
	return shotXY{x.v, y.v, x.set}, nil
}

// on converts the point to the global logical space through the state's
// screenshot.
func (q shotXY) on(st *appState) (geometry.Point, error) {
	if st.shot.Validate() != nil {
		return geometry.Point{}, errors.New("the latest get_app_state of this app has no screenshot, so coordinates cannot be placed: click by element id instead")
	}
	return st.shot.ToLogical(geometry.ModePixels, q.x, q.y)
}

func (q shotXY) String() string {
	return fmt.Sprintf("[%s, %s] in the screenshot of the window", fmtNum(q.x), fmtNum(q.y))
}

// a11yError turns a helper error into what the model should do.
func a11yError(pid int, err error) error {
	var be *bridge.Error
	if errors.As(err, &be) {
		switch be.Name {
		case bridge.ErrNameA11yUnavailable:
			return fmt.Errorf("the accessibility tree cannot be read on this desktop: %v. Use screenshot and the coordinate tools instead", be)
		case "no_such_window":
			return fmt.Errorf("pid %d has no such window (%v): call list_apps for its windows", pid, be)
		}
	}
	return err
}
