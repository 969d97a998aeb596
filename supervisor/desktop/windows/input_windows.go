package windows

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"unicode/utf16"
	"unsafe"

	"github.com/deskhand/deskhand/supervisor/input"
	"golang.org/x/sys/windows"
)

// Input is the Windows gesture backend: SendInput from the supervisor's
// own process, pure Go over user32. Not robotgo, though it works under
// Wine too: it needs cgo and a mingw cross-compiler for every build, and
// its typing goes through the keyboard layout, where SendInput with
// KEYEVENTF_UNICODE delivers any character (emoji included, as surrogate
// pairs) exactly, whatever layout the user has. Keys are virtual keys
// (virtualKey) plus the scan code the layout gives them, for the apps that
// read scan codes.
//
// Input is safe for concurrent use; each call's events go to SendInput in
// one array, which Windows inserts whole, never interleaved with the
// user's input.
type Input struct {
	mu     sync.Mutex
	closed bool
	keys   map[uint16]bool // virtual keys this Input holds down: whether extended
	btns   map[input.Button]bool
}

// NewInput returns an Input. It opens nothing: SendInput needs no
// connection, only an interactive desktop (checked by CheckDisplay).
func NewInput() *Input {
	return &Input{keys: map[uint16]bool{}, btns: map[input.Button]bool{}}
}

var (
	user32            = windows.NewLazySystemDLL("user32.dll")
	procSendInput     = user32.NewProc("SendInput")
	procGetCursorPos  = user32.NewProc("GetCursorPos")
	procSetCursorPos  = user32.NewProc("SetCursorPos")
	procMapVirtualKey = user32.NewProc("MapVirtualKeyW")
	procGetSysMetrics = user32.NewProc("GetSystemMetrics")
)

// SendInput's INPUT, as laid out on 64-bit Windows: a type, then a union
// whose largest member, MOUSEINPUT, is 32 bytes with 8-byte alignment.
type inputRecord struct {
	typ  uint32
	_    uint32
	data [4]uint64
}

type mouseInput struct {
	dx, dy                 int32
	mouseData, flags, time uint32
	extra                  uintptr
}

type keybdInput struct {
	vk, scan    uint16
	flags, time uint32
	extra       uintptr
}

const (
	inputMouse    = 0
	inputKeyboard = 1

	mouseMove       = 0x0001
	mouseLeftDown   = 0x0002
	mouseLeftUp     = 0x0004
	mouseRightDown  = 0x0008
	mouseRightUp    = 0x0010
	mouseMiddleDown = 0x0020
	mouseMiddleUp   = 0x0040
	mouseWheel      = 0x0800
	mouseHWheel     = 0x1000
	mouseVirtDesk   = 0x4000
	mouseAbsolute   = 0x8000
	wheelDelta      = 120

	keyExtended = 0x0001
	keyUp       = 0x0002
	keyUnicode  = 0x0004

	smXVirtualScreen  = 76
	smYVirtualScreen  = 77
	smCXVirtualScreen = 78
	smCYVirtualScreen = 79
)

func mouseRec(m mouseInput) inputRecord {
	r := inputRecord{typ: inputMouse}
	*(*mouseInput)(unsafe.Pointer(&r.data)) = m
	return r
}

func keyRec(k keybdInput) inputRecord {
	r := inputRecord{typ: inputKeyboard}
	*(*keybdInput)(unsafe.Pointer(&r.data)) = k
	return r
}

// send inserts recs whole; Windows reports how many it took, and fewer
// than all means it refused them (UIPI: the target runs elevated and
// deskhand does not; or the desktop is locked or a secure one).
func send(recs []inputRecord) error {
	if len(recs) == 0 {
		return nil
	}
	n, _, err := procSendInput.Call(uintptr(len(recs)), uintptr(unsafe.Pointer(&recs[0])), unsafe.Sizeof(recs[0]))
	if int(n) != len(recs) {
		return fmt.Errorf("sending input: Windows took %d of %d events (%v); an app running as administrator, a locked screen or the secure desktop refuses input from deskhand", n, len(recs), err)
	}
	return nil
}

func (in *Input) lock() (func(), error) {
	in.mu.Lock()
	if in.closed {
		in.mu.Unlock()
		return nil, input.ErrClosed
	}
	return in.mu.Unlock, nil
}

func metric(i int) int {
	v, _, _ := procGetSysMetrics.Call(uintptr(i))
	return int(int32(v))
}

// Position answers where the pointer is, in physical pixels of the
// virtual screen (the process is per-monitor DPI aware: see Open).
func (in *Input) Position(ctx context.Context) (input.Point, error) {
	unlock, err := in.lock()
	if err != nil {
		return input.Point{}, err
	}
	defer unlock()
	return cursor()
}

func cursor() (input.Point, error) {
	var p struct{ X, Y int32 }
	if r, _, err := procGetCursorPos.Call(uintptr(unsafe.Pointer(&p))); r == 0 {
		return input.Point{}, fmt.Errorf("reading the pointer position: %w", err)
	}
	return input.Point{X: int(p.X), Y: int(p.Y)}, nil
}

// normalize maps pixel v of a virtual screen that starts at origin and is
// size pixels long to SendInput's absolute 0..65535 scale, so that
// Windows' own mapping back (floor(n*size/65536)) gives v again.
func normalize(v, origin, size int) int32 {
	if size <= 0 {
		return 0
	}
	return int32(((v-origin)*65536 + size - 1) / size)
}

// Move moves the pointer to p with an absolute SendInput move (so apps see
// a real move, with its hover effects), then checks where it landed and
// sets it there when the scale's rounding missed by a pixel.
func (in *Input) Move(ctx context.Context, p input.Point) error {
	unlock, err := in.lock()
	if err != nil {
		return err
	}
	defer unlock()
	vx, vy := metric(smXVirtualScreen), metric(smYVirtualScreen)
	w, h := metric(smCXVirtualScreen), metric(smCYVirtualScreen)
	if err := send([]inputRecord{mouseRec(mouseInput{dx: normalize(p.X, vx, w), dy: normalize(p.Y, vy, h),
		flags: mouseMove | mouseAbsolute | mouseVirtDesk})}); err != nil {
		return err
	}
	if at, err := cursor(); err == nil && at != p {
		if r, _, err := procSetCursorPos.Call(uintptr(p.X), uintptr(p.Y)); r == 0 {
			return fmt.Errorf("moving the pointer to %d,%d: %w", p.X, p.Y, err)
		}
	}
	return nil
}

func buttonFlags(b input.Button) (down, up uint32, err error) {
	switch b {
	case input.ButtonLeft:
		return mouseLeftDown, mouseLeftUp, nil
	case input.ButtonRight:
		return mouseRightDown, mouseRightUp, nil
	case input.ButtonMiddle:
		return mouseMiddleDown, mouseMiddleUp, nil
	}
	return 0, 0, fmt.Errorf("unknown mouse button %v; use left, right or middle", b)
}

// Button presses or releases b where the pointer is.
func (in *Input) Button(ctx context.Context, b input.Button, down bool) error {
	unlock, err := in.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return in.button(b, down)
}

func (in *Input) button(b input.Button, down bool) error {
	d, u, err := buttonFlags(b)
	if err != nil {
		return err
	}
	f := u
	if down {
		f = d
	}
	if err := send([]inputRecord{mouseRec(mouseInput{flags: f})}); err != nil {
		return err
	}
	in.btns[b] = down
	return nil
}

// Wheel turns the wheel clicks notches in direction: up, down, left or
// right.
func (in *Input) Wheel(ctx context.Context, direction string, clicks int) error {
	if clicks < 1 || clicks > 100 {
		return fmt.Errorf("scroll amount %d is out of range: scroll 1 to 100 clicks at a time", clicks)
	}
	var m mouseInput
	switch direction {
	case "up":
		m = mouseInput{flags: mouseWheel, mouseData: uint32(int32(clicks * wheelDelta))}
	case "down":
		m = mouseInput{flags: mouseWheel, mouseData: uint32(int32(-clicks * wheelDelta))}
	case "right":
		m = mouseInput{flags: mouseHWheel, mouseData: uint32(int32(clicks * wheelDelta))}
	case "left":
		m = mouseInput{flags: mouseHWheel, mouseData: uint32(int32(-clicks * wheelDelta))}
	default:
		return fmt.Errorf("unknown scroll direction %q; use up, down, left or right", direction)
	}
	unlock, err := in.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return send([]inputRecord{mouseRec(m)})
}

func vkRec(vk uint16, ext, down bool) inputRecord {
	scan, _, _ := procMapVirtualKey.Call(uintptr(vk), 0) // MAPVK_VK_TO_VSC
	var f uint32
	if ext {
		f |= keyExtended
	}
	if !down {
		f |= keyUp
	}
	return keyRec(keybdInput{vk: vk, scan: uint16(scan), flags: f})
}

// Key presses or releases the key of keysym k.
func (in *Input) Key(ctx context.Context, k input.Keysym, down bool) error {
	vk, ext, err := virtualKey(k)
	if err != nil {
		return err
	}
	unlock, err := in.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if err := send([]inputRecord{vkRec(vk, ext, down)}); err != nil {
		return err
	}
	if down {
		in.keys[vk] = ext
	} else {
		delete(in.keys, vk)
	}
	return nil
}

// Text types s exactly: each UTF-16 unit as a KEYEVENTF_UNICODE press and
// release (a character outside the BMP as its surrogate pair), a line
// break as Return and a tab as Tab, which apps read as keys, not text.
// Nothing is held afterwards.
func (in *Input) Text(ctx context.Context, s string) error {
	recs := textRecords(s)
	unlock, err := in.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return send(recs)
}

func textRecords(s string) []inputRecord {
	var recs []inputRecord
	prevCR := false
	for _, r := range s {
		switch {
		case r == '\n' && prevCR:
		case r == '\r' || r == '\n':
			recs = append(recs, vkRec(vkReturn, false, true), vkRec(vkReturn, false, false))
		case r == '\t':
			recs = append(recs, vkRec(vkTab, false, true), vkRec(vkTab, false, false))
		default:
			for _, u := range utf16.Encode([]rune{r}) {
				recs = append(recs, keyRec(keybdInput{scan: u, flags: keyUnicode}), keyRec(keybdInput{scan: u, flags: keyUnicode | keyUp}))
			}
		}
		prevCR = r == '\r'
	}
	return recs
}

// ReleaseAll releases every key and button this Input holds.
func (in *Input) ReleaseAll(ctx context.Context) error {
	unlock, err := in.lock()
	if err != nil {
		return err
	}
	defer unlock()
	return in.releaseAll()
}

func (in *Input) releaseAll() error {
	var errs []error
	for vk, ext := range in.keys {
		if err := send([]inputRecord{vkRec(vk, ext, false)}); err != nil {
			errs = append(errs, err)
			continue
		}
		delete(in.keys, vk)
	}
	for b, down := range in.btns {
		if down {
			if err := in.button(b, false); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Close releases everything and makes every later call fail.
func (in *Input) Close() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return nil
	}
	in.closed = true
	return in.releaseAll()
}
