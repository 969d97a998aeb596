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
