package bridge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestFrameCodecRead(t *testing.T) {
	body := `{"jsonrpc":"2.0","id":1,"result":{}}`
	long := "Content-Type: " + strings.Repeat("a", MaxHeaderBytes) + "\r\n"
	tests := []struct {
		name  string
		in    string
		want  []string // bodies read before the error
		err   string   // substring of the final error; "" means io.EOF
		isErr error    // errors.Is target, if any
	}{
		{"one frame", "Content-Length: 36\r\n\r\n" + body, []string{body}, "", nil},
		{"two frames", "Content-Length: 36\r\n\r\n" + body + "Content-Length: 2\r\n\r\n{}", []string{body, "{}"}, "", nil},
		{"content type accepted", "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: 2\r\n\r\n{}", []string{"{}"}, "", nil},
		{"case-insensitive names", "content-length:2\r\n\r\n{}", []string{"{}"}, "", nil},
		{"spaces around value", "Content-Length: \t 2 \r\n\r\n{}", []string{"{}"}, "", nil},
		{"empty input", "", nil, "", nil},
		{"garbage", "hello world\n", nil, `unexpected bytes where a frame header should be: "hello world\n"`, nil},
		{"garbage after a frame", "Content-Length: 2\r\n\r\n{}panic: oops", []string{"{}"}, `"panic: oops"`, nil},
		{"unknown header", "Content-Length: 2\r\nX-Foo: 1\r\n\r\n{}", nil, "where a frame header should be", nil},
		{"partial name", "Content-: 2\r\n\r\n{}", nil, "other than Content-Length or Content-Type", nil},
		{"space before colon", "Content-Length : 2\r\n\r\n{}", nil, "where a frame header should be", nil},
		{"bare LF", "Content-Length: 2\n\n{}", nil, "LF instead of CRLF", nil},
		{"CR without LF", "Content-Length: 2\r\r\n{}", nil, "CR not followed by LF", nil},
		{"no colon", "Content-Length\r\n\r\n{}", nil, "without a colon", nil},
		{"no length", "Content-Type: x\r\n\r\n{}", nil, "no Content-Length", nil},
		{"just a blank line", "\r\n", nil, "no Content-Length", nil},
		{"two lengths", "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", nil, "two Content-Length", nil},
		{"two types", "Content-Type: a\r\nContent-Type: b\r\nContent-Length: 2\r\n\r\n{}", nil, "two Content-Type", nil},
		{"negative length", "Content-Length: -2\r\n\r\n{}", nil, "not a byte count", nil},
		{"plus sign", "Content-Length: +2\r\n\r\n{}", nil, "not a byte count", nil},
		{"hex length", "Content-Length: 0x2\r\n\r\n{}", nil, "not a byte count", nil},
		{"empty length", "Content-Length: \r\n\r\n{}", nil, "not a byte count", nil},
		{"huge length", "Content-Length: 99999999999999999999\r\n\r\n{}", nil, "not a byte count", nil},
		{"zero length", "Content-Length: 0\r\n\r\n", nil, "is 0", nil},
		{"over the cap", "Content-Length: 4097\r\n\r\n{}", nil, "over the 4096-byte cap", ErrTooLarge},
		{"control byte in value", "Content-Type: a\x01b\r\nContent-Length: 2\r\n\r\n{}", nil, "control or non-ASCII", nil},
		{"header too long", long + "Content-Length: 2\r\n\r\n{}", nil, "longer than 1024 bytes", nil},
		{"truncated header", "Content-Len", nil, "reading frame header", io.ErrUnexpectedEOF},
		{"no blank line", "Content-Length: 2\r\n", nil, "reading frame header", io.ErrUnexpectedEOF},
		{"truncated body", "Content-Length: 10\r\n\r\n{\"a\"", nil, "reading 10-byte frame body", io.ErrUnexpectedEOF},
		{"body not JSON", "Content-Length: 5\r\n\r\nhello", nil, `decoding frame body "hello"`, nil},
		{"body with trailing bytes", "Content-Length: 4\r\n\r\n{} x", nil, "decoding frame body", nil},
	}
	codec := FrameCodec{MaxReadBytes: 4096}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(codec, bufio.NewReader(strings.NewReader(tt.in)))
			// One byte at a time, to prove no read depends on chunking.
			got1, err1 := readAll(codec, bufio.NewReader(iotest.OneByteReader(strings.NewReader(tt.in))))
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || strings.Join(got1, "|") != strings.Join(tt.want, "|") {
				t.Errorf("ReadObject(%q) bodies = %q (one byte at a time: %q), want %q", tt.in, got, got1, tt.want)
			}
			if (err == io.EOF) != (err1 == io.EOF) {
				t.Errorf("ReadObject(%q) ends with %v, but one byte at a time with %v", tt.in, err, err1)
			}
			if tt.err == "" {
				if err != io.EOF {
					t.Errorf("ReadObject(%q) final error = %v, want io.EOF", tt.in, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ReadObject(%q) error = %v, want one containing %q", tt.in, err, tt.err)
			}
			if errors.Is(err, io.EOF) {
				t.Errorf("ReadObject(%q) error = %v wraps io.EOF; only a clean end may", tt.in, err)
			}
			if tt.isErr != nil && !errors.Is(err, tt.isErr) {
				t.Errorf("ReadObject(%q) error = %v, want it to wrap %v", tt.in, err, tt.isErr)
			}
		})
	}
}

// TestFrameCodecFailsFast checks that garbage is rejected at its first
// byte, without waiting for a line end that may never come.
func TestFrameCodecFailsFast(t *testing.T) {
	for _, garbage := range []string{"x", "{", "Content-Typo", "Content-Length:2\rX", "Content-Length: 2\n"} {
		pr, pw := io.Pipe()
		go pw.Write([]byte(garbage)) // and never closes: a hung writer
		errc := make(chan error, 1)
		go func() {
			var v json.RawMessage
			errc <- (FrameCodec{}).ReadObject(bufio.NewReader(pr), &v)
		}()
		select {
		case err := <-errc:
			if err == nil {
				t.Errorf("ReadObject(%q) = nil, want an error", garbage)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("ReadObject(%q) still waits for more input; it should reject the garbage at once", garbage)
		}
		pw.Close()
	}
}

func TestFrameCodecWrite(t *testing.T) {
	var buf bytes.Buffer
	codec := FrameCodec{MaxWriteBytes: 64}
	if err := codec.WriteObject(&buf, map[string]string{"method": "displays"}); err != nil {
		t.Fatalf("WriteObject: %v", err)
	}
	if got, want := buf.String(), "Content-Length: 21\r\n\r\n{\"method\":\"displays\"}"; got != want {
		t.Errorf("WriteObject wrote %q, want %q", got, want)
	}
	var back map[string]string
	if err := codec.ReadObject(bufio.NewReader(&buf), &back); err != nil || back["method"] != "displays" {
		t.Errorf("reading back = %v, %v; want the written object", back, err)
	}

	buf.Reset()
	err := codec.WriteObject(&buf, strings.Repeat("x", 100))
	if !errors.Is(err, ErrTooLarge) || buf.Len() != 0 {
		t.Errorf("WriteObject(100-byte body) = %v having written %d bytes, want ErrTooLarge and nothing written", err, buf.Len())
	}
	if err := codec.WriteObject(&buf, make(chan int)); err == nil {
		t.Errorf("WriteObject(chan) = nil, want an encoding error")
	}
	if err := (FrameCodec{}).WriteObject(&buf, strings.Repeat("x", MaxRequestBytes)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("default codec WriteObject(over 1 MiB) = %v, want ErrTooLarge", err)
	}
}

// readAll reads frames until an error and returns their bodies.
func readAll(codec FrameCodec, r *bufio.Reader) ([]string, error) {
	var got []string
	for {
		var v json.RawMessage
		if err := codec.ReadObject(r, &v); err != nil {
			return got, err
		}
		got = append(got, string(v))
	}
}
