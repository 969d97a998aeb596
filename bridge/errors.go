package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sourcegraph/jsonrpc2"
)

// Errors a Client returns, wrapped with what happened. Test for them with
// errors.Is; the wrapping message says what to do.
var (
	// ErrClosed means the Client was closed; it starts no more helpers.
	ErrClosed = errors.New("helper client is closed")

	// ErrHelperExited means the helper process exited (crashed, was
	// killed, or stopped on its own) while a call needed it. The message
	// gives the exit status or signal and the helper's last log line; the
	// next call starts a new helper.
	ErrHelperExited = errors.New("capture helper exited")

	// ErrHelperHung means the helper did not answer within the deadline;
	// the Client killed its process group and the next call starts a new
	// helper.
	ErrHelperHung = errors.New("capture helper stopped answering")

	// ErrProtocol means the helper wrote something that is not a valid
	// frame or JSON-RPC response on stdout (or closed it while running);
	// the Client killed it and the next call starts a new helper.
	ErrProtocol = errors.New("capture helper broke the protocol")

	// ErrIncompatible means the helper speaks none of the protocol
	// versions this Client offers.
	ErrIncompatible = errors.New("capture helper speaks an incompatible protocol version")

	// ErrCrashLoop means the helper failed too often within the restart
	// window (Options.MaxRestarts within Options.RestartWindow); the Client
	// does not restart it again until the window has passed.
	ErrCrashLoop = errors.New("capture helper keeps failing")

	// ErrTooLarge means a frame's body is over its size cap: a request
	// over the helper's 1 MiB limit (for example clipboard text), or a
	// response over Options.MaxMessageBytes.
	ErrTooLarge = errors.New("message over the size cap")
)

// Error codes of the helper protocol (helpers/PROTOCOL.md, "Errors"). Each
// pairs with the stable name in Error.Name.
const (
	CodeParseError           = -32700 // parse_error
	CodeInvalidRequest       = -32600 // invalid_request
	CodeMethodNotFound       = -32601 // method_not_found
	CodeInvalidParams        = -32602 // invalid_params
	CodeInternal             = -32603 // internal
	CodeDisplayUnavailable   = -32001 // display_unavailable
	CodeOutOfBounds          = -32002 // out_of_bounds
	CodeNoSuchDisplay        = -32003 // no_such_display
	CodeNoSuchWindow         = -32004 // no_such_window
	CodeNoCapture            = -32005 // no_capture
	CodeClipboardUnavailable = -32006 // clipboard_unavailable
	CodeUnsupported          = -32007 // unsupported
	CodeHandshakeRequired    = -32008 // handshake_required
	CodeIncompatibleProtocol = -32009 // incompatible_protocol
	CodeCaptureFailed        = -32010 // capture_failed
	CodePermissionDenied     = -32011 // permission_denied
)

// codeNames maps protocol codes to their stable names, for helpers that
// leave data.code out.
var codeNames = map[int]string{
	CodeParseError:           "parse_error",
	CodeInvalidRequest:       "invalid_request",
	CodeMethodNotFound:       "method_not_found",
	CodeInvalidParams:        "invalid_params",
	CodeInternal:             "internal",
	CodeDisplayUnavailable:   "display_unavailable",
	CodeOutOfBounds:          "out_of_bounds",
	CodeNoSuchDisplay:        "no_such_display",
	CodeNoSuchWindow:         "no_such_window",
	CodeNoCapture:            "no_capture",
	CodeClipboardUnavailable: "clipboard_unavailable",
	CodeUnsupported:          "unsupported",
	CodeHandshakeRequired:    "handshake_required",
	CodeIncompatibleProtocol: "incompatible_protocol",
	CodeCaptureFailed:        "capture_failed",
	CodePermissionDenied:     "permission_denied",
}

// Error is an error the helper answered with: the JSON-RPC code, the stable
// name from data.code (for example "out_of_bounds"), the helper's message
// and the hint from data.hint that tells the user or the supervisor what to
// do.
type Error struct {
	Code    int    `json:"code"`
	Name    string `json:"name"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

// Error returns the message followed by the hint, as one or two sentences
// a user can act on.
func (e *Error) Error() string {
	msg := e.Message
	if msg == "" {
		msg = fmt.Sprintf("capture helper error %d", e.Code)
		if e.Name != "" {
			msg += " (" + e.Name + ")"
		}
	}
	if e.Hint == "" {
		return msg
	}
	if !strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "!") && !strings.HasSuffix(msg, "?") {
		msg += "."
	}
	return msg + " " + e.Hint
}

// helperError converts a JSON-RPC error object from the helper into an
// *Error. Data that is missing or malformed only loses the name and hint;
// the name then falls back to the protocol's name for the code.
func helperError(e *jsonrpc2.Error) *Error {
	out := &Error{Code: int(e.Code), Message: e.Message}
	if e.Data != nil {
		var data struct {
			Code string `json:"code"`
			Hint string `json:"hint"`
		}
		if json.Unmarshal(*e.Data, &data) == nil {
			out.Name, out.Hint = data.Code, data.Hint
		}
	}
	if out.Name == "" {
		out.Name = codeNames[out.Code]
	}
	return out
}
