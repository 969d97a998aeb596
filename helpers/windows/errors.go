package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// An error code of the protocol (helpers/PROTOCOL.md, "Errors").
type errorCode string

const (
	codeParseError           errorCode = "parse_error"
	codeInvalidRequest       errorCode = "invalid_request"
	codeMethodNotFound       errorCode = "method_not_found"
	codeInvalidParams        errorCode = "invalid_params"
	codeInternal             errorCode = "internal"
	codeDisplayUnavailable   errorCode = "display_unavailable"
	codeOutOfBounds          errorCode = "out_of_bounds"
	codeNoSuchDisplay        errorCode = "no_such_display"
	codeNoSuchWindow         errorCode = "no_such_window"
	codeNoCapture            errorCode = "no_capture"
	codeClipboardUnavailable errorCode = "clipboard_unavailable"
	codeUnsupported          errorCode = "unsupported"
	codeHandshakeRequired    errorCode = "handshake_required"
	codeIncompatibleProtocol errorCode = "incompatible_protocol"
	codeCaptureFailed        errorCode = "capture_failed"
	codeA11yUnavailable      errorCode = "a11y_unavailable"
	codeStaleElement         errorCode = "stale_element"
)

var errorTable = map[errorCode]struct {
	number int
	hint   string
}{
	codeParseError:           {-32700, "Send Content-Length framed JSON-RPC 2.0."},
	codeInvalidRequest:       {-32600, "Send one JSON-RPC 2.0 request object per frame, under 1 MiB."},
	codeMethodNotFound:       {-32601, "See helpers/PROTOCOL.md for the methods."},
	codeInvalidParams:        {-32602, "Fix the params; helpers/PROTOCOL.md lists each method's."},
	codeInternal:             {-32603, "This is a bug in the helper; report it with the message."},
	codeDisplayUnavailable:   {-32001, "Run the helper in an interactive desktop session."},
	codeOutOfBounds:          {-32002, "Use a point or rectangle inside the screen; call displays for the geometry."},
	codeNoSuchDisplay:        {-32003, "Call displays for the ids."},
	codeNoSuchWindow:         {-32004, "Call windows for the current ids."},
	codeNoCapture:            {-32005, "Call capture first."},
	codeClipboardUnavailable: {-32006, "Copy some text first."},
	codeUnsupported:          {-32007, "This Windows helper cannot do this; check the handshake's capabilities."},
	codeHandshakeRequired:    {-32008, "Call handshake first."},
	codeIncompatibleProtocol: {-32009, "Offer protocol version 1."},
	codeCaptureFailed:        {-32010, "Try again; the screen may be locked or on a secure desktop."},
	codeA11yUnavailable:      {-32012, "UI Automation is not available in this session."},
	codeStaleElement:         {-32013, "Read the tree again."},
}

// rpcError is a JSON-RPC error object with the protocol's data.
type rpcError struct {
	Code    int     `json:"code"`
	Message string  `json:"message"`
	Data    errData `json:"data"`
}

type errData struct {
	Code    errorCode `json:"code"`
	Hint    string    `json:"hint"`
	Actions []string  `json:"actions,omitempty"`
	Changed string    `json:"changed,omitempty"`
	Node    *node     `json:"node,omitempty"`
}

func newError(code errorCode, format string, args ...any) *rpcError {
	e := errorTable[code]
	return &rpcError{Code: e.number, Message: fmt.Sprintf(format, args...), Data: errData{Code: code, Hint: e.hint}}
}

// decode reads params into v strictly: a member of the wrong type is
// invalid_params (json.Unmarshal refuses 80.5 for an int, "80" for a
// number, -1 for an unsigned id).
func decode(params json.RawMessage, v any) *rpcError {
	d := json.NewDecoder(bytes.NewReader(params))
	if err := d.Decode(v); err != nil {
		return newError(codeInvalidParams, "bad params: %v", err)
	}
	return nil
}

func (e *rpcError) Error() string { return e.Message }

// asRPC turns a platform error into the protocol error to answer:
// the platform's own, else fallback.
func asRPC(err error, fallback errorCode) *rpcError {
	var e *rpcError
	if errors.As(err, &e) {
		return e
	}
	return newError(fallback, "%v", err)
}
