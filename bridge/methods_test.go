package bridge

import (
	"bytes"
	"encoding/json"
	"errors"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sourcegraph/jsonrpc2"
)

func TestTypedMethods(t *testing.T) {
	c, _ := newFake(t, fakeNormal, Options{})
	ctx := testContext(t)

	// patch_check before any capture is the helper's no_capture error.
	_, err := c.PatchCheck(ctx, PatchCheckRequest{X: 5, Y: 5})
	var herr *Error
	if !errors.As(err, &herr) || herr.Code != CodeNoCapture || herr.Name != "no_capture" {
		t.Errorf("PatchCheck before a capture = %v, want the no_capture *Error", err)
	}
	pid := c.PID()

	displays, err := c.Displays(ctx)
	if err != nil {
		t.Fatalf("Displays: %v", err)
	}
	if diff := cmp.Diff(fakeDisplays, displays); diff != "" {
		t.Errorf("Displays mismatch (-want +got):\n%s", diff)
	}

	t.Run("Capture", func(t *testing.T) {
		shot, err := c.Capture(ctx, CaptureRequest{Width: 16, Height: 9, Format: FormatPNG})
		if err != nil {
			t.Fatalf("Capture(png 16x9): %v", err)
		}
		if shot.Format != FormatPNG || shot.Width != 16 || shot.Height != 9 || shot.Source != fakeDisplays[0].Bounds() ||
			shot.Display == nil || *shot.Display != fakeDisplays[0].ID || shot.Method != "fake" || shot.CaptureID == 0 {
			t.Errorf("Capture(png 16x9) = %+v, want a 16x9 png of the primary display", shot)
		}
		checkImage(t, shot, "png")

		rect := Rect{X: 10, Y: 20, Width: 30, Height: 40}
		shot, err = c.Capture(ctx, CaptureRequest{Rect: &rect, Mask: []uint32{7, 9}, MaskColor: &[3]uint8{1, 2, 3}})
		if err != nil {
			t.Fatalf("Capture(rect): %v", err)
		}
		if shot.Format != FormatJPEG || shot.Width != 30 || shot.Height != 40 || shot.Source != rect || shot.Display != nil {
			t.Errorf("Capture(rect) = %+v, want a native-size jpeg of %+v with no display", shot, rect)
		}
		if diff := cmp.Diff([]uint32{7, 9}, shot.Masked); diff != "" {
			t.Errorf("Capture(rect).Masked mismatch (-want +got):\n%s", diff)
		}
		checkImage(t, shot, "jpeg")

		_, err = c.Capture(ctx, CaptureRequest{Rect: &Rect{X: 300, Y: 190, Width: 40, Height: 40}})
		var herr *Error
		if !errors.As(err, &herr) {
			t.Fatalf("Capture(out of bounds) = %v, want an *Error", err)
		}
		want := &Error{Code: CodeOutOfBounds, Name: "out_of_bounds",
			Message: "rectangle 300,190 40x40 is outside the screen (320x200)",
			Hint:    "Use a rectangle inside the screen; call displays for the geometry."}
		if diff := cmp.Diff(want, herr); diff != "" {
			t.Errorf("Capture(out of bounds) error mismatch (-want +got):\n%s", diff)
		}
		if got, wantText := err.Error(), "rectangle 300,190 40x40 is outside the screen (320x200). Use a rectangle inside the screen; call displays for the geometry."; got != wantText {
			t.Errorf("Capture(out of bounds) error text = %q, want %q", got, wantText)
		}

		got, err := c.PatchCheck(ctx, PatchCheckRequest{X: 150, Y: 5, Size: 5, Tolerance: 2})
		if err != nil {
			t.Fatalf("PatchCheck: %v", err)
		}
		if diff := cmp.Diff(&PatchCheck{Changed: true, DifferingPixels: 3, MaxDelta: 40, CaptureID: 2}, got); diff != "" {
			t.Errorf("PatchCheck mismatch (-want +got):\n%s", diff)
		}
	})

	t.Run("Windows", func(t *testing.T) {
		list, err := c.Windows(ctx, false)
		if err != nil {
			t.Fatalf("Windows(false): %v", err)
		}
		all := fakeWindows(nil)
		want := &WindowList{Windows: all[:2], Focused: &all[0].ID, Frontmost: &fakeApp}
		if diff := cmp.Diff(want, list); diff != "" {
			t.Errorf("Windows(false) mismatch (-want +got):\n%s", diff)
		}
		if list, err := c.Windows(ctx, true); err != nil || len(list.Windows) != 3 {
			t.Errorf("Windows(true) = %v, %v; want all 3 windows", list, err)
		}

		at, err := c.WindowAt(ctx, 15, 15)
		if err != nil {
			t.Fatalf("WindowAt(15, 15): %v", err)
		}
		if at.Window == nil || at.Window.ID != all[0].ID || at.App == nil || at.App.Name != "XTerm" {
			t.Errorf("WindowAt(15, 15) = %+v, want the xterm window and app", at)
		}
		if at, err := c.WindowAt(ctx, 310, 190); err != nil || at.Window != nil || at.App != nil {
			t.Errorf("WindowAt(310, 190) = %+v, %v; want no window", at, err)
		}
	})

	t.Run("HideRestore", func(t *testing.T) {
		ids := []uint32{0x600007, 0x800003}
		hidden, err := c.Hide(ctx, ids)
		if err != nil || !cmp.Equal(hidden, ids) {
			t.Fatalf("Hide(%v) = %v, %v; want both hidden", ids, hidden, err)
		}
		if again, err := c.Hide(ctx, ids); err != nil || len(again) != 0 {
			t.Errorf("Hide(%v) again = %v, %v; want none changed", ids, again, err)
		}
		if list, err := c.Windows(ctx, false); err != nil || len(list.Windows) != 0 {
			t.Errorf("Windows(false) with all hidden = %+v, %v; want none", list, err)
		}
		restored, err := c.Restore(ctx, ids)
		if err != nil || !cmp.Equal(restored, ids) {
			t.Errorf("Restore(%v) = %v, %v; want both restored", ids, restored, err)
		}
		_, err = c.Hide(ctx, []uint32{7})
		var herr *Error
		if !errors.As(err, &herr) || herr.Name != "no_such_window" || herr.Code != CodeNoSuchWindow {
			t.Errorf("Hide(unknown) = %v, want the no_such_window *Error", err)
		}
		if got, err := c.Hide(ctx, nil); err != nil || len(got) != 0 {
			t.Errorf("Hide(nil) = %v, %v; want nothing hidden", got, err)
		}
	})

	t.Run("Clipboard", func(t *testing.T) {
		_, err := c.ReadClipboard(ctx)
		var herr *Error
		if !errors.As(err, &herr) || herr.Name != "clipboard_unavailable" {
			t.Errorf("ReadClipboard when empty = %v, want clipboard_unavailable", err)
		}
		text := "héllo\n世界\t\"quoted\" \x00 end"
		if err := c.WriteClipboard(ctx, text); err != nil {
			t.Fatalf("WriteClipboard: %v", err)
		}
		if got, err := c.ReadClipboard(ctx); err != nil || got != text {
			t.Errorf("ReadClipboard() = %q, %v; want %q", got, err, text)
		}
		big := strings.Repeat("x", MaxRequestBytes)
		if err := c.WriteClipboard(ctx, big); !errors.Is(err, ErrTooLarge) {
			t.Errorf("WriteClipboard(1 MiB) = %v, want ErrTooLarge", err)
		}
	})

	if got := c.PID(); got != pid {
		t.Errorf("PID() changed from %d to %d; no call should have restarted the helper", pid, got)
	}
}

func checkImage(t *testing.T, shot *Capture, format string) {
	t.Helper()
	img, got, err := image.Decode(bytes.NewReader(shot.Data))
	if err != nil {
		t.Fatalf("decoding the %s capture: %v", format, err)
	}
	if got != format || img.Bounds().Dx() != shot.Width || img.Bounds().Dy() != shot.Height {
		t.Errorf("capture decodes as %s %v, want %s %dx%d", got, img.Bounds(), format, shot.Width, shot.Height)
	}
}

func TestCallRaw(t *testing.T) {
	c, _ := newFake(t, fakeNormal, Options{})
	ctx := testContext(t)
	var raw json.RawMessage
	if err := c.Call(ctx, "displays", json.RawMessage(`{}`), &raw); err != nil {
		t.Fatalf("Call(displays): %v", err)
	}
	if !bytes.Contains(raw, []byte(`"name":"DP-1"`)) {
		t.Errorf("Call(displays) raw result = %s, want the fake's displays", raw)
	}
	if err := c.Call(ctx, "displays", nil, nil); err != nil {
		t.Errorf("Call(displays) with nil params and result = %v", err)
	}
	err := c.Call(ctx, "no.such.method", nil, nil)
	var herr *Error
	if !errors.As(err, &herr) || herr.Code != CodeMethodNotFound {
		t.Errorf("Call(no.such.method) = %v, want method_not_found", err)
	}
	var wrong struct {
		Displays string `json:"displays"`
	}
	if err := c.Call(ctx, "displays", nil, &wrong); !errors.Is(err, ErrProtocol) {
		t.Errorf("Call(displays) into a mismatched type = %v, want ErrProtocol", err)
	}
	if err := c.Call(ctx, "displays", make(chan int), nil); err == nil || !strings.Contains(err.Error(), "encoding displays params") {
		t.Errorf("Call with unencodable params = %v, want an encoding error", err)
	}
}

func TestErrorText(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{Code: -32002, Message: "outside", Hint: "Use a rectangle inside the screen."}, "outside. Use a rectangle inside the screen."},
		{Error{Code: -32002, Message: "outside.", Hint: "Retry."}, "outside. Retry."},
		{Error{Code: -32002, Message: "outside"}, "outside"},
		{Error{Code: -32099, Name: "weird"}, "capture helper error -32099 (weird)"},
		{Error{Code: -32099, Hint: "Do this."}, "capture helper error -32099. Do this."},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("(%+v).Error() = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestDecodeCapture(t *testing.T) {
	png := `"iVBORw0KGgoAAAANSUhEUg=="` // base64 of the PNG signature and IHDR start
	tests := []struct {
		name, raw string
		ok        bool
	}{
		{"valid png", `{"format":"png","data":` + png + `,"width":2,"height":1,"source":{"x":0,"y":0,"width":4,"height":2},"display":5,"masked":[],"method":"shm","capture_id":1}`, true},
		{"valid jpeg", `{"format":"jpeg","data":"/9j/4AAQ","width":2,"height":1,"source":{"x":0,"y":0,"width":4,"height":2},"display":null,"masked":[3],"method":"get_image","capture_id":2}`, true},
		{"png bytes labelled jpeg", `{"format":"jpeg","data":` + png + `,"width":2,"height":1,"source":{"x":0,"y":0,"width":4,"height":2}}`, false},
		{"unknown format", `{"format":"gif","data":"R0lGODlh","width":2,"height":1,"source":{"x":0,"y":0,"width":4,"height":2}}`, false},
		{"bad base64", `{"format":"png","data":"!!!","width":2,"height":1,"source":{"x":0,"y":0,"width":4,"height":2}}`, false},
		{"zero size", `{"format":"png","data":` + png + `,"width":0,"height":1,"source":{"x":0,"y":0,"width":4,"height":2}}`, false},
		{"empty source", `{"format":"png","data":` + png + `,"width":2,"height":1,"source":{"x":0,"y":0,"width":0,"height":2}}`, false},
		{"not an object", `[1,2]`, false},
		{"no data", `{"format":"png","width":2,"height":1,"source":{"x":0,"y":0,"width":4,"height":2}}`, false},
	}
	for _, tt := range tests {
		shot, err := decodeCaptureFrom([]byte(tt.raw), nil)
		if (err == nil) != tt.ok {
			t.Errorf("decodeCaptureFrom(%s) = %+v, %v; want ok %v", tt.name, shot, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrProtocol) {
			t.Errorf("decodeCaptureFrom(%s) error %v does not wrap ErrProtocol", tt.name, err)
		}
	}
}

func TestHelperErrorDecode(t *testing.T) {
	tests := []struct {
		name, data string
		code       int64
		want       Error
	}{
		{"full", `{"code":"no_such_window","hint":"Call windows."}`, -32004, Error{Code: -32004, Name: "no_such_window", Message: "m", Hint: "Call windows."}},
		{"no data", ``, -32004, Error{Code: -32004, Name: "no_such_window", Message: "m"}},
		{"malformed data", `"oops"`, -32601, Error{Code: -32601, Name: "method_not_found", Message: "m"}},
		{"unknown code", `{}`, -1, Error{Code: -1, Message: "m"}},
	}
	for _, tt := range tests {
		e := rpcError(tt.code, "m", tt.data)
		if diff := cmp.Diff(&tt.want, helperError(e)); diff != "" {
			t.Errorf("helperError(%s) mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// rpcError builds the JSON-RPC error object the helper would send; data ""
// leaves data out.
func rpcError(code int64, msg, data string) *jsonrpc2.Error {
	e := &jsonrpc2.Error{Code: code, Message: msg}
	if data != "" {
		raw := json.RawMessage(data)
		e.Data = &raw
	}
	return e
}
