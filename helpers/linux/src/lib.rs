//! deskhand-helper: the Linux capture helper of deskhand.
//!
//! It speaks the protocol in helpers/PROTOCOL.md on stdio and answers from
//! one persistent X11 connection: displays (RandR 1.5 monitors), captures
//! (MIT-SHM, GetImage fallback), the EWMH window list, the clipboard and
//! window hiding.

pub mod error;
pub mod types;

pub mod apps;
pub mod clipboard;
pub mod windows;
