//! The protocol loop the backends share: reading the next frame, with what
//! the end of the input or lost framing means, and answering one frame
//! through a backend's dispatch. The X11 server, the wlroots backend
//! (which reads stdin on a thread of its own) and the GNOME backend each
//! drive their loop with these, so all three end and fail alike.

use std::io::{self, BufRead};
use std::time::Instant;

use serde_json::Value;

use crate::error::Result;
use crate::protocol::{self, FrameError, FrameReader, Message};

/// What reading the next frame gave.
#[derive(Debug, PartialEq)]
pub enum Next {
    /// A frame's body is in the buffer.
    Frame,
    /// The loop ends with `status`: 0 when the input closed (cleanly or
    /// inside a frame), 2 when framing is lost, after writing `last`, the
    /// one answer the client still gets (PROTOCOL.md, "Framing").
    End { status: u8, last: Option<Vec<u8>> },
}

/// Reads the next frame into `body` (replacing what it held) and says
/// whether the loop goes on. Only an I/O error of the input is an error.
pub fn next_frame<R: BufRead>(reader: &mut FrameReader<R>, body: &mut Vec<u8>) -> io::Result<Next> {
    match reader.read_frame(body) {
        Ok(true) => Ok(Next::Frame),
        Ok(false) => {
            log_info!("stdin closed; exiting");
            Ok(Next::End {
                status: 0,
                last: None,
            })
        }
        Err(FrameError::Io(e)) => Err(e),
        Err(e @ FrameError::Truncated { .. }) => {
            log_warn!("{e}; stdin closed, exiting");
            Ok(Next::End {
                status: 0,
                last: None,
            })
        }
        Err(e) => {
            log_error!("{e}; framing is lost, answering once and exiting with status 2");
            Ok(Next::End {
                status: 2,
                last: e
                    .to_protocol_error()
                    .map(|err| protocol::failure(&Value::Null, &err)),
            })
        }
    }
}

/// One frame's answer: the reply to write, if any, and the exit status
/// when the frame was `exit`.
#[derive(Debug, Default)]
pub struct Outcome {
    pub reply: Option<Vec<u8>>,
    pub exit: Option<u8>,
}

/// Answers one frame: a body that is no request gets its error, a
/// notification none (`exit` ends the loop), and a request what `dispatch`
/// answers (the response body) or the error it returns.
pub fn answer(
    body: &[u8],
    dispatch: impl FnOnce(&Value, &str, Value) -> Result<Vec<u8>>,
) -> Outcome {
    match protocol::parse_message(body) {
        Err((id, err)) => Outcome {
            reply: Some(protocol::failure(&id, &err)),
            exit: None,
        },
        Ok(Message::Notification { method }) => Outcome {
            reply: None,
            exit: (method == "exit").then_some(0),
        },
        Ok(Message::Request { id, method, params }) => {
            let started = Instant::now();
            let out = dispatch(&id, &method, params).unwrap_or_else(|err| {
                log_debug!("{method} failed: {err}");
                protocol::failure(&id, &err)
            });
            log_debug!(
                "{method} answered in {:.2} ms",
                started.elapsed().as_secs_f64() * 1e3
            );
            Outcome {
                reply: Some(out),
                exit: (method == "exit").then_some(0),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    fn next(input: &[u8]) -> Vec<(Next, Vec<u8>)> {
        let mut reader = FrameReader::new(input, protocol::MAX_REQUEST_BYTES);
        let mut out = Vec::new();
        loop {
            let mut body = Vec::new();
            let n = next_frame(&mut reader, &mut body).unwrap();
            let end = n != Next::Frame;
            out.push((n, body));
            if end {
                return out;
            }
        }
    }

    #[test]
    fn frames_then_the_end_of_the_input() {
        let got = next(b"Content-Length: 2\r\n\r\n{}Content-Length: 3\r\n\r\n[1]");
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], (Next::Frame, b"{}".to_vec()));
        assert_eq!(got[1], (Next::Frame, b"[1]".to_vec()));
        assert_eq!(
            got[2].0,
            Next::End {
                status: 0,
                last: None
            }
        );
    }

    #[test]
    fn a_truncated_frame_ends_cleanly() {
        let got = next(b"Content-Length: 10\r\n\r\n{}");
        assert_eq!(
            got[0].0,
            Next::End {
                status: 0,
                last: None
            }
        );
    }

    #[test]
    fn lost_framing_answers_once_and_ends_with_2() {
        let got = next(b"Nonsense\r\n\r\n{}");
        let Next::End {
            status: 2,
            last: Some(last),
        } = &got[0].0
        else {
            panic!(
                "want the end with status 2 and an answer, got {:?}",
                got[0].0
            );
        };
        let v: Value = serde_json::from_slice(last).unwrap();
        assert_eq!(v["id"], Value::Null);
        assert!(v["error"]["message"].is_string(), "{v}");
    }

    #[test]
    fn answer_requests_notifications_and_garbage() {
        let ok = answer(
            br#"{"jsonrpc":"2.0","id":7,"method":"ping","params":{}}"#,
            |id, method, _| {
                assert_eq!(method, "ping");
                Ok(protocol::success(id, &serde_json::json!({"pong": true})))
            },
        );
        let v: Value = serde_json::from_slice(&ok.reply.unwrap()).unwrap();
        assert_eq!(
            (v["id"].clone(), v["result"]["pong"].clone()),
            (7.into(), true.into())
        );
        assert_eq!(ok.exit, None);

        let failed = answer(
            br#"{"jsonrpc":"2.0","id":8,"method":"nope","params":{}}"#,
            |_, method, _| Err(Error::method_not_found(method)),
        );
        let v: Value = serde_json::from_slice(&failed.reply.unwrap()).unwrap();
        assert_eq!(v["id"], 8);
        assert_eq!(v["error"]["data"]["code"], "method_not_found");

        let exit = answer(
            br#"{"jsonrpc":"2.0","id":9,"method":"exit"}"#,
            |id, _, _| Ok(protocol::success(id, &serde_json::Map::new())),
        );
        assert!(exit.reply.is_some());
        assert_eq!(exit.exit, Some(0));

        let note = answer(br#"{"jsonrpc":"2.0","method":"exit"}"#, |_, _, _| {
            panic!("a notification is not dispatched")
        });
        assert!(note.reply.is_none());
        assert_eq!(note.exit, Some(0));

        let garbage = answer(b"not json", |_, _, _| panic!("garbage is not dispatched"));
        let v: Value = serde_json::from_slice(&garbage.reply.unwrap()).unwrap();
        assert_eq!(v["error"]["data"]["code"], "parse_error");
        assert_eq!(garbage.exit, None);
    }
}
