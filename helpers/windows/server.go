package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strconv"
	"strings"
	"time"
)

// Frame limits (helpers/PROTOCOL.md, "Transport").
const (
	maxHeaderBytes  = 1024
	maxRequestBytes = 1 << 20
)

// server answers one client on a byte stream. It is written by hand rather
// than on a JSON-RPC library because the protocol fixes what a broken frame
// gets (one answer with id null, then exit 2), what a body that is not a
// request gets, and the order of its checks, which no library exposes.
type server struct {
	out       io.Writer
	desk      desktop
	a11y      *accessibility
	faults    bool // DESKHAND_HELPER_FAULTS=1
	shook     bool // a handshake succeeded
	last      *lastCapture
	captureID int
}

// exitError ends serve with a status.
type exitError int

func (e exitError) Error() string { return "exit " + strconv.Itoa(int(e)) }

// serve reads requests from in until end of file, an exit notification or
// a broken frame, and returns the process's exit status.
func serve(in io.Reader, out io.Writer, desk desktop, a11y automation, faults bool) int {
	s := &server{out: out, desk: desk, a11y: &accessibility{api: a11y}, faults: faults}
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		body, err := readFrame(r)
		var fe *frameError
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return 0
		case errors.As(err, &fe):
			log.Printf("ERROR %v", fe.err)
			s.write(json.RawMessage("null"), nil, fe.rpc)
			return 2
		case err != nil:
			log.Printf("ERROR reading stdin: %v", err)
			return 0
		}
		if err := s.handle(body); err != nil {
			var code exitError
			if errors.As(err, &code) {
				return int(code)
			}
			log.Printf("ERROR %v", err)
			return 1
		}
	}
}

// frameError is a frame that cannot be read: framing is lost.
type frameError struct {
	rpc *rpcError
	err error
}

func (e *frameError) Error() string { return e.err.Error() }

func badFrame(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &frameError{rpc: newError(codeParseError, "%v", err), err: err}
}

// readFrame reads a header block and the body it announces.
func readFrame(r *bufio.Reader) ([]byte, error) {
	length, total, first := -1, 0, true
	for {
		var line []byte
		for {
			b, err := r.ReadByte()
			if err != nil {
				if errors.Is(err, io.EOF) && first && len(line) == 0 {
					return nil, io.EOF
				}
				return nil, io.ErrUnexpectedEOF
			}
			total++
			if total > maxHeaderBytes {
				return nil, badFrame("frame header is longer than %d bytes", maxHeaderBytes)
			}
			line = append(line, b)
			if b == '\n' {
				break
			}
			// Text that cannot begin a header (unframed JSON) is refused
			// at once rather than after its line.
			if len(line) == 1 && b != '\r' && !strings.ContainsRune("cC", rune(b)) {
				return nil, badFrame("unexpected byte %q where a frame header should be", b)
			}
		}
		first = false
		if !bytes.HasSuffix(line, []byte("\r\n")) {
			return nil, badFrame("frame header line %q does not end in CRLF", line)
		}
		line = line[:len(line)-2]
		if len(line) == 0 {
			break
		}
		name, value, ok := strings.Cut(string(line), ":")
		switch strings.ToLower(name) {
		case "content-type":
		case "content-length":
			value = strings.Trim(value, " \t")
			n, err := strconv.Atoi(value)
			if !ok || err != nil || n < 0 || value == "" || strings.TrimLeft(value, "0123456789") != "" {
				return nil, badFrame("frame Content-Length %q is not a byte count", value)
			}
			length = n
		default:
			return nil, badFrame("unexpected frame header %q", line)
		}
	}
	if length < 0 {
		return nil, badFrame("frame header has no Content-Length")
	}
	if length > maxRequestBytes {
		err := fmt.Errorf("request body of %d bytes is over the %d-byte cap", length, maxRequestBytes)
		return nil, &frameError{rpc: newError(codeInvalidRequest, "%v", err), err: err}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, io.ErrUnexpectedEOF
	}
	return body, nil
}

// write sends one response frame.
func (s *server) write(id json.RawMessage, result any, rpcErr *rpcError) {
	msg := map[string]any{"jsonrpc": "2.0", "id": id}
	if rpcErr != nil {
		msg["error"] = rpcErr
	} else {
		msg["result"] = result
	}
	body, err := json.Marshal(msg)
	if err != nil {
		body, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
			"error": newError(codeInternal, "encoding the response: %v", err)})
	}
	fmt.Fprintf(s.out, "Content-Length: %d\r\n\r\n%s", len(body), body)
}

// handle answers one frame's body. Only an exit comes back as an error.
func (s *server) handle(body []byte) error {
	if !json.Valid(body) {
		s.write(json.RawMessage("null"), nil, newError(codeParseError, "the request body is not JSON"))
		return nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		s.write(json.RawMessage("null"), nil, newError(codeInvalidRequest, "the request is not a JSON object (batches are not supported)"))
		return nil
	}
	id, hasID := fields["id"]
	if hasID && !validID(id) {
		s.write(json.RawMessage("null"), nil, newError(codeInvalidRequest, "the request id is neither a number, a string nor null"))
		return nil
	}
	reply := id
	if !hasID {
		reply = json.RawMessage("null")
	}
	var version, method string
	if json.Unmarshal(fields["jsonrpc"], &version) != nil || version != "2.0" {
		s.write(reply, nil, newError(codeInvalidRequest, `the request lacks "jsonrpc": "2.0"`))
		return nil
	}
	if json.Unmarshal(fields["method"], &method) != nil {
		s.write(reply, nil, newError(codeInvalidRequest, "the request method is not a string"))
		return nil
	}
	if !hasID {
		if method == "exit" {
			return exitError(0)
		}
		return nil // other notifications are ignored
	}
	result, rpcErr := s.call(method, fields["params"])
	if result == (noAnswer{}) {
		return nil
	}
	s.write(id, result, rpcErr)
	if method == "exit" && rpcErr == nil {
		return exitError(0)
	}
	return nil
}

func validID(id json.RawMessage) bool {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case nil, string, float64:
		return true
	}
	return false
}

// method is one protocol method: its handler, and whether it may run
// before the handshake.
type method struct {
	run         func(s *server, params json.RawMessage) (any, *rpcError)
	noHandshake bool
	fault       bool // only with DESKHAND_HELPER_FAULTS=1
}

var methods map[string]method

func init() {
	methods = map[string]method{
		"handshake":       {run: (*server).handshake, noHandshake: true},
		"exit":            {run: func(*server, json.RawMessage) (any, *rpcError) { return struct{}{}, nil }, noHandshake: true},
		"displays":        {run: (*server).displays},
		"capture":         {run: (*server).capture},
		"windows":         {run: (*server).windows},
		"window_at":       {run: (*server).windowAt},
		"patch_check":     {run: (*server).patchCheck},
		"patch_baseline":  {run: (*server).patchBaseline},
		"clipboard_read":  {run: (*server).clipboardRead},
		"clipboard_write": {run: (*server).clipboardWrite},
		"hide":            {run: (*server).hide},
		"restore":         {run: (*server).restore},
		"teach_show":      {run: (*server).teachShow},
		"teach_poll": {run: func(*server, json.RawMessage) (any, *rpcError) {
			return map[string]any{"visible": false, "choice": nil}, nil
		}},
		"teach_hide":    {run: func(*server, json.RawMessage) (any, *rpcError) { return struct{}{}, nil }},
		"a11y_apps":     {run: (*server).a11yApps},
		"a11y_tree":     {run: (*server).a11yTree},
		"a11y_element":  {run: (*server).a11yElement},
		"a11y_act":      {run: (*server).a11yAct},
		"fault.sleep":   {run: faultSleep, noHandshake: true, fault: true},
		"fault.exit":    {run: faultExit, noHandshake: true, fault: true},
		"fault.garbage": {run: faultGarbage, noHandshake: true, fault: true},
	}
}

func (s *server) call(name string, params json.RawMessage) (any, *rpcError) {
	m, ok := methods[name]
	if !ok || (m.fault && !s.faults) {
		return nil, newError(codeMethodNotFound, "unknown method %q", name)
	}
	if !m.noHandshake && !s.shook {
		return nil, newError(codeHandshakeRequired, "call handshake before %s", name)
	}
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	if params[0] != '{' {
		return nil, newError(codeInvalidParams, "params of %s must be an object", name)
	}
	return m.run(s, params)
}

// helperVersion is reported in the handshake.
const helperVersion = "0.1.0"

func (s *server) handshake(params json.RawMessage) (any, *rpcError) {
	var p struct {
		Versions      *[]int    `json:"protocol_versions"`
		Client        *string   `json:"client"`
		Notifications *[]string `json:"notifications"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Versions == nil {
		return nil, newError(codeInvalidParams, "handshake needs protocol_versions, a list of integers")
	}
	found := false
	for _, v := range *p.Versions {
		found = found || v == 1
	}
	if !found {
		return nil, newError(codeIncompatibleProtocol, "none of the protocol versions %v is spoken; this helper speaks 1", *p.Versions)
	}
	if p.Client != nil {
		log.Printf("INFO handshake from %s", *p.Client)
	}
	s.shook = true
	// Only what works is listed: no windows_epoch, screen_changes, teach,
	// PRIMARY or cut buffer on Windows; a11y only where UI Automation
	// exists (not under Wine 8).
	caps := []string{"displays", "capture", "capture.mask", "capture.png", "capture.jpeg",
		"windows", "window_at", "patch_check", "clipboard", "hide"}
	result := map[string]any{
		"protocol_version": 1, "helper_version": helperVersion, "platform": "windows",
		"display": nil, "extensions": map[string]any{"gdi": true, "dxgi": false},
	}
	if err := s.a11y.available(); err == nil {
		caps = append(caps, "a11y", "a11y.expect")
		result["extensions"].(map[string]any)["uia"] = true
	} else {
		result["extensions"].(map[string]any)["uia"] = false
		result["a11y_error"] = err.Error()
	}
	result["capabilities"] = caps
	return result, nil
}

func (s *server) teachShow(params json.RawMessage) (any, *rpcError) {
	var p struct {
		Explanation *string `json:"explanation"`
		NextPreview *string `json:"next_preview"`
		Anchor      *struct {
			X *int `json:"x"`
			Y *int `json:"y"`
		} `json:"anchor"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Explanation == nil || p.NextPreview == nil {
		return nil, newError(codeInvalidParams, "teach_show needs explanation and next_preview, both strings")
	}
	if p.Anchor != nil && (p.Anchor.X == nil || p.Anchor.Y == nil) {
		return nil, newError(codeInvalidParams, "anchor needs integer x and y")
	}
	return nil, newError(codeUnsupported, "the teaching tooltip is not implemented on Windows")
}

func faultSleep(_ *server, params json.RawMessage) (any, *rpcError) {
	var p struct {
		Ms *int `json:"ms"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Ms == nil || *p.Ms < 0 || *p.Ms > 600000 {
		return nil, newError(codeInvalidParams, "ms must be an integer in 0..=600000")
	}
	time.Sleep(time.Duration(*p.Ms) * time.Millisecond)
	return struct{}{}, nil
}

func faultExit(_ *server, params json.RawMessage) (any, *rpcError) {
	var p struct {
		Code *int `json:"code"`
	}
	if err := decode(params, &p); err != nil {
		return nil, err
	}
	if p.Code == nil || *p.Code < 0 || *p.Code > 255 {
		return nil, newError(codeInvalidParams, "code must be an integer in 0..=255")
	}
	os.Exit(*p.Code)
	return nil, nil
}

func faultGarbage(s *server, _ json.RawMessage) (any, *rpcError) {
	fmt.Fprint(s.out, "this is not a frame\n")
	return noAnswer{}, nil
}

// noAnswer is the result of a method that answers nothing.
type noAnswer struct{}
