//! The helper's error type: every failure carries a stable code from
//! helpers/PROTOCOL.md and a hint that tells the user what to do.

use std::fmt;

/// Stable error codes of the helper protocol (helpers/PROTOCOL.md, "Errors").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    ParseError,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    Internal,
    DisplayUnavailable,
    OutOfBounds,
    NoSuchDisplay,
    NoSuchWindow,
    NoCapture,
    ClipboardUnavailable,
    Unsupported,
    HandshakeRequired,
    IncompatibleProtocol,
    CaptureFailed,
    PermissionDenied,
    A11yUnavailable,
    StaleElement,
}

impl Code {
    /// The JSON-RPC numeric error code.
    pub fn number(self) -> i64 {
        match self {
            Code::ParseError => -32700,
            Code::InvalidRequest => -32600,
            Code::MethodNotFound => -32601,
            Code::InvalidParams => -32602,
            Code::Internal => -32603,
            Code::DisplayUnavailable => -32001,
            Code::OutOfBounds => -32002,
            Code::NoSuchDisplay => -32003,
            Code::NoSuchWindow => -32004,
            Code::NoCapture => -32005,
            Code::ClipboardUnavailable => -32006,
            Code::Unsupported => -32007,
            Code::HandshakeRequired => -32008,
            Code::IncompatibleProtocol => -32009,
            Code::CaptureFailed => -32010,
            Code::PermissionDenied => -32011,
            Code::A11yUnavailable => -32012,
            Code::StaleElement => -32013,
        }
    }

    /// The stable string code carried in `error.data.code`.
    pub fn name(self) -> &'static str {
        match self {
            Code::ParseError => "parse_error",
            Code::InvalidRequest => "invalid_request",
            Code::MethodNotFound => "method_not_found",
            Code::InvalidParams => "invalid_params",
            Code::Internal => "internal",
            Code::DisplayUnavailable => "display_unavailable",
            Code::OutOfBounds => "out_of_bounds",
            Code::NoSuchDisplay => "no_such_display",
            Code::NoSuchWindow => "no_such_window",
            Code::NoCapture => "no_capture",
            Code::ClipboardUnavailable => "clipboard_unavailable",
            Code::Unsupported => "unsupported",
            Code::HandshakeRequired => "handshake_required",
            Code::IncompatibleProtocol => "incompatible_protocol",
            Code::CaptureFailed => "capture_failed",
            Code::PermissionDenied => "permission_denied",
            Code::A11yUnavailable => "a11y_unavailable",
            Code::StaleElement => "stale_element",
        }
    }
}

/// A protocol-level failure: what went wrong and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: Code,
    pub message: String,
    pub hint: String,
    /// Extra members of `error.data` beside code and hint (for example the
    /// actions an element does expose).
    pub data: serde_json::Map<String, serde_json::Value>,
}

impl Error {
    pub fn new(code: Code, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            hint: hint.into(),
            data: serde_json::Map::new(),
        }
    }

    /// Adds a member to `error.data`.
    pub fn with_data(mut self, key: &str, value: serde_json::Value) -> Self {
        self.data.insert(key.to_owned(), value);
        self
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Error::new(
            Code::InvalidParams,
            message,
            "Fix the request parameters; see helpers/PROTOCOL.md for each method's params.",
        )
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(
            Code::Internal,
            message,
            "This is a bug in deskhand-helper; please report it with the helper's stderr log.",
        )
    }

    pub fn out_of_bounds(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Error::new(Code::OutOfBounds, message, hint)
    }

    pub fn method_not_found(method: &str) -> Self {
        Error::new(
            Code::MethodNotFound,
            format!("unknown method {method:?}"),
            "Check the method name against helpers/PROTOCOL.md and the handshake's capabilities.",
        )
    }

    pub fn capture_failed(message: impl Into<String>) -> Self {
        Error::new(
            Code::CaptureFailed,
            message,
            "Retry the capture; if it keeps failing, check the X server's log and the helper's stderr.",
        )
    }

    /// An X11 request or connection failure, reported as the display being
    /// unavailable: the usual cause is a server that went away.
    pub fn x11(context: &str, err: impl fmt::Display) -> Self {
        Error::new(
            Code::DisplayUnavailable,
            format!("{context}: {err}"),
            "Check that the X server is still running and DISPLAY points at it.",
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code.name())
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
