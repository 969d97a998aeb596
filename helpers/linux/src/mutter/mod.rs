//! The GNOME backend ("gnome-mutter"): the same protocol as the X11 and
//! wlroots backends, answered through Mutter's own D-Bus APIs.
//!
//! - displays: org.gnome.Mutter.DisplayConfig (GetCurrentState);
//! - capture: an org.gnome.Mutter.ScreenCast RecordMonitor stream of each
//!   monitor, frames over PipeWire (frames.rs), then the X11 pipeline's
//!   crop, scale and encode steps;
//! - input: org.gnome.Mutter.RemoteDesktop, whose session the ScreenCast
//!   session is linked to (absolute motion names a stream).
//!
//! Mutter offers no client a window list, a window under a point or the
//! clipboard, so windows, hide, masking, window_at and the clipboard refuse
//! with unsupported and say why: a gate that needs them refuses too, rather
//! than guess. Why these APIs and not the XDG portals: helpers/PROTOCOL.md,
//! "GNOME (mutter)".

pub mod bus;
pub mod frames;

use std::io::{self, BufRead, Write};
use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Map, Value};

use crate::capture::encode::{Encoder, ImageFormat};
use crate::capture::resize::Scaler;
use crate::displays::{fnv1a32, Display};
use crate::error::{Code, Error, Result};
use crate::protocol::{self, FrameReader};
use crate::serve_loop::{self, Next};
use crate::server::{Params, HELPER_VERSION, PROTOCOL_VERSIONS};
use crate::types::{Point, Rect, Size};

pub const PLATFORM: &str = "linux-wayland";
pub const BACKEND: &str = "gnome-mutter";

/// Longest wait for a stream's first frame.
const FRAME_TIMEOUT: Duration = Duration::from_secs(20);

const BTN_LEFT: i32 = 0x110;
const BTN_RIGHT: i32 = 0x111;
const BTN_MIDDLE: i32 = 0x112;

/// Whether the helper should drive GNOME: `DESKHAND_HELPER_BACKEND=mutter`
/// decides outright (any other value rules it out), else a native Wayland
/// session (WAYLAND_DISPLAY, no DISPLAY) whose XDG_CURRENT_DESKTOP names
/// GNOME.
pub fn chosen() -> bool {
    match std::env::var("DESKHAND_HELPER_BACKEND").as_deref() {
        Ok("mutter") => true,
        Ok(_) => false,
        Err(_) => {
            std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty())
                && !std::env::var_os("DISPLAY").is_some_and(|v| !v.is_empty())
                && std::env::var("XDG_CURRENT_DESKTOP")
                    .is_ok_and(|d| d.split(':').any(|d| d.eq_ignore_ascii_case("gnome")))
        }
    }
}

/// Serves requests from stdin until it closes, framing is lost or `exit`.
/// Mutter never calls the helper back, so one thread reads and answers.
pub fn serve<R: BufRead, W: Write>(input: R, output: &mut W) -> io::Result<u8> {
    let mut reader = FrameReader::new(input, protocol::MAX_REQUEST_BYTES);
    let mut server = Server::default();
    let mut body = Vec::new();
    loop {
        if let Next::End { status, last } = serve_loop::next_frame(&mut reader, &mut body)? {
            if let Some(last) = last {
                protocol::write_frame(output, &last)?;
            }
            return Ok(status);
        }
        let outcome = serve_loop::answer(&body, |id, method, params| {
            server.dispatch(id, method, params)
        });
        if let Some(reply) = outcome.reply {
            protocol::write_frame(output, &reply)?;
        }
        if let Some(code) = outcome.exit {
            log_info!("exiting with status {code} as asked");
            return Ok(code);
        }
    }
}

/// The methods this backend answers after the handshake; those that
/// mutter cannot serve refuse with unsupported.
const METHODS: &[&str] = &[
    "displays",
    "capture",
    "windows",
    "window_at",
    "patch_check",
    "clipboard_read",
    "clipboard_write",
    "hide",
    "restore",
    "pointer_move",
    "pointer_button",
    "pointer_scroll",
    "key_type",
    "key_combo",
];

/// The bus connection and, once a method needs them, the sessions and the
/// PipeWire readers (one per monitor, started on its first capture).
struct Live {
    conn: zbus::Connection,
    session: Option<bus::Session>,
    frames: Vec<(String, frames::Frames)>,
}

#[derive(Default)]
struct Server {
    handshaken: bool,
    live: Option<Live>,
    scaler: Scaler,
    encoder: Encoder,
    native: Vec<u8>,
    scaled: Vec<u8>,
    base64: String,
    next_capture_id: u64,
}

impl Server {
    fn dispatch(&mut self, id: &Value, method: &str, params: Value) -> Result<Vec<u8>> {
        if method == "handshake" {
            let result = self.handshake(params)?;
            self.handshaken = true;
            return Ok(protocol::success(id, &result));
        }
        if method == "exit" {
            return Ok(protocol::success(id, &Map::new()));
        }
        if !METHODS.contains(&method) {
            return Err(Error::method_not_found(method));
        }
        if !self.handshaken {
            return Err(Error::new(
                Code::HandshakeRequired,
                format!("{method} was called before handshake"),
                "Call handshake first.",
            ));
        }
        let p = Params::new(method, params)?;
        let result = match method {
            "displays" => json!({ "displays": self.displays()? }),
            "capture" => return self.capture(id, &p),
            "windows" | "hide" | "restore" => return Err(no_windows(method)),
            "window_at" => return Err(no_window_at()),
            "patch_check" => return Err(no_patch_check()),
            "clipboard_read" | "clipboard_write" => return Err(no_clipboard()),
            "pointer_move" => self.pointer_move(&p)?,
            "pointer_button" => self.pointer_button(&p)?,
            "pointer_scroll" => self.pointer_scroll(&p)?,
            "key_type" => self.key_type(&p)?,
            "key_combo" => self.key_combo(&p)?,
            _ => {
                return Err(Error::internal(format!(
                    "{method} is known but not dispatched"
                )))
            }
        };
        Ok(protocol::success(id, &result))
    }

    fn live(&mut self) -> Result<&mut Live> {
        if self.live.is_none() {
            self.live = Some(Live {
                conn: bus::connect()?,
                session: None,
                frames: Vec::new(),
            });
        }
        Ok(self.live.as_mut().expect("set above"))
    }

    /// The running sessions, started on first use.
    fn session(&mut self) -> Result<&bus::Session> {
        let live = self.live()?;
        if live.session.is_none() {
            let monitors = bus::monitors(&live.conn)?;
            live.session = Some(bus::Session::start(live.conn.clone(), &monitors)?);
        }
        Ok(live.session.as_ref().expect("set above"))
    }

    fn handshake(&mut self, params: Value) -> Result<Value> {
        let p = Params::new("handshake", params)?;
        let offered: Vec<i64> = match p.get("protocol_versions") {
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_i64).collect(),
            _ => return Err(p.bad("\"protocol_versions\" is required, e.g. [1]".into())),
        };
        let Some(version) = offered
            .iter()
            .copied()
            .filter(|v| PROTOCOL_VERSIONS.contains(v))
            .max()
        else {
            return Err(Error::new(
                Code::IncompatibleProtocol,
                format!("the client offers protocol versions {offered:?}, but deskhand-helper {HELPER_VERSION} speaks {PROTOCOL_VERSIONS:?}"),
                "Install matching versions of deskhand and deskhand-helper.",
            ));
        };
        let reachable = self.live().and_then(|l| bus::monitors(&l.conn));
        let (caps, error): (Vec<&str>, Option<String>) = match reachable {
            Ok(_) => (
                vec![
                    "displays",
                    "capture",
                    "capture.png",
                    "capture.jpeg",
                    "input.pointer",
                    "input.keyboard",
                ],
                None,
            ),
            Err(e) => (Vec::new(), Some(format!("{} ({})", e.message, e.hint))),
        };
        let mut out = json!({
            "protocol_version": version,
            "helper_version": HELPER_VERSION,
            "platform": PLATFORM,
            "backend": BACKEND,
            "capabilities": caps,
            "missing": missing(),
            "display": std::env::var("WAYLAND_DISPLAY").ok(),
            "extensions": { "mutter_remote_desktop": error.is_none() },
        });
        if let Some(e) = error {
            out["display_error"] = json!(e);
        }
        Ok(out)
    }

    fn displays(&mut self) -> Result<Vec<Display>> {
        let live = self.live()?;
        Ok(bus::monitors(&live.conn)?.iter().map(display_of).collect())
    }

    fn capture(&mut self, id: &Value, p: &Params<'_>) -> Result<Vec<u8>> {
        let format = match p.str("format")? {
            None | Some("jpeg") => ImageFormat::Jpeg,
            Some("png") => ImageFormat::Png,
            Some(other) => {
                return Err(p.bad(format!(
                    "\"format\" must be \"jpeg\" or \"png\", got {other:?}"
                )))
            }
        };
        let quality = p.int("quality", 1, 100)?.unwrap_or(80) as u8;
        let wanted = p.int("display", 0, u32::MAX as i64)?.map(|d| d as u32);
        let rect = p.rect("rect")?;
        // Masking needs the windows' places, which mutter does not give:
        // an unmasked picture must not pass for a masked one.
        let masks = p.window_ids("mask")?.is_some_and(|m| !m.is_empty())
            || p.bool("mask_others")?.unwrap_or(false)
            || p.window_ids("keep")?.is_some_and(|m| !m.is_empty());
        if masks {
            return Err(Error::new(
                Code::Unsupported,
                "GNOME (mutter) gives deskhand no window list, so it cannot mask windows in a screenshot",
                "Capture without mask, mask_others and keep; deskhand refuses screenshots that need masking on this desktop.",
            ));
        }
        let width = p.int("width", 1, crate::server::MAX_OUTPUT_SIDE)?;
        let height = p.int("height", 1, crate::server::MAX_OUTPUT_SIDE)?;
        let live = self.live()?;
        let monitors = bus::monitors(&live.conn)?;
        let list: Vec<(Display, &bus::Monitor)> =
            monitors.iter().map(|m| (display_of(m), m)).collect();
        let (display, monitor) = match (wanted, rect) {
            (_, Some(r)) => list
                .iter()
                .find(|(d, _)| d.rect().contains_rect(&r))
                .ok_or_else(|| {
                    Error::out_of_bounds(
                        format!("rectangle {r} does not lie inside one display"),
                        "Use a rectangle inside one display; call displays for the geometry.",
                    )
                })?,
            (Some(w), None) => list.iter().find(|(d, _)| d.id == w).ok_or_else(|| {
                Error::new(
                    Code::NoSuchDisplay,
                    format!("no display has id {w}"),
                    "Call displays for the current ids.",
                )
            })?,
            (None, None) => list
                .iter()
                .find(|(d, _)| d.primary)
                .ok_or_else(|| Error::capture_failed("mutter reports no monitor"))?,
        };
        let (display, connector) = (display.clone(), monitor.connector.clone());
        let source = rect.unwrap_or_else(|| display.rect());
        let scale = display.physical.width as f64 / display.logical.width.max(1) as f64;
        let crop = Rect {
            x: ((source.x - display.origin.x) as f64 * scale).round() as i32,
            y: ((source.y - display.origin.y) as f64 * scale).round() as i32,
            width: (source.width as f64 * scale).round() as u32,
            height: (source.height as f64 * scale).round() as u32,
        };
        let size = match (width, height) {
            (Some(w), Some(h)) => Size {
                width: w as u32,
                height: h as u32,
            },
            (None, None) => crop.size(),
            _ => return Err(p.bad("\"width\" and \"height\" go together".into())),
        };
        if size.width as u64 * size.height as u64 > crate::server::MAX_OUTPUT_PIXELS {
            return Err(p.bad("the output is larger than 2^25 pixels".into()));
        }
        self.session()?;
        let live = self.live.as_mut().expect("connected");
        if !live.frames.iter().any(|(c, _)| *c == connector) {
            let session = live.session.as_ref().expect("started");
            let stream = session.streams.iter().find(|s| s.connector == connector).ok_or_else(|| {
                Error::capture_failed(format!("monitor {connector} appeared after deskhand's screencast started; restart deskhand"))
            })?;
            live.frames
                .push((connector.clone(), frames::Frames::start(stream.node)));
        }
        let reader = &live
            .frames
            .iter()
            .find(|(c, _)| *c == connector)
            .expect("started above")
            .1;
        let native = &mut self.native;
        let layout = reader.with_frame(0, FRAME_TIMEOUT, |f| {
            let bounds = Rect {
                x: 0,
                y: 0,
                width: f.width,
                height: f.height,
            };
            if !bounds.contains_rect(&crop) {
                return Err(Error::out_of_bounds(
                    format!(
                        "rectangle {crop} is outside the monitor's frame ({}x{})",
                        f.width, f.height
                    ),
                    "Use a rectangle inside the display; call displays for the geometry.",
                ));
            }
            let row = crop.width as usize * 4;
            native.clear();
            native.reserve(row * crop.height as usize);
            for y in 0..crop.height as usize {
                let start = (crop.y as usize + y) * f.stride + crop.x as usize * 4;
                native.extend_from_slice(&f.pixels[start..start + row]);
            }
            Ok(f.layout)
        })?;
        let frame: &[u8] = if size != crop.size() {
            self.scaler
                .scale(&self.native, crop.size(), size, &mut self.scaled)?;
            &self.scaled
        } else {
            &self.native
        };
        let encoded = self.encoder.encode(frame, size, layout, format, quality)?;
        self.base64.clear();
        base64::engine::general_purpose::STANDARD.encode_string(encoded, &mut self.base64);
        self.next_capture_id += 1;
        Ok(protocol::success(
            id,
            &json!({
                "format": format.name(),
                "data": self.base64,
                "width": size.width,
                "height": size.height,
                "source": source,
                "display": rect.is_none().then_some(display.id),
                "masked": [],
                "mask_others": false,
                "method": "mutter-screencast",
                "capture_id": self.next_capture_id,
            }),
        ))
    }

    fn pointer_move(&mut self, p: &Params<'_>) -> Result<Value> {
        let x = p.required_int("x", i32::MIN as i64, i32::MAX as i64)? as i32;
        let y = p.required_int("y", i32::MIN as i64, i32::MAX as i64)? as i32;
        let live = self.live()?;
        let monitors = bus::monitors(&live.conn)?;
        let at = monitors
            .iter()
            .map(|m| (display_of(m), m))
            .find(|(d, _)| d.rect().contains(Point { x, y }));
        let Some((display, monitor)) = at else {
            return Err(Error::out_of_bounds(
                format!("point {x},{y} is on no monitor"),
                "Use a point inside a display; call displays for the geometry.",
            ));
        };
        let connector = monitor.connector.clone();
        let session = self.session()?;
        let stream = session.streams.iter().find(|s| s.connector == connector).ok_or_else(|| {
            Error::new(
                Code::Internal,
                format!("monitor {connector} appeared after deskhand's remote desktop session started"),
                "Restart deskhand so it records every monitor.",
            )
        })?;
        // Absolute motion is in the stream's own (logical) coordinates.
        session.motion(
            &stream.path,
            (x - display.origin.x) as f64,
            (y - display.origin.y) as f64,
        )?;
        Ok(json!({ "ok": true }))
    }

    fn pointer_button(&mut self, p: &Params<'_>) -> Result<Value> {
        let button = match p.str("button")?.unwrap_or("left") {
            "left" => BTN_LEFT,
            "right" => BTN_RIGHT,
            "middle" => BTN_MIDDLE,
            other => {
                return Err(p.bad(format!(
                    "\"button\" must be \"left\", \"right\" or \"middle\", got {other:?}"
                )))
            }
        };
        let action = p.str("action")?.unwrap_or("click").to_owned();
        let count = p.int("count", 1, 3)?.unwrap_or(1);
        let presses: Vec<bool> = match action.as_str() {
            "press" => vec![true],
            "release" => vec![false],
            "click" => (0..count).flat_map(|_| [true, false]).collect(),
            other => {
                return Err(p.bad(format!(
                    "\"action\" must be \"press\", \"release\" or \"click\", got {other:?}"
                )))
            }
        };
        let session = self.session()?;
        for pressed in presses {
            session.button(button, pressed)?;
        }
        Ok(json!({ "ok": true }))
    }

    fn pointer_scroll(&mut self, p: &Params<'_>) -> Result<Value> {
        let dx = p.int("dx", -100, 100)?.unwrap_or(0) as i32;
        let dy = p.int("dy", -100, 100)?.unwrap_or(0) as i32;
        let session = self.session()?;
        if dy != 0 {
            session.axis_discrete(0, dy)?;
        }
        if dx != 0 {
            session.axis_discrete(1, dx)?;
        }
        Ok(json!({ "ok": true }))
    }

    fn key_type(&mut self, p: &Params<'_>) -> Result<Value> {
        let text = p
            .str("text")?
            .ok_or_else(|| p.bad("\"text\" is required".into()))?
            .to_owned();
        if let Some(c) = text
            .chars()
            .find(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\r'))
        {
            return Err(p.bad(format!(
                "\"text\" holds the control character U+{:04X}; send keys such as Escape with key_combo",
                c as u32
            )));
        }
        let session = self.session()?;
        for c in text.chars() {
            // Mutter finds the key for the keysym in the active layout.
            let sym = crate::wayland::input::keysym_of(c);
            session.keysym(sym, true)?;
            session.keysym(sym, false)?;
        }
        Ok(json!({ "ok": true }))
    }

    fn key_combo(&mut self, p: &Params<'_>) -> Result<Value> {
        let Some(Value::Array(names)) = p.get("keys") else {
            return Err(p.bad(
                "\"keys\" is required: an array of key names such as [\"ctrl\", \"shift\", \"t\"]"
                    .into(),
            ));
        };
        let mut syms = Vec::new();
        for n in names {
            let (sym, _) = crate::wayland::input::parse_key(n.as_str().unwrap_or("")).ok_or_else(|| {
                p.bad(format!(
                    "unknown key {n}; use a single character, F1..F24, or one of shift, ctrl, alt, super, return, tab, escape, backspace, delete, insert, home, end, page_up, page_down, left, up, right, down, space, menu"
                ))
            })?;
            syms.push(sym);
        }
        if syms.is_empty() || syms.len() > 8 {
            return Err(p.bad("\"keys\" must hold 1 to 8 keys".into()));
        }
        let session = self.session()?;
        let mut pressed = Vec::new();
        let mut result = Ok(());
        for &s in &syms {
            result = session.keysym(s, true);
            if result.is_err() {
                break;
            }
            pressed.push(s);
        }
        // Release whatever went down, even after an error: no key stays held.
        for &s in pressed.iter().rev() {
            let _ = session.keysym(s, false);
        }
        result?;
        Ok(json!({ "ok": true }))
    }
}

/// What this backend cannot do on GNOME, and why.
fn missing() -> Vec<&'static str> {
    vec![
        "windows: mutter gives clients no window list, so window list, hiding and masking are unavailable",
        "window_at: Wayland does not say which window is under a point",
        "clipboard: mutter offers no clipboard access outside an app's own window",
        "patch_check: not implemented on the GNOME backend yet",
    ]
}

fn display_of(m: &bus::Monitor) -> Display {
    let scale = if m.scale > 0.0 { m.scale } else { 1.0 };
    let (lw, lh) = if m.logical_layout {
        (
            (m.width as f64 / scale).round() as u32,
            (m.height as f64 / scale).round() as u32,
        )
    } else {
        (m.width.max(0) as u32, m.height.max(0) as u32)
    };
    Display {
        id: fnv1a32(m.connector.as_bytes()),
        name: m.connector.clone(),
        origin: Point { x: m.x, y: m.y },
        logical: Size {
            width: lw,
            height: lh,
        },
        physical: Size {
            width: m.width.max(0) as u32,
            height: m.height.max(0) as u32,
        },
        scale,
        primary: m.primary,
        mm: Size {
            width: 0,
            height: 0,
        },
    }
}

fn no_windows(method: &str) -> Error {
    Error::new(
        Code::Unsupported,
        format!("{method}: GNOME (mutter) gives deskhand no window list, so it cannot list, hide, restore or mask windows"),
        "Refuse actions that need to know the windows; run deskhand with --virtual-display for a desktop it can see whole.",
    )
}

fn no_window_at() -> Error {
    Error::new(
        Code::Unsupported,
        "Wayland does not tell a client which window is under a point, so deskhand cannot say whose window a click would land on",
        "Refuse the click rather than guess.",
    )
}

fn no_patch_check() -> Error {
    Error::new(
        Code::Unsupported,
        "patch_check is not implemented on the GNOME backend",
        "Capture again and compare instead.",
    )
}

fn no_clipboard() -> Error {
    Error::new(
        Code::ClipboardUnavailable,
        "GNOME (mutter) lets no client read or set the clipboard outside its own focused window",
        "Paste through the app's own menus, or run deskhand with --virtual-display.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn monitor(scale: f64, logical_layout: bool) -> bus::Monitor {
        bus::Monitor {
            connector: "eDP-1".into(),
            x: 1920,
            y: 0,
            width: 2560,
            height: 1600,
            scale,
            primary: false,
            logical_layout,
        }
    }

    #[test]
    fn a_scaled_monitor_in_a_logical_layout_covers_mode_over_scale() {
        let d = display_of(&monitor(2.0, true));
        assert_eq!((d.logical.width, d.logical.height), (1280, 800));
        assert_eq!((d.physical.width, d.physical.height), (2560, 1600));
        assert_eq!((d.origin.x, d.origin.y), (1920, 0));
        assert_eq!(d.id, fnv1a32(b"eDP-1"));
    }

    #[test]
    fn a_physical_layout_covers_the_whole_mode() {
        let d = display_of(&monitor(2.0, false));
        assert_eq!((d.logical.width, d.logical.height), (2560, 1600));
    }
}
