//! The helper's one X connection and what it learns at setup: the root
//! window, its pixel format and the extensions it can use.

use serde::Serialize;
use x11rb::connection::{Connection, RequestConnection};
use x11rb::protocol::randr::ConnectionExt as _;
use x11rb::protocol::shm::ConnectionExt as _;
use x11rb::protocol::xproto::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use crate::capture::pixfmt::PixelFormat;
use crate::error::{Code, Error, Result};
use crate::types::Size;

/// The extensions the helper uses, as reported in the handshake.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Extensions {
    /// MIT-SHM is present (and not switched off by DESKHAND_HELPER_NO_SHM).
    pub shm: bool,
    /// The RandR version, e.g. "1.6".
    pub randr: Option<String>,
    /// X-Resource, used to find a window's pid.
    pub xres: bool,
}

pub struct XConn {
    pub conn: RustConnection,
    pub screen_num: usize,
    pub root: u32,
    /// The display name connected to, e.g. ":1".
    pub display: String,
    pub extensions: Extensions,
    pub randr_version: Option<(u32, u32)>,
    /// The root window's pixel format.
    pub format: PixelFormat,
}

/// The display to connect to: the configured one, else `$DISPLAY`.
pub fn display_name(configured: Option<&str>) -> Option<String> {
    configured
        .map(str::to_owned)
        .or_else(|| std::env::var("DISPLAY").ok())
        .filter(|d| !d.is_empty())
}

/// The error every X method returns while there is no connection.
pub fn unavailable(display: Option<&str>, why: impl std::fmt::Display) -> Error {
    match display {
        None => Error::new(
            Code::DisplayUnavailable,
            "DISPLAY is not set, so there is no X display to connect to",
            "Run deskhand inside an X11 session, or set DISPLAY (for example DISPLAY=:0) in its environment.",
        ),
        Some(name) => Error::new(
            Code::DisplayUnavailable,
            format!("cannot connect to the X display {name:?}: {why}"),
            format!(
                "Check that an X server is running at DISPLAY={name} (`xdpyinfo -display {name}`) and that this user may connect to it (XAUTHORITY, xhost); the helper retries on every call."
            ),
        ),
    }
}

/// The highest display number whose TCP port (6000 + n) is a port at all.
/// x11rb computes that port in a u16 for every display it may reach over
/// TCP (also as the fallback after the local socket), so a larger number
/// panics in a debug build and wraps to another server's port in a release
/// build; it is refused before x11rb sees it.
pub const MAX_DISPLAY_NUMBER: u32 = u16::MAX as u32 - 6000;

/// Refuses a display name whose number no X server can have: one over
/// MAX_DISPLAY_NUMBER (`:64999`), whose TCP port would be past 65535.
pub fn check_display_name(name: &str) -> Result<()> {
    let Some((_, after)) = name.rsplit_once(':') else {
        return Ok(());
    };
    let digits = after.split('.').next().unwrap_or("");
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        // Not a number: x11rb's own parser reports it.
        return Ok(());
    }
    let fits = digits
        .parse::<u64>()
        .is_ok_and(|n| n <= u64::from(MAX_DISPLAY_NUMBER));
    if fits {
        return Ok(());
    }
    Err(Error::new(
        Code::DisplayUnavailable,
        format!(
            "DISPLAY={name} names display number {digits}, but an X display number is at most {MAX_DISPLAY_NUMBER}: its TCP port would be 6000 + {digits}, past the last port (65535)"
        ),
        format!(
            "Set DISPLAY to the display your X server runs on (for example DISPLAY=:0; `ls /tmp/.X11-unix` lists the local ones), or start the X server on a number up to {MAX_DISPLAY_NUMBER}."
        ),
    ))
}

/// Connects x11rb to the display `name`, refusing first a display number
/// no X server can have (check_display_name).
pub fn open(name: &str) -> Result<(RustConnection, usize)> {
    check_display_name(name)?;
    x11rb::connect(Some(name)).map_err(|e| unavailable(Some(name), e))
}

impl XConn {
    /// Connects to `display` (None: `$DISPLAY`) and reads the setup.
    pub fn connect(display: Option<&str>, allow_shm: bool) -> Result<XConn> {
        let name = display_name(display);
        let Some(name) = name else {
            return Err(unavailable(None, ""));
        };
        let (conn, screen_num) = open(&name)?;
        let screen = conn.setup().roots.get(screen_num).ok_or_else(|| {
            unavailable(
                Some(&name),
                format!("the server has no screen {screen_num}"),
            )
        })?;
        let root = screen.root;
        let format = PixelFormat::of_root(conn.setup(), screen_num)?;

        // Ask about every extension before waiting for any answer.
        for ext in [
            x11rb::protocol::shm::X11_EXTENSION_NAME,
            x11rb::protocol::randr::X11_EXTENSION_NAME,
            x11rb::protocol::res::X11_EXTENSION_NAME,
        ] {
            conn.prefetch_extension_information(ext)
                .map_err(|e| Error::x11("querying extensions", e))?;
        }
        let shm_present = present(&conn, x11rb::protocol::shm::X11_EXTENSION_NAME)?;
        let randr_present = present(&conn, x11rb::protocol::randr::X11_EXTENSION_NAME)?;
        let xres = present(&conn, x11rb::protocol::res::X11_EXTENSION_NAME)?;
        let shm_cookie = if shm_present && allow_shm {
            Some(
                conn.shm_query_version()
                    .map_err(|e| Error::x11("querying MIT-SHM", e))?,
            )
        } else {
            None
        };
        let randr_cookie = if randr_present {
            Some(
                conn.randr_query_version(1, 6)
                    .map_err(|e| Error::x11("querying RandR", e))?,
            )
        } else {
            None
        };
        let shm = shm_cookie.is_some_and(|c| c.reply().is_ok());
        let randr_version = randr_cookie
            .and_then(|c| c.reply().ok())
            .map(|r| (r.major_version, r.minor_version));
        let extensions = Extensions {
            shm,
            randr: randr_version.map(|(major, minor)| format!("{major}.{minor}")),
            xres,
        };
        crate::log_info!(
            "connected to X display {name}: root 0x{root:x}, depth {} ({} bpp, masks {:x}/{:x}/{:x}, {:?}), shm {}, randr {}, xres {}",
            format.depth,
            format.bits_per_pixel,
            format.red_mask,
            format.green_mask,
            format.blue_mask,
            format.byte_order,
            extensions.shm,
            extensions.randr.as_deref().unwrap_or("none"),
            extensions.xres,
        );
        Ok(XConn {
            conn,
            screen_num,
            root,
            display: name,
            extensions,
            randr_version,
            format,
        })
    }

    /// The root window's current size (it changes with xrandr).
    pub fn root_size(&self) -> Result<Size> {
        let geometry = self
            .conn
            .get_geometry(self.root)
            .map_err(|e| Error::x11("sending GetGeometry", e))?
            .reply()
            .map_err(|e| Error::x11("reading the root geometry", e))?;
        Ok(Size {
            width: geometry.width as u32,
            height: geometry.height as u32,
        })
    }

    /// The screen's size in millimetres, from the setup.
    pub fn root_mm(&self) -> Size {
        let screen = &self.conn.setup().roots[self.screen_num];
        Size {
            width: screen.width_in_millimeters as u32,
            height: screen.height_in_millimeters as u32,
        }
    }

    /// Whether the server still answers.
    pub fn alive(&self) -> bool {
        self.conn
            .get_input_focus()
            .ok()
            .and_then(|c| c.reply().ok())
            .is_some()
    }
}

fn present(conn: &RustConnection, name: &'static str) -> Result<bool> {
    conn.extension_information(name)
        .map(|info| info.is_some())
        .map_err(|e| Error::x11(&format!("querying the {name} extension"), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_numbers_past_the_last_tcp_port_are_refused() {
        for name in [
            ":64999",
            ":59536",
            "localhost:64999.0",
            "unix:99999",
            ":18446744073709551616",
        ] {
            let err = check_display_name(name).expect_err(name);
            assert_eq!(err.code, Code::DisplayUnavailable, "{name}");
            assert!(
                err.message.contains(name) && err.message.contains("65535"),
                "check_display_name({name:?}) = {:?}, want a message naming it and the port limit",
                err.message
            );
        }
    }

    #[test]
    fn ordinary_display_names_pass() {
        for name in [
            ":0",
            ":1.0",
            "localhost:10",
            ":59535",
            "host:0.1",
            "/tmp/.X11-unix/X0",
            "weird",
            ":x",
        ] {
            assert!(
                check_display_name(name).is_ok(),
                "check_display_name({name:?}) refused a name x11rb can handle"
            );
        }
    }
}
