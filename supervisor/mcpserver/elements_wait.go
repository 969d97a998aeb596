package mcpserver

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// wait_for waits, instead of the model sleeping, for an element, a window
// or a still region.

// wait_for's bounds.
const (
	defaultWaitTimeout = 10.0
	maxWaitTimeout     = 120.0
	waitPoll           = 100 * time.Millisecond
)

func (p *parser) waitFor(tool string, in *waitForArgs) (*step, error) {
	pid, err1 := pidOf(tool, in.PID)
	role, name, state, gone, title := in.Role, in.Name, in.State, in.Gone, in.WindowTitle
	hasStable, region := in.StableMS.set, in.Region.xy
	stable, err2 := whole(tool, "stable_ms", in.StableMS, 0, 1, 60000, "milliseconds")
	timeout := defaultWaitTimeout
	var err3 error
	if in.Timeout.set {
		if timeout = in.Timeout.v; timeout <= 0 || timeout > maxWaitTimeout {
			err3 = fmt.Errorf("%s: timeout %v is out of range: give seconds from 0 to %g", tool, timeout, maxWaitTimeout)
		}
	}
	if err := cmp.Or(err1, err2, err3); err != nil {
		return nil, err
	}
	elem := role != "" || name != "" || state != ""
	modes := 0
	for _, b := range []bool{elem, title != "", hasStable} {
		if b {
			modes++
		}
	}
	switch {
	case modes != 1:
		return nil, fmt.Errorf("%s waits for one thing: an element (role, name, state), a window (window_title) or a still region (stable_ms); give exactly one of them", tool)
	case (elem || hasStable) && pid == 0:
		return nil, fmt.Errorf("%s needs pid to wait on an app's elements or its window's pixels", tool)
	case region != nil && !hasStable:
		return nil, fmt.Errorf("%s: region goes with stable_ms", tool)
	}
	d := time.Duration(timeout * float64(time.Second))
	st := &step{action: Action{Tool: tool, PID: pid}, takes: d, image: true}
	st.run = func(outer context.Context) (*outcome, error) {
		ctx, cancel := context.WithTimeout(outer, d)
		defer cancel()
		var matched string
		var req stateRequest
		var err error
		switch {
		case elem:
			matched, req, err = p.s.waitElement(ctx, p.sess, pid, role, name, state, gone)
		case title != "":
			matched, req, err = p.s.waitWindow(ctx, pid, title)
		default:
			matched, req, err = p.s.waitStill(ctx, p.sess, pid, region, time.Duration(stable)*time.Millisecond)
		}
		if errors.Is(err, context.DeadlineExceeded) && context.Cause(ctx) == context.DeadlineExceeded {
			return nil, fmt.Errorf("timed out after %g s: %s. Call get_app_state to see where things are, or wait longer", timeout, matched)
		}
		if err != nil {
			return nil, err
		}
		out, err := p.s.appState(outer, p.sess, req, matched+"\n")
		if err != nil {
			return &outcome{text: matched + " (no fresh state: " + err.Error() + ")", data: map[string]any{"matched": matched}}, nil
		}
		out.data["matched"] = matched
		return out, nil
	}
	return st, nil
}

func matches(n bridge.A11yNode, role, name, state string) bool {
	return (role == "" || strings.EqualFold(n.Role, role)) &&
		(name == "" || strings.Contains(strings.ToLower(n.Name), strings.ToLower(name))) &&
		(state == "" || has(n.States, state))
}

// poll calls f every waitPoll until it reports done, an error, or ctx ends.
func poll(ctx context.Context, f func() (bool, error)) error {
	t := time.NewTicker(waitPoll)
	defer t.Stop()
	for {
		done, err := f()
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
}

func (s *Server) waitElement(ctx context.Context, sess *session, pid int, role, name, state string, gone bool) (string, stateRequest, error) {
	req := stateRequest{pid: pid}
	if st := sess.elements().latest(pid); st != nil {
		req.window = st.xid
	}
	what := fmt.Sprintf("an element with role %q, name containing %q and state %q", role, name, state)
	var found string
	err := poll(ctx, func() (bool, error) {
		tree, err := s.exec.A11yTree(ctx, bridge.A11yTreeRequest{PID: pid, Window: req.window, MaxNodes: defaultMaxNodes, MaxDepth: defaultMaxDepth, DeadlineMS: treeDeadlineMS})
		if err != nil {
			return false, a11yError(pid, err)
		}
		for _, n := range tree.Nodes {
			if matches(n, role, name, state) {
				found = describeNode(n)
				return !gone, nil
			}
		}
		return gone, nil
	})
	if err != nil {
		if gone {
			return what + " was still there", req, err
		}
		return what + " did not appear", req, err
	}
	if gone {
		return "No element matches any more: " + what + " is gone.", req, nil
	}
	return fmt.Sprintf("Found %s.", found), req, nil
}

func (s *Server) waitWindow(ctx context.Context, pid int, title string) (string, stateRequest, error) {
	var hit *bridge.Window
	err := poll(ctx, func() (bool, error) {
		wins, err := s.exec.Windows(ctx, false)
		if err != nil {
			return false, fmt.Errorf("listing windows: %w", err)
		}
		for _, w := range wins.Windows {
			// Titles of unapproved apps' windows come back empty.
			if (pid == 0 || w.App.PID == pid) && w.Title != "" && strings.Contains(strings.ToLower(w.Title), strings.ToLower(title)) {
				hit = &w
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Sprintf("no window of an approved app with a title containing %q appeared", title), stateRequest{}, err
	}
	return fmt.Sprintf("Window %d %q of pid %d appeared.", hit.ID, hit.Title, hit.App.PID), stateRequest{pid: hit.App.PID, window: hit.ID}, nil
}

func (s *Server) waitStill(ctx context.Context, sess *session, pid int, region []float64, stable time.Duration) (string, stateRequest, error) {
	st := sess.elements().latest(pid)
	if st == nil || st.shot.Validate() != nil {
		return "", stateRequest{}, fmt.Errorf("wait_for: there is no screenshot of pid %d yet: call get_app_state first; region is in its pixels", pid)
	}
	rect := st.shot.Bounds()
	if region != nil {
		r, err := st.shot.RegionToLogical(geometry.ModePixels, region[0], region[1], region[2], region[3])
		if err != nil {
			return "", stateRequest{}, fmt.Errorf("wait_for: %w", err)
		}
		rect = r
	}
	req := stateRequest{pid: pid, window: st.xid}
	capture := bridge.CaptureRequest{Rect: &bridge.Rect{X: rect.X, Y: rect.Y, Width: rect.Width, Height: rect.Height}, Format: FormatPNG}
	var last []byte
	var since time.Time
	err := poll(ctx, func() (bool, error) {
		img, err := s.exec.Capture(ctx, capture)
		if err != nil {
			return false, fmt.Errorf("capturing the region: %w", err)
		}
		now := time.Now()
		if !bytes.Equal(img.Data, last) {
			last, since = img.Data, now
			return false, nil
		}
		return now.Sub(since) >= stable, nil
	})
	if err != nil {
		return fmt.Sprintf("the region kept changing for %v", stable), req, err
	}
	return fmt.Sprintf("The region %dx%d+%d+%d has not changed for %v.", rect.Width, rect.Height, rect.X, rect.Y, stable), req, nil
}
