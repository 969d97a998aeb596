//! The one dispatcher every backend shares: the method table, the
//! handshake, the test-only `fault.*` methods and the serve loop. A backend
//! ([`Backend`]: X11 in server.rs, wlroots and KWin in wayland/, GNOME's
//! mutter behind the `mutter` feature) implements the methods it can
//! answer; every other one answers `unsupported` from the trait's default.
//!
//! Stdin is read on a thread of its own, so that while no request is
//! pending the loop can wait on the backend's own connection too: the X
//! and Wayland backends send `windows_changed` as events arrive, and a
//! Wayland clipboard reader asks deskhand's selection for its text.

use std::io::{self, BufRead, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{Code, Error, Result};
use crate::protocol::{self, FrameReader, Message};
use crate::serve_loop::{self, Next};
use crate::server::Params;

/// Protocol versions this helper speaks.
pub const PROTOCOL_VERSIONS: &[i64] = &[1];
pub const HELPER_VERSION: &str = env!("CARGO_PKG_VERSION");
/// Longest `fault.sleep`.
const MAX_FAULT_SLEEP_MS: i64 = 600_000;

/// What a backend says in the handshake.
#[derive(Serialize)]
pub struct Hello {
    pub platform: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<&'static str>,
    pub capabilities: Vec<&'static str>,
    /// What the desktop lacks, and why (Wayland backends).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub missing: Option<Vec<String>>,
    pub display: Option<String>,
    pub extensions: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_error: Option<String>,
}

/// A method's answer: the response body.
pub type Reply = Result<Vec<u8>>;

macro_rules! methods {
    ($($name:ident),* $(,)?) => {
        /// One desktop's answers. Each method gets the request's id and
        /// params and returns the response body; the defaults refuse.
        pub trait Backend {
            /// The handshake's facts (connecting first if the display is down).
            fn hello(&mut self) -> Hello;
            /// The client asked for `windows_changed` in its handshake.
            fn want_push(&mut self) {}
            /// Writes `windows_changed` (unflushed) if the windows moved on.
            fn push(&mut self, _out: &mut dyn Write) -> io::Result<()> {
                Ok(())
            }
            /// Waits until `input` can be read, meanwhile handling what the
            /// backend's own connection sends.
            fn wait(&mut self, input: RawFd) -> io::Result<()> {
                crate::epoch::wait(input, None).map(drop)
            }
            /// A failed call's error, after the backend checked what it
            /// means for its connection.
            fn failed(&mut self, err: Error) -> Error {
                err
            }
            $(
                fn $name(&mut self, _id: &Value, p: &Params<'_>) -> Reply {
                    Err(unsupported(p.method()))
                }
            )*
        }

        type Handler = fn(&mut dyn Backend, &Value, &Params<'_>) -> Reply;

        /// Every method that needs the handshake first.
        const METHODS: &[(&str, Handler)] = &[$((stringify!($name), |b, id, p| b.$name(id, p))),*];
    };
}

methods!(
    displays,
    capture,
    windows,
    window_at,
    windows_epoch,
    patch_check,
    patch_baseline,
    screen_changes,
    clipboard_read,
    clipboard_write,
    hide,
    restore,
    window_state,
    apps,
    teach_show,
    teach_poll,
    teach_hide,
    indicator,
    a11y_apps,
    a11y_tree,
    a11y_element,
    a11y_act,
    pointer_move,
    pointer_button,
    pointer_scroll,
    key_type,
    key_combo,
);

/// The answer of a method this backend does not offer.
pub fn unsupported(method: &str) -> Error {
    Error::new(
        Code::Unsupported,
        format!("{method} is not offered on this desktop"),
        "Check the handshake's capabilities before calling it.",
    )
}

/// A backend this build lacks: its handshake says why, and every method
/// is unsupported.
pub struct Absent {
    pub platform: &'static str,
    pub why: &'static str,
}

impl Backend for Absent {
    fn hello(&mut self) -> Hello {
        Hello {
            platform: self.platform,
            backend: None,
            capabilities: Vec::new(),
            missing: None,
            display: None,
            extensions: Value::Object(Map::new()),
            display_error: Some(self.why.into()),
        }
    }
}

/// What to do after one frame.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Bytes to write to stdout unframed (only `fault.garbage`).
    pub raw: Option<Vec<u8>>,
    /// The response body to frame and send.
    pub reply: Option<Vec<u8>>,
    /// Exit with this status after writing.
    pub exit: Option<u8>,
}

/// A backend behind the protocol: the handshake state and the dispatch.
pub struct Dispatcher<B> {
    pub backend: B,
    handshaken: bool,
    /// Answer the test-only `fault.*` methods (DESKHAND_HELPER_FAULTS=1).
    pub faults: bool,
}

impl<B: Backend + 'static> Dispatcher<B> {
    pub fn new(backend: B) -> Dispatcher<B> {
        Dispatcher {
            backend,
            handshaken: false,
            faults: std::env::var("DESKHAND_HELPER_FAULTS").is_ok_and(|v| v == "1"),
        }
    }

    /// Answers one frame body.
    pub fn handle(&mut self, body: &[u8]) -> Outcome {
        let exit_note = |method: &str| (method == "exit").then_some(0);
        match protocol::parse_message(body) {
            Err((id, err)) => {
                log_warn!("bad request: {}", err.message);
                Outcome {
                    reply: Some(protocol::failure(&id, &err)),
                    ..Outcome::default()
                }
            }
            Ok(Message::Notification { method }) => Outcome {
                exit: exit_note(&method),
                ..Outcome::default()
            },
            Ok(Message::Request { id, method, params }) => {
                let started = Instant::now();
                let outcome = self.dispatch(&id, &method, params).unwrap_or_else(|err| {
                    let err = if err.code == Code::DisplayUnavailable {
                        self.backend.failed(err)
                    } else {
                        err
                    };
                    log_debug!("{method} failed: {err}");
                    Outcome {
                        reply: Some(protocol::failure(&id, &err)),
                        ..Outcome::default()
                    }
                });
                log_debug!(
                    "{method} answered in {:.2} ms",
                    started.elapsed().as_secs_f64() * 1e3
                );
                outcome
            }
        }
    }

    fn dispatch(&mut self, id: &Value, method: &str, params: Value) -> Result<Outcome> {
        if method.starts_with("fault.") && self.faults {
            return fault(id, method, params);
        }
        let reply = |body| Outcome {
            reply: Some(body),
            ..Outcome::default()
        };
        match method {
            "handshake" => return self.handshake(id, params).map(reply),
            "exit" => {
                return Ok(Outcome {
                    reply: Some(protocol::success(id, &Map::new())),
                    exit: Some(0),
                    ..Outcome::default()
                })
            }
            _ => {}
        }
        let Some((_, handler)) = METHODS.iter().find(|(name, _)| *name == method) else {
            return Err(Error::method_not_found(method));
        };
        if !self.handshaken {
            return Err(Error::new(
                Code::HandshakeRequired,
                format!("{method} was called before handshake"),
                "Call handshake first, offering the protocol versions the client speaks.",
            ));
        }
        let p = Params::new(method, params)?;
        handler(&mut self.backend, id, &p).map(reply)
    }

    fn handshake(&mut self, id: &Value, params: Value) -> Reply {
        let p = Params::new("handshake", params)?;
        let offered = match p.get("protocol_versions") {
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_i64().ok_or_else(|| {
                        p.bad(format!("\"protocol_versions\" must hold integers, got {v}"))
                    })
                })
                .collect::<Result<Vec<i64>>>()?,
            Some(other) => {
                return Err(p.bad(format!(
                    "\"protocol_versions\" must be an array of integers, got {}",
                    protocol::kind(other)
                )))
            }
            None => return Err(p.bad("\"protocol_versions\" is required, e.g. [1]".into())),
        };
        let client = p.str("client")?.unwrap_or("unknown client").to_owned();
        let Some(version) = offered
            .iter()
            .copied()
            .filter(|v| PROTOCOL_VERSIONS.contains(v))
            .max()
        else {
            return Err(Error::new(
                Code::IncompatibleProtocol,
                format!(
                    "{client} offers protocol versions {offered:?}, but deskhand-helper {HELPER_VERSION} speaks {PROTOCOL_VERSIONS:?}"
                ),
                "Install matching versions of deskhand and deskhand-helper (deskhand's installer fetches the right helper).",
            ));
        };
        if let Some(Value::Array(wanted)) = p.get("notifications") {
            if wanted.iter().any(|n| n == crate::epoch::NOTIFICATION) {
                self.backend.want_push();
            }
        }
        let hello = self.backend.hello();
        if !self.handshaken {
            log_info!("handshake from {client}: protocol {version}");
        }
        self.handshaken = true;
        #[derive(Serialize)]
        struct HandshakeResult {
            protocol_version: i64,
            helper_version: &'static str,
            #[serde(flatten)]
            hello: Hello,
        }
        Ok(protocol::success(
            id,
            &HandshakeResult {
                protocol_version: version,
                helper_version: HELPER_VERSION,
                hello,
            },
        ))
    }

    /// Reads requests from `input` and answers on `output` until the input
    /// ends (status 0), framing is lost (status 2), or `exit`.
    pub fn serve<R, W>(&mut self, input: R, output: &mut W) -> io::Result<u8>
    where
        R: BufRead + Send + 'static,
        W: Write,
    {
        let (wake_read, wake_write) = pipe()?;
        let (tx, rx) = mpsc::channel::<io::Result<(Next, Vec<u8>)>>();
        std::thread::spawn(move || {
            let mut wake = std::fs::File::from(wake_write);
            let mut reader = FrameReader::new(input, protocol::MAX_REQUEST_BYTES);
            loop {
                let mut body = Vec::new();
                let next = serve_loop::next_frame(&mut reader, &mut body);
                let last = !matches!(next, Ok(Next::Frame));
                if tx.send(next.map(|n| (n, body))).is_err() {
                    return;
                }
                let _ = wake.write_all(&[1]);
                if last {
                    return;
                }
            }
        });
        let mut wake = std::fs::File::from(wake_read);
        loop {
            self.backend.push(output)?;
            match rx.try_recv() {
                Ok(Ok((Next::Frame, body))) => {
                    let outcome = self.handle(&body);
                    if let Some(raw) = &outcome.raw {
                        output.write_all(raw)?;
                        output.flush()?;
                    }
                    // Before the answer, so that the client knows of every
                    // change the helper saw before answering by the time
                    // it reads it.
                    self.backend.push(output)?;
                    if let Some(reply) = &outcome.reply {
                        protocol::write_frame(output, reply)?;
                    } else {
                        output.flush()?;
                    }
                    if let Some(code) = outcome.exit {
                        log_info!("exiting with status {code} as asked");
                        return Ok(code);
                    }
                }
                Ok(Ok((Next::End { status, last }, _))) => {
                    if let Some(last) = last {
                        protocol::write_frame(output, &last)?;
                    }
                    return Ok(status);
                }
                Ok(Err(e)) => return Err(e),
                Err(mpsc::TryRecvError::Disconnected) => return Ok(0),
                Err(mpsc::TryRecvError::Empty) => {
                    output.flush()?;
                    self.backend.wait(wake.as_raw_fd())?;
                    let mut buf = [0u8; 64];
                    // Only after poll said so: the wake pipe is blocking.
                    if readable(wake.as_raw_fd()) {
                        let _ = wake.read(&mut buf);
                    }
                }
            }
        }
    }
}

/// Whether `fd` can be read without blocking.
fn readable(fd: RawFd) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the call's duration.
    unsafe { libc::poll(&mut p, 1, 0) > 0 }
}

pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fds we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: both fds are new and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The test-only methods, answered only with DESKHAND_HELPER_FAULTS=1.
fn fault(id: &Value, method: &str, params: Value) -> Result<Outcome> {
    let p = Params::new(method, params)?;
    match method {
        "fault.sleep" => {
            let ms = p.required_int("ms", 0, MAX_FAULT_SLEEP_MS)?;
            std::thread::sleep(Duration::from_millis(ms as u64));
            Ok(Outcome {
                reply: Some(protocol::success(id, &Map::new())),
                ..Outcome::default()
            })
        }
        "fault.garbage" => Ok(Outcome {
            raw: Some(b"fault.garbage: these bytes are not a protocol frame\n".to_vec()),
            ..Outcome::default()
        }),
        "fault.exit" => {
            let code = p.required_int("code", 0, 255)?;
            Ok(Outcome {
                exit: Some(code as u8),
                ..Outcome::default()
            })
        }
        _ => Err(Error::method_not_found(method)),
    }
}
