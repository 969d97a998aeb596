//! The teaching overlay (PROTOCOL.md "Teaching overlay"): `teach_show`,
//! `teach_poll` and `teach_hide`; and the sign that deskhand is in control
//! (`indicator`), a window of the same kind kept out of captures the same
//! way.
//!
//! The tooltip lives on an X connection and thread of its own
//! (`overlay`), opened at the first `teach_show`, so the request loop never
//! blocks on it. Three rules hold while it is up:
//! - only a real device's click presses Next or Exit (`trust`): XTEST
//!   input, which is how deskhand and xdotool click, is ignored;
//! - a real Escape press anywhere sets the choice "exit";
//! - no capture contains it: `OutOfCapture` moves it off the screen, with
//!   the server grabbed, for exactly as long as pixels are read, and the
//!   windows under it are redirected so the server repaints them at once.

pub mod font;
pub mod indicator;
pub mod overlay;
pub mod trust;

use std::sync::{Mutex, MutexGuard};

use serde_json::{json, Map, Value};
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{ConfigureWindowAux, ConnectionExt as _};

use crate::error::{Error, Result};
use crate::protocol;
use crate::types::{Point, Rect};
use overlay::{Overlay, Spec};

/// Longest explanation or preview, in characters: a tooltip, not a page.
pub const MAX_TEXT_CHARS: usize = 2000;

static OVERLAY: Mutex<Option<Overlay>> = Mutex::new(None);
/// The shown windows of the helper's own (the tooltip, the indicator)
/// and their bounds, for captures to move them aside.
static SHOWN: Mutex<Vec<(u32, Rect)>> = Mutex::new(Vec::new());

fn locked<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Every window a tooltip was ever shown in: a capture moves it aside and
/// it goes away when hidden, and neither may leave a masked "ghost" of an
/// unapproved window where it stood (see [`is_tooltip`]).
static TOOLTIPS: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Records that `window` is shown at `at`, or (None) no longer shown.
pub(crate) fn set_shown(window: u32, at: Option<Rect>) {
    if at.is_some() {
        let mut own = locked(&TOOLTIPS);
        if !own.contains(&window) {
            own.push(window);
        }
    }
    let mut shown = locked(&SHOWN);
    shown.retain(|(w, _)| *w != window);
    if let Some(at) = at {
        shown.push((window, at));
    }
}

/// Whether window is (or was) the teaching tooltip: deskhand's own,
/// never an app whose old place must be masked.
pub fn is_tooltip(window: u32) -> bool {
    locked(&TOOLTIPS).contains(&window)
}

/// Whether `teach_show` can work on this server: the handshake lists the
/// `teach` capability only then, so the supervisor offers teaching only
/// where the tooltip can keep its rules.
pub fn available<C: Connection>(conn: &C, screen_num: usize) -> bool {
    static FONT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let reason = match overlay::server_supports(conn, screen_num) {
        Err(e) => Some(e.message),
        Ok(()) if !*FONT.get_or_init(|| font::load().is_ok()) => {
            Some("no usable font (install fonts-dejavu-core)".to_owned())
        }
        Ok(()) => None,
    };
    if let Some(why) = &reason {
        log_info!("teaching is unavailable: {why}");
    }
    reason.is_none()
}

/// `teach_show`: shows the tooltip `params` describe, replacing any other.
pub fn call_show(
    id: &Value,
    display: Option<&str>,
    params: &Map<String, Value>,
) -> Result<Vec<u8>> {
    let spec = parse_show(params)?;
    let mut slot = locked(&OVERLAY);
    if let Some(dead) = slot.as_ref().filter(|o| !o.alive()) {
        set_shown(dead.window(), None);
        *slot = None;
    }
    if slot.is_none() {
        *slot = Some(Overlay::open(display)?);
    }
    let overlay = slot.as_mut().expect("set above");
    let shown = overlay.show(&spec)?;
    Ok(protocol::success(
        id,
        &json!({ "bounds": shown.bounds, "next": shown.next, "exit": shown.exit }),
    ))
}

/// `teach_poll`: whether the tooltip is up and what the user chose.
pub fn call_poll(id: &Value) -> Result<Vec<u8>> {
    let (visible, choice) = locked(&OVERLAY)
        .as_ref()
        .map_or((false, None), |o| o.poll());
    Ok(protocol::success(
        id,
        &json!({ "visible": visible, "choice": choice.map(|c| c.name()) }),
    ))
}

/// `teach_hide`: takes the tooltip down; nothing to do when none is up.
pub fn call_hide(id: &Value) -> Result<Vec<u8>> {
    if let Some(o) = locked(&OVERLAY).as_mut() {
        o.hide()?;
    }
    Ok(protocol::success(id, &Map::new()))
}

fn parse_show(p: &Map<String, Value>) -> Result<Spec> {
    let get = |name: &str| p.get(name).filter(|v| !v.is_null());
    let text = |name: &str, blank_ok: bool| -> Result<String> {
        let v = get(name).ok_or_else(|| {
            bad(format!(
                "\"{name}\" is required: the text the tooltip shows"
            ))
        })?;
        let s = v.as_str().ok_or_else(|| {
            bad(format!(
                "\"{name}\" must be a string, got {}",
                protocol::kind(v)
            ))
        })?;
        if !blank_ok && s.trim().is_empty() {
            return Err(bad(format!("\"{name}\" must not be blank")));
        }
        let n = s.chars().count();
        if n > MAX_TEXT_CHARS {
            return Err(bad(format!(
                "\"{name}\" is {n} characters; a tooltip holds at most {MAX_TEXT_CHARS}"
            )));
        }
        Ok(s.to_owned())
    };
    let count = |name: &str| -> Result<Option<u32>> {
        match get(name) {
            None => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n @ 1..=10_000) => Ok(Some(n as u32)),
                _ => Err(bad(format!(
                    "\"{name}\" must be an integer in 1..=10000, got {v}"
                ))),
            },
        }
    };
    let anchor = match get("anchor") {
        None => None,
        Some(Value::Object(a)) => {
            let coord = |c: &str| -> Result<i32> {
                a.get(c)
                    .and_then(Value::as_i64)
                    .and_then(|v| i32::try_from(v).ok())
                    .ok_or_else(|| {
                        bad(format!(
                            "\"anchor\" must be {{\"x\": int, \"y\": int}} in global logical pixels; \"{c}\" is {}",
                            a.get(c).map_or("missing".to_owned(), |v| v.to_string())
                        ))
                    })
            };
            Some(Point {
                x: coord("x")?,
                y: coord("y")?,
            })
        }
        Some(v) => {
            return Err(bad(format!(
                "\"anchor\" must be an object {{\"x\": int, \"y\": int}}, got {}",
                protocol::kind(v)
            )))
        }
    };
    let spec = Spec {
        explanation: text("explanation", false)?,
        next_preview: text("next_preview", true)?,
        anchor,
        step: count("step")?,
        total: count("total")?,
    };
    if let (Some(s), Some(t)) = (spec.step, spec.total) {
        if s > t {
            return Err(bad(format!("\"step\" {s} is past \"total\" {t}")));
        }
    }
    Ok(spec)
}

/// Maps an X request failure to display_unavailable, saying what was being done.
pub(crate) fn xe<E: std::fmt::Display>(context: &'static str) -> impl FnOnce(E) -> Error {
    move |e| Error::x11(context, e)
}

fn bad(what: String) -> Error {
    Error::invalid_params(format!("teach_show: {what}"))
}

/// Keeps the helper's own windows (the tooltip, the indicator) out of the
/// pixels read while it lives: the server is grabbed, so no other client
/// sees the moment, and each is moved off the root window. The windows
/// under them are redirected while they are up, so the server paints
/// their own contents there at once. They move back when this drops (the
/// capture's own grab may have been let go by then; the move back needs
/// none).
pub struct OutOfCapture<'c, C: Connection> {
    conn: &'c C,
    moved: Vec<(u32, Rect)>,
}

impl<'c, C: Connection> OutOfCapture<'c, C> {
    pub fn new(conn: &'c C) -> Result<OutOfCapture<'c, C>> {
        let shown = locked(&SHOWN).clone();
        if shown.is_empty() {
            return Ok(OutOfCapture { conn, moved: shown });
        }
        let out = OutOfCapture { conn, moved: shown };
        conn.grab_server()
            .map_err(xe("moving the teaching tooltip out of the capture"))?;
        for (window, at) in &out.moved {
            let off = -(at.width as i32) - 64;
            conn.configure_window(
                *window,
                &ConfigureWindowAux::new().x(off.max(i16::MIN as i32)),
            )
            .map_err(xe("moving the teaching tooltip out of the capture"))?;
        }
        // A round trip, so the server has moved them before any pixel is read.
        conn.get_input_focus()
            .map_err(xe("moving the teaching tooltip out of the capture"))?
            .reply()
            .map_err(|e| Error::x11("moving the teaching tooltip out of the capture", e))?;
        Ok(out)
    }
}

impl<C: Connection> OutOfCapture<'_, C> {
    /// Where the moved windows stand: no damage reaches the root under
    /// them while they do, so a capture reads those places again.
    pub fn covered(&self) -> impl Iterator<Item = Rect> + '_ {
        self.moved.iter().map(|(_, at)| *at)
    }
}

impl<C: Connection> Drop for OutOfCapture<'_, C> {
    fn drop(&mut self) {
        if self.moved.is_empty() {
            return;
        }
        // Errors here mean the connection is gone, which releases the grab.
        for (window, at) in self.moved.drain(..) {
            let _ = self
                .conn
                .configure_window(window, &ConfigureWindowAux::new().x(at.x).y(at.y));
        }
        let _ = self.conn.ungrab_server();
        let _ = self.conn.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().cloned().expect("an object")
    }

    #[test]
    fn parse_show_accepts_a_full_step() {
        let got = parse_show(&params(json!({
            "explanation": "Click Save", "next_preview": "types a name",
            "anchor": {"x": 10, "y": 20}, "step": 2, "total": 3
        })))
        .expect("valid");
        assert_eq!(
            got,
            Spec {
                explanation: "Click Save".into(),
                next_preview: "types a name".into(),
                anchor: Some(Point { x: 10, y: 20 }),
                step: Some(2),
                total: Some(3),
            }
        );
    }

    #[test]
    fn parse_show_names_what_is_wrong() {
        let cases = [
            (json!({"next_preview": "x"}), "\"explanation\" is required"),
            (
                json!({"explanation": " ", "next_preview": "x"}),
                "must not be blank",
            ),
            (
                json!({"explanation": 3, "next_preview": "x"}),
                "must be a string",
            ),
            (json!({"explanation": "a"}), "\"next_preview\" is required"),
            (
                json!({"explanation": "a", "next_preview": "", "anchor": [1, 2]}),
                "must be an object",
            ),
            (
                json!({"explanation": "a", "next_preview": "", "anchor": {"x": 1}}),
                "\"y\" is missing",
            ),
            (
                json!({"explanation": "a", "next_preview": "", "step": 0}),
                "\"step\" must be an integer",
            ),
            (
                json!({"explanation": "a", "next_preview": "", "step": 4, "total": 3}),
                "past \"total\"",
            ),
            (
                json!({"explanation": "a".repeat(MAX_TEXT_CHARS + 1), "next_preview": ""}),
                "at most",
            ),
        ];
        for (input, want) in cases {
            let err = parse_show(&params(input.clone())).expect_err("invalid");
            assert!(
                err.message.contains(want),
                "parse_show({input}) = {:?}, want a message containing {want:?}",
                err.message
            );
        }
    }
}
