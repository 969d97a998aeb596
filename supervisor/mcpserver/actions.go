package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
	"github.com/deskhand/deskhand/supervisor/input"
)

// step is one checked action, ready to run.
type step struct {
	action Action
	// resolve fills in runtime facts for the gates (the pointer's position
	// for an action without a coordinate); optional.
	resolve func(ctx context.Context, a *Action) error
	run     func(ctx context.Context) (*outcome, error)
	// image marks steps whose outcome carries an image.
	image bool
	// effect marks input actions, which report what they changed;
	// showChange is the call's choice of an image of it (nil: the
	// server's default).
	effect     bool
	showChange *bool
	// takes is how long the step runs by design beyond batchStepAllowance
	// (a wait, a hold, typing), counted against maxBatchDuration.
	takes time.Duration
}

// parser turns checked arguments into steps. All coordinates it converts
// refer to one screenshot: the latest at the time the parser was made,
// looked up on first use.
type parser struct {
	s     *Server
	ctx   context.Context
	sess  *session
	batch *BatchPosition

	resolved bool
	frame    *geometry.Shot
	frameErr error
}

func (s *Server) newParser(ctx context.Context, sess *session, batch *BatchPosition) (*parser, error) {
	return &parser{s: s, ctx: ctx, sess: sess, batch: batch}, nil
}

// shot returns the screenshot geometry coordinates refer to.
func (p *parser) shot() (*geometry.Shot, error) {
	if !p.resolved {
		p.resolved = true
		p.frame, p.frameErr = p.s.frameFor(p.ctx, p.sess)
	}
	return p.frame, p.frameErr
}

// The frame errors of pixel coordinates: the model must take a screenshot
// first (unless a whole gate refuses everything; see checkWholeGates).
var (
	errNoScreenshot    = &needScreenshotError{"no screenshot yet: call screenshot first; coordinates are pixels of the latest screenshot"}
	errDisplaysChanged = &needScreenshotError{"the displays changed since the last screenshot: take a new screenshot, then use coordinates from it"}
)

// needScreenshotError is a parse error that asks for a screenshot.
type needScreenshotError struct{ msg string }

func (e *needScreenshotError) Error() string { return e.msg }

// checkWholeGates turns a parse error that asks for a screenshot into the
// refusal of a leading whole gate (WholeGate) when one refuses every
// action: a screenshot would be refused too, and the model should hear
// why. Any other error, or none refusing, leaves err as it is.
func (s *Server) checkWholeGates(ctx context.Context, sess *session, tool string, err error) error {
	var need *needScreenshotError
	if !errors.As(err, &need) {
		return err
	}
	a := &Action{Tool: tool, Session: sess.id}
	for _, g := range s.gates {
		w, ok := g.(WholeGate)
		if !ok || !w.RefusesWhole() {
			break
		}
		if gerr := g.Check(ctx, a); gerr != nil {
			return fmt.Errorf("%s: %w", g.Name(), gerr)
		}
	}
	return err
}

// frameFor returns the geometry the session's coordinates refer to: its
// latest screenshot; in normalized mode without one, the selected display.
// A screenshot restored from the state file is first checked against the
// current displays.
func (s *Server) frameFor(ctx context.Context, sess *session) (*geometry.Shot, error) {
	last, verified, selected := sess.snapshot()
	if last != nil && !verified {
		displays, err := s.exec.Displays(ctx)
		if err != nil {
			return nil, fmt.Errorf("listing displays: %w", err)
		}
		still := false
		for _, d := range displays {
			if d.ID == last.DisplayID && d.Origin.X == last.Origin.X && d.Origin.Y == last.Origin.Y &&
				d.Logical.Width == last.Logical.Width && d.Logical.Height == last.Logical.Height {
				still = true
			}
		}
		sess.mu.Lock()
		if still {
			sess.verified = true
		} else {
			sess.last = nil
		}
		sess.mu.Unlock()
		if !still {
			s.log.Info("the restored screenshot geometry no longer matches the displays; dropping it", "display", last.DisplayName)
			last = nil
			if s.mode == geometry.ModePixels {
				return nil, errDisplaysChanged
			}
		}
	}
	if last != nil {
		return last, nil
	}
	if s.mode == geometry.ModePixels {
		return nil, errNoScreenshot
	}
	displays, err := s.exec.Displays(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing displays: %w", err)
	}
	d, _, err := pickDisplay(displays, selected)
	if err != nil {
		return nil, err
	}
	return &geometry.Shot{
		DisplayID: d.ID, DisplayName: d.Name,
		Origin:   d.Origin,
		Logical:  geometry.Size{Width: d.Logical.Width, Height: d.Logical.Height},
		Physical: geometry.Size{Width: d.Physical.Width, Height: d.Physical.Height},
		Image:    geometry.Size{Width: d.Logical.Width, Height: d.Logical.Height},
	}, nil
}

// pickDisplay returns the selected display, else the primary, else the
// first; note says why it is not the selected one.
func pickDisplay(displays []bridge.Display, selected *uint32) (bridge.Display, string, error) {
	if len(displays) == 0 {
		return bridge.Display{}, "", errors.New("the display server reports no displays")
	}
	var note string
	if selected != nil {
		for _, d := range displays {
			if d.ID == *selected {
				return d, "", nil
			}
		}
		note = fmt.Sprintf("The selected display (id %d) is gone; showing the primary one instead. ", *selected)
	}
	for _, d := range displays {
		if d.Primary {
			return d, note, nil
		}
	}
	return displays[0], note, nil
}

// point converts the coordinate c, argument name of tool, to the global
// logical space, and returns it with c's values; nil when it was not
// given.
func (p *parser) point(tool, name string, c point) (*geometry.Point, []float64, error) {
	if c.xy == nil {
		return nil, nil, nil
	}
	shot, err := p.shot()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", tool, err)
	}
	pt, err := shot.ToLogical(p.s.mode, c.xy[0], c.xy[1])
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %q: %w", tool, name, err)
	}
	return &pt, c.xy, nil
}

// modelCoord converts a logical point back to the model's coordinates, nil
// when it is not on the screenshot's display.
func (p *parser) modelCoord(pt geometry.Point) []float64 {
	shot, err := p.shot()
	if err != nil || shot == nil {
		return nil
	}
	x, y, inside := shot.FromLogical(p.s.mode, pt)
	if !inside {
		return nil
	}
	return []float64{x, y}
}

func fmtCoord(c []float64) string {
	if c == nil {
		return "the pointer's position"
	}
	parts := make([]string, len(c))
	for i, v := range c {
		parts[i] = strconv.FormatFloat(v, 'f', -1, 64)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// pointerData is the structured part of a pointer action's result.
func pointerData(coord []float64, pt geometry.Point) map[string]any {
	d := map[string]any{"screen_point": pt}
	if coord != nil {
		d["coordinate"] = coord
	}
	return d
}

// resolveCursor sets the action's target to the pointer's position.
func (s *Server) resolveCursor(ctx context.Context, a *Action) error {
	pt, err := s.exec.CursorPosition(ctx)
	if err != nil {
		return fmt.Errorf("%s: reading the pointer position: %w", a.Tool, err)
	}
	a.Target = &pt
	return nil
}

// modifiers checks the optional "text" of a click, drag or scroll: the
// modifier keys held for the whole action, one combination. It comes back
// without whitespace: the keyboard reads "alt + F4" as alt+F4, and so must
// the gates, which read whitespace as separating combinations pressed one
// after another.
func modifiers(tool, text string) (string, error) {
	mods := strings.Join(strings.Fields(text), "")
	if mods == "" {
		return "", nil
	}
	if _, err := input.ParseCombo(mods); err != nil {
		return "", fmt.Errorf("%s: modifier keys in \"text\": %w", tool, err)
	}
	return mods, nil
}

func holding(mods string) string {
	if mods == "" {
		return ""
	}
	return " holding " + mods
}

func (p *parser) click(tool string, in *clickArgs, verb string, button Button, count int) (*step, error) {
	at, coord, err := p.point(tool, "coordinate", in.Coordinate)
	if err != nil {
		return nil, err
	}
	mods, err := modifiers(tool, in.Text)
	if err != nil {
		return nil, err
	}
	st := &step{action: Action{Tool: tool, Target: at, Keys: mods}, effect: true}
	if at == nil {
		st.resolve = p.s.resolveCursor
	}
	st.run = func(ctx context.Context) (*outcome, error) {
		target := *st.action.Target
		if err := p.s.exec.Click(ctx, target, button, count, mods); err != nil {
			return nil, err
		}
		return &outcome{
			text: fmt.Sprintf("%s at %s%s.", verb, fmtCoord(coordOr(coord, p.modelCoord(target))), holding(mods)),
			data: pointerData(coordOr(coord, p.modelCoord(target)), target),
		}, nil
	}
	return st, nil
}

func coordOr(given, derived []float64) []float64 {
	if given != nil {
		return given
	}
	return derived
}

func (p *parser) mouseMove(tool string, in *mouseMoveArgs) (*step, error) {
	at, coord, err := p.point(tool, "coordinate", in.Coordinate)
	if err != nil {
		return nil, err
	}
	return &step{
		action: Action{Tool: tool, Target: at},
		run: func(ctx context.Context) (*outcome, error) {
			if err := p.s.exec.MoveMouse(ctx, *at); err != nil {
				return nil, err
			}
			return &outcome{text: fmt.Sprintf("Moved the pointer to %s.", fmtCoord(coord)), data: pointerData(coord, *at)}, nil
		},
	}, nil
}

func (p *parser) drag(tool string, in *dragArgs) (*step, error) {
	from, fromCoord, err := p.point(tool, "start_coordinate", in.StartCoordinate)
	if err != nil {
		return nil, err
	}
	to, toCoord, err := p.point(tool, "coordinate", in.Coordinate)
	if err != nil {
		return nil, err
	}
	mods, err := modifiers(tool, in.Text)
	if err != nil {
		return nil, err
	}
	st := &step{action: Action{Tool: tool, Target: to, From: from, Keys: mods}, effect: true}
	if from == nil {
		st.resolve = func(ctx context.Context, act *Action) error {
			pt, err := p.s.exec.CursorPosition(ctx)
			if err != nil {
				return fmt.Errorf("%s: reading the pointer position: %w", act.Tool, err)
			}
			act.From = &pt
			return nil
		}
	}
	st.run = func(ctx context.Context) (*outcome, error) {
		start := *st.action.From
		if err := p.s.exec.Drag(ctx, start, *to, mods); err != nil {
			return nil, err
		}
		fc := coordOr(fromCoord, p.modelCoord(start))
		data := pointerData(toCoord, *to)
		data["start_coordinate"] = fc
		data["start_screen_point"] = start
		if mods != "" {
			data["modifiers"] = mods
		}
		return &outcome{text: fmt.Sprintf("Dragged from %s to %s%s.", fmtCoord(fc), fmtCoord(toCoord), holding(mods)), data: data}, nil
	}
	return st, nil
}

func (p *parser) mouseButton(tool string, c point, down bool) (*step, error) {
	at, coord, err := p.point(tool, "coordinate", c)
	if err != nil {
		return nil, err
	}
	st := &step{action: Action{Tool: tool, Target: at}}
	if at == nil {
		st.resolve = p.s.resolveCursor
	}
	st.run = func(ctx context.Context) (*outcome, error) {
		target := *st.action.Target
		if at != nil {
			if err := p.s.exec.MoveMouse(ctx, target); err != nil {
				return nil, err
			}
		}
		verb := "Released"
		if down {
			verb = "Pressed"
			if err := p.s.exec.MouseDown(ctx, ButtonLeft); err != nil {
				return nil, err
			}
		} else if err := p.s.exec.MouseUp(ctx, ButtonLeft); err != nil {
			return nil, err
		}
		c := coordOr(coord, p.modelCoord(target))
		return &outcome{text: fmt.Sprintf("%s the left mouse button at %s.", verb, fmtCoord(c)), data: pointerData(c, target)}, nil
	}
	return st, nil
}

func (p *parser) scroll(tool string, in *scrollArgs) (*step, error) {
	at, coord, err := p.point(tool, "coordinate", in.Coordinate)
	if err != nil {
		return nil, err
	}
	mods, err := modifiers(tool, in.Text)
	if err != nil {
		return nil, err
	}
	dir, amount := string(in.ScrollDirection), in.ScrollAmount.or(3)
	st := &step{action: Action{Tool: tool, Target: at, Keys: mods}, effect: true}
	if at == nil {
		st.resolve = p.s.resolveCursor
	}
	st.run = func(ctx context.Context) (*outcome, error) {
		target := *st.action.Target
		if err := p.s.exec.Scroll(ctx, target, dir, amount, mods); err != nil {
			return nil, err
		}
		c := coordOr(coord, p.modelCoord(target))
		data := pointerData(c, target)
		data["scroll_direction"], data["scroll_amount"] = dir, amount
		if mods != "" {
			data["modifiers"] = mods
		}
		return &outcome{text: fmt.Sprintf("Scrolled %s by %d at %s%s.", dir, amount, fmtCoord(c), holding(mods)), data: data}, nil
	}
	return st, nil
}

func (p *parser) typeText(tool, text string) (*step, error) {
	if err := checkTypeText(tool, text); err != nil {
		return nil, err
	}
	return &step{
		takes:  time.Duration(utf8.RuneCountInString(text)) * batchTypeAllowance,
		action: Action{Tool: tool, Text: text},
		effect: true,
		run: func(ctx context.Context) (*outcome, error) {
			if err := p.s.exec.Type(ctx, text); err != nil {
				return nil, err
			}
			n := utf8.RuneCountInString(text)
			return &outcome{text: fmt.Sprintf("Typed %d characters.", n), data: map[string]any{"characters": n}}, nil
		},
	}, nil
}

func (p *parser) key(tool string, in *keyArgs) (*step, error) {
	keys, repeat := in.Text, in.Repeat.or(1)
	if _, err := input.ParseKeys(keys); err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	st := &step{
		takes:  time.Duration(repeat) * batchTypeAllowance,
		action: Action{Tool: tool, Keys: keys},
		effect: true,
	}
	st.run = func(ctx context.Context) (*outcome, error) {
		for i := range repeat {
			// Each press after the first goes through the gates again: the
			// previous one may have changed which window has the focus.
			if i > 0 {
				if err := p.s.checkGates(ctx, &st.action); err != nil {
					return nil, fmt.Errorf("stopped after %d of %d presses: %w", i, repeat, err)
				}
			}
			if err := p.s.exec.Key(ctx, keys); err != nil {
				if i > 0 {
					return nil, fmt.Errorf("after %d of %d presses: %w", i, repeat, err)
				}
				return nil, err
			}
		}
		data := map[string]any{"keys": keys}
		if repeat > 1 {
			data["repeat"] = repeat
			return &outcome{text: fmt.Sprintf("Pressed %s %d times.", keys, repeat), data: data}, nil
		}
		return &outcome{text: fmt.Sprintf("Pressed %s.", keys), data: data}, nil
	}
	return st, nil
}

func (p *parser) holdKey(tool string, in *holdKeyArgs) (*step, error) {
	combo, d, secs := in.Text, in.Duration.time(), in.Duration.v
	if _, err := input.ParseCombo(combo); err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	return &step{
		takes:  d,
		action: Action{Tool: tool, Keys: combo},
		run: func(ctx context.Context) (*outcome, error) {
			if err := p.s.exec.HoldKey(ctx, combo, d); err != nil {
				return nil, err
			}
			return &outcome{text: fmt.Sprintf("Held %s for %g s.", combo, secs), data: map[string]any{"keys": combo, "duration": secs}}, nil
		},
	}, nil
}

func (p *parser) wait(tool string, in *waitArgs) (*step, error) {
	d, secs := in.Duration.time(), in.Duration.v
	return &step{
		takes:  d,
		action: Action{Tool: tool},
		run: func(ctx context.Context) (*outcome, error) {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return &outcome{text: fmt.Sprintf("Waited %g s.", secs), data: map[string]any{"duration": secs}}, nil
		},
	}, nil
}

func (p *parser) cursorPosition() (*step, error) {
	return &step{
		action: Action{Tool: "cursor_position"},
		run: func(ctx context.Context) (*outcome, error) {
			pt, err := p.s.exec.CursorPosition(ctx)
			if err != nil {
				return nil, err
			}
			data := map[string]any{"screen_point": pt}
			shot, err := p.shot()
			if err != nil {
				return &outcome{
					text: fmt.Sprintf("The pointer is at screen position (%d, %d); take a screenshot to get coordinates in its image.", pt.X, pt.Y),
					data: data,
				}, nil
			}
			x, y, inside := shot.FromLogical(p.s.mode, pt)
			data["on_screenshot_display"] = inside
			if !inside {
				where := "outside every display"
				if displays, err := p.s.exec.Displays(ctx); err == nil {
					for _, d := range displays {
						if d.Bounds().Contains(pt) {
							where = "on display " + describeDisplay(d)
							data["display"] = d.Name
						}
					}
				}
				return &outcome{
					text: fmt.Sprintf("The pointer is %s, not on display %q that the latest screenshot shows; use switch_display to see it.", where, shot.DisplayName),
					data: data,
				}, nil
			}
			data["coordinate"] = []float64{x, y}
			data["display"] = shot.DisplayName
			return &outcome{text: fmt.Sprintf("The pointer is at %s.", fmtCoord([]float64{x, y})), data: data}, nil
		},
	}, nil
}

func (p *parser) screenshot() (*step, error) {
	return &step{
		action: Action{Tool: "screenshot"},
		image:  true,
		run: func(ctx context.Context) (*outcome, error) {
			return p.s.takeScreenshot(ctx, p.sess, "")
		},
	}, nil
}

// takeScreenshot captures the session's selected display, scaled to the
// limits, and makes it the screenshot later coordinates refer to.
func (s *Server) takeScreenshot(ctx context.Context, sess *session, prefix string) (*outcome, error) {
	_, _, selected := sess.snapshot()
	placed, err := s.captureDisplay(ctx, selected)
	if err != nil {
		return nil, err
	}
	img, d, displays, note := placed.img, placed.display, placed.displays, placed.note
	shot := geometry.Shot{
		DisplayID:   d.ID,
		DisplayName: d.Name,
		Origin:      geometry.Point{X: img.Source.X, Y: img.Source.Y},
		Logical:     geometry.Size{Width: img.Source.Width, Height: img.Source.Height},
		Physical:    geometry.Size{Width: d.Physical.Width, Height: d.Physical.Height},
		Image:       geometry.Size{Width: img.Width, Height: img.Height},
	}
	if err := shot.Validate(); err != nil {
		return nil, fmt.Errorf("capturing display %q: %w", d.Name, err)
	}
	sess.mu.Lock()
	sess.last = &shot
	sess.verified = true
	sess.mu.Unlock()
	s.persist(sess)

	var others []bridge.Display
	for _, o := range displays {
		if o.ID != d.ID {
			others = append(others, o)
		}
	}
	var b strings.Builder
	b.WriteString(prefix)
	b.WriteString(note)
	fmt.Fprintf(&b, "Screenshot of display %s, shown at %dx%d. Coordinates for the other tools are [x, y] in %s.",
		describeDisplay(d), img.Width, img.Height, s.coordWords())
	if len(others) > 0 {
		fmt.Fprintf(&b, " Other displays: %s; use switch_display to see one.", describeDisplays(others))
	}
	b.WriteString(img.Note)
	otherData := make([]map[string]any, len(others))
	for i, o := range others {
		otherData[i] = displayData(o)
	}
	return &outcome{
		text: b.String(),
		data: map[string]any{
			"display":         displayData(d),
			"image":           map[string]any{"width": img.Width, "height": img.Height, "format": img.Format},
			"coordinate_mode": string(s.mode),
			"other_displays":  otherData,
			"capture_id":      img.CaptureID,
			"scale":           s.scaleReceipt(shot),
		},
		image: s.imageOf(img),
	}, nil
}

// displayRequest asks for a capture of display d, scaled to the limits.
func (s *Server) displayRequest(d bridge.Display) bridge.CaptureRequest {
	src := d.Physical
	if src.Width <= 0 || src.Height <= 0 {
		src = d.Logical
	}
	w, h := geometry.ScaledSize(src.Width, src.Height, s.limits)
	req := bridge.CaptureRequest{Display: &d.ID, Format: s.format}
	if w != src.Width || h != src.Height {
		req.Width, req.Height = w, h
	}
	if s.format == FormatJPEG {
		req.Quality = s.quality
	}
	return req
}

// scaleReceipt says how the screenshot was sized: the preset and limits
// used, and the factor from its pixels to the display's logical pixels, so
// a harness can check the coordinates it forwards.
func (s *Server) scaleReceipt(shot geometry.Shot) map[string]any {
	return map[string]any{
		"preset":           s.preset,
		"max_long_edge":    s.limits.MaxLongEdge,
		"max_tokens":       s.limits.MaxTokens,
		"token_px":         s.limits.TokenPx,
		"tokens":           geometry.Tokens(shot.Image.Width, shot.Image.Height, s.limits.TokenPx),
		"image_to_logical": map[string]float64{"x": float64(shot.Logical.Width) / float64(shot.Image.Width), "y": float64(shot.Logical.Height) / float64(shot.Image.Height)},
	}
}

func displayData(d bridge.Display) map[string]any {
	return map[string]any{
		"id": d.ID, "name": d.Name, "primary": d.Primary,
		"origin": d.Origin, "size": d.Logical, "physical_size": d.Physical, "scale": d.Scale,
	}
}

func (p *parser) zoom(tool string, in *zoomArgs) (*step, error) {
	vals := in.Region.xy
	shot, err := p.shot()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	rect, err := shot.RegionToLogical(p.s.mode, vals[0], vals[1], vals[2], vals[3])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tool, err)
	}
	return &step{
		action: Action{Tool: tool, Region: &rect},
		image:  true,
		run: func(ctx context.Context) (*outcome, error) {
			w, h := geometry.ScaledSize(rect.Width, rect.Height, p.s.limits)
			req := bridge.CaptureRequest{
				Rect:   &bridge.Rect{X: rect.X, Y: rect.Y, Width: rect.Width, Height: rect.Height},
				Format: p.s.format,
			}
			if w != rect.Width || h != rect.Height {
				req.Width, req.Height = w, h
			}
			if p.s.format == FormatJPEG {
				req.Quality = p.s.quality
			}
			img, err := p.s.exec.Capture(ctx, req)
			if err != nil {
				return nil, fmt.Errorf("capturing the region: %w", err)
			}
			return &outcome{
				text: fmt.Sprintf("Zoomed view of region %s of display %q (%dx%d screen pixels), shown at %dx%d. Coordinates for the other tools still refer to the full screenshot.",
					fmtCoord(vals), shot.DisplayName, rect.Width, rect.Height, img.Width, img.Height) + img.Note,
				data: map[string]any{
					"region":       vals,
					"screen_rect":  rect,
					"image":        map[string]any{"width": img.Width, "height": img.Height, "format": img.Format},
					"display_name": shot.DisplayName,
				},
				image: p.s.imageOf(img),
			}, nil
		},
	}, nil
}

func (p *parser) switchDisplay(tool, want string) (*step, error) {
	displays, err := p.s.exec.Displays(p.ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: listing displays: %w", tool, err)
	}
	d, ok := findDisplay(displays, want)
	if !ok {
		return nil, fmt.Errorf("%s: there is no display %q; the displays are %s", tool, want, describeDisplays(displays))
	}
	id := d.ID
	return &step{
		action: Action{Tool: tool, Display: &id},
		image:  true,
		run: func(ctx context.Context) (*outcome, error) {
			p.sess.mu.Lock()
			p.sess.selected = &id
			p.sess.mu.Unlock()
			return p.s.takeScreenshot(ctx, p.sess, fmt.Sprintf("Switched to display %q. ", d.Name))
		},
	}, nil
}

func findDisplay(displays []bridge.Display, want string) (bridge.Display, bool) {
	want = strings.TrimSpace(want)
	for _, d := range displays {
		if d.Name == want {
			return d, true
		}
	}
	for _, d := range displays {
		if strings.EqualFold(d.Name, want) {
			return d, true
		}
	}
	if id, err := strconv.ParseUint(want, 10, 32); err == nil {
		for _, d := range displays {
			if d.ID == uint32(id) {
				return d, true
			}
		}
	}
	return bridge.Display{}, false
}

func (p *parser) openApplication(tool, app string) (*step, error) {
	if strings.TrimSpace(app) == "" {
		return nil, fmt.Errorf("%s: \"app\" is empty; name an application, such as \"xterm\"", tool)
	}
	st := &step{action: Action{Tool: tool, App: app}}
	st.run = func(ctx context.Context) (*outcome, error) {
		// The gates may have put the exact id of the app they
		// resolved and approved in the action: launch that one.
		launched, err := p.s.exec.OpenApplication(ctx, st.action.App)
		if err != nil {
			return nil, err
		}
		text := fmt.Sprintf("Opened %s (%s, pid %d)", launched.Name, launched.DesktopID, launched.PID)
		if w := launched.Window; w != nil {
			text += fmt.Sprintf("; its window %q is at %dx%d+%d+%d on the screen", w.Title, w.Bounds.Width, w.Bounds.Height, w.Bounds.X, w.Bounds.Y)
		}
		text += ". Take a screenshot to see it."
		data := map[string]any{"desktop_id": launched.DesktopID, "name": launched.Name, "pid": launched.PID, "exec": launched.Exec}
		if w := launched.Window; w != nil {
			data["window"] = map[string]any{"id": w.ID, "title": w.Title, "bounds": w.Bounds}
		}
		return &outcome{text: text, data: data}, nil
	}
	return st, nil
}

func (p *parser) readClipboard() (*step, error) {
	return &step{
		action: Action{Tool: "read_clipboard"},
		run: func(ctx context.Context) (*outcome, error) {
			text, err := p.s.exec.ReadClipboard(ctx)
			if err != nil {
				return nil, err
			}
			return &outcome{text: text, data: map[string]any{"text": text}, omitMessage: true}, nil
		},
	}, nil
}

func (p *parser) writeClipboard(tool, text string) (*step, error) {
	return &step{
		takes:  time.Duration(utf8.RuneCountInString(text)) * batchTypeAllowance,
		action: Action{Tool: tool, Text: text},
		run: func(ctx context.Context) (*outcome, error) {
			if err := p.s.exec.WriteClipboard(ctx, text); err != nil {
				return nil, err
			}
			n := utf8.RuneCountInString(text)
			return &outcome{text: fmt.Sprintf("Put %d characters on the clipboard.", n), data: map[string]any{"characters": n}}, nil
		},
	}, nil
}
