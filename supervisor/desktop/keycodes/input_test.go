package keycodes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/deskhand/deskhand/supervisor/input"
)

// fakeBackend records what Input asks of a display, keeps a keymap that
// bind and unbind change, and can fail or cancel on cue.
type fakeBackend struct {
	mu      sync.Mutex
	events  []string
	kb      keyboard
	state   kbdState
	threads map[int]bool
	closed  bool
	// canConfirm makes confirmRead answer true (the app supports pings).
	canConfirm bool
	// failOn makes the call whose event string matches fail once.
	failOn string
	// onEvent runs after each recorded event (outside the lock).
	onEvent func(ev string)
	// focus is what focusChain reports; noRepeat the keys whose
	// autorepeat is off.
	focus    []uint32
	noRepeat map[keycode]bool
}

func newFake() *fakeBackend {
	return &fakeBackend{kb: testKeyboard(), threads: map[int]bool{}, canConfirm: true}
}

func (f *fakeBackend) record(format string, args ...any) error {
	ev := fmt.Sprintf(format, args...)
	f.mu.Lock()
	f.threads[threadID()] = true
	f.events = append(f.events, ev)
	fail := f.failOn != "" && ev == f.failOn
	if fail {
		f.failOn = ""
	}
	hook := f.onEvent
	f.mu.Unlock()
	if hook != nil {
		hook(ev)
	}
	if fail {
		return fmt.Errorf("injected failure on %s", ev)
	}
	return nil
}

func (f *fakeBackend) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	ev := f.events
	f.events = nil
	return ev
}

func (f *fakeBackend) alive() error { return nil }
func (f *fakeBackend) sync() error  { return nil }
func (f *fakeBackend) close() {
	f.record("close")
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
}
func (f *fakeBackend) move(x, y int) error      { return f.record("move %d,%d", x, y) }
func (f *fakeBackend) position() (Point, error) { return Point{X: 7, Y: 9}, f.record("position") }
func (f *fakeBackend) button(b Button, down bool) error {
	return f.record("button %d %s", b, upDown(down))
}
func (f *fakeBackend) key(code keycode, down bool) error {
	return f.record("key %d %s", code, upDown(down))
}
func (f *fakeBackend) kbdState() (kbdState, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state, nil
}
func (f *fakeBackend) keyboard() (keyboard, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	kb := keyboard{types: f.kb.types, keys: append([]keyInfo(nil), f.kb.keys...)}
	return kb, nil
}
func (f *fakeBackend) latchMods(mask, values modMask) error {
	return f.record("latch %#x=%#x", uint8(mask), uint8(values))
}
func (f *fakeBackend) lockMods(mask, values modMask) error {
	f.mu.Lock()
	f.state.locked = f.state.locked&^mask | values&mask
	f.mu.Unlock()
	return f.record("lock %#x=%#x", uint8(mask), uint8(values))
}
func (f *fakeBackend) bind(codes []keycode, syms []Keysym) error {
	f.mu.Lock()
	for i, c := range codes {
		for j := range f.kb.keys {
			if f.kb.keys[j].code == c {
				f.kb.keys[j] = keyInfo{code: c, typ: 1, syms: []Keysym{syms[i], syms[i]}}
			}
		}
	}
	f.mu.Unlock()
	return f.record("bind %v=%v", codes, syms)
}
func (f *fakeBackend) unbind(codes []keycode) error {
	f.mu.Lock()
	for _, c := range codes {
		for j := range f.kb.keys {
			if f.kb.keys[j].code == c {
				f.kb.keys[j] = keyInfo{code: c, typ: -1}
			}
		}
	}
	f.mu.Unlock()
	return f.record("unbind %v", codes)
}
func (f *fakeBackend) confirmRead(time.Duration) (bool, error) {
	f.mu.Lock()
	ok := f.canConfirm
	f.mu.Unlock()
	return ok, f.record("confirm")
}

func upDown(down bool) string {
	if down {
		return "down"
	}
	return "up"
}

func newFakeInput(t *testing.T) (*Input, *fakeBackend) {
	t.Helper()
	f := newFake()
	return openFake(t, f), f
}

// openFake opens an Input on backend b, with a short settle, closed when
// the test ends.
func openFake(t *testing.T, b backend) *Input {
	t.Helper()
	in, err := newInput(Options{Display: ":fake"}, func(string) (backend, string, error) { return b, ":fake", nil })
	if err != nil {
		t.Fatal(err)
	}
	in.settle = time.Millisecond
	t.Cleanup(func() { in.Close() })
	return in
}

func checkEvents(t *testing.T, f *fakeBackend, want ...string) {
	t.Helper()
	if diff := cmp.Diff(want, f.take()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestTypeStrokes(t *testing.T) {
	in, f := newFakeInput(t)
	ctx := context.Background()
	if err := front(in).Type(ctx, "aA@"); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, f,
		"key 38 down", "key 38 up",
		"key 50 down", "key 38 down", "key 38 up", "key 50 up",
		"key 92 down", "key 24 down", "key 24 up", "key 92 up",
	)
}

func TestTypeBorrowsAndRestoresSpareKeys(t *testing.T) {
	in, f := newFakeInput(t)
	ctx := context.Background()
	// é and 日 are not in the layout; é twice needs one binding.
	if err := front(in).Type(ctx, "éa日é"); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, f,
		"bind [93 97]=[eacute U65E5]",
		"key 93 down", "key 93 up",
		"key 38 down", "key 38 up",
		"key 97 down", "key 97 up",
		"key 93 down", "key 93 up",
		"confirm",
		"unbind [93 97]",
	)
	if len(in.bound) != 0 {
		t.Errorf("bound after Type = %v", in.bound)
	}

	// Three missing characters, two spare keys: two rounds, each restored
	// before the keys are reused.
	if err := front(in).Type(ctx, "éüö"); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, f,
		"bind [93 97]=[eacute udiaeresis]",
		"key 93 down", "key 93 up",
		"key 97 down", "key 97 up",
		"confirm",
		"unbind [93 97]",
		"bind [93]=[odiaeresis]",
		"key 93 down", "key 93 up",
		"confirm",
		"unbind [93]",
	)
}

func TestTypeWaitsWhenTheAppCannotConfirm(t *testing.T) {
	in, f := newFakeInput(t)
	f.canConfirm = false
	in.settle = 30 * time.Millisecond
	start := time.Now()
	if err := front(in).Type(context.Background(), "é"); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < in.settle {
		t.Errorf("Type took %v, want at least the settle time %v before restoring", el, in.settle)
	}
	checkEvents(t, f, "bind [93]=[eacute]", "key 93 down", "key 93 up", "confirm", "unbind [93]")
}

func TestTypeUnlocksCapsLock(t *testing.T) {
	in, f := newFakeInput(t)
	f.state.locked = modLock | mod2
	if err := front(in).Type(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, f, "lock 0x2=0x0", "key 38 down", "key 38 up", "lock 0x2=0x2")
	if f.state.locked != modLock|mod2 {
		t.Errorf("locked modifiers after Type = %#x, want Caps Lock and NumLock as before", uint8(f.state.locked))
	}
}

func TestTypeRejectsBadTextBeforeTyping(t *testing.T) {
	in, f := newFakeInput(t)
	for _, text := range []string{"ok\x00", "bad\xff"} {
		if err := front(in).Type(context.Background(), text); err == nil {
			t.Errorf("Type(%q) succeeded", text)
		}
	}
	// No spare keycode at all: nothing is typed.
	f.kb.keys = f.kb.keys[:len(f.kb.keys)-6]
	for i := range f.kb.keys {
		if f.kb.keys[i].typ < 0 {
			f.kb.keys[i].typ = 0
		}
	}
	err := front(in).Type(context.Background(), "é")
	if err == nil || !strings.Contains(err.Error(), "no unused keycode") {
		t.Errorf("Type without spare keycodes = %v", err)
	}
	checkEvents(t, f)
}

func TestTypeCancelledReleasesAndRestores(t *testing.T) {
	in, f := newFakeInput(t)
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	f.onEvent = func(ev string) {
		if strings.HasPrefix(ev, "key") {
			if n++; n == 4 {
				cancel()
			}
		}
	}
	err := front(in).Type(ctx, "éaaaaaaaa")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Type = %v, want context.Canceled", err)
	}
	f.onEvent = nil
	got := f.take()
	if got[len(got)-1] != "unbind [93]" {
		t.Errorf("the borrowed key was not restored last: %q", got)
	}
	if keys := strings.Count(strings.Join(got, ","), "key 38 down"); keys > 2 {
		t.Errorf("typing went on after cancel: %q", got)
	}
	if len(in.held) != 0 || len(in.bound) != 0 {
		t.Errorf("after a cancelled Type: held %v, bound %v", in.held, in.bound)
	}
}

func TestKeyCombos(t *testing.T) {
	in, f := newFakeInput(t)
	ctx := context.Background()
	if err := front(in).Key(ctx, "ctrl+A super"); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, f,
		"key 37 down", "key 50 down", "key 38 down", "key 38 up", "key 50 up", "key 37 up",
		"key 133 down", "key 133 up",
	)
	// A key the layout lacks is borrowed for the combination.
	if err := front(in).Key(ctx, "ctrl+F5"); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, f,
		"bind [93]=[F5]",
		"key 37 down", "key 93 down", "key 93 up", "key 37 up",
		"confirm", "unbind [93]",
	)
	if err := front(in).Key(ctx, "ctrl+bogus"); err == nil {
		t.Error(`Key("ctrl+bogus") succeeded`)
	}
	checkEvents(t, f)
}

func TestClickWithModifiers(t *testing.T) {
	in, f := newFakeInput(t)
	ctx := context.Background()
	if err := front(in).Click(ctx, ButtonLeft, 2, []string{"shift", "ctrl"}); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, f,
		"key 50 down", "key 37 down",
		"button 1 down", "button 1 up", "button 1 down", "button 1 up",
		"key 37 up", "key 50 up",
	)
	for _, tc := range []struct {
		b     Button
		count int
		mods  []string
	}{{ButtonLeft, 0, nil}, {ButtonLeft, 4, nil}, {Button(9), 1, nil}, {ButtonRight, 1, []string{"hyperdrive"}}} {
		if err := front(in).Click(ctx, tc.b, tc.count, tc.mods); err == nil {
			t.Errorf("Click(%v, %d, %v) succeeded", tc.b, tc.count, tc.mods)
		}
	}
	checkEvents(t, f)
}

func TestFailedClickReleasesWhatItPressed(t *testing.T) {
	in, f := newFakeInput(t)
	f.failOn = "button 3 up"
	err := front(in).Click(context.Background(), ButtonRight, 1, []string{"alt+shift"})
	if err == nil {
		t.Fatal("Click succeeded despite a failed release")
	}
	// The test layout has no Alt key, so one is borrowed. The failed
	// release is retried by the cleanup, then the keys go up, last first,
	// and the borrowed key is restored.
	checkEvents(t, f,
		"bind [93]=[Alt_L]", "key 93 down", "key 50 down", "button 3 down", "button 3 up",
		"button 3 up", "key 50 up", "key 93 up", "confirm", "unbind [93]")
	if len(in.held) != 0 {
		t.Errorf("held after a failed Click: %v", in.held)
	}
}

func TestDownUpAndReleaseAll(t *testing.T) {
	in, f := newFakeInput(t)
	ctx := context.Background()
	if err := front(in).Down(ctx, ButtonLeft); err != nil {
		t.Fatal(err)
	}
	if err := front(in).Down(ctx, ButtonMiddle); err != nil {
		t.Fatal(err)
	}
	if err := front(in).Up(ctx, ButtonLeft); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, f, "button 1 down", "button 2 down", "button 1 up")
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := in.ReleaseAll(cancelled); err != nil {
		t.Fatalf("ReleaseAll with a cancelled context: %v", err)
	}
	checkEvents(t, f, "button 2 up")
	if err := in.ReleaseAll(ctx); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, f)
}

func TestHoldKey(t *testing.T) {
	in, f := newFakeInput(t)
	ctx := context.Background()
	start := time.Now()
	if err := front(in).HoldKey(ctx, "shift+q", 40*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < 40*time.Millisecond {
		t.Errorf("HoldKey(40ms) returned after %v", el)
	}
	// Autorepeat is off while the keys are held.
	checkEvents(t, f, "repeat 50 false", "repeat 24 false", "key 50 down", "key 24 down", "key 24 up", "key 50 up", "repeat 50 true", "repeat 24 true")

	// Cancelled early: released at once.
	hctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- front(in).HoldKey(hctx, "ctrl", time.Hour) }()
	waitUntil(t, func() bool { return len(f.snapshot()) == 2 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled HoldKey = %v", err)
	}
	checkEvents(t, f, "repeat 37 false", "key 37 down", "key 37 up", "repeat 37 true")

	// ReleaseAll during a hold releases and restores; the hold's own
	// release then has nothing left to do.
	go func() { done <- front(in).HoldKey(ctx, "F7", 100*time.Millisecond) }()
	waitUntil(t, func() bool { return len(f.snapshot()) == 3 })
	if err := in.ReleaseAll(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("HoldKey after ReleaseAll = %v", err)
	}
	checkEvents(t, f, "bind [93]=[F7]", "repeat 93 false", "key 93 down", "key 93 up", "confirm", "unbind [93]", "repeat 93 true")

	if err := front(in).HoldKey(ctx, "shift", -time.Second); err == nil {
		t.Error("HoldKey with a negative duration succeeded")
	}
}

func (f *fakeBackend) snapshot() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.events...)
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestMouseOperations(t *testing.T) {
	in, f := newFakeInput(t)
	ctx := context.Background()
	if err := front(in).Move(ctx, 10, 20); err != nil {
		t.Fatal(err)
	}
	if p, err := in.Position(ctx); err != nil || p != (Point{X: 7, Y: 9}) {
		t.Errorf("Position = %v, %v", p, err)
	}
	if err := front(in).Scroll(ctx, 5, 6, "Left", 2); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, f, "move 10,20", "position", "move 5,6",
		"button 6 down", "button 6 up", "button 6 down", "button 6 up")

	if err := front(in).Drag(ctx, Point{X: 0, Y: 0}, Point{X: 100, Y: 50}); err != nil {
		t.Fatal(err)
	}
	got := f.take()
	if got[0] != "move 0,0" || got[1] != "button 1 down" || got[len(got)-2] != "move 100,50" || got[len(got)-1] != "button 1 up" {
		t.Errorf("Drag events = %q", got)
	}

	for name, err := range map[string]error{
		"Move(-1,0)":           front(in).Move(ctx, -1, 0),
		"Scroll(sideways)":     front(in).Scroll(ctx, 1, 1, "sideways", 1),
		"Scroll(amount 0)":     front(in).Scroll(ctx, 1, 1, "up", 0),
		"Drag(to -5,-5)":       front(in).Drag(ctx, Point{X: 1, Y: 1}, Point{X: -5, Y: -5}),
		"Down(button 9)":       front(in).Down(ctx, Button(9)),
		"ParseButton(\"top\")": func() error { _, err := input.ParseButton("top"); return err }(),
	} {
		if err == nil {
			t.Errorf("%s succeeded", name)
		}
	}
	checkEvents(t, f)
}

func TestDragCancelledReleasesButton(t *testing.T) {
	in, f := newFakeInput(t)
	ctx, cancel := context.WithCancel(context.Background())
	f.onEvent = func(ev string) {
		if ev == "move 20,20" {
			cancel()
		}
	}
	err := front(in).Drag(ctx, Point{X: 0, Y: 0}, Point{X: 100, Y: 100})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Drag = %v, want context.Canceled", err)
	}
	got := f.take()
	if got[len(got)-1] != "button 1 up" {
		t.Errorf("a cancelled drag left the button down: %q", got)
	}
}

func TestOneThreadAndConcurrentUse(t *testing.T) {
	in, f := newFakeInput(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				if err := front(in).Move(ctx, g, i); err != nil {
					t.Error(err)
					return
				}
				if err := front(in).Key(ctx, "a"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := len(f.take()); n != 8*50*3 {
		t.Errorf("%d events, want %d", n, 8*50*3)
	}
	if len(f.threads) != 1 {
		t.Errorf("backend called from %d OS threads, want 1", len(f.threads))
	}
}

func TestClose(t *testing.T) {
	in, f := newFakeInput(t)
	ctx := context.Background()
	if err := front(in).Down(ctx, ButtonRight); err != nil {
		t.Fatal(err)
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}
	checkEvents(t, f, "button 3 down", "button 3 up", "close")
	if err := front(in).Move(ctx, 1, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Move after Close = %v, want ErrClosed", err)
	}
	if err := in.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestNewFails(t *testing.T) {
	want := errors.New("no display here")
	_, err := newInput(Options{}, func(string) (backend, string, error) { return nil, "", want })
	if !errors.Is(err, want) {
		t.Errorf("newInput = %v, want %v", err, want)
	}
}

// The fake has no other clients and no focus: a guard's allowed windows
// are matched against focus, which tests set.
func (f *fakeBackend) grab() error   { return nil }
func (f *fakeBackend) ungrab() error { return nil }
func (f *fakeBackend) focusChain() ([]uint32, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.focus, nil
}
func (f *fakeBackend) keyRepeats(code keycode) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.noRepeat[code], nil
}
func (f *fakeBackend) setKeyRepeat(code keycode, on bool) error {
	f.mu.Lock()
	if f.noRepeat == nil {
		f.noRepeat = map[keycode]bool{}
	}
	f.noRepeat[code] = !on
	f.mu.Unlock()
	return f.record("repeat %d %v", code, on)
}
