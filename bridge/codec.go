package bridge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Frame limits of the helper protocol (helpers/PROTOCOL.md, "Framing").
const (
	// MaxHeaderBytes caps a frame's header block, blank line included.
	MaxHeaderBytes = 1024
	// MaxRequestBytes caps the body of a request to the helper.
	MaxRequestBytes = 1 << 20
	// DefaultMaxResponseBytes caps the body of a response from the helper
	// unless Options.MaxMessageBytes says otherwise.
	DefaultMaxResponseBytes = 64 << 20
)

// The only header names a frame may carry, lower-cased for comparison.
const (
	headerContentLength = "content-length"
	headerContentType   = "content-type"
)

// FrameCodec is a jsonrpc2.ObjectCodec for the helper protocol's framing:
// a "Content-Length: N" header (and optionally a Content-Type header that
// is ignored), a blank line, then N bytes of JSON, with every line ending
// in CRLF. Reading is strict, because bytes on the helper's stdout that are
// not a frame mean the helper is broken: any other header, a header block
// over MaxHeaderBytes, a body over the cap or a body that is not JSON is an
// error, and the reader fails at the first byte that cannot start a valid
// header rather than waiting for more.
type FrameCodec struct {
	// MaxReadBytes caps the body of a frame read; 0 means
	// DefaultMaxResponseBytes.
	MaxReadBytes int64
	// MaxWriteBytes caps the body of a frame written; 0 means
	// MaxRequestBytes.
	MaxWriteBytes int64
}

func (c FrameCodec) readCap() int64 {
	if c.MaxReadBytes > 0 {
		return c.MaxReadBytes
	}
	return DefaultMaxResponseBytes
}

func (c FrameCodec) writeCap() int64 {
	if c.MaxWriteBytes > 0 {
		return c.MaxWriteBytes
	}
	return MaxRequestBytes
}

// WriteObject marshals obj and writes it as one frame. A body over the
// write cap is refused (wrapping ErrTooLarge) before anything is written,
// so the stream stays usable.
func (c FrameCodec) WriteObject(stream io.Writer, obj any) error {
	body, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encoding frame body: %w", err)
	}
	return c.writeFrame(stream, body)
}

func (c FrameCodec) writeFrame(stream io.Writer, body []byte) error {
	if int64(len(body)) > c.writeCap() {
		return fmt.Errorf("writing frame: body is %d bytes, over the %d-byte cap: %w", len(body), c.writeCap(), ErrTooLarge)
	}
	frame := make([]byte, 0, len(body)+32)
	frame = append(frame, "Content-Length: "...)
	frame = strconv.AppendInt(frame, int64(len(body)), 10)
	frame = append(frame, "\r\n\r\n"...)
	frame = append(frame, body...)
	if _, err := stream.Write(frame); err != nil {
		return fmt.Errorf("writing frame: %w", err)
	}
	return nil
}

// ReadObject reads one frame and unmarshals its body into v. It returns
// io.EOF only when the stream ends cleanly between frames; a stream that
// ends inside a frame gives an error wrapping io.ErrUnexpectedEOF.
func (c FrameCodec) ReadObject(stream *bufio.Reader, v any) error {
	return c.decode(stream, v, nil)
}

// decode reads one frame, passes its body through transform (when not
// nil) and unmarshals the result into v.
func (c FrameCodec) decode(stream *bufio.Reader, v any, transform func([]byte) []byte) error {
	body, err := c.readFrame(stream)
	if err != nil {
		return err
	}
	if transform != nil {
		body = transform(body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("decoding frame body %s: %w", quoteSnippet(body), err)
	}
	return nil
}

// readFrame reads one frame and returns its body.
func (c FrameCodec) readFrame(r *bufio.Reader) ([]byte, error) {
	length, err := readHeader(r, c.readCap())
	if err != nil {
		return nil, err
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("reading %d-byte frame body: %w", length, err)
	}
	return body, nil
}

// readHeader reads a header block up to and including its blank line and
// returns the Content-Length, checked against maxBody.
func readHeader(r *bufio.Reader, maxBody int64) (int64, error) {
	var (
		total     int         // header bytes read so far
		line      []byte      // the current line, without its CRLF
		nameEnd          = -1 // index of the ':' in line, -1 before it
		length    int64  = -1
		seenType  bool
		sawCR     bool
		lineStart = true
	)
	for {
		b, err := r.ReadByte()
		if err != nil {
			if errors.Is(err, io.EOF) {
				if total == 0 {
					return 0, io.EOF
				}
				err = io.ErrUnexpectedEOF
			}
			return 0, fmt.Errorf("reading frame header: %w", err)
		}
		total++
		if total > MaxHeaderBytes {
			return 0, fmt.Errorf("frame header is longer than %d bytes", MaxHeaderBytes)
		}
		switch {
		case sawCR:
			if b != '\n' {
				return 0, headerError(r, line, b, "a CR not followed by LF in a frame header")
			}
			if lineStart { // the blank line that ends the block
				if length < 0 {
					return 0, errors.New("frame header has no Content-Length")
				}
				return length, nil
			}
			if nameEnd < 0 {
				return 0, headerError(r, line, b, "a frame header line without a colon")
			}
			name := string(bytes.ToLower(line[:nameEnd]))
			value := string(bytes.Trim(line[nameEnd+1:], " \t"))
			switch name {
			case headerContentLength:
				if length >= 0 {
					return 0, errors.New("frame header has two Content-Length lines")
				}
				n, err := parseLength(value)
				if err != nil {
					return 0, err
				}
				if n > maxBody {
					return 0, fmt.Errorf("frame body of %d bytes is over the %d-byte cap: %w", n, maxBody, ErrTooLarge)
				}
				length = n
			case headerContentType:
				if seenType {
					return 0, errors.New("frame header has two Content-Type lines")
				}
				seenType = true
			}
			line, nameEnd, sawCR, lineStart = line[:0], -1, false, true
		case b == '\r':
			sawCR = true
		case b == '\n':
			return 0, headerError(r, line, b, "a frame header line ending in LF instead of CRLF")
		case nameEnd < 0 && b == ':':
			name := string(bytes.ToLower(line))
			if name != headerContentLength && name != headerContentType {
				return 0, headerError(r, line, b, "a header other than Content-Length or Content-Type")
			}
			nameEnd = len(line)
			line = append(line, b)
			lineStart = false
		case nameEnd < 0:
			// Fail at the first byte that cannot lead to an allowed name,
			// so garbage is caught without waiting for a line end.
			line = append(line, b)
			lineStart = false
			name := bytes.ToLower(line)
			if !bytes.HasPrefix([]byte(headerContentLength), name) && !bytes.HasPrefix([]byte(headerContentType), name) {
				return 0, headerError(r, line[:len(line)-1], b, "unexpected bytes where a frame header should be")
			}
		default:
			if b != '\t' && (b < 0x20 || b > 0x7e) {
				return 0, headerError(r, line, b, "a control or non-ASCII byte in a frame header")
			}
			line = append(line, b)
		}
	}
}

// parseLength parses a Content-Length value: decimal digits only.
func parseLength(value string) (int64, error) {
	if value == "" || len(value) > 18 {
		return 0, fmt.Errorf("frame Content-Length %q is not a byte count", value)
	}
	for i := 0; i < len(value); i++ {
		if value[i] < '0' || value[i] > '9' {
			return 0, fmt.Errorf("frame Content-Length %q is not a byte count", value)
		}
	}
	n, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("frame Content-Length %q is not a byte count", value)
	}
	if n == 0 {
		return 0, errors.New("frame Content-Length is 0; a body must hold a JSON value")
	}
	return n, nil
}

// headerError describes a malformed header, quoting the bytes read on the
// line so far, the offending byte and whatever is already buffered after
// it (without blocking for more), so the log shows what the helper wrote.
func headerError(r *bufio.Reader, line []byte, b byte, what string) error {
	seen := append(append([]byte(nil), line...), b)
	if n := min(r.Buffered(), 64); n > 0 {
		more, _ := r.Peek(n)
		seen = append(seen, more...)
	}
	return fmt.Errorf("%s: %s", what, quoteSnippet(seen))
}

// quoteSnippet quotes at most the first 80 bytes of b for an error message.
func quoteSnippet(b []byte) string {
	const limit = 80
	if len(b) <= limit {
		return strconv.Quote(string(b))
	}
	return strconv.Quote(string(b[:limit])) + fmt.Sprintf("… (%d bytes)", len(b))
}
