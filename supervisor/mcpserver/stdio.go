package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits on one incoming stdio frame. The largest sensible request is a
// clipboard write of maxClipboardBytes, which JSON escaping can grow
// about sixfold; nothing the server accepts nests more than a handful of
// levels.
const (
	DefaultMaxLineBytes = 4 << 20
	maxNesting          = 64
)

// StdioTransport is an mcp.Transport over newline-delimited JSON-RPC, as
// the MCP stdio transport specifies it, that screens every incoming line
// before the SDK sees it. The SDK's own stdio transport ends the session
// on the first line it cannot decode (not JSON, a batch, a bad id or
// version, nesting beyond its decoder's depth, an over-long line), so one
// malformed line would stop the server; this one answers such a line with
// a JSON-RPC error itself and goes on to the next.
//
// A line is one frame: MCP forbids newlines inside a message. Blank
// lines are skipped. Batches are refused: MCP 2025-06-18 removed them,
// and no client sends them to a stdio server.
type StdioTransport struct {
	Reader io.Reader
	Writer io.Writer
	// MaxLineBytes caps one incoming line; 0 means DefaultMaxLineBytes.
	MaxLineBytes int
	// Logger receives a record of each refused line; nil discards them.
	Logger *slog.Logger

	// splice, set by Server.Run, puts screenshots into the frames that
	// carry their placeholders.
	splice *imageSplicer
}

// Connect starts reading t.Reader.
func (t *StdioTransport) Connect(context.Context) (mcp.Connection, error) {
	limit := t.MaxLineBytes
	if limit <= 0 {
		limit = DefaultMaxLineBytes
	}
	log := t.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &stdioConn{w: t.Writer, log: log, splice: t.splice, incoming: make(chan readResult), closed: make(chan struct{})}
	go c.readLoop(t.Reader, limit)
	return c, nil
}

type readResult struct {
	msg jsonrpc.Message
	err error
}

type stdioConn struct {
	log    *slog.Logger
	splice *imageSplicer // nil: results carry their images themselves

	// wmu keeps the SDK's frames and the refusals written from the read
	// loop whole and apart on the one output stream.
	wmu sync.Mutex
	w   io.Writer

	incoming  chan readResult
	closeOnce sync.Once
	closed    chan struct{}
}

// readLoop reads lines until EOF or a read error, passes good messages to
// Read and answers bad ones. Like the SDK's, it outlives Close while a
// read of stdin is blocked: there is no portable way to interrupt one.
func (c *stdioConn) readLoop(r io.Reader, limit int) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, tooLong, err := readLine(br, limit)
		var msg jsonrpc.Message
		switch {
		case tooLong:
			c.refuse(&refusal{code: jsonrpc.CodeInvalidRequest, message: fmt.Sprintf("Invalid Request: the line is over the limit of %d bytes and was discarded; send smaller requests (one JSON-RPC message per line)", limit)})
		case len(line) > 0:
			// Some Windows tools start a UTF-8 stream with a byte order mark.
			line = bytes.TrimPrefix(line, []byte("\ufeff"))
			if len(line) == 0 {
				break
			}
			var ref *refusal
			msg, ref = screen(line)
			if ref != nil {
				c.refuse(ref)
			}
		}
		if msg != nil {
			select {
			case c.incoming <- readResult{msg: msg}:
			case <-c.closed:
				return
			}
		}
		if err != nil {
			select {
			case c.incoming <- readResult{err: err}:
			case <-c.closed:
			}
			return
		}
	}
}

// readLine returns the next line without its line ending, or reports
// that it was longer than limit, in which case the rest of it is read and
// dropped without being held in memory. err is set at the end of input,
// with the last unterminated line, if any, in line.
func readLine(br *bufio.Reader, limit int) (line []byte, tooLong bool, err error) {
	for {
		chunk, rerr := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > limit+2 { // +2: the line ending
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		switch {
		case rerr == nil:
			return bytes.TrimSpace(line), tooLong, nil
		case errors.Is(rerr, bufio.ErrBufferFull):
			continue
		default:
			return bytes.TrimSpace(line), tooLong, rerr
		}
	}
}

// refusal is the error answer to a bad line.
type refusal struct {
	id      *jsonrpc.ID // nil: the line has no usable id, and null is sent
	code    int64
	message string
}

func (r *refusal) Error() string { return r.message }

func (c *stdioConn) refuse(r *refusal) {
	c.log.Warn("refusing a malformed request", "code", r.code, "reason", r.message)
	var id any
	if r.id != nil {
		id = r.id.Raw()
	}
	frame, err := json.Marshal(struct {
		Version string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{Version: "2.0", ID: id, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{r.code, r.message}})
	if err != nil {
		c.log.Error("encoding a refusal", "err", err)
		return
	}
	if err := c.writeFrame(frame); err != nil {
		c.log.Debug("writing a refusal", "err", err)
	}
}

func (c *stdioConn) writeFrame(frame []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(frame, '\n'))
	return err
}

// screen decodes one line into a message, or says why it is not one, with
// the id to answer to when the line has a usable one. It decodes the line
// once, keeping params, result and error raw; the UTF-8 and nesting checks
// are single passes over the bytes.
func screen(line []byte) (jsonrpc.Message, *refusal) {
	switch line[0] {
	case '[':
		return nil, &refusal{code: jsonrpc.CodeInvalidRequest, message: "Invalid Request: JSON-RPC batches are not supported (MCP removed them in 2025-06-18); send each request on its own line"}
	case '{':
	default:
		if json.Valid(line) {
			return nil, &refusal{code: jsonrpc.CodeInvalidRequest, message: fmt.Sprintf("Invalid Request: a request must be a JSON object, got %s", abbreviate(line))}
		}
		return nil, parseError(line, nil)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return nil, parseError(line, err)
	}
	id, hasID, idErr := decodeID(fields)
	var idp *jsonrpc.ID
	if hasID && idErr == nil {
		idp = &id
	}
	invalid := func(format string, args ...any) *refusal {
		return &refusal{id: idp, code: jsonrpc.CodeInvalidRequest, message: "Invalid Request: " + fmt.Sprintf(format, args...)}
	}
	if v := fields["jsonrpc"]; !bytes.Equal(v, []byte(`"2.0"`)) {
		if v == nil {
			return nil, invalid(`"jsonrpc" is missing; it must be "2.0"`)
		}
		return nil, invalid(`"jsonrpc" is %s; it must be "2.0"`, abbreviate(v))
	}
	if idErr != nil {
		return nil, invalid("%v", idErr)
	}
	if !utf8.Valid(line) {
		return nil, &refusal{id: idp, code: jsonrpc.CodeParseError, message: "Parse error: the request is not valid UTF-8; send UTF-8 JSON"}
	}
	if n := nesting(line); n > maxNesting {
		return nil, invalid("it nests %d levels deep, over the limit of %d", n, maxNesting)
	}
	if rawMethod, ok := fields["method"]; ok {
		var method string
		if err := json.Unmarshal(rawMethod, &method); err != nil || rawMethod[0] != '"' {
			return nil, invalid(`"method" must be a string, got %s`, abbreviate(rawMethod))
		}
		return &jsonrpc.Request{ID: id, Method: method, Params: fields["params"]}, nil
	}
	// No method: a response to one of the server's requests
	// (elicitation, roots, sampling, ping).
	rawResult, hasResult := fields["result"]
	rawErr, hasErr := fields["error"]
	if !hasID || (!hasResult && !hasErr) {
		return nil, invalid(`it has no "method"; name the method to call, e.g. "tools/list"`)
	}
	resp := &jsonrpc.Response{ID: id, Result: rawResult}
	if hasErr {
		var we jsonrpc.Error
		if err := json.Unmarshal(rawErr, &we); err != nil {
			// Fail the server's pending call instead of leaving it waiting.
			we = jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the client sent a malformed error object: " + abbreviate(rawErr)}
		}
		resp.Error = &we
	}
	return resp, nil
}

func parseError(line []byte, err error) *refusal {
	if err == nil {
		err = json.Unmarshal(line, new(any))
	}
	if err == nil {
		err = errors.New("unexpected data")
	}
	return &refusal{code: jsonrpc.CodeParseError, message: fmt.Sprintf("Parse error: the line is not JSON (%v); send one JSON-RPC 2.0 request object per line", err)}
}

// decodeID reads the "id" field. MCP allows a string or an integer, not
// null.
func decodeID(fields map[string]json.RawMessage) (id jsonrpc.ID, present bool, err error) {
	raw, ok := fields["id"]
	if !ok {
		return jsonrpc.ID{}, false, nil
	}
	switch {
	case len(raw) > 0 && raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return jsonrpc.ID{}, true, fmt.Errorf(`"id" %s is not a valid string`, abbreviate(raw))
		}
		id, err := jsonrpc.MakeID(s)
		return id, true, err
	case len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')):
		// Integers a float64 holds exactly: the SDK keeps ids as int64
		// made from float64.
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil && f == math.Trunc(f) && math.Abs(f) <= 1<<53 {
			id, err := jsonrpc.MakeID(f)
			return id, true, err
		}
	}
	return jsonrpc.ID{}, true, fmt.Errorf(`"id" must be a string or an integer, got %s`, abbreviate(raw))
}

// nesting returns how deeply the JSON text b nests objects and arrays,
// ignoring brackets inside strings.
func nesting(b []byte) int {
	depth, deepest := 0, 0
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}

func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case r := <-c.incoming:
		return r.msg, r.err
	case <-c.closed:
		return nil, io.EOF
	}
}

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.splice != nil {
		frame, err := c.splice.frame(msg)
		if err != nil {
			return err
		}
		if frame != nil {
			return c.writeFrame(frame)
		}
	}
	frame, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	return c.writeFrame(frame)
}

func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return nil
}

func (c *stdioConn) SessionID() string { return "" }
