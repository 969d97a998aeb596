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

use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};

use crate::capture::encode::{Encoder, ImageFormat};
use crate::capture::resize::Scaler;
use crate::dispatch::{Backend, Hello, Reply};
use crate::displays::{fnv1a32, Display};
use crate::error::{Code, Error, Result};
use crate::protocol;
use crate::server::Params;
use crate::types::{Point, Rect, Size};

pub const PLATFORM: &str = "linux-wayland";
pub const BACKEND: &str = "gnome-mutter";

/// Longest wait for a stream's first frame.
const FRAME_TIMEOUT: Duration = Duration::from_secs(20);

const BTN_LEFT: i32 = 0x110;
const BTN_RIGHT: i32 = 0x111;
const BTN_MIDDLE: i32 = 0x112;

/// The bus connection and, once a method needs them, the sessions and the
/// PipeWire readers (one per monitor, started on its first capture).
struct Live {
    conn: zbus::Connection,
    session: Option<bus::Session>,
    frames: Vec<(String, frames::Frames)>,
}

#[derive(Default)]
pub struct Server {
    live: Option<Live>,
    scaler: Scaler,
    encoder: Encoder,
    native: Vec<u8>,
    scaled: Vec<u8>,
    base64: String,
    next_capture_id: u64,
}

impl Server {
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

    fn hello(&mut self) -> Hello {
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
        Hello {
            platform: PLATFORM,
            backend: Some(BACKEND),
            capabilities: caps,
            missing: Some(missing().into_iter().map(String::from).collect()),
            display: std::env::var("WAYLAND_DISPLAY").ok(),
            extensions: json!({ "mutter_remote_desktop": error.is_none() }),
            display_error: error,
        }
    }

    fn displays(&mut self) -> Result<Vec<Display>> {
        let live = self.live()?;
        Ok(bus::monitors(&live.conn)?.iter().map(display_of).collect())
    }

    fn take_capture(&mut self, id: &Value, p: &Params<'_>) -> Reply {
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
        let syms: Vec<u32> = crate::wayland::input::combo_keys(p)?
            .into_iter()
            .map(|(sym, _)| sym)
            .collect();
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

/// Answers a method from the inherent one of the same name, which gives
/// the result's value.
macro_rules! answered {
    ($($name:ident),* $(,)?) => {
        $(fn $name(&mut self, id: &Value, p: &Params<'_>) -> Reply {
            Ok(protocol::success(id, &Server::$name(self, p)?))
        })*
    };
}

/// What mutter cannot serve refuses with why.
impl Backend for Server {
    fn hello(&mut self) -> Hello {
        Server::hello(self)
    }

    fn displays(&mut self, id: &Value, _: &Params<'_>) -> Reply {
        let displays = Server::displays(self)?;
        Ok(protocol::success(id, &json!({ "displays": displays })))
    }

    fn capture(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        self.take_capture(id, p)
    }

    fn windows(&mut self, _: &Value, p: &Params<'_>) -> Reply {
        Err(no_windows(p.method()))
    }

    fn hide(&mut self, _: &Value, p: &Params<'_>) -> Reply {
        Err(no_windows(p.method()))
    }

    fn restore(&mut self, _: &Value, p: &Params<'_>) -> Reply {
        Err(no_windows(p.method()))
    }

    fn window_at(&mut self, _: &Value, _: &Params<'_>) -> Reply {
        Err(no_window_at())
    }

    fn patch_check(&mut self, _: &Value, _: &Params<'_>) -> Reply {
        Err(no_patch_check())
    }

    fn clipboard_read(&mut self, _: &Value, _: &Params<'_>) -> Reply {
        Err(no_clipboard())
    }

    fn clipboard_write(&mut self, _: &Value, _: &Params<'_>) -> Reply {
        Err(no_clipboard())
    }

    answered!(
        pointer_move,
        pointer_button,
        pointer_scroll,
        key_type,
        key_combo
    );
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
