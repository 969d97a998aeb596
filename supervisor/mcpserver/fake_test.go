package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"sync"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/geometry"
)

// fakeExecutor is an Executor over an imaginary desktop: it records every
// call, tracks the pointer and the held button, and fails the calls a test
// asks it to.
type fakeExecutor struct {
	mu       sync.Mutex
	displays []bridge.Display
	pointer  geometry.Point
	held     map[Button]bool
	clip     string
	calls    []string
	captures []bridge.CaptureRequest
	releases int
	// failOn maps a method name to the error it returns; failAfter[name]
	// lets that many calls succeed first.
	failOn    map[string]error
	failAfter map[string]int
	counts    map[string]int
	captureID uint64
	// overlay is the teaching overlay (teach_test.go).
	overlay fakeOverlay
	// a11y is the imaginary accessibility tree (elements_test.go).
	a11y fakeA11y
	// listsDisplays makes a display capture carry the display list, as
	// the X11 helper's do (shotdisplays_test.go).
	listsDisplays bool
}

func newFake(displays ...bridge.Display) *fakeExecutor {
	if len(displays) == 0 {
		displays = []bridge.Display{fullHD("screen", 0, true)}
	}
	return &fakeExecutor{
		displays:  displays,
		held:      map[Button]bool{},
		failOn:    map[string]error{},
		failAfter: map[string]int{},
		counts:    map[string]int{},
	}
}

func fullHD(name string, x int, primary bool) bridge.Display {
	return display(name, x, 0, 1920, 1080, primary)
}

func display(name string, x, y, w, h int, primary bool) bridge.Display {
	return bridge.Display{
		ID: fnv32(name), Name: name, Origin: bridge.Point{X: x, Y: y},
		Logical: bridge.Size{Width: w, Height: h}, Physical: bridge.Size{Width: w, Height: h},
		Scale: 1, Primary: primary,
	}
}

func fnv32(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// enter records a call and returns the error the test asked for.
func (f *fakeExecutor) enter(name string, format string, args ...any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name+" "+fmt.Sprintf(format, args...))
	f.counts[name]++
	if err, ok := f.failOn[name]; ok && f.counts[name] > f.failAfter[name] {
		return err
	}
	return nil
}

func (f *fakeExecutor) fail(method string, after int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failOn[method] = err
	f.failAfter[method] = after
	f.counts[method] = 0
}

func (f *fakeExecutor) callLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// actions lists the calls that act on the desktop (not Displays, Capture,
// CursorPosition or ReleaseAll).
func (f *fakeExecutor) actions() []string {
	var out []string
	for _, c := range f.callLog() {
		switch strings.Fields(c)[0] {
		case "Displays", "Capture", "CursorPosition", "ReleaseAll":
			continue
		}
		out = append(out, c)
	}
	return out
}

func (f *fakeExecutor) releaseCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.releases
}

func (f *fakeExecutor) isHeld(b Button) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.held[b]
}

func (f *fakeExecutor) Displays(ctx context.Context) ([]bridge.Display, error) {
	if err := f.enter("Displays", ""); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]bridge.Display(nil), f.displays...), nil
}

func (f *fakeExecutor) Capture(ctx context.Context, req bridge.CaptureRequest) (*bridge.Capture, error) {
	if err := f.enter("Capture", "%+v", req); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.captures = append(f.captures, req)
	f.captureID++
	id := f.captureID
	var src bridge.Rect
	var disp *uint32
	if req.Rect != nil {
		src = *req.Rect
	} else {
		found := false
		for _, d := range f.displays {
			if req.Display == nil && d.Primary || req.Display != nil && *req.Display == d.ID {
				src, found = d.Bounds(), true
				id := d.ID
				disp = &id
			}
		}
		if !found {
			f.mu.Unlock()
			return nil, &bridge.Error{Code: bridge.CodeNoSuchDisplay, Name: "no_such_display", Message: "unknown display"}
		}
	}
	f.mu.Unlock()
	w, h := src.Width, src.Height
	if req.Width > 0 {
		w, h = req.Width, req.Height
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 0x80
	}
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	var buf bytes.Buffer
	format := req.Format
	if format == "" {
		format = bridge.FormatJPEG
	}
	if format == bridge.FormatPNG {
		_ = png.Encode(&buf, img)
	} else {
		_ = jpeg.Encode(&buf, img, &jpeg.Options{Quality: max(req.Quality, 1)})
	}
	shot := &bridge.Capture{Format: format, Data: buf.Bytes(), Width: w, Height: h, Source: src, Display: disp, Method: "fake", CaptureID: id}
	f.mu.Lock()
	if f.listsDisplays && disp != nil {
		shot.Displays = append([]bridge.Display(nil), f.displays...)
	}
	f.mu.Unlock()
	return shot, nil
}

func (f *fakeExecutor) CursorPosition(ctx context.Context) (geometry.Point, error) {
	if err := f.enter("CursorPosition", ""); err != nil {
		return geometry.Point{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pointer, nil
}

func (f *fakeExecutor) move(p geometry.Point) {
	f.mu.Lock()
	f.pointer = p
	f.mu.Unlock()
}

func (f *fakeExecutor) MoveMouse(ctx context.Context, to geometry.Point) error {
	if err := f.enter("MoveMouse", "%d,%d", to.X, to.Y); err != nil {
		return err
	}
	f.move(to)
	return nil
}

func (f *fakeExecutor) Click(ctx context.Context, at geometry.Point, b Button, count int, mods string) error {
	if err := f.enter("Click", "%d,%d %s x%d %q", at.X, at.Y, b, count, mods); err != nil {
		return err
	}
	f.move(at)
	return nil
}

func (f *fakeExecutor) MouseDown(ctx context.Context, b Button) error {
	if err := f.enter("MouseDown", "%s", b); err != nil {
		return err
	}
	f.mu.Lock()
	f.held[b] = true
	f.mu.Unlock()
	return nil
}

func (f *fakeExecutor) MouseUp(ctx context.Context, b Button) error {
	if err := f.enter("MouseUp", "%s", b); err != nil {
		return err
	}
	f.mu.Lock()
	delete(f.held, b)
	f.mu.Unlock()
	return nil
}

func (f *fakeExecutor) Drag(ctx context.Context, from, to geometry.Point, mods string) error {
	format, args := "%d,%d->%d,%d", []any{from.X, from.Y, to.X, to.Y}
	if mods != "" {
		format, args = format+" %q", append(args, mods)
	}
	if err := f.enter("Drag", format, args...); err != nil {
		return err
	}
	f.move(to)
	return nil
}

func (f *fakeExecutor) Scroll(ctx context.Context, at geometry.Point, dir string, amount int, mods string) error {
	format, args := "%d,%d %s %d", []any{at.X, at.Y, dir, amount}
	if mods != "" {
		format, args = format+" %q", append(args, mods)
	}
	if err := f.enter("Scroll", format, args...); err != nil {
		return err
	}
	f.move(at)
	return nil
}

func (f *fakeExecutor) Type(ctx context.Context, text string) error {
	return f.enter("Type", "%q", text)
}

func (f *fakeExecutor) Key(ctx context.Context, keys string) error {
	return f.enter("Key", "%s", keys)
}

func (f *fakeExecutor) HoldKey(ctx context.Context, combo string, d time.Duration) error {
	return f.enter("HoldKey", "%s %s", combo, d)
}

func (f *fakeExecutor) ReleaseAll(ctx context.Context) error {
	if err := f.enter("ReleaseAll", ""); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.releases++
	f.held = map[Button]bool{}
	return nil
}

func (f *fakeExecutor) ReadClipboard(ctx context.Context) (string, error) {
	if err := f.enter("ReadClipboard", ""); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.clip == "" {
		return "", &bridge.Error{Code: bridge.CodeClipboardUnavailable, Name: "clipboard_unavailable", Message: "the clipboard is empty", Hint: "Copy some text first."}
	}
	return f.clip, nil
}

func (f *fakeExecutor) WriteClipboard(ctx context.Context, text string) error {
	if err := f.enter("WriteClipboard", "%d bytes", len(text)); err != nil {
		return err
	}
	f.mu.Lock()
	f.clip = text
	f.mu.Unlock()
	return nil
}

func (f *fakeExecutor) OpenApplication(ctx context.Context, app string) (*LaunchedApp, error) {
	if err := f.enter("OpenApplication", "%s", app); err != nil {
		return nil, err
	}
	if app != "xterm" {
		return nil, errors.New(`no application "` + app + `"; close matches: xterm`)
	}
	return &LaunchedApp{DesktopID: "debian-xterm", Name: "XTerm", Exec: []string{"xterm"}, PID: 42,
		Window: &bridge.Window{ID: 0x400001, Title: "xterm", Bounds: bridge.Rect{X: 10, Y: 10, Width: 484, Height: 316}}}, nil
}
