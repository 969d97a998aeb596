//! The windows epoch on Wayland (`windows_epoch`, and the `windows_changed`
//! notification): a count that moves on whenever something may have
//! changed what `windows` answers, as on X11 (crate::epoch).
//!
//! What `windows` reads comes from two places, and each is followed:
//! - the foreign toplevels (app_id, title, state, outputs) and the outputs:
//!   every event of theirs moves the count on (state.rs), and answering
//!   makes a Wayland round trip first, so an event sent before the request
//!   is counted;
//! - sway's tree (each view's pid, rectangle, visibility, focus): a thread
//!   follows sway's window, workspace and output events, which move the
//!   count on and wake the main loop to push `windows_changed`; and since
//!   sway sends no event for some changes (a resize), answering also
//!   compares the views with those of the previous answer. A tree that
//!   cannot be read moves the count on (fail closed).

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{json, Value};

use super::sway;

/// Makes each stream unique within the process.
static STREAMS: AtomicU64 = AtomicU64::new(0);

/// A new stream name: toplevel ids are a connection's own counter, so
/// each Wayland connection counts apart.
pub fn new_stream() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = STREAMS.fetch_add(1, Ordering::Relaxed);
    format!("wl-{}-{nanos}-{n}", std::process::id())
}

/// The count, and what the last answer saw of sway's tree.
pub struct Epoch {
    pub value: Arc<AtomicU64>,
    pub stream: String,
    views: Option<u64>,
    /// The count last pushed as `windows_changed`.
    pushed: u64,
}

impl Epoch {
    pub fn new(value: Arc<AtomicU64>) -> Epoch {
        let pushed = value.load(Ordering::SeqCst);
        Epoch {
            value,
            stream: new_stream(),
            views: None,
            pushed,
        }
    }

    fn bump(&self) {
        self.value.fetch_add(1, Ordering::SeqCst);
    }

    /// A new connection: a new stream, and the tree is read afresh.
    pub fn reconnected(&mut self) {
        self.stream = new_stream();
        self.views = None;
        self.bump();
    }

    /// The `windows_epoch` result, once the toplevel events before the
    /// request are dispatched (the caller's round trip).
    pub fn answer(&mut self) -> Value {
        if sway::socket().is_some() {
            match sway::views() {
                Ok(views) => {
                    let seen = fingerprint(&views);
                    if self.views.is_some_and(|v| v != seen) {
                        self.bump();
                    }
                    self.views = Some(seen);
                }
                Err(e) => {
                    log_debug!("reading sway's tree for the windows epoch: {e}; moving it on");
                    self.views = None;
                    self.bump();
                }
            }
        }
        json!({ "stream": self.stream, "epoch": self.value.load(Ordering::SeqCst) })
    }

    /// The `windows_changed` notification when the count moved on since
    /// the last one.
    pub fn push(&mut self) -> Option<Vec<u8>> {
        let now = self.value.load(Ordering::SeqCst);
        if now == self.pushed {
            return None;
        }
        self.pushed = now;
        let body = json!({
            "jsonrpc": "2.0",
            "method": "windows_changed",
            "params": { "stream": self.stream, "epoch": now },
        });
        serde_json::to_vec(&body).ok()
    }
}

/// What `windows` takes from sway's tree, hashed.
fn fingerprint(views: &[sway::View]) -> u64 {
    let mut h = DefaultHasher::new();
    for v in views {
        (
            v.con_id, v.pid, &v.app_id, &v.title, v.rect.x, v.rect.y, v.visible, v.focused,
        )
            .hash(&mut h);
        (v.rect.width, v.rect.height).hash(&mut h);
    }
    views.len().hash(&mut h);
    h.finish()
}

const SUBSCRIBE: u32 = 2;

/// Follows sway's window, workspace and output events on a thread of its
/// own: each moves `value` on and writes a byte to `wake`. Returns at
/// once; without sway's IPC it follows nothing.
pub fn follow_sway(value: Arc<AtomicU64>, mut wake: std::fs::File) {
    let Some(path) = sway::socket() else {
        return;
    };
    std::thread::spawn(move || {
        let mut run = || -> Result<(), String> {
            let mut s =
                UnixStream::connect(&path).map_err(|e| format!("connecting to {path}: {e}"))?;
            let payload = br#"["window","workspace","output"]"#;
            let mut msg = b"i3-ipc".to_vec();
            msg.extend_from_slice(&(payload.len() as u32).to_ne_bytes());
            msg.extend_from_slice(&SUBSCRIBE.to_ne_bytes());
            msg.extend_from_slice(payload);
            s.write_all(&msg).map_err(|e| format!("subscribing: {e}"))?;
            loop {
                let mut head = [0u8; 14];
                s.read_exact(&mut head)
                    .map_err(|e| format!("reading an event: {e}"))?;
                let len = u32::from_ne_bytes([head[6], head[7], head[8], head[9]]) as usize;
                let kind = u32::from_ne_bytes([head[10], head[11], head[12], head[13]]);
                let mut body = vec![0u8; len];
                s.read_exact(&mut body)
                    .map_err(|e| format!("reading an event: {e}"))?;
                // Events have the high bit set; the other reply is the
                // subscription's own.
                if kind & 0x8000_0000 != 0 {
                    value.fetch_add(1, Ordering::SeqCst);
                    let _ = wake.write_all(&[2]);
                }
            }
        };
        if let Err(e) = run() {
            // The tree is still compared at every windows_epoch.
            log_warn!("stopped following sway's window events: {e}; windows_changed is pushed only for toplevel events now");
            value.fetch_add(1, Ordering::SeqCst);
            let _ = wake.write_all(&[2]);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Rect;

    fn view(x: i32, width: u32) -> sway::View {
        sway::View {
            con_id: 4,
            pid: Some(10),
            app_id: "foot".into(),
            title: "t".into(),
            rect: Rect {
                x,
                y: 0,
                width,
                height: 10,
            },
            visible: true,
            focused: true,
        }
    }

    #[test]
    fn pushes_once_per_change_and_streams_differ() {
        let value = Arc::new(AtomicU64::new(5));
        let mut e = Epoch::new(value.clone());
        assert_eq!(e.push(), None, "nothing moved since it started");
        value.fetch_add(2, Ordering::SeqCst);
        let note: Value = serde_json::from_slice(&e.push().expect("a push")).unwrap();
        assert_eq!(note["method"], "windows_changed");
        assert_eq!(note["params"]["epoch"], 7);
        assert_eq!(note["params"]["stream"], e.stream.as_str());
        assert!(note.get("id").is_none(), "a notification has no id");
        assert_eq!(e.push(), None, "one push per change");
        let old = e.stream.clone();
        e.reconnected();
        assert_ne!(e.stream, old);
        assert!(e.push().is_some(), "a new connection is a change");
    }

    #[test]
    fn a_resize_or_move_changes_the_fingerprint() {
        let base = fingerprint(&[view(0, 100)]);
        assert_eq!(base, fingerprint(&[view(0, 100)]));
        assert_ne!(base, fingerprint(&[view(1, 100)]));
        assert_ne!(base, fingerprint(&[view(0, 101)]));
        assert_ne!(base, fingerprint(&[view(0, 100), view(0, 100)]));
        assert_ne!(base, fingerprint(&[]));
    }
}
