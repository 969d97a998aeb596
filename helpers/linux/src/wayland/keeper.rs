//! The clipboard keeper on Wayland: `deskhand-helper --keep-clipboard`
//! when the helper speaks Wayland (see `wayland::chosen`). A
//! wlr-data-control source lives only as long as its client, and the
//! helper that serves deskhand exits with it; so the text deskhand puts
//! back as it exits is handed to this process, which deskhand starts in a
//! session of its own. It owns the selections through the same source the
//! protocol's `clipboard_write` uses ([`Wl::own_selection`]: every UTF-8
//! text type, any size, each reader served on a thread of its own) until
//! other clients have taken them all, finishes the pastes still going, and
//! exits, as wl-copy does.
//!
//! Input and output are the X11 keeper's (crate::keeper): one JSON object
//! `{"clipboard": string, "primary": string}` on stdin, each optional;
//! `ready` and a newline on stdout once it owns them, or `error: <reason>`
//! and status 1.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::state::Wl;

/// Largest text kept per selection: what a clipboard read returns at most,
/// so any text deskhand stashed can be put back.
pub const MAX_KEPT_BYTES: u64 = 16 << 20;
/// Largest input: both selections JSON-escaped at worst (6 bytes per byte).
const MAX_INPUT: u64 = 2 * 6 * MAX_KEPT_BYTES + 1024;
/// How long pastes still going may take once the selections are gone: a
/// reader that stops reading must not keep the keeper forever.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keep {
    clipboard: Option<String>,
    primary: Option<String>,
}

/// A keeper that owns its selections.
pub struct Keeper {
    wl: Wl,
}

/// Reads what to keep from `input`, takes the selections and reports on
/// `out`. Returns the exit status, and the keeper to wait on when there
/// is something to keep.
pub fn run(input: impl Read, mut out: impl Write) -> (u8, Option<Keeper>) {
    match take(input) {
        Ok(keeper) => {
            let _ = writeln!(out, "ready");
            let _ = out.flush();
            (0, keeper)
        }
        Err(reason) => {
            let _ = writeln!(out, "error: {reason}");
            let _ = out.flush();
            (1, None)
        }
    }
}

fn take(input: impl Read) -> Result<Option<Keeper>, String> {
    let mut data = Vec::new();
    input
        .take(MAX_INPUT + 1)
        .read_to_end(&mut data)
        .map_err(|e| format!("reading what to keep from stdin: {e}"))?;
    if data.len() as u64 > MAX_INPUT {
        return Err(format!(
            "more than {MAX_INPUT} bytes on stdin; the clipboard text is limited to 16 MiB per selection"
        ));
    }
    let keep: Keep = serde_json::from_slice(&data).map_err(|e| {
        format!("reading what to keep: {e}; send {{\"clipboard\": text, \"primary\": text}}")
    })?;
    for text in [&keep.clipboard, &keep.primary].into_iter().flatten() {
        if text.len() as u64 > MAX_KEPT_BYTES {
            return Err(format!(
                "{} bytes of text to keep; the limit is 16 MiB per selection",
                text.len()
            ));
        }
    }
    if keep.clipboard.is_none() && keep.primary.is_none() {
        return Ok(None);
    }
    let mut wl = Wl::connect().map_err(|e| format!("{} ({})", e.message, e.hint))?;
    for (primary, text) in [(false, keep.clipboard), (true, keep.primary)] {
        if let Some(text) = text {
            wl.own_selection(primary, text)
                .map_err(|e| format!("{} ({})", e.message, e.hint))?;
        }
    }
    Ok(Some(Keeper { wl }))
}

impl Keeper {
    /// Serves until every selection kept has been taken by another client
    /// (or the compositor is gone), then lets the pastes still going end.
    pub fn wait_until_taken(mut self) {
        while !self.wl.state.sources.is_empty() {
            if self.wl.blocking_dispatch().is_err() {
                break;
            }
        }
        let deadline = Instant::now() + DRAIN_TIMEOUT;
        while Instant::now() < deadline && self.wl.state.writers.iter().any(|w| !w.is_finished()) {
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
