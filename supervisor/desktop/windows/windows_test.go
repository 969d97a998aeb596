package windows

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/input"
	"github.com/deskhand/deskhand/supervisor/lock"
	"github.com/google/go-cmp/cmp"
)

// fakeGestures records what reaches the platform's gestures.
type fakeGestures struct {
	log  []string
	fail string // a gesture that fails
}

func (f *fakeGestures) note(s string) error {
	f.log = append(f.log, s)
	if s == f.fail {
		return errors.New("refused")
	}
	return nil
}
func (f *fakeGestures) Position(context.Context) (input.Point, error) { return input.Point{}, nil }
func (f *fakeGestures) Move(_ context.Context, p input.Point) error {
	return f.note(fmt.Sprintf("move %d,%d", p.X, p.Y))
}
func (f *fakeGestures) Button(_ context.Context, b input.Button, down bool) error {
	return f.note(fmt.Sprintf("button %v %v", b, down))
}
func (f *fakeGestures) Wheel(_ context.Context, d string, n int) error {
	return f.note(fmt.Sprintf("wheel %s %d", d, n))
}
func (f *fakeGestures) Key(_ context.Context, k input.Keysym, down bool) error {
	return f.note(fmt.Sprintf("key %#x %v", uint32(k), down))
}
func (f *fakeGestures) Text(_ context.Context, s string) error { return f.note("text " + s) }
func (f *fakeGestures) ReleaseAll(context.Context) error       { return f.note("release all") }
func (f *fakeGestures) Close() error                           { return nil }

// TestInputThroughBackend drives input.Input's public methods through
// the Windows backend and checks the events that come out: the allowlist
// and the combination parsing stay input's, the events are Windows'.
func TestInputThroughBackend(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		do   func(*input.Input) error
		want []string
	}{
		{"click", func(in *input.Input) error { return in.ClickAt(ctx, 10, 20, input.ButtonLeft, 2, nil) },
			[]string{"move 10,20", "button left true", "button left false", "button left true", "button left false"}},
		{"chord", func(in *input.Input) error { return in.Key(ctx, "ctrl+a") },
			[]string{"key 0xffe3 true", "key 0x61 true", "key 0x61 false", "key 0xffe3 false"}},
		{"upper case letter holds shift", func(in *input.Input) error { return in.Key(ctx, "A") },
			[]string{"key 0xffe1 true", "key 0x61 true", "key 0x61 false", "key 0xffe1 false"}},
		{"text", func(in *input.Input) error { return in.Type(ctx, "Grüße, 世界! 👋") }, []string{"text Grüße, 世界! 👋"}},
		{"scroll", func(in *input.Input) error { return in.Scroll(ctx, 5, 6, "down", 3) }, []string{"move 5,6", "wheel down 3"}},
		{"F-key", func(in *input.Input) error { return in.Key(ctx, "F5") }, []string{"key 0xffc2 true", "key 0xffc2 false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &fakeGestures{}
			in := input.New(NewBackend(g))
			defer in.Close()
			if err := tt.do(in); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if diff := cmp.Diff(tt.want, g.log); diff != "" {
				t.Errorf("gestures (-want +got):\n%s", diff)
			}
		})
	}
}

// TestChordReleasesOnFailure: a chord whose second key fails releases the
// first, and a key with no fixed virtual key presses nothing.
func TestChordReleasesOnFailure(t *testing.T) {
	g := &fakeGestures{fail: "key 0x61 true"}
	ctrlA := input.Combo{Keys: []input.Keysym{0xffe3, 'a'}}
	if err := NewBackend(g).Chords(context.Background(), []input.Combo{ctrlA}); err == nil {
		t.Fatal("a chord with a failing key = nil, want the error")
	}
	want := []string{"key 0xffe3 true", "key 0x61 true", "key 0xffe3 false"}
	if diff := cmp.Diff(want, g.log); diff != "" {
		t.Errorf("gestures (-want +got):\n%s", diff)
	}
	g = &fakeGestures{}
	ctrlE := input.Combo{Keys: []input.Keysym{0xffe3, 0xe9}}
	if err := NewBackend(g).Chords(context.Background(), []input.Combo{ctrlE}); err == nil || len(g.log) != 0 {
		t.Errorf("ctrl+é = %v after %v, want a refusal before any key", err, g.log)
	}
}

func TestVirtualKey(t *testing.T) {
	tests := []struct {
		k   input.Keysym
		vk  uint16
		ext bool
	}{
		{'a', 'A', false}, {'Z', 'Z', false}, {'7', '7', false}, {0xff0d, vkReturn, false}, {0xff8d, vkReturn, true},
		{0xff51, vkLeft, true}, {0xffbe, vkF1, false}, {0xffd5, vkF1 + 23, false}, {0xffeb, vkLWin, true},
		{0xffe4, vkRControl, true}, {0xffff, vkDelete, true}, {0xff1b, vkEscape, false},
	}
	for _, tt := range tests {
		vk, ext, err := virtualKey(tt.k)
		if err != nil || vk != tt.vk || ext != tt.ext {
			t.Errorf("virtualKey(%#x) = %#x, %v, %v, want %#x, %v", uint32(tt.k), vk, ext, err, tt.vk, tt.ext)
		}
	}
	for _, k := range []input.Keysym{'é', ';', 0x1000041} {
		if _, _, err := virtualKey(k); err == nil {
			t.Errorf("virtualKey(%#x) = nil error, want a refusal (the layout decides that key)", uint32(k))
		}
	}
}

func TestPlanLaunch(t *testing.T) {
	menu := startMenu{Dir: `C:\ProgramData\Microsoft\Windows\Start Menu\Programs`, FS: fstest.MapFS{
		"Accessories/Paint.lnk": {}, "Visual Studio Code/Visual Studio Code.lnk": {},
	}}
	look := func(name string) (string, error) {
		if strings.EqualFold(name, "notepad") || strings.EqualFold(name, "notepad.exe") {
			return `C:\Windows\System32\notepad.exe`, nil
		}
		return "", errors.New("not found")
	}
	tests := []struct {
		name string
		want launch
	}{
		{"Microsoft.WindowsCalculator_8wekyb3d8bbwe!App", launch{Shell: `shell:AppsFolder\Microsoft.WindowsCalculator_8wekyb3d8bbwe!App`,
			App: appOf("Microsoft.WindowsCalculator_8wekyb3d8bbwe!App", "", "Microsoft.WindowsCalculator_8wekyb3d8bbwe!App")}},
		{"paint", launch{Shell: menu.Dir + `\Accessories\Paint.lnk`, App: appOf("paint", "", "")}},
		{"Visual Studio Code", launch{Shell: menu.Dir + `\Visual Studio Code\Visual Studio Code.lnk`, App: appOf("Visual Studio Code", "", "")}},
		{`C:\Users\u\Desktop\Tool.LNK`, launch{Shell: `C:\Users\u\Desktop\Tool.LNK`, App: appOf("Tool", "", "")}},
		{`C:\Tools\app.exe`, launch{Exe: `C:\Tools\app.exe`, App: appOf("app.exe", `C:\Tools\app.exe`, "")}},
		{"notepad", launch{Exe: `C:\Windows\System32\notepad.exe`, App: appOf("notepad", `C:\Windows\System32\notepad.exe`, "")}},
	}
	for _, tt := range tests {
		got, err := planLaunch(tt.name, []startMenu{menu}, look)
		if err != nil {
			t.Errorf("planLaunch(%q): %v", tt.name, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("planLaunch(%q) (-want +got):\n%s", tt.name, diff)
		}
	}
	for _, bad := range []string{"", "  ", "no such app"} {
		if _, err := planLaunch(bad, []startMenu{menu}, look); err == nil {
			t.Errorf("planLaunch(%q) = nil error, want one", bad)
		}
	}
}

func TestLockRecord(t *testing.T) {
	o := lock.Owner{SessionID: "s1", PID: 42, Acquired: time.Unix(1700000000, 0).UTC(), Command: "deskhand", Client: "claude"}
	b, err := encodeRecord(o)
	if err != nil {
		t.Fatal(err)
	}
	sec := make([]byte, lockSize)
	if _, err := decodeRecord(sec); !errors.Is(err, errNoRecord) {
		t.Errorf("decodeRecord(empty section) = %v, want errNoRecord", err)
	}
	copy(sec, b)
	got, err := decodeRecord(sec)
	if err != nil || !cmp.Equal(*got, o) {
		t.Errorf("decodeRecord(encodeRecord(%+v)) = %+v, %v", o, got, err)
	}
	copy(sec, []byte{5, 0, 0, 0, 'x', 'y', 'z', 'z', 'y'})
	if got, err := decodeRecord(sec); err != nil || got == nil {
		t.Errorf("decodeRecord(garbage) = %v, %v, want a holder all the same", got, err)
	}
}

func appOf(name, exe, aumid string) bridge.App { return bridge.App{Name: name, Exe: exe, AUMID: aumid} }
