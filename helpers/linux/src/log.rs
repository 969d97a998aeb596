//! Logging to stderr, one line per message: `LEVEL message`.
//!
//! stdout belongs to the protocol, so nothing here may ever touch it. The
//! level comes from `DESKHAND_HELPER_LOG` (`debug`, `info`, `warn`, `error`;
//! default `info`).

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Level {
    Debug = 0,
    Info = 1,
    Warn = 2,
    Error = 3,
}

impl Level {
    fn word(self) -> &'static str {
        match self {
            Level::Debug => "DEBUG",
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
        }
    }

    /// Parses a level name as written in `DESKHAND_HELPER_LOG`.
    pub fn parse(name: &str) -> Option<Level> {
        match name.trim().to_ascii_lowercase().as_str() {
            "debug" | "trace" => Some(Level::Debug),
            "info" => Some(Level::Info),
            "warn" | "warning" => Some(Level::Warn),
            "error" => Some(Level::Error),
            _ => None,
        }
    }
}

static THRESHOLD: AtomicU8 = AtomicU8::new(Level::Info as u8);

/// Sets the threshold from `DESKHAND_HELPER_LOG`; an unknown value keeps
/// `info` and says so.
pub fn init_from_env() {
    if let Ok(value) = std::env::var("DESKHAND_HELPER_LOG") {
        match Level::parse(&value) {
            Some(level) => set_level(level),
            None => log(
                Level::Warn,
                format_args!(
                    "DESKHAND_HELPER_LOG={value:?} is not one of debug, info, warn, error; using info"
                ),
            ),
        }
    }
}

pub fn set_level(level: Level) {
    THRESHOLD.store(level as u8, Ordering::Relaxed);
}

pub fn enabled(level: Level) -> bool {
    level as u8 >= THRESHOLD.load(Ordering::Relaxed)
}

/// Writes one log line. Newlines inside the message are flattened so every
/// message stays one line for the supervisor's log parser.
pub fn log(level: Level, args: fmt::Arguments<'_>) {
    if !enabled(level) {
        return;
    }
    let mut line = format!("{} {}", level.word(), args);
    if line.contains(['\n', '\r']) {
        line = line.replace(['\n', '\r'], " ");
    }
    line.push('\n');
    // A failed write to stderr has nowhere to be reported.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

#[macro_export]
macro_rules! log_debug {
    ($($arg:tt)*) => { $crate::log::log($crate::log::Level::Debug, format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! log_info {
    ($($arg:tt)*) => { $crate::log::log($crate::log::Level::Info, format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! log_warn {
    ($($arg:tt)*) => { $crate::log::log($crate::log::Level::Warn, format_args!($($arg)*)) };
}

#[macro_export]
macro_rules! log_error {
    ($($arg:tt)*) => { $crate::log::log($crate::log::Level::Error, format_args!($($arg)*)) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_level_names() {
        assert_eq!(Level::parse("debug"), Some(Level::Debug));
        assert_eq!(Level::parse(" WARN "), Some(Level::Warn));
        assert_eq!(Level::parse("info"), Some(Level::Info));
        assert_eq!(Level::parse("loud"), None);
    }
}
