//! The clipboard keeper: `deskhand-helper --keep-clipboard`. An X
//! selection lives only as long as the client that owns it, and the
//! helper that serves deskhand exits with it; so when deskhand puts the
//! user's clipboard back just before it exits, it runs the helper once
//! more in this mode, in a session of its own, to own the text until
//! other clients have taken it, as xclip does. The serving is the same
//! [`Clipboard`] the protocol's `clipboard_write` uses (UTF-8 and Latin-1
//! targets, INCR for large text), so the clipboard has one owner
//! implementation.
//!
//! Input on stdin, one JSON object: `{"clipboard": string,
//! "primary": string}`, each optional (absent or null: not kept). Once it
//! owns every selection it was given it writes `ready` and a newline to
//! stdout and closes it; on failure it writes `error: <reason>` and exits
//! with status 1.

use std::io::{Read, Write};

use serde::Deserialize;

use crate::clipboard::{Clipboard, Selection};

/// Largest input accepted: two selections of the protocol's 1 MiB request
/// cap, JSON-escaped at worst (6 bytes per byte), and room for the keys.
const MAX_INPUT: u64 = 2 * 6 * 1024 * 1024 + 1024;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Keep {
    clipboard: Option<String>,
    primary: Option<String>,
}

/// Runs the keeper: reads what to keep from `input`, takes the
/// selections, reports on `out` (closed when this returns or before it
/// serves), and serves until they are all taken. Returns the exit status.
pub fn run(input: impl Read, mut out: impl Write) -> (u8, Option<Clipboard>) {
    match take(input) {
        Ok(clipboard) => {
            let _ = writeln!(out, "ready");
            let _ = out.flush();
            (0, clipboard)
        }
        Err(reason) => {
            let _ = writeln!(out, "error: {reason}");
            let _ = out.flush();
            (1, None)
        }
    }
}

fn take(input: impl Read) -> Result<Option<Clipboard>, String> {
    let mut data = Vec::new();
    input
        .take(MAX_INPUT + 1)
        .read_to_end(&mut data)
        .map_err(|e| format!("reading what to keep from stdin: {e}"))?;
    if data.len() as u64 > MAX_INPUT {
        return Err(format!(
            "more than {MAX_INPUT} bytes on stdin; the clipboard text is limited to 1 MiB per selection"
        ));
    }
    let keep: Keep = serde_json::from_slice(&data).map_err(|e| {
        format!("reading what to keep: {e}; send {{\"clipboard\": text, \"primary\": text}}")
    })?;
    if keep.clipboard.is_none() && keep.primary.is_none() {
        return Ok(None);
    }
    let mut clipboard = Clipboard::new().map_err(|e| e.to_string())?;
    for (selection, text) in [
        (Selection::Clipboard, keep.clipboard),
        (Selection::Primary, keep.primary),
    ] {
        if let Some(text) = text {
            clipboard
                .write(selection, &text)
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(Some(clipboard))
}
