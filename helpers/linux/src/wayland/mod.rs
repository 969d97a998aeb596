//! The Wayland backend ("wayland-wlr"): the same protocol as the X11
//! backend, answered from a wlroots compositor's protocols.
//!
//! - displays: wl_output (mode, scale, name, position);
//! - capture: wlr-screencopy into shared memory, then the X11 pipeline's
//!   mask, scale and encode steps;
//! - windows, hide, restore: wlr-foreign-toplevel-management, joined on
//!   sway with its IPC tree for each view's pid and rectangle (the protocol
//!   gives neither); without them a toplevel's bounds are its whole output,
//!   so a mask covers too much rather than too little;
//! - clipboard: wlr-data-control;
//! - input (pointer_*, key_*): zwlr_virtual_pointer_v1 and
//!   zwp_virtual_keyboard_v1 (see input.rs), or on KWin its fake input
//!   (see kde_input.rs).
//!
//! On KWin the same server answers as "kde-kwin" from KDE's protocols
//! instead (kde.rs: windows with geometry and stacking, so window_at;
//! kde_capture.rs: screenshots through KWin's ScreenShot2 D-Bus API;
//! kde_input.rs: fake input), which KWin grants only to a client its
//! desktop entry authorizes.
//!
//! Unlike X11 the helper must answer the compositor while no request is
//! pending (a clipboard reader asks deskhand's selection for its text): the
//! serve loop (dispatch.rs) waits on stdin and the compositor through
//! [`Backend::wait`].

pub mod capture;
pub mod epoch;
pub mod input;
pub mod kde;
pub mod kde_capture;
pub mod kde_input;
pub mod state;
pub mod sway;

use std::io::{self, Read, Write};
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::sync::atomic::AtomicU64;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use wayland_client::Proxy;

use crate::capture::encode::ImageFormat;
use crate::capture::mask;
use crate::dispatch::{pipe, Backend, Hello, Reply};
use crate::displays::{fnv1a32, Display};
use crate::error::{Code, Error, Result};
use crate::protocol;
use crate::server::{CaptureResult, Params};
use crate::types::{App, Point, Rect, Size, Window};
use state::Wl;

pub const PLATFORM: &str = "linux-wayland";
pub const BACKEND: &str = "wayland-wlr";

/// Longest wait for a clipboard owner to hand over its text.
const CLIPBOARD_TIMEOUT: Duration = Duration::from_secs(5);
/// Largest clipboard text read (as the X11 side).
const MAX_CLIPBOARD_BYTES: usize = 16 << 20;

/// Whether the helper should speak Wayland: `DESKHAND_HELPER_BACKEND`
/// decides when set (`wayland` or its synonym `kde`, or `x11`), else a session with
/// WAYLAND_DISPLAY and no DISPLAY.
pub fn chosen() -> bool {
    match std::env::var("DESKHAND_HELPER_BACKEND").as_deref() {
        Ok("wayland") | Ok("kde") => true,
        Ok(_) => false,
        Err(_) => {
            std::env::var_os("WAYLAND_DISPLAY").is_some_and(|v| !v.is_empty())
                && !std::env::var_os("DISPLAY").is_some_and(|v| !v.is_empty())
        }
    }
}

/// Whether the helper should drive GNOME: `DESKHAND_HELPER_BACKEND=mutter`
/// decides outright (any other value rules it out), else a native Wayland
/// session (WAYLAND_DISPLAY, no DISPLAY) whose XDG_CURRENT_DESKTOP names
/// GNOME.
pub fn gnome_chosen() -> bool {
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

/// How long a window deskhand hid stays masked where it stood: sway may
/// still draw it there for a frame after the scratchpad move, while it is
/// already listed as hidden.
const HIDDEN_GHOST_TTL: Duration = Duration::from_secs(1);

pub struct Server {
    /// The client asked for `windows_changed` in its handshake.
    push_wanted: bool,
    /// The epoch's changes before the first handshake were dropped.
    epoch_told: bool,
    /// Written to by the thread that follows sway's events.
    sway_wake: std::fs::File,
    wl: std::result::Result<Wl, Error>,
    capturer: capture::Capturer,
    input: input::Input,
    next_capture_id: u64,
    /// The windows `hide` took off the screen lately, as they were.
    just_hidden: Vec<(Window, Instant)>,
    epoch: epoch::Epoch,
}

impl Drop for Server {
    fn drop(&mut self) {
        // No button or key stays held in the session after the helper.
        if let Ok(wl) = self.wl.as_mut() {
            self.input.release_all(wl);
        }
    }
}

impl Server {
    /// A server with its Wayland connection made (or its failure
    /// recorded), following sway's events when sway's IPC is there.
    pub fn new() -> io::Result<Server> {
        let value = Arc::new(AtomicU64::new(0));
        let wl = Wl::connect_counting(value.clone());
        if let Err(e) = &wl {
            log_warn!("{}; serving anyway, Wayland methods will retry", e.message);
        }
        let (wake_read, wake_write) = pipe()?;
        epoch::follow_sway(value.clone(), std::fs::File::from(wake_write));
        Ok(Server {
            push_wanted: false,
            epoch_told: false,
            sway_wake: std::fs::File::from(wake_read),
            wl,
            capturer: capture::Capturer::default(),
            input: input::Input::default(),
            next_capture_id: 1,
            just_hidden: Vec::new(),
            epoch: epoch::Epoch::new(value),
        })
    }

    /// The windows hidden within [`HIDDEN_GHOST_TTL`], at their old place.
    fn hidden_ghosts(&mut self) -> Vec<Window> {
        let now = Instant::now();
        self.just_hidden
            .retain(|(_, at)| now.duration_since(*at) < HIDDEN_GHOST_TTL);
        self.just_hidden.iter().map(|(w, _)| w.clone()).collect()
    }

    fn wl(&mut self) -> Result<&mut Wl> {
        if self.wl.is_err() {
            self.wl = Wl::connect_counting(self.epoch.value.clone());
            if self.wl.is_ok() {
                self.epoch.reconnected();
            }
        }
        self.wl.as_mut().map_err(|e| e.clone())
    }

    /// Waits until the compositor, sway's events or `input` have
    /// something, handling what the compositor sent (a clipboard reader's
    /// request for our text).
    fn wait_events(&mut self, input: RawFd) {
        let wl = self.wl.as_mut().ok();
        let guard = wl.as_ref().and_then(|wl| {
            let _ = wl.queue.flush();
            wl.queue.prepare_read()
        });
        let mut fds = vec![input, self.sway_wake.as_raw_fd()];
        if let Some(g) = &guard {
            fds.push(g.connection_fd().as_raw_fd());
        }
        let mut fds: Vec<libc::pollfd> = fds
            .into_iter()
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        // SAFETY: fds is a valid array of pollfd for the call's length.
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if fds[1].revents != 0 {
            let mut buf = [0u8; 64];
            let _ = self.sway_wake.read(&mut buf);
        }
        if let Some(g) = guard {
            if fds.get(2).is_some_and(|f| f.revents != 0) {
                if let Err(e) = g.read() {
                    log_warn!("lost the Wayland connection: {e}; the next call reconnects");
                    self.wl = Err(state::unavailable("WAYLAND_DISPLAY", e));
                    return;
                }
            }
        }
        if let Ok(wl) = &mut self.wl {
            if let Err(e) = wl.dispatch_pending() {
                log_warn!("{}", e.message);
            }
        }
    }

    fn hello(&mut self) -> Hello {
        if !self.epoch_told {
            // What happened before it is in the first listing.
            let _ = self.epoch.push();
            self.epoch_told = true;
        }
        let display = std::env::var("WAYLAND_DISPLAY").ok();
        let (capabilities, missing, display_error) = match self.wl() {
            Ok(wl) => {
                let (caps, missing) = capabilities(wl);
                (caps, missing, None)
            }
            Err(e) => (
                Vec::new(),
                Vec::new(),
                Some(format!("{} ({})", e.message, e.hint)),
            ),
        };
        Hello {
            platform: PLATFORM,
            backend: Some(self.wl.as_ref().map_or(BACKEND, backend)),
            capabilities,
            missing: Some(missing),
            display,
            extensions: json!({ "sway_ipc": sway::socket().is_some() }),
            display_error,
        }
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
        let selection = mask::Selection {
            mask: p.window_ids("mask")?.unwrap_or_default(),
            others: p.bool("mask_others")?.unwrap_or(false),
            keep: p.window_ids("keep")?.unwrap_or_default(),
        };
        let mask_color = match p.get("mask_color") {
            None => [0, 0, 0],
            Some(v) => {
                let c: Option<Vec<u8>> = v.as_array().map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_u64().filter(|&x| x <= 255).map(|x| x as u8))
                        .collect()
                });
                match c {
                    Some(c) if c.len() == 3 => [c[0], c[1], c[2]],
                    _ => return Err(p.bad(format!("\"mask_color\" must be [r, g, b], got {v}"))),
                }
            }
        };
        let width = p.int("width", 1, crate::server::MAX_OUTPUT_SIDE)?;
        let height = p.int("height", 1, crate::server::MAX_OUTPUT_SIDE)?;
        let ghosts = self.hidden_ghosts();
        let capture_id = self.next_capture_id;
        self.next_capture_id += 1;
        let wl = self.wl()?;
        let list = displays(wl);
        let chosen = match (wanted, rect) {
            (_, Some(r)) => list
                .iter()
                .find(|d| d.rect().contains_rect(&r))
                .ok_or_else(|| {
                    Error::out_of_bounds(
                        format!("rectangle {r} does not lie inside one display"),
                        "Use a rectangle inside one display; call displays for the geometry.",
                    )
                })?,
            (Some(w), None) => list.iter().find(|d| d.id == w).ok_or_else(|| {
                Error::new(
                    Code::NoSuchDisplay,
                    format!("no display has id {w}"),
                    "Call displays for the current ids.",
                )
            })?,
            (None, None) => list
                .iter()
                .find(|d| d.primary)
                .ok_or_else(|| Error::capture_failed("the compositor announced no output"))?,
        };
        let source = rect.unwrap_or_else(|| chosen.rect());
        let scale = chosen.scale;
        let to_buffer = |r: &Rect| Rect {
            x: ((r.x - chosen.origin.x) as f64 * scale).round() as i32,
            y: ((r.y - chosen.origin.y) as f64 * scale).round() as i32,
            width: (r.width as f64 * scale).round() as u32,
            height: (r.height as f64 * scale).round() as u32,
        };
        let crop = to_buffer(&source);
        let output_size = match (width, height) {
            (Some(w), Some(h)) => Size {
                width: w as u32,
                height: h as u32,
            },
            (None, None) => crop.size(),
            _ => return Err(p.bad("\"width\" and \"height\" go together".into())),
        };
        if output_size.width as u64 * output_size.height as u64 > crate::server::MAX_OUTPUT_PIXELS {
            return Err(p.bad("the output is larger than 2^25 pixels".into()));
        }
        let windows = window_list(wl, true);
        let (mask_rects, masked) = if selection.is_empty() {
            (Vec::new(), Vec::new())
        } else {
            // A window just hidden counts as on top where it stood, so a
            // frame sway still draws of it is painted over.
            let mut visible: Vec<Window> = ghosts
                .into_iter()
                .map(|g| Window { hidden: false, ..g })
                .collect();
            visible.extend(windows.into_iter().filter(|w| !w.hidden));
            let painted = mask::regions(&visible, &selection, source);
            (painted.rects, painted.ids)
        };
        let mask_rects: Vec<Rect> = mask_rects.iter().map(to_buffer).collect();
        let display_id = if rect.is_some() {
            None
        } else {
            Some(chosen.id)
        };
        let req = capture::Request {
            output: chosen_output(wl, chosen.id).ok_or_else(|| Error::internal("output gone"))?,
            crop,
            size: output_size,
            format,
            quality,
            mask: &mask_rects,
            mask_color,
        };
        let reference = capture::Reference {
            id: capture_id,
            output: req.output,
            source,
            origin: (chosen.origin.x, chosen.origin.y),
            scale,
            crop,
            layout: crate::capture::pixfmt::Layout4::BGRX,
            pixels: self
                .capturer
                .last
                .take()
                .map(|r| r.pixels)
                .unwrap_or_default(),
        };
        self.capturer
            .capture(self.wl.as_mut().expect("connected"), &req, Some(reference))?;
        Ok(protocol::success(
            id,
            &CaptureResult {
                format: format.name(),
                data: &self.capturer.base64,
                width: output_size.width,
                height: output_size.height,
                source,
                display: display_id,
                masked,
                mask_others: selection.others,
                mask_cover: None,
                method: if kde::is_kwin(self.wl.as_ref().expect("connected"))
                    && self
                        .wl
                        .as_ref()
                        .is_ok_and(|wl| wl.globals.screencopy.is_none())
                {
                    "kwin-screenshot2"
                } else {
                    "wlr-screencopy"
                },
                capture_id,
                reused: false,
                incremental: None,
            },
        ))
    }

    /// Has the screen around a point changed since the last capture? As
    /// on X11 (patch.rs), compared with the capture's unmasked pixels,
    /// against a fresh screencopy of the patch.
    fn patch_check(&mut self, p: &Params<'_>) -> Result<Value> {
        let x = p.required_int("x", i32::MIN as i64, i32::MAX as i64)?;
        let y = p.required_int("y", i32::MIN as i64, i32::MAX as i64)?;
        let size = p.int("size", 1, 63)?.unwrap_or(9);
        if size % 2 == 0 {
            return Err(p.bad(format!(
                "\"size\" must be odd (the patch is centred on the point), got {size}"
            )));
        }
        let tolerance = p.int("tolerance", 0, 255)?.unwrap_or(0) as u8;
        self.wl()?;
        let (output, crop) = {
            let last = self.capturer.last.as_ref().ok_or_else(|| {
                Error::new(
                    Code::NoCapture,
                    "patch_check compares against the last capture, and there has been none",
                    "Call capture first, then patch_check points inside it.",
                )
            })?;
            let rect = crate::patch::patch_rect(x, y, size as u32, last.source)?;
            let side = ((size as f64) * last.scale).round().max(1.0) as u32;
            let bx = ((rect.x - last.origin.0) as f64 * last.scale).round() as i32;
            let by = ((rect.y - last.origin.1) as f64 * last.scale).round() as i32;
            // Kept inside the reference: rounding must not step out of it.
            let bx = bx.clamp(
                last.crop.x,
                last.crop.x + last.crop.width as i32 - side as i32,
            );
            let by = by.clamp(
                last.crop.y,
                last.crop.y + last.crop.height as i32 - side as i32,
            );
            (
                last.output,
                Rect {
                    x: bx,
                    y: by,
                    width: side,
                    height: side,
                },
            )
        };
        let (layout, live) =
            self.capturer
                .grab_patch(self.wl.as_mut().expect("connected"), output, crop)?;
        let bgrx = capture::to_bgrx(layout, live);
        let last = self.capturer.last.as_ref().expect("checked above");
        let snapshot = crate::capture::Snapshot {
            id: last.id,
            source: last.crop,
            layout: last.layout,
            pixels: &last.pixels,
        };
        let (differing, max_delta) = crate::patch::compare(&snapshot, crop, &bgrx, tolerance);
        Ok(json!({
            "changed": differing > 0,
            "differing_pixels": differing,
            "max_delta": max_delta,
            "capture_id": last.id,
        }))
    }

    /// `windows_epoch` (see epoch.rs).
    fn windows_epoch(&mut self) -> Result<Value> {
        let wl = self.wl()?;
        if !lists_windows(wl) {
            return Err(no_toplevels());
        }
        // Toplevel events sent before the request are counted first.
        wl.roundtrip()?;
        Ok(self.epoch.answer())
    }

    /// `patch_baseline`: as on X11, the last capture's area read again.
    fn patch_baseline(&mut self, p: &Params<'_>) -> Result<Value> {
        let tolerance = p.int("tolerance", 0, 255)?.unwrap_or(0) as u8;
        self.wl()?;
        let wl = self.wl.as_mut().expect("connected");
        let (capture_id, differing) =
            self.capturer.rebaseline(wl, tolerance)?.ok_or_else(|| {
                Error::new(
                    Code::NoCapture,
                    "patch_baseline refreshes the last capture, and there has been none",
                    "Call capture first.",
                )
            })?;
        Ok(json!({ "differing_pixels": differing, "capture_id": capture_id }))
    }

    fn windows(&mut self, p: &Params<'_>) -> Result<Value> {
        let include_hidden = p.bool("include_hidden")?.unwrap_or(false);
        let wl = self.wl()?;
        wl.roundtrip()?;
        if !lists_windows(wl) {
            return Err(no_toplevels());
        }
        let list: Vec<Window> = window_list(wl, true)
            .into_iter()
            .filter(|w| include_hidden || !w.hidden)
            .collect();
        let focused = list.iter().find(|w| w.focused);
        Ok(json!({
            "windows": list,
            "focused": focused.map(|w| w.id),
            "frontmost": focused.map(|w| w.app.clone()),
        }))
    }

    fn clipboard_read(&mut self, p: &Params<'_>) -> Result<Value> {
        let primary = selection(p)?;
        let wl = self.wl()?;
        let device = wl
            .globals
            .data_device
            .clone()
            .ok_or_else(state::no_data_control)?;
        let _ = device;
        wl.roundtrip()?;
        let offer = if primary {
            wl.state.primary.clone()
        } else {
            wl.state.selection.clone()
        };
        let Some(offer) = offer else {
            return Ok(json!({ "text": "" }));
        };
        let mimes = wl
            .state
            .offers
            .get(&offer.id())
            .map(|o| o.mime_types.clone())
            .unwrap_or_default();
        let Some(mime) = state::TEXT_TYPES
            .iter()
            .find(|m| mimes.iter().any(|x| x == *m))
        else {
            // Not text (an image, files): there is no text to read.
            return Ok(json!({ "text": "" }));
        };
        let (read_end, write_end) = pipe().map_err(|e| Error::internal(format!("pipe: {e}")))?;
        offer.receive(mime.to_string(), write_end.as_fd());
        drop(write_end);
        wl.flush()?;
        // Our own source answers only while we dispatch, so read on a
        // thread and keep dispatching here until it finishes.
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut f = std::fs::File::from(read_end);
            let mut buf = Vec::new();
            let r = (&mut f)
                .take(MAX_CLIPBOARD_BYTES as u64 + 1)
                .read_to_end(&mut buf)
                .map(|_| buf);
            let _ = tx.send(r);
        });
        let deadline = Instant::now() + CLIPBOARD_TIMEOUT;
        loop {
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok(Ok(bytes)) => {
                    if bytes.len() > MAX_CLIPBOARD_BYTES {
                        return Err(Error::new(
                            Code::ClipboardUnavailable,
                            "the clipboard text is larger than 16 MiB",
                            "Copy less text.",
                        ));
                    }
                    return Ok(json!({ "text": String::from_utf8_lossy(&bytes) }));
                }
                Ok(Err(e)) => {
                    return Err(Error::new(
                        Code::ClipboardUnavailable,
                        format!("reading the clipboard: {e}"),
                        "Try again; the app that owns the clipboard may have quit.",
                    ))
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(Error::internal("the clipboard reader vanished"))
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    if Instant::now() > deadline {
                        return Err(Error::new(
                            Code::ClipboardUnavailable,
                            "the app that owns the clipboard did not hand over its text within 5 s",
                            "Try again; if it keeps failing, copy the text again in that app.",
                        ));
                    }
                    let _ = wl.conn.roundtrip();
                    wl.dispatch_pending()?;
                }
            }
        }
    }

    fn clipboard_write(&mut self, p: &Params<'_>) -> Result<Value> {
        let text = p
            .str("text")?
            .ok_or_else(|| p.bad("\"text\" is required".into()))?
            .to_owned();
        let primary = selection(p)?;
        self.wl()?.own_selection(primary, text)?;
        Ok(json!({ "ok": true }))
    }

    fn hide(&mut self, p: &Params<'_>) -> Result<Value> {
        let ids = p.required_window_ids("windows")?;
        let wl = self.wl()?;
        let list = window_list(wl, true);
        let mut hidden = Vec::new();
        let mut moved: Vec<Window> = Vec::new();
        for id in ids {
            let Some(w) = list.iter().find(|w| w.id == id) else {
                continue;
            };
            if w.hidden {
                hidden.push(id);
                continue;
            }
            if let Some(con) = con_of(wl, id) {
                // sway ignores set_minimized; its scratchpad takes a view
                // off screen the way minimising would.
                sway::command(&format!("[con_id={con}] move scratchpad"))
                    .map_err(|e| Error::new(Code::Internal, e, "Hide the window by hand."))?;
            } else if let Some(t) = wl.toplevels().find(|t| t.id == id) {
                t.handle.set_minimized();
            } else {
                kde::set_minimized(wl, id, true);
            }
            moved.push(w.clone());
            hidden.push(id);
        }
        wl.roundtrip()?;
        // Report only what really left the screen.
        let after = window_list(wl, true);
        hidden.retain(|id| after.iter().any(|w| w.id == *id && w.hidden));
        let now = Instant::now();
        self.just_hidden.extend(moved.into_iter().map(|w| (w, now)));
        Ok(json!({ "hidden": hidden }))
    }

    fn restore(&mut self, p: &Params<'_>) -> Result<Value> {
        let ids = p.required_window_ids("windows")?;
        let wl = self.wl()?;
        let mut restored = Vec::new();
        for id in ids {
            if let Some(con) = con_of(wl, id) {
                let on_scratchpad = window_list(wl, true).iter().any(|w| w.id == id && w.hidden);
                let cmd = if on_scratchpad {
                    format!("[con_id={con}] scratchpad show, floating disable, focus")
                } else {
                    format!("[con_id={con}] focus")
                };
                if sway::command(&cmd).is_ok() {
                    restored.push(id);
                }
            } else if let (Some(t), Some(seat)) =
                (wl.toplevels().find(|t| t.id == id), wl.globals.seat.clone())
            {
                t.handle.unset_minimized();
                t.handle.activate(&seat);
                restored.push(id);
            } else if kde::set_minimized(wl, id, false) {
                restored.push(id);
            }
        }
        wl.roundtrip()?;
        Ok(json!({ "restored": restored }))
    }

    /// `window_at`: answered only where the compositor tells stacking
    /// and geometry (KWin); elsewhere refused (see no_window_at).
    fn window_at(&mut self, p: &Params<'_>) -> Result<Value> {
        let point = Point {
            x: p.required_int("x", i32::MIN as i64, i32::MAX as i64)? as i32,
            y: p.required_int("y", i32::MIN as i64, i32::MAX as i64)? as i32,
        };
        let wl = self.wl()?;
        if wl.globals.plasma.is_none() {
            return Err(no_window_at());
        }
        wl.roundtrip()?;
        let window = kde::window_at(wl, point)?;
        let app = window.as_ref().map(|w| w.app.clone());
        Ok(json!({ "window": window, "app": app }))
    }

    fn pointer_move(&mut self, p: &Params<'_>) -> Result<Value> {
        let x = p.required_int("x", i32::MIN as i64, i32::MAX as i64)? as i32;
        let y = p.required_int("y", i32::MIN as i64, i32::MAX as i64)? as i32;
        let wl = self.wl()?;
        let extent = layout_extent(wl);
        if x < 0 || y < 0 || x as u32 >= extent.0 || y as u32 >= extent.1 {
            return Err(Error::out_of_bounds(
                format!(
                    "point {x},{y} is outside the screen ({}x{})",
                    extent.0, extent.1
                ),
                "Use a point inside a display; call displays for the geometry.",
            ));
        }
        self.input
            .move_to(self.wl.as_mut().expect("connected"), x, y, extent)?;
        Ok(json!({ "ok": true }))
    }

    fn pointer_button(&mut self, p: &Params<'_>) -> Result<Value> {
        let button = match p.str("button")?.unwrap_or("left") {
            "left" => input::BTN_LEFT,
            "right" => input::BTN_RIGHT,
            "middle" => input::BTN_MIDDLE,
            other => {
                return Err(p.bad(format!(
                    "\"button\" must be \"left\", \"right\" or \"middle\", got {other:?}"
                )))
            }
        };
        let action = p.str("action")?.unwrap_or("click").to_owned();
        let count = p.int("count", 1, 3)?.unwrap_or(1);
        let wl = self.wl.as_mut().map_err(|e| e.clone())?;
        match action.as_str() {
            "press" => self.input.button(wl, button, true)?,
            "release" => self.input.button(wl, button, false)?,
            "click" => {
                for _ in 0..count {
                    self.input.button(wl, button, true)?;
                    self.input.button(wl, button, false)?;
                }
            }
            other => {
                return Err(p.bad(format!(
                    "\"action\" must be \"press\", \"release\" or \"click\", got {other:?}"
                )))
            }
        }
        Ok(json!({ "ok": true }))
    }

    fn pointer_scroll(&mut self, p: &Params<'_>) -> Result<Value> {
        let dx = p.int("dx", -100, 100)?.unwrap_or(0) as i32;
        let dy = p.int("dy", -100, 100)?.unwrap_or(0) as i32;
        let wl = self.wl.as_mut().map_err(|e| e.clone())?;
        self.input.scroll(wl, dx, dy)?;
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
        let wl = self.wl.as_mut().map_err(|e| e.clone())?;
        self.input.type_text(wl, &text)?;
        Ok(json!({ "ok": true }))
    }

    fn key_combo(&mut self, p: &Params<'_>) -> Result<Value> {
        let keys = input::combo_keys(p)?;
        let wl = self.wl.as_mut().map_err(|e| e.clone())?;
        self.input.combo(wl, &keys)?;
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

impl Backend for Server {
    fn hello(&mut self) -> Hello {
        Server::hello(self)
    }

    fn want_push(&mut self) {
        self.push_wanted = true;
    }

    fn push(&mut self, out: &mut dyn Write) -> io::Result<()> {
        if self.push_wanted {
            if let Some(note) = self.epoch.push() {
                protocol::write_frame(out, &note)?;
            }
        }
        Ok(())
    }

    fn wait(&mut self, input: RawFd) -> io::Result<()> {
        self.wait_events(input);
        Ok(())
    }

    fn displays(&mut self, id: &Value, _: &Params<'_>) -> Reply {
        let wl = self.wl()?;
        Ok(protocol::success(id, &json!({ "displays": displays(wl) })))
    }

    fn capture(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        self.take_capture(id, p)
    }

    fn windows_epoch(&mut self, id: &Value, _: &Params<'_>) -> Reply {
        Ok(protocol::success(id, &Server::windows_epoch(self)?))
    }

    answered!(
        windows,
        window_at,
        patch_check,
        patch_baseline,
        clipboard_read,
        clipboard_write,
        hide,
        restore,
        pointer_move,
        pointer_button,
        pointer_scroll,
        key_type,
        key_combo,
    );
}

/// What this compositor lets deskhand do, and what it lacks (with why).
fn capabilities(wl: &Wl) -> (Vec<&'static str>, Vec<String>) {
    let g = &wl.globals;
    let mut caps = vec!["displays"];
    let mut missing = Vec::new();
    let mut need = |ok: bool, have: &[&'static str], what: &str| {
        if ok {
            caps.extend_from_slice(have);
        } else {
            missing.push(what.to_owned());
        }
    };
    let kwin = kde::is_kwin(wl);
    need(
        g.screencopy.is_some() || (kwin && g.plasma.is_some()),
        &["capture", "capture.png", "capture.jpeg", "patch_check"],
        if kwin {
            kde::NOT_AUTHORIZED_SHOTS
        } else {
            "wlr-screencopy (screenshots)"
        },
    );
    need(
        lists_windows(wl),
        &[
            "windows",
            "windows_epoch",
            "windows_push",
            "hide",
            "capture.mask",
        ],
        if kwin {
            kde::NOT_AUTHORIZED_WINDOWS
        } else {
            "wlr-foreign-toplevel-management (window list, hiding, masking)"
        },
    );
    need(
        g.data_device.is_some(),
        &["clipboard", "clipboard.primary"],
        "wlr-data-control (clipboard)",
    );
    let kde = g.kde_input.fake.is_some();
    need(
        g.pointer.is_some() || kde,
        &["input.pointer"],
        if kwin {
            kde_input::missing(false, kde)
        } else {
            "zwlr_virtual_pointer_v1 (mouse input)"
        },
    );
    need(
        g.keyboard.is_some() || (kde && g.kde_input.keyboard.is_some()),
        &["input.keyboard"],
        if kwin {
            kde_input::missing(true, kde)
        } else {
            "zwp_virtual_keyboard_v1 (keyboard input)"
        },
    );
    if g.plasma.is_some() {
        // KWin tells each window's geometry and the stacking order.
        caps.push("window_at");
    } else {
        missing.push("window_at: Wayland does not say which window is under a point".into());
    }
    if sway::socket().is_none() && !kwin {
        missing.push(
            "window geometry and pids: no sway IPC (SWAYSOCK), so a window's bounds are its whole output".into(),
        );
    }
    (caps, missing)
}

/// Whether the compositor lists windows to deskhand.
fn lists_windows(wl: &Wl) -> bool {
    wl.globals.toplevels.is_some() || wl.globals.plasma.is_some()
}

/// The backend name the handshake gives: KWin speaks KDE's protocols.
fn backend(wl: &Wl) -> &'static str {
    if kde::is_kwin(wl) {
        kde::BACKEND
    } else {
        BACKEND
    }
}

fn no_toplevels() -> Error {
    Error::new(
        Code::Unsupported,
        "this compositor offers no wlr-foreign-toplevel-management, so deskhand cannot list windows",
        "Use a wlroots compositor (sway, Hyprland, river, labwc) or run deskhand with --virtual-display.",
    )
}

fn no_window_at() -> Error {
    Error::new(
        Code::Unsupported,
        "Wayland does not tell a client which window is under a point, so deskhand cannot say whose window a click would land on",
        "Refuse the click rather than guess; on this desktop use the window list's bounds instead.",
    )
}

fn selection(p: &Params<'_>) -> Result<bool> {
    match p.str("selection")? {
        None | Some("clipboard") => Ok(false),
        Some("primary") => Ok(true),
        // X11's cut buffer does not exist here; unsupported, as on macOS,
        // lets a caller that goes through every selection skip it.
        Some("cut_buffer") => Err(Error::new(
            Code::Unsupported,
            "Wayland has no cut buffer (it is X11's CUT_BUFFER0)",
            "Use the \"clipboard\" or \"primary\" selection.",
        )),
        Some(other) => Err(p.bad(format!(
            "\"selection\" must be \"clipboard\" or \"primary\" on Wayland, got {other:?}"
        ))),
    }
}

/// The outputs as displays, in the compositor's announcement order; the
/// first one is primary (Wayland has no primary output).
fn displays(wl: &Wl) -> Vec<Display> {
    let mut outs: Vec<&state::Output> = wl.state.outputs.values().map(|(_, o)| o).collect();
    outs.sort_by_key(|o| o.global);
    outs.iter()
        .enumerate()
        .map(|(i, o)| {
            let name = o
                .name
                .clone()
                .unwrap_or_else(|| format!("output-{}", o.global));
            let scale = o.scale.max(1);
            Display {
                id: fnv1a32(name.as_bytes()),
                name,
                origin: Point { x: o.x, y: o.y },
                logical: Size {
                    width: (o.mode_width / scale).max(0) as u32,
                    height: (o.mode_height / scale).max(0) as u32,
                },
                physical: Size {
                    width: o.mode_width.max(0) as u32,
                    height: o.mode_height.max(0) as u32,
                },
                scale: scale as f64,
                primary: i == 0,
                mm: Size {
                    width: o.mm_width.max(0) as u32,
                    height: o.mm_height.max(0) as u32,
                },
            }
        })
        .collect()
}

fn chosen_output(wl: &Wl, display: u32) -> Option<u32> {
    wl.state
        .outputs
        .values()
        .map(|(_, o)| o)
        .find(|o| {
            let name = o
                .name
                .clone()
                .unwrap_or_else(|| format!("output-{}", o.global));
            fnv1a32(name.as_bytes()) == display
        })
        .map(|o| o.global)
}

/// The extent absolute pointer motion maps onto: the layout's bounding box.
fn layout_extent(wl: &Wl) -> (u32, u32) {
    displays(wl).iter().fold((1, 1), |(w, h), d| {
        (
            w.max((d.origin.x + d.logical.width as i32) as u32),
            h.max((d.origin.y + d.logical.height as i32) as u32),
        )
    })
}

/// The sway container of toplevel `id`, when sway's IPC is there.
fn con_of(wl: &Wl, id: u32) -> Option<i64> {
    let views = sway::views().ok()?;
    let joined = join(wl, &views);
    joined
        .into_iter()
        .find(|(t, _)| *t == id)
        .and_then(|(_, v)| v.map(|v| v.con_id))
}

/// Pairs each toplevel with its sway view by app_id and title, in order.
fn join(wl: &Wl, views: &[sway::View]) -> Vec<(u32, Option<sway::View>)> {
    let mut used = vec![false; views.len()];
    wl.toplevels()
        .map(|t| {
            let found = views
                .iter()
                .enumerate()
                .position(|(i, v)| !used[i] && v.app_id == t.app_id && v.title == t.title);
            (
                t.id,
                found.map(|i| {
                    used[i] = true;
                    views[i].clone()
                }),
            )
        })
        .collect()
}

/// The toplevels as Windows, the focused one first.
fn window_list(wl: &Wl, include_hidden: bool) -> Vec<Window> {
    if wl.globals.plasma.is_some() {
        return kde::window_list(wl, include_hidden);
    }
    let views = sway::views().unwrap_or_default();
    let joined = join(wl, &views);
    let all = displays(wl);
    let output_rect = |globals: &[u32]| -> Rect {
        // Without geometry the toplevel may be anywhere on its outputs.
        let rects: Vec<Rect> = wl
            .state
            .outputs
            .values()
            .filter(|(_, o)| globals.is_empty() || globals.contains(&o.global))
            .filter_map(|(_, o)| {
                let name = o
                    .name
                    .clone()
                    .unwrap_or_else(|| format!("output-{}", o.global));
                all.iter().find(|d| d.name == name).map(|d| d.rect())
            })
            .collect();
        rects.into_iter().reduce(union).unwrap_or_default()
    };
    let mut out: Vec<Window> = wl
        .toplevels()
        .zip(joined)
        .map(|(t, (_, view))| {
            let (bounds, pid, hidden) = match &view {
                Some(v) => (v.rect, v.pid, !v.visible),
                None => (output_rect(&t.outputs), None, t.minimized),
            };
            Window {
                id: t.id,
                title: t.title.clone(),
                app: identity(&t.app_id, pid),
                bounds,
                client: bounds,
                minimized: t.minimized || (hidden && view.is_some()),
                hidden: hidden || t.minimized,
                focused: t.activated,
                desktop: None,
                override_redirect: false,
                shape: None,
                input: None,
            }
        })
        .filter(|w| include_hidden || !w.hidden)
        .collect();
    out.sort_by_key(|w| !w.focused);
    out
}

fn union(a: Rect, b: Rect) -> Rect {
    let x0 = a.x.min(b.x);
    let y0 = a.y.min(b.y);
    let x1 = (a.x + a.width as i32).max(b.x + b.width as i32);
    let y1 = (a.y + a.height as i32).max(b.y + b.height as i32);
    Rect {
        x: x0,
        y: y0,
        width: (x1 - x0) as u32,
        height: (y1 - y0) as u32,
    }
}

/// An app's identity on Wayland: its app_id (which names its desktop entry
/// by convention), the executable behind its pid, and the desktop entry
/// found for the app_id.
fn identity(app_id: &str, pid: Option<u32>) -> App {
    let exe = pid
        .and_then(|p| std::fs::read_link(format!("/proc/{p}/exe")).ok())
        .map(|p| p.to_string_lossy().into_owned());
    let desktop_id = desktop_entry(app_id);
    let name = if !app_id.is_empty() {
        app_id.to_owned()
    } else {
        exe.as_deref()
            .and_then(|e| e.rsplit('/').next())
            .unwrap_or("")
            .to_owned()
    };
    App {
        pid,
        name,
        instance: (!app_id.is_empty()).then(|| app_id.to_owned()),
        class: (!app_id.is_empty()).then(|| app_id.to_owned()),
        exe,
        desktop_id,
        bundle_id: None,
    }
}

/// The desktop entry `<app_id>.desktop` in the XDG data dirs, if installed.
fn desktop_entry(app_id: &str) -> Option<String> {
    if app_id.is_empty() || app_id.contains('/') {
        return None;
    }
    let home = std::env::var("XDG_DATA_HOME").ok().or_else(|| {
        std::env::var("HOME")
            .ok()
            .map(|h| format!("{h}/.local/share"))
    });
    let dirs =
        std::env::var("XDG_DATA_DIRS").unwrap_or_else(|_| "/usr/local/share:/usr/share".into());
    let id = format!("{app_id}.desktop");
    home.into_iter()
        .chain(dirs.split(':').map(str::to_owned))
        .any(|d| {
            std::path::Path::new(&d)
                .join("applications")
                .join(&id)
                .is_file()
        })
        .then_some(id)
}
