//! deskhand-helper: the Linux capture helper of deskhand.
//!
//! It speaks the protocol in helpers/PROTOCOL.md on stdio and answers from
//! one persistent X11 connection: displays (RandR 1.5 monitors), captures
//! (MIT-SHM, GetImage fallback), the EWMH window list, the clipboard,
//! window hiding and, on a connection of its own, the teaching tooltip
//! (`teach`).
//!
//! `dispatch::Dispatcher::handle` maps one request body to one response
//! body through a backend (X11 in `server`, wlroots and KWin in `wayland`),
//! so the whole protocol is testable without pipes; `main` only picks the
//! backend and wires it to stdin and stdout.

#[macro_use]
pub mod log;

pub mod capture;
pub mod changes;
pub mod dispatch;
pub mod displays;
pub mod error;
pub mod patch;
pub mod protocol;
pub mod serve_loop;
pub mod server;
pub mod types;
pub mod xconn;

pub mod a11y;
pub mod apps;
pub mod clipboard;
pub mod epoch;
pub mod keeper;
#[cfg(feature = "mutter")]
pub mod mutter;
pub mod teach;
pub mod wayland;
pub mod windows;
pub mod winstate;

/// Whether the speed-up `name` is on: it is unless DESKHAND_SPEEDUPS_OFF
/// (commas between names, or "all") turns it off, as the supervisor's
/// internal/speedups reads it. Turning one off changes only how long a
/// request takes, so `make bench` can measure what each one saves.
pub fn speedup_on(name: &str) -> bool {
    let off = std::env::var("DESKHAND_SPEEDUPS_OFF").unwrap_or_default();
    !off.split(',').any(|n| n == name || n == "all")
}
