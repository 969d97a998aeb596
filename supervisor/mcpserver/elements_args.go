package mcpserver

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// Reading the element tools' arguments: pid, element_id, points of a
// state's screenshot, and the errors a tool returns about them.

// integer reads a whole-number field in [lo, hi].
func (a *args) integer(name string, required bool, lo, hi int, what string) (int, bool, error) {
	v, ok, err := a.number(name, required, what)
	if err != nil || !ok {
		return 0, ok, err
	}
	if v != math.Trunc(v) || v < float64(lo) || v > float64(hi) {
		return 0, false, fmt.Errorf("%s: %q is %v: give %s, a whole number from %d to %d", a.tool, name, v, what, lo, hi)
	}
	return int(v), true, nil
}

func (a *args) boolean(name string) (bool, error) {
	if !a.has(name) {
		return false, nil
	}
	var b bool
	if err := json.Unmarshal(a.fields[name], &b); err != nil {
		return false, fmt.Errorf("%s: %q must be true or false, got %s", a.tool, name, abbreviate(a.fields[name]))
	}
	return b, nil
}

func (a *args) pid() (int, error) {
	pid, _, err := a.integer("pid", true, 1, math.MaxInt32, "the app's process id from list_apps")
	return pid, err
}

// argReader reads an element tool's arguments in order and keeps the
// first error, so that a tool reads all its fields and checks once (the
// way bufio.Scanner reports its error at the end).
type argReader struct {
	*args
	err error
}

// check keeps err if it is the first.
func (r *argReader) check(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *argReader) text(name string, required bool, maxBytes int, what string) string {
	s, _, err := r.str(name, required, maxBytes, what)
	r.check(err)
	return s
}

// whole reads an optional whole number in [lo, hi], def when absent.
func (r *argReader) whole(name string, def, lo, hi int, what string) int {
	v, ok, err := r.integer(name, false, lo, hi, what)
	r.check(err)
	if !ok {
		return def
	}
	return v
}

func (r *argReader) flag(name string) bool {
	b, err := r.boolean(name)
	r.check(err)
	return b
}

// choice reads a string field that must be one of options (in any case);
// def when absent.
func (r *argReader) choice(name, def string, options ...string) string {
	what := strings.Join(quoteAll(options), ", ")
	s, ok, err := r.str(name, false, 16, "one of "+what)
	if v := strings.ToLower(strings.TrimSpace(s)); err != nil || !ok || slices.Contains(options, v) {
		r.check(err)
		return cmp.Or(v, def)
	}
	r.check(fmt.Errorf("%s: %s %q is not one of %s", r.tool, name, s, what))
	return def
}

// elemRef is the app an element tool names by pid and, when hasID, the
// element it names by element_id.
type elemRef struct {
	pid   int
	id    int
	hasID bool
}

// What ref does without element_id: idRequired refuses, idOptional names
// no element; an id >= 0 is the default.
const (
	idRequired = -1
	idOptional = -2
)

// ref reads pid and element_id, which may be a string or a number.
func (r *argReader) ref(def int) elemRef {
	pid, err := r.pid()
	r.check(err)
	ref := elemRef{pid: pid, id: def, hasID: def >= 0}
	switch {
	case r.has("element_id"):
		raw := r.fields["element_id"]
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(bytes.TrimSpace(raw))
		}
		id, err := parseElementID(s)
		if err != nil {
			r.check(fmt.Errorf("%s: %w", r.tool, err))
		}
		ref.id, ref.hasID = id, true
	case def == idRequired:
		r.check(r.missing("element_id", "an element id from get_app_state"))
	}
	return ref
}

// shotXY is a point given in pixels of the latest get_app_state
// screenshot; ok false when it was not given.
type shotXY struct {
	x, y float64
	ok   bool
}

// xy reads the optional point (xn, yn): both or neither.
func (r *argReader) xy(xn, yn string) shotXY {
	const what = "pixels of the latest get_app_state screenshot"
	x, okx, err := r.number(xn, false, what)
	r.check(err)
	y, oky, err := r.number(yn, false, what)
	r.check(err)
	if okx != oky {
		r.check(fmt.Errorf("%s: give both %q and %q, or neither", r.tool, xn, yn))
	}
	return shotXY{x, y, okx && oky}
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
