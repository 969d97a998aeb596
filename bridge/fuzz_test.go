package bridge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sourcegraph/jsonrpc2"
)

// The seed corpora live in testdata/fuzz/<FuzzName>/, so a plain `go test`
// runs every seed; `go test -fuzz=FuzzFrameDecode ./bridge` explores.

// FuzzFrameDecode feeds arbitrary bytes to the frame reader, as a broken
// or hostile helper's stdout would.
func FuzzFrameDecode(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"))
	const maxBody = 4096
	codec := FrameCodec{MaxReadBytes: maxBody, MaxWriteBytes: maxBody}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := bytes.NewReader(data)
		r := bufio.NewReader(src)
		for i := 0; i < 64; i++ {
			var body json.RawMessage
			err := codec.ReadObject(r, &body)
			if err != nil {
				if err == io.EOF && (src.Len() > 0 || r.Buffered() > 0) {
					t.Fatalf("ReadObject = io.EOF with %d bytes unread; EOF is only for a clean end", src.Len()+r.Buffered())
				}
				if err != io.EOF && errors.Is(err, io.EOF) {
					t.Fatalf("ReadObject = %v wraps io.EOF inside a frame", err)
				}
				return
			}
			if len(body) > maxBody || !json.Valid(body) {
				t.Fatalf("ReadObject accepted a body of %d bytes that is over the cap or not JSON: %q", len(body), body)
			}
			// What was accepted must survive a write and a read back.
			var buf bytes.Buffer
			if err := codec.WriteObject(&buf, body); err != nil {
				t.Fatalf("WriteObject(%q): %v", body, err)
			}
			var back json.RawMessage
			if err := codec.ReadObject(bufio.NewReader(&buf), &back); err != nil {
				t.Fatalf("reading back %q: %v", buf.Bytes(), err)
			}
			// Marshal compacts and HTML-escapes a RawMessage.
			var compact, want bytes.Buffer
			json.Compact(&compact, body)
			json.HTMLEscape(&want, compact.Bytes())
			if !bytes.Equal(back, want.Bytes()) {
				t.Fatalf("round trip of %q gave %q", want.Bytes(), back)
			}
		}
	})
}

// FuzzResponseDecode reads frames the way the client does, into JSON-RPC
// responses, and converts their errors to *Error.
func FuzzResponseDecode(f *testing.F) {
	f.Add([]byte("Content-Length: 37\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReader(bytes.NewReader(data))
		for i := 0; i < 16; i++ {
			var resp jsonrpc2.Response
			if err := (FrameCodec{MaxReadBytes: 1 << 16}).ReadObject(r, &resp); err != nil {
				return
			}
			if resp.Error == nil {
				continue
			}
			herr := helperError(resp.Error)
			if herr.Code != int(resp.Error.Code) || herr.Message != resp.Error.Message {
				t.Fatalf("helperError(%+v) = %+v: code or message lost", resp.Error, herr)
			}
			if herr.Error() == "" {
				t.Fatalf("helperError(%+v).Error() is empty", resp.Error)
			}
			if name, ok := codeNames[herr.Code]; ok && herr.Name == "" {
				t.Fatalf("helperError(%+v).Name is empty; want at least %q", resp.Error, name)
			}
		}
	})
}

// FuzzCaptureResultDecode decodes arbitrary capture results; whatever it
// accepts must be an image of the format it claims and survive a round
// trip through JSON.
func FuzzCaptureResultDecode(f *testing.F) {
	f.Add([]byte(`{"format":"png","data":"iVBORw0KGgo=","width":1,"height":1,"source":{"x":0,"y":0,"width":1,"height":1},"display":1,"masked":[],"method":"shm","capture_id":1}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		shot, err := decodeCaptureFrom(raw, nil)
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("decodeCaptureFrom error %v does not wrap ErrProtocol", err)
			}
			return
		}
		switch {
		case shot.Format == FormatPNG && !bytes.HasPrefix(shot.Data, []byte("\x89PNG\r\n\x1a\n")),
			shot.Format == FormatJPEG && !bytes.HasPrefix(shot.Data, []byte{0xff, 0xd8, 0xff}),
			shot.Format != FormatPNG && shot.Format != FormatJPEG:
			t.Fatalf("decodeCaptureFrom accepted %q data %q", shot.Format, shot.Data[:min(len(shot.Data), 8)])
		case shot.Width <= 0 || shot.Height <= 0 || shot.Source.Width <= 0 || shot.Source.Height <= 0:
			t.Fatalf("decodeCaptureFrom accepted empty sizes: %+v", shot)
		}
		again, err := json.Marshal(shot)
		if err != nil {
			t.Fatalf("re-encoding %+v: %v", shot, err)
		}
		back, err := decodeCaptureFrom(again, nil)
		if err != nil {
			t.Fatalf("decodeCaptureFrom of the re-encoded %s: %v", again, err)
		}
		if diff := cmp.Diff(shot, back); diff != "" {
			t.Fatalf("capture round trip mismatch (-first +second):\n%s", diff)
		}
	})
}
