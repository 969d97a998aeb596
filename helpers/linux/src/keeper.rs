//! The clipboard keeper: `deskhand-helper --keep-clipboard`. A selection
//! lives only as long as the client that owns it (an X selection, or a
//! wlr-data-control source on Wayland), and the helper that serves
//! deskhand exits with it; so when deskhand puts the user's clipboard back
//! just before it exits, it runs the helper once more in this mode, in a
//! session of its own, to own the text until other clients have taken it,
//! as xclip and wl-copy do. It owns the selections through the same code
//! the protocol's `clipboard_write` uses ([`Clipboard`] on X11, every
//! UTF-8 and Latin-1 target and INCR; [`Wl::own_selection`] on Wayland,
//! every UTF-8 text type, each reader on a thread of its own), so each
//! display has one owner implementation.
//!
//! Input on stdin, one JSON object: `{"clipboard": string,
//! "primary": string}`, each optional (absent or null: not kept). Once it
//! owns every selection it was given it writes `ready` and a newline to
//! stdout and closes it; on failure it writes `error: <reason>` and exits
//! with status 1.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::clipboard::{Clipboard, Selection};
use crate::wayland::state::Wl;

/// Largest text kept per selection on X11 (the protocol's request cap)
/// and on Wayland (what a clipboard read returns at most, so any text
/// deskhand stashed can be put back).
const MAX_X11_BYTES: u64 = 1 << 20;
pub const MAX_WAYLAND_BYTES: u64 = 16 << 20;
/// How long Wayland pastes still going may take once the selections are
/// gone: a reader that stops reading must not keep the keeper forever.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keep {
    clipboard: Option<String>,
    primary: Option<String>,
}

/// What owns the selections until they are taken.
// One per process, so its size does not matter.
#[allow(clippy::large_enum_variant)]
pub enum Keeper {
    X11(Clipboard),
    Wayland(Wl),
}

impl Keeper {
    fn open(wayland: bool) -> Result<Keeper, String> {
        if wayland {
            Wl::connect()
                .map(Keeper::Wayland)
                .map_err(|e| format!("{} ({})", e.message, e.hint))
        } else {
            Clipboard::new().map(Keeper::X11).map_err(|e| e.to_string())
        }
    }

    fn own(&mut self, primary: bool, text: String) -> Result<(), String> {
        match self {
            Keeper::X11(clipboard) => {
                let selection = if primary {
                    Selection::Primary
                } else {
                    Selection::Clipboard
                };
                clipboard.write(selection, &text).map_err(|e| e.to_string())
            }
            Keeper::Wayland(wl) => wl
                .own_selection(primary, text)
                .map_err(|e| format!("{} ({})", e.message, e.hint)),
        }
    }

    /// Serves until every selection kept has been taken by another client
    /// (or the display is gone); on Wayland then lets the pastes still
    /// going end.
    pub fn wait_until_taken(self) {
        match self {
            Keeper::X11(clipboard) => clipboard.wait_until_taken(),
            Keeper::Wayland(mut wl) => {
                while !wl.state.sources.is_empty() {
                    if wl.blocking_dispatch().is_err() {
                        break;
                    }
                }
                let deadline = Instant::now() + DRAIN_TIMEOUT;
                while Instant::now() < deadline && wl.state.writers.iter().any(|w| !w.is_finished())
                {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
        }
    }
}

/// Reads what to keep from `input`, takes the selections (on Wayland when
/// `wayland`, else on X11) and reports on `out`. Returns the exit status,
/// and the keeper to wait on when there is something to keep.
pub fn run(wayland: bool, input: impl Read, mut out: impl Write) -> (u8, Option<Keeper>) {
    match take(wayland, input) {
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

fn take(wayland: bool, input: impl Read) -> Result<Option<Keeper>, String> {
    let max_text = if wayland {
        MAX_WAYLAND_BYTES
    } else {
        MAX_X11_BYTES
    };
    // Both selections JSON-escaped at worst (6 bytes per byte), and room
    // for the keys.
    let max_input = 2 * 6 * max_text + 1024;
    let mut data = Vec::new();
    input
        .take(max_input + 1)
        .read_to_end(&mut data)
        .map_err(|e| format!("reading what to keep from stdin: {e}"))?;
    let limit = format!(
        "the clipboard text is limited to {} MiB per selection",
        max_text >> 20
    );
    if data.len() as u64 > max_input {
        return Err(format!("more than {max_input} bytes on stdin; {limit}"));
    }
    let keep: Keep = serde_json::from_slice(&data).map_err(|e| {
        format!("reading what to keep: {e}; send {{\"clipboard\": text, \"primary\": text}}")
    })?;
    if wayland {
        for text in [&keep.clipboard, &keep.primary].into_iter().flatten() {
            if text.len() as u64 > max_text {
                return Err(format!("{} bytes of text to keep; {limit}", text.len()));
            }
        }
    }
    if keep.clipboard.is_none() && keep.primary.is_none() {
        return Ok(None);
    }
    let mut keeper = Keeper::open(wayland)?;
    for (primary, text) in [(false, keep.clipboard), (true, keep.primary)] {
        if let Some(text) = text {
            keeper.own(primary, text)?;
        }
    }
    Ok(Some(keeper))
}
