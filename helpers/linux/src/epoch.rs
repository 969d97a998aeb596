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
//! the pid). Every event at all moves the epoch on: a spurious change only
//! costs a listing, a missed one would let a gate judge a stale table
//! (the one exception is `_NET_WM_USER_TIME`, which apps set at every key
//! press and click and no listing reads).
//! Answering also makes a round trip to the server (GetInputFocus) and
//! reads what arrived before the reply, so an event the server sent before
//! the question is counted; a focus that changed without an event moves
//! the epoch on too.

use std::collections::HashSet;
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

#[cfg(test)]
mod tests {
    use super::*;

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
