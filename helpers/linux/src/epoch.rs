//! The windows epoch: a number that changes whenever something may have
//! changed what `windows` would answer, so that the supervisor can reuse
//! its last listing while the number stays the same instead of listing
//! every window before every action.
//!
//! The helper selects, on its own connection, SubstructureNotify,
//! PropertyChange and FocusChange on the root (frames and override-redirect
//! popups appearing, going, moving, restacking; `_NET_ACTIVE_WINDOW` and
//! `_NET_CLIENT_LIST_STACKING`), and PropertyChange on every client a
//! listing found, before it reads it (WM_CLASS, `_NET_WM_STATE`, WM_STATE,
//! the pid), with StructureNotify and FocusChange. Every event at all moves the epoch on: a spurious change only
//! costs a listing, a missed one would let a gate judge a stale table
//! (the one exception is `_NET_WM_USER_TIME`, which apps set at every key
//! press and click and no listing reads).
//! Answering also makes a round trip to the server (GetInputFocus) and
//! reads what arrived before the reply, so an event the server sent before
//! the question is counted; a focus that changed without an event moves
//! the epoch on too.
//!
//! A client that asks for it in the handshake is told instead
//! ([`Push`]): the `windows_changed` notification carries the epoch each
//! time it has moved on, sent as soon as the helper reads the events
//! (while idle it waits on its X connection as well as stdin, see
//! [`wait`]), and before the answer to any request during which it moved.
//! That saves the supervisor a round trip per action; the price is the
//! time an event takes to reach the helper and its notification the
//! supervisor, during which the supervisor still holds the old epoch.

use std::collections::HashSet;
use std::io::{self, Write};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// Makes the `stream` of each epoch unique within the process.
static STREAMS: AtomicU64 = AtomicU64::new(0);

/// The `windows_epoch` result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct EpochResult {
    /// Which count `epoch` belongs to: a new X connection (or a new helper)
    /// starts a new stream, and epochs of different streams never compare
    /// equal.
    pub stream: String,
    pub epoch: u64,
}

/// The count, and what it needs to know to move on.
#[derive(Debug)]
pub struct Epoch {
    stream: String,
    value: AtomicU64,
    /// The root is watched; without it there is no epoch to give.
    live: AtomicBool,
    focus: Mutex<Option<u32>>,
    /// Clients whose properties this connection follows.
    watched: Mutex<HashSet<u32>>,
}

impl Default for Epoch {
    fn default() -> Epoch {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let n = STREAMS.fetch_add(1, Ordering::Relaxed);
        Epoch {
            stream: format!("{}-{nanos}-{n}", std::process::id()),
            value: AtomicU64::new(0),
            live: AtomicBool::new(false),
            focus: Mutex::new(None),
            watched: Mutex::new(HashSet::new()),
        }
    }
}

impl Epoch {
    /// The root is being watched from now on.
    pub fn go_live(&self) {
        self.live.store(true, Ordering::SeqCst);
    }

    pub fn live(&self) -> bool {
        self.live.load(Ordering::SeqCst)
    }

    /// Something may have changed.
    pub fn bump(&self) {
        self.value.fetch_add(1, Ordering::SeqCst);
    }

    /// Notes the input focus the server reported; a new one moves the
    /// epoch on.
    pub fn focus(&self, window: u32) {
        let mut focus = self.focus.lock().unwrap_or_else(|p| p.into_inner());
        if *focus != Some(window) {
            *focus = Some(window);
            self.bump();
        }
    }

    /// Which of `clients` are not followed yet; they are counted as
    /// followed from now on (the caller selects their events at once).
    pub fn unwatched(&self, clients: &[u32]) -> Vec<u32> {
        let mut watched = self.watched.lock().unwrap_or_else(|p| p.into_inner());
        clients
            .iter()
            .copied()
            .filter(|&id| watched.insert(id))
            .collect()
    }

    /// Forgets a client that is gone, so that the set stays small.
    pub fn gone(&self, window: u32) {
        self.watched
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&window);
    }

    pub fn result(&self) -> EpochResult {
        EpochResult {
            stream: self.stream.clone(),
            epoch: self.value.load(Ordering::SeqCst),
        }
    }
}

/// The notification that carries the epoch.
pub const NOTIFICATION: &str = "windows_changed";

/// What the client was last told.
#[derive(Debug, Default, PartialEq, Eq)]
enum Told {
    #[default]
    Nothing,
    Epoch(EpochResult),
    /// The epoch was lost with the X connection: the client was given a
    /// stream no listing ever had, so that it lists again.
    Lost,
}

/// Sends `windows_changed` to a client that asked for it, once per move.
#[derive(Debug, Default)]
pub struct Push {
    wanted: bool,
    told: Told,
}

impl Push {
    /// The client asked for the notification in its handshake.
    pub fn want(&mut self) {
        self.wanted = true;
    }

    pub fn wanted(&self) -> bool {
        self.wanted
    }

    /// Writes (without flushing) the notification when `now`, the epoch
    /// or None when there is none, differs from what the client was last
    /// told.
    pub fn send_due<W: Write + ?Sized>(
        &mut self,
        now: Option<EpochResult>,
        out: &mut W,
    ) -> io::Result<()> {
        if !self.wanted {
            return Ok(());
        }
        let next = match now {
            Some(e) => Told::Epoch(e),
            None if self.told == Told::Nothing => return Ok(()),
            None => Told::Lost,
        };
        if next == self.told {
            return Ok(());
        }
        let params = match &next {
            Told::Epoch(e) => e.clone(),
            _ => Epoch::default().result(),
        };
        self.told = next;
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "method": NOTIFICATION,
            "params": params,
        });
        let body = serde_json::to_vec(&body).map_err(io::Error::other)?;
        write!(out, "Content-Length: {}\r\n\r\n", body.len())?;
        out.write_all(&body)
    }
}

/// What [`wait`] saw first.
#[derive(Debug, PartialEq, Eq)]
pub enum Ready {
    /// A request (or end of file) can be read.
    Input,
    /// Events (or the connection's end) can be read from X.
    X,
}

/// Waits until `input` or, when given, the X connection `x` can be read.
/// Input wins a tie, so a client is never kept waiting by a busy display.
pub fn wait(input: RawFd, x: Option<RawFd>) -> io::Result<Ready> {
    let mut fds = [
        libc::pollfd {
            fd: input,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: x.unwrap_or(-1),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    loop {
        // SAFETY: fds is a valid array of two pollfds for the call's
        // duration; a negative fd is ignored by poll.
        let rc = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if rc < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(err);
        }
        if fds[0].revents != 0 {
            return Ok(Ready::Input);
        }
        if fds[1].revents != 0 {
            return Ok(Ready::X);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_tells_each_epoch_once_and_a_loss_as_a_new_stream() {
        let e = Epoch::default();
        let mut p = Push::default();
        let mut out = Vec::new();
        p.send_due(Some(e.result()), &mut out).unwrap();
        assert!(out.is_empty(), "nothing is sent unless asked for");
        p.want();
        p.send_due(None, &mut out).unwrap();
        assert!(out.is_empty(), "no epoch yet, nothing to take back");
        p.send_due(Some(e.result()), &mut out).unwrap();
        p.send_due(Some(e.result()), &mut out).unwrap();
        e.bump();
        p.send_due(Some(e.result()), &mut out).unwrap();
        p.send_due(None, &mut out).unwrap();
        p.send_due(None, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let bodies: Vec<serde_json::Value> = text
            .split("Content-Length: ")
            .skip(1)
            .map(|f| serde_json::from_str(f.split_once("\r\n\r\n").unwrap().1).unwrap())
            .collect();
        assert_eq!(bodies.len(), 3, "{text}");
        for b in &bodies {
            assert_eq!(b["method"], NOTIFICATION);
            assert!(b.get("id").is_none(), "a notification has no id: {b}");
        }
        assert_eq!(bodies[0]["params"]["epoch"], 0);
        assert_eq!(bodies[1]["params"]["epoch"], 1);
        assert_eq!(bodies[0]["params"]["stream"], bodies[1]["params"]["stream"]);
        assert_ne!(bodies[2]["params"]["stream"], bodies[1]["params"]["stream"]);
    }

    #[test]
    fn events_and_new_focus_move_the_epoch_on() {
        let e = Epoch::default();
        assert!(!e.live());
        let start = e.result();
        e.focus(7);
        let after_focus = e.result();
        assert_ne!(start, after_focus);
        e.focus(7);
        assert_eq!(after_focus, e.result(), "the same focus is no change");
        e.bump();
        assert_ne!(after_focus, e.result());
        assert_eq!(e.unwatched(&[1, 2]), vec![1, 2]);
        assert_eq!(e.unwatched(&[2, 3]), vec![3]);
        e.gone(2);
        assert_eq!(e.unwatched(&[2]), vec![2]);
        assert_ne!(
            Epoch::default().result().stream,
            Epoch::default().result().stream,
            "each connection counts apart"
        );
    }
}
