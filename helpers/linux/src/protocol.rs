//! Framing and JSON-RPC 2.0 messages (helpers/PROTOCOL.md, "Transport").
//!
//! Every message is `Content-Length: N\r\n\r\n` followed by N bytes of JSON.
//! The reader is strict on purpose: a stream it cannot frame is reported at
//! once instead of being guessed at, because after one bad frame every later
//! byte boundary is a guess.

use std::fmt;
use std::io::{self, BufRead, Read, Write};

use serde::Serialize;
use serde_json::Value;

use crate::error::{Code, Error};

/// Longest header block accepted, terminating blank line included.
pub const MAX_HEADER_BYTES: usize = 1024;
/// Largest request body the helper reads.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;
/// Largest response body the helper writes.
pub const MAX_RESPONSE_BYTES: usize = 64 << 20;

/// Why a frame could not be read.
#[derive(Debug)]
pub enum FrameError {
    /// Reading the underlying stream failed.
    Io(io::Error),
    /// The header block is malformed; framing is lost.
    BadHeader(String),
    /// The announced body is over the cap; it was not read.
    TooLarge { len: u64, cap: usize },
    /// The stream ended inside a frame.
    Truncated { expected: u64, got: u64 },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Io(e) => write!(f, "reading a frame: {e}"),
            FrameError::BadHeader(why) => write!(f, "bad frame header: {why}"),
            FrameError::TooLarge { len, cap } => {
                write!(f, "frame body of {len} bytes is over the {cap}-byte cap")
            }
            FrameError::Truncated { expected, got } => write!(
                f,
                "input ended inside a frame ({got} of {expected} bytes read)"
            ),
        }
    }
}

impl std::error::Error for FrameError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FrameError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl FrameError {
    /// The error the peer is told about before the helper gives up on the
    /// stream, or None when there is nobody left to tell.
    pub fn to_protocol_error(&self) -> Option<Error> {
        let hint = "Frame each message as `Content-Length: N\\r\\n\\r\\n` plus N bytes of JSON; the helper exits and must be restarted.";
        match self {
            FrameError::BadHeader(_) => Some(Error::new(Code::ParseError, self.to_string(), hint)),
            FrameError::TooLarge { .. } => Some(Error::new(
                Code::InvalidRequest,
                self.to_string(),
                "Keep requests under 1 MiB (clipboard text included); the helper exits and must be restarted.",
            )),
            FrameError::Io(_) | FrameError::Truncated { .. } => None,
        }
    }
}

impl From<io::Error> for FrameError {
    fn from(e: io::Error) -> Self {
        FrameError::Io(e)
    }
}

/// Reads frames from a byte stream.
pub struct FrameReader<R> {
    inner: R,
    cap: usize,
    header: Vec<u8>,
}

impl<R: BufRead> FrameReader<R> {
    /// A reader that rejects bodies over `cap` bytes.
    pub fn new(inner: R, cap: usize) -> Self {
        FrameReader {
            inner,
            cap,
            header: Vec::with_capacity(MAX_HEADER_BYTES),
        }
    }

    /// The reader frames are read from.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Reads the next frame's body into `body` (replacing its contents).
    /// Returns Ok(false) at a clean end of input (between frames).
    pub fn read_frame(&mut self, body: &mut Vec<u8>) -> Result<bool, FrameError> {
        body.clear();
        let len = match self.read_header()? {
            Some(len) => len,
            None => return Ok(false),
        };
        if len > self.cap as u64 {
            return Err(FrameError::TooLarge { len, cap: self.cap });
        }
        let len = len as usize;
        body.reserve(len);
        let got = (&mut self.inner).take(len as u64).read_to_end(body)?;
        if got < len {
            return Err(FrameError::Truncated {
                expected: len as u64,
                got: got as u64,
            });
        }
        Ok(true)
    }

    /// Reads the header block and returns the Content-Length, or None at a
    /// clean end of input. Each line is checked as soon as it is complete,
    /// so a peer speaking some other framing (say, one JSON object per line)
    /// gets an error at once instead of a helper waiting for more bytes.
    fn read_header(&mut self) -> Result<Option<u64>, FrameError> {
        self.header.clear();
        let mut line_start = 0;
        let mut content_length: Option<u64> = None;
        loop {
            let byte = match self.next_byte()? {
                Some(b) => b,
                None if self.header.is_empty() => return Ok(None),
                None => {
                    return Err(FrameError::Truncated {
                        expected: 0,
                        got: self.header.len() as u64,
                    })
                }
            };
            self.header.push(byte);
            if self.header.len() > MAX_HEADER_BYTES {
                return Err(FrameError::BadHeader(format!(
                    "header block longer than {MAX_HEADER_BYTES} bytes"
                )));
            }
            if self.header.len() == 1 && byte != b'C' && byte != b'c' {
                return Err(FrameError::BadHeader(format!(
                    "expected a Content-Length header, got {}",
                    describe_byte(byte)
                )));
            }
            if byte != b'\n' {
                continue;
            }
            let line = &self.header[line_start..];
            line_start = self.header.len();
            let Some(line) = line.strip_suffix(b"\r\n") else {
                return Err(FrameError::BadHeader(
                    "header line ends with a bare \\n; lines must end with \\r\\n".into(),
                ));
            };
            if line.is_empty() {
                return match content_length {
                    Some(len) => Ok(Some(len)),
                    None => Err(FrameError::BadHeader("no Content-Length header".into())),
                };
            }
            if let Some(len) = parse_header_line(line)? {
                if content_length.is_some() {
                    return Err(FrameError::BadHeader(
                        "more than one Content-Length header".into(),
                    ));
                }
                content_length = Some(len);
            }
        }
    }

    fn next_byte(&mut self) -> io::Result<Option<u8>> {
        loop {
            match self.inner.fill_buf() {
                Ok([]) => return Ok(None),
                Ok(buf) => {
                    let b = buf[0];
                    self.inner.consume(1);
                    return Ok(Some(b));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

fn describe_byte(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("{:?}", b as char)
    } else {
        format!("byte 0x{b:02x}")
    }
}

/// Parses one header line (without its CRLF). Returns the length for a
/// Content-Length line, None for an accepted line that carries nothing.
fn parse_header_line(line: &[u8]) -> Result<Option<u64>, FrameError> {
    let text = std::str::from_utf8(line)
        .map_err(|_| FrameError::BadHeader("header line is not UTF-8".into()))?;
    let shown: String = text.chars().take(60).collect();
    let Some((name, value)) = text.split_once(':') else {
        return Err(FrameError::BadHeader(format!(
            "header line {shown:?} has no colon"
        )));
    };
    let value = value.trim_matches([' ', '\t']);
    if name.eq_ignore_ascii_case("Content-Length") {
        if value.is_empty() || value.len() > 19 || !value.bytes().all(|b| b.is_ascii_digit()) {
            return Err(FrameError::BadHeader(format!(
                "Content-Length {value:?} is not a decimal byte count"
            )));
        }
        // Up to 19 digits always fits in u64.
        Ok(Some(value.parse().expect("at most 19 ASCII digits")))
    } else if name.eq_ignore_ascii_case("Content-Type") {
        Ok(None)
    } else {
        Err(FrameError::BadHeader(format!(
            "unexpected header line {shown:?}"
        )))
    }
}

/// Writes one frame and flushes, so the peer sees it at once.
pub fn write_frame<W: Write + ?Sized>(out: &mut W, body: &[u8]) -> io::Result<()> {
    write!(out, "Content-Length: {}\r\n\r\n", body.len())?;
    out.write_all(body)?;
    out.flush()
}

/// Appends one frame to a buffer (for tests and corpus generation).
pub fn encode_frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

/// One decoded message.
#[derive(Debug, PartialEq)]
pub enum Message {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
    },
}

/// Decodes a frame body into a message. The error carries the id to answer
/// with (null when the request's id could not be read).
pub fn parse_message(body: &[u8]) -> Result<Message, (Value, Error)> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        (
            Value::Null,
            Error::new(
                Code::ParseError,
                format!("the frame body is not JSON: {e}"),
                "Send one JSON-RPC 2.0 request object per frame.",
            ),
        )
    })?;
    let invalid = |id: Value, message: String| {
        (
            id,
            Error::new(
                Code::InvalidRequest,
                message,
                "Send a JSON-RPC 2.0 request object: {\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"...\", \"params\": {...}}.",
            ),
        )
    };
    let Value::Object(mut object) = value else {
        let what = match value {
            Value::Array(_) => "a batch (array); batches are not supported",
            _ => "not an object",
        };
        return Err(invalid(Value::Null, format!("the request is {what}")));
    };
    let id = match object.remove("id") {
        None => None,
        Some(id @ (Value::Null | Value::Number(_) | Value::String(_))) => Some(id),
        Some(other) => {
            return Err(invalid(
                Value::Null,
                format!(
                    "the request id must be a number, string or null, not {}",
                    kind(&other)
                ),
            ))
        }
    };
    let answer_id = id.clone().unwrap_or(Value::Null);
    match object.get("jsonrpc") {
        Some(Value::String(v)) if v == "2.0" => {}
        Some(other) => {
            return Err(invalid(
                answer_id,
                format!("\"jsonrpc\" must be \"2.0\", not {other}"),
            ))
        }
        None => {
            return Err(invalid(
                answer_id,
                "the request has no \"jsonrpc\": \"2.0\" member".into(),
            ))
        }
    }
    let method = match object.remove("method") {
        Some(Value::String(m)) => m,
        Some(other) => {
            return Err(invalid(
                answer_id,
                format!("\"method\" must be a string, not {}", kind(&other)),
            ))
        }
        None => return Err(invalid(answer_id, "the request has no \"method\"".into())),
    };
    let params = object.remove("params").unwrap_or(Value::Null);
    match id {
        Some(id) => Ok(Message::Request { id, method, params }),
        None => Ok(Message::Notification { method }),
    }
}

/// The JSON type name of a value, for error messages.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[derive(Serialize)]
struct SuccessBody<'a, T: Serialize> {
    jsonrpc: &'static str,
    id: &'a Value,
    result: &'a T,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    jsonrpc: &'static str,
    id: &'a Value,
    error: ErrorObject<'a>,
}

#[derive(Serialize)]
struct ErrorObject<'a> {
    code: i64,
    message: &'a str,
    data: ErrorData<'a>,
}

#[derive(Serialize)]
struct ErrorData<'a> {
    code: &'a str,
    hint: &'a str,
    #[serde(flatten)]
    extra: &'a serde_json::Map<String, Value>,
}

/// Encodes a success response. A result that cannot be encoded, or whose
/// encoding is over the response cap, becomes an error response instead.
pub fn success<T: Serialize>(id: &Value, result: &T) -> Vec<u8> {
    let body = SuccessBody {
        jsonrpc: "2.0",
        id,
        result,
    };
    match serde_json::to_vec(&body) {
        Ok(bytes) if bytes.len() <= MAX_RESPONSE_BYTES => bytes,
        Ok(bytes) => failure(
            id,
            &Error::new(
                Code::InvalidParams,
                format!(
                    "the response would be {} bytes, over the {MAX_RESPONSE_BYTES}-byte cap",
                    bytes.len()
                ),
                "Ask for less: a smaller output size, JPEG instead of PNG, or a smaller rectangle.",
            ),
        ),
        Err(e) => failure(id, &Error::internal(format!("encoding the result: {e}"))),
    }
}

/// Encodes an error response.
pub fn failure(id: &Value, err: &Error) -> Vec<u8> {
    let body = ErrorBody {
        jsonrpc: "2.0",
        id,
        error: ErrorObject {
            code: err.code.number(),
            message: &err.message,
            data: ErrorData {
                code: err.code.name(),
                hint: &err.hint,
                extra: &err.data,
            },
        },
    };
    serde_json::to_vec(&body).expect("an error object always encodes")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_all(input: &[u8]) -> (Vec<Vec<u8>>, Option<FrameError>) {
        let mut reader = FrameReader::new(input, MAX_REQUEST_BYTES);
        let mut frames = Vec::new();
        let mut body = Vec::new();
        loop {
            match reader.read_frame(&mut body) {
                Ok(true) => frames.push(body.clone()),
                Ok(false) => return (frames, None),
                Err(e) => return (frames, Some(e)),
            }
        }
    }

    #[test]
    fn reads_consecutive_frames() {
        let mut input = encode_frame(b"{\"a\":1}");
        input.extend(b"Content-Type: application/json\r\ncontent-length:  2\r\n\r\n{}");
        input.extend(encode_frame(b""));
        let (frames, err) = read_all(&input);
        assert!(err.is_none(), "unexpected error {err:?}");
        assert_eq!(
            frames,
            vec![b"{\"a\":1}".to_vec(), b"{}".to_vec(), Vec::new()]
        );
    }

    #[test]
    fn rejects_bad_headers() {
        let cases: &[&[u8]] = &[
            b"{\"jsonrpc\":\"2.0\"}\n",
            b"Content-Length: 2\n\n{}",
            b"Content-Length: -2\r\n\r\n{}",
            b"Content-Length: 0x10\r\n\r\n",
            b"Content-Length: 2\r\nX-Other: 1\r\n\r\n{}",
            b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}",
            b"Content-Type: json\r\n\r\n{}",
            b"Content-Length 2\r\n\r\n{}",
            b"Content-Length: 99999999999999999999999\r\n\r\n",
        ];
        for case in cases {
            let (frames, err) = read_all(case);
            assert!(frames.is_empty());
            match err {
                Some(FrameError::BadHeader(_)) => {}
                other => panic!(
                    "read_all({:?}) = {other:?}, want BadHeader",
                    String::from_utf8_lossy(case)
                ),
            }
        }
    }

    #[test]
    fn rejects_long_header_block() {
        let mut input = b"Content-Type: ".to_vec();
        input.extend(vec![b'x'; 2000]);
        let (_, err) = read_all(&input);
        assert!(
            matches!(err, Some(FrameError::BadHeader(ref m)) if m.contains("1024")),
            "{err:?}"
        );
    }

    #[test]
    fn rejects_oversized_body_before_reading_it() {
        let input = format!("Content-Length: {}\r\n\r\n", MAX_REQUEST_BYTES + 1);
        let (_, err) = read_all(input.as_bytes());
        match err {
            Some(FrameError::TooLarge { len, cap }) => {
                assert_eq!(len, MAX_REQUEST_BYTES as u64 + 1);
                assert_eq!(cap, MAX_REQUEST_BYTES);
            }
            other => panic!("got {other:?}, want TooLarge"),
        }
    }

    #[test]
    fn reports_truncation() {
        let (_, err) = read_all(b"Content-Length: 10\r\n\r\n{}");
        assert!(
            matches!(
                err,
                Some(FrameError::Truncated {
                    expected: 10,
                    got: 2
                })
            ),
            "{err:?}"
        );
        let (_, err) = read_all(b"Content-Len");
        assert!(matches!(err, Some(FrameError::Truncated { .. })), "{err:?}");
    }

    #[test]
    fn parses_requests_and_notifications() {
        let m =
            parse_message(br#"{"jsonrpc":"2.0","id":7,"method":"displays","params":{}}"#).unwrap();
        assert_eq!(
            m,
            Message::Request {
                id: json!(7),
                method: "displays".into(),
                params: json!({})
            }
        );
        let m = parse_message(br#"{"jsonrpc":"2.0","method":"exit"}"#).unwrap();
        assert_eq!(
            m,
            Message::Notification {
                method: "exit".into()
            }
        );
        let m = parse_message(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#).unwrap();
        assert!(matches!(
            m,
            Message::Request {
                id: Value::Null,
                ..
            }
        ));
    }

    #[test]
    fn classifies_bad_messages() {
        let cases: &[(&[u8], Code, Value)] = &[
            (b"not json", Code::ParseError, Value::Null),
            (b"", Code::ParseError, Value::Null),
            (b"[1,2]", Code::InvalidRequest, Value::Null),
            (b"42", Code::InvalidRequest, Value::Null),
            (
                br#"{"jsonrpc":"1.0","id":3,"method":"x"}"#,
                Code::InvalidRequest,
                json!(3),
            ),
            (
                br#"{"id":"a","method":"x"}"#,
                Code::InvalidRequest,
                json!("a"),
            ),
            (
                br#"{"jsonrpc":"2.0","id":4,"method":5}"#,
                Code::InvalidRequest,
                json!(4),
            ),
            (
                br#"{"jsonrpc":"2.0","id":{},"method":"x"}"#,
                Code::InvalidRequest,
                Value::Null,
            ),
        ];
        for (body, code, id) in cases {
            match parse_message(body) {
                Err((got_id, err)) => {
                    assert_eq!(
                        err.code,
                        *code,
                        "parse_message({:?})",
                        String::from_utf8_lossy(body)
                    );
                    assert_eq!(
                        &got_id,
                        id,
                        "parse_message({:?}) id",
                        String::from_utf8_lossy(body)
                    );
                }
                Ok(m) => panic!(
                    "parse_message({:?}) = {m:?}, want an error",
                    String::from_utf8_lossy(body)
                ),
            }
        }
    }

    #[test]
    fn encodes_error_objects() {
        let body = failure(&json!(1), &Error::method_not_found("nope"));
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["jsonrpc"], "2.0");
        assert_eq!(v["id"], 1);
        assert_eq!(v["error"]["code"], -32601);
        assert_eq!(v["error"]["data"]["code"], "method_not_found");
        assert!(v["error"]["data"]["hint"].as_str().unwrap().len() > 10);
    }
}
