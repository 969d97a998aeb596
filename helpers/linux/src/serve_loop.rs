//! Reading the next frame, with what the end of the input or lost framing
//! means, for the serve loop (dispatch.rs).

use std::io::{self, BufRead};

use serde_json::Value;

use crate::protocol::{self, FrameError, FrameReader};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
