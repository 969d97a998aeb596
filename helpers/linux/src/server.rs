//! The X11 backend: the X connection (kept for the helper's life, retried
//! while it is down), the last capture, the clipboard, and the methods
//! answered from them (the dispatch is dispatch.rs's). Also the params
//! parsing every backend shares.

use std::collections::HashMap;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, RawFd};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::a11y::A11y;
use crate::capture::encode::ImageFormat;
use crate::capture::{self, mask, Capturer};
use crate::clipboard::{Clipboard, Selection};
use crate::dispatch::{Backend, Hello, Reply};
use crate::displays::{self, Display};
use crate::error::{Code, Error, Result};
use crate::patch;
use crate::protocol;
use crate::types::{Point, Rect, Size, Window};
use crate::windows::Wm;
use crate::xconn::{self, Extensions, XConn};

pub const PLATFORM: &str = "linux-x11";

/// Every capability, in the order the handshake lists them.
const ALL_CAPABILITIES: &[&str] = &[
    "displays",
    "capture",
    "capture.mask",
    "capture.png",
    "capture.jpeg",
    "windows",
    "window_at",
    "windows_epoch",
    "windows_changed",
    "patch_check",
    "clipboard",
    "clipboard.primary",
    "clipboard.cut_buffer",
    "hide",
    "apps",
    "teach",
    "indicator",
    "a11y",
    "a11y.expect",
    "a11y.capture",
];
/// Capabilities that need the window-manager view (`Wm`).
const WM_CAPABILITIES: &[&str] = &[
    "capture.mask",
    "windows",
    "window_at",
    "windows_epoch",
    "windows_changed",
    "hide",
];

/// Largest output side, and largest output area (8K UHD fits).
pub const MAX_OUTPUT_SIDE: i64 = 16384;
pub const MAX_OUTPUT_PIXELS: u64 = 1 << 25;
/// How the helper was started.
#[derive(Clone, Debug, Default)]
pub struct Config {
    /// The X display; None means `$DISPLAY`. (The clipboard always opens
    /// `$DISPLAY`: this exists so tests can point the rest elsewhere.)
    pub display: Option<String>,
    /// Never use MIT-SHM (DESKHAND_HELPER_NO_SHM=1), to test the fallback.
    pub no_shm: bool,
}

impl Config {
    pub fn from_env() -> Config {
        let on = |name: &str| std::env::var(name).is_ok_and(|v| v == "1");
        Config {
            display: None,
            no_shm: on("DESKHAND_HELPER_NO_SHM"),
        }
    }
}

/// A live X connection and everything tied to it.
struct Session {
    x: XConn,
    wm: Result<Wm>,
    capturer: Capturer,
    /// The windows the last capture's mask was placed from.
    mask_windows: capture::masklist::MaskWindows,
    /// Monitor name atoms already looked up.
    atom_names: HashMap<u32, String>,
    /// The `screen_changes` tracker, from its first call.
    changes: Option<crate::changes::Changes>,
}

impl Session {
    fn open(config: &Config) -> Result<Session> {
        let x = XConn::connect(config.display.as_deref(), !config.no_shm)?;
        let wm = Wm::new(&x.conn);
        match &wm {
            Err(e) => log_warn!(
                "window list unavailable, so windows, window_at, hide and masking will fail: {e}"
            ),
            Ok(wm) => {
                if let Err(e) = wm.watch(&x.conn, x.root, x.screen_num) {
                    log_warn!("not following window moves, so masks cover only where windows are now: {e}");
                }
            }
        }
        let mut capturer = Capturer::new(x.extensions.shm);
        capturer.watch_damage(&x.display);
        Ok(Session {
            x,
            wm,
            capturer,
            mask_windows: Default::default(),
            atom_names: HashMap::new(),
            changes: None,
        })
    }

    fn wm(&self) -> Result<&Wm> {
        self.wm.as_ref().map_err(Clone::clone)
    }

    /// The displays and the root window's size.
    fn displays(&mut self) -> Result<(Vec<Display>, Size)> {
        displays::query(
            &self.x.conn,
            self.x.root,
            self.x.randr_version,
            self.x.root_mm(),
            &mut self.atom_names,
        )
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.capturer.release(&self.x.conn);
    }
}

enum XState {
    Up(Box<Session>),
    Down(Error),
}

pub struct Server {
    config: Config,
    x: XState,
    clipboard: Option<Clipboard>,
    /// The desktop-entry index `apps` answers from, built on first use.
    apps: Option<crate::apps::Apps>,
    next_capture_id: u64,
    a11y: A11y,
    push: crate::epoch::Push,
}

impl Server {
    /// A server with its X connection opened (or its failure recorded).
    pub fn new(config: Config) -> Server {
        let x = match Session::open(&config) {
            Ok(session) => XState::Up(Box::new(session)),
            Err(e) => {
                log_warn!("{}; serving anyway, X methods will retry", e.message);
                XState::Down(e)
            }
        };
        Server {
            config,
            x,
            clipboard: None,
            apps: None,
            next_capture_id: 1,
            a11y: A11y::new(),
            push: crate::epoch::Push::default(),
        }
    }

    /// Sends `windows_changed` (unflushed) if the epoch moved on since the
    /// client was last told, after reading the events that have arrived.
    /// Events that cannot be read drop the X session, so that the client
    /// is told of a lost epoch and the next call connects afresh.
    fn push_epoch(&mut self, output: &mut dyn Write) -> io::Result<()> {
        if !self.push.wanted() {
            return Ok(());
        }
        let read = match &self.x {
            XState::Up(s) => s.wm().ok().map(|wm| {
                wm.follow_events(&s.x.conn, s.x.root)
                    .map(|()| wm.current_epoch())
                    .map_err(|e| (s.x.display.clone(), e))
            }),
            XState::Down(_) => None,
        };
        let now = match read {
            Some(Ok(now)) => now,
            Some(Err((display, e))) => {
                log_warn!("lost track of window changes ({e}); the next call reconnects");
                self.clipboard = None;
                self.x = XState::Down(xconn::unavailable(
                    Some(&display),
                    format!("its window events could not be read ({})", e.message),
                ));
                None
            }
            None => None,
        };
        self.push.send_due(now, output)
    }

    fn hello(&mut self) -> Hello {
        // A display that came up since startup is picked up here.
        let _ = self.session();
        let (capabilities, display, extensions, display_error) = match &self.x {
            XState::Up(s) => {
                let wm_ok = s.wm.is_ok();
                let caps = ALL_CAPABILITIES
                    .iter()
                    .copied()
                    .filter(|c| wm_ok || !WM_CAPABILITIES.contains(c))
                    .filter(|c| {
                        !["teach", "indicator"].contains(c)
                            || crate::teach::available(&s.x.conn, s.x.screen_num)
                    })
                    .collect();
                let mut extensions = s.x.extensions.clone();
                // SHM may have failed since the connection was made.
                extensions.shm &= s.capturer.uses_shm();
                (caps, Some(s.x.display.clone()), extensions, None)
            }
            XState::Down(e) => (
                vec!["apps"], // reads files only
                xconn::display_name(self.config.display.as_deref()),
                Extensions::default(),
                Some(format!("{} ({})", e.message, e.hint)),
            ),
        };
        Hello {
            platform: PLATFORM,
            backend: None,
            capabilities,
            missing: None,
            display,
            extensions: serde_json::to_value(extensions).unwrap_or_default(),
            display_error,
        }
    }

    /// The X session, connecting first if it is down.
    fn session(&mut self) -> Result<&mut Session> {
        if let XState::Down(_) = self.x {
            match Session::open(&self.config) {
                Ok(s) => {
                    log_info!("X display is back");
                    self.x = XState::Up(Box::new(s));
                }
                Err(e) => {
                    self.x = XState::Down(e.clone());
                    return Err(e);
                }
            }
        }
        match &mut self.x {
            XState::Up(s) => Ok(s),
            XState::Down(e) => Err(e.clone()),
        }
    }

    /// After a display_unavailable error: if the server is really gone,
    /// drops the session so the next call reconnects, and returns the
    /// error to report instead (naming the display).
    fn check_connection(&mut self, err: &Error) -> Option<Error> {
        let XState::Up(s) = &self.x else {
            return None;
        };
        if s.x.alive() {
            return None;
        }
        let display = s.x.display.clone();
        log_warn!(
            "lost the connection to X display {display} ({}); the next call reconnects",
            err.message
        );
        let lost = xconn::unavailable(
            Some(&display),
            format!("the connection was lost ({})", err.message),
        );
        self.clipboard = None;
        self.x = XState::Down(lost.clone());
        Some(lost)
    }

    fn app_list(&mut self) -> Value {
        let apps = self.apps.get_or_insert_with(crate::apps::Apps::from_env);
        serde_json::json!({ "apps": apps.entries() })
    }

    fn clipboard(&mut self) -> Result<&mut Clipboard> {
        self.session()?;
        if self.clipboard.is_none() {
            self.clipboard = Some(Clipboard::new()?);
        }
        Ok(self.clipboard.as_mut().expect("set above"))
    }
}

impl Backend for Server {
    fn hello(&mut self) -> Hello {
        Server::hello(self)
    }

    fn want_push(&mut self) {
        self.push.want();
    }

    fn push(&mut self, out: &mut dyn Write) -> io::Result<()> {
        self.push_epoch(out)
    }

    /// Also wakes for X events while the client wants `windows_changed`,
    /// which the serve loop then sends.
    fn wait(&mut self, input: RawFd) -> io::Result<()> {
        let x = match &self.x {
            XState::Up(s) if self.push.wanted() && s.wm.is_ok() => {
                Some(s.x.conn.stream().as_raw_fd())
            }
            _ => None,
        };
        crate::epoch::wait(input, x).map(drop)
    }

    fn failed(&mut self, err: Error) -> Error {
        self.check_connection(&err).unwrap_or(err)
    }

    fn displays(&mut self, id: &Value, _: &Params<'_>) -> Reply {
        let (list, _) = self.session()?.displays()?;
        Ok(protocol::success(id, &DisplaysResult { displays: list }))
    }
    fn capture(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        let request = CaptureParams::parse(p)?;
        let capture_id = self.next_capture_id;
        let body = self.session()?.capture(id, &request, capture_id)?;
        self.next_capture_id += 1;
        Ok(body)
    }
    fn apps(&mut self, id: &Value, _: &Params<'_>) -> Reply {
        Ok(protocol::success(id, &self.app_list()))
    }
    fn windows(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        let include_hidden = p.bool("include_hidden")?.unwrap_or(false);
        let s = self.session()?;
        let mut list = s.wm()?.list(&s.x.conn, s.x.root, include_hidden)?;
        // The indicator takes no clicks: no click lands on it.
        list.windows
            .retain(|w| !crate::teach::indicator::is_badge(w.id));
        Ok(protocol::success(id, &list))
    }
    fn windows_epoch(&mut self, id: &Value, _: &Params<'_>) -> Reply {
        let s = self.session()?;
        let epoch = s.wm()?.epoch(&s.x.conn, s.x.root)?;
        Ok(protocol::success(id, &epoch))
    }
    fn window_at(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        let point = Point {
            x: p.required_int("x", i32::MIN as i64, i32::MAX as i64)? as i32,
            y: p.required_int("y", i32::MIN as i64, i32::MAX as i64)? as i32,
        };
        let s = self.session()?;
        let list = s.wm()?.list(&s.x.conn, s.x.root, false)?.windows;
        // The click goes through the indicator to the window under it.
        let window = crate::windows::topmost_at(
            &list
                .into_iter()
                .filter(|w| !crate::teach::indicator::is_badge(w.id))
                .collect::<Vec<_>>(),
            point,
        )
        .cloned();
        let app = window.as_ref().map(|w| w.app.clone());
        Ok(protocol::success(
            id,
            &serde_json::json!({ "window": window, "app": app }),
        ))
    }
    fn patch_check(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        let x = p.required_int("x", i32::MIN as i64, i32::MAX as i64)?;
        let y = p.required_int("y", i32::MIN as i64, i32::MAX as i64)?;
        let size = p.int("size", 1, 63)?.unwrap_or(9);
        if size % 2 == 0 {
            return Err(p.bad(format!(
                "\"size\" must be odd (the patch is centred on the point), got {size}"
            )));
        }
        let tolerance = p.int("tolerance", 0, 255)?.unwrap_or(0);
        let s = self.session()?;
        let _tooltip = crate::teach::OutOfCapture::new(&s.x.conn)?;
        let last = s.capturer.last().ok_or_else(|| {
            Error::new(
                Code::NoCapture,
                "patch_check compares against the last capture, and there has been none",
                "Call capture first, then patch_check points inside it.",
            )
        })?;
        let rect = patch::patch_rect(x, y, size as u32, last.source)?;
        let result = patch::check(
            &s.x.conn,
            s.x.root,
            &s.x.format,
            &last,
            rect,
            tolerance as u8,
        )?;
        Ok(protocol::success(id, &result))
    }
    fn patch_baseline(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        let tolerance = p.int("tolerance", 0, 255)?.unwrap_or(0);
        let s = self.session()?;
        // Nothing drawn there since the stored pixels were read: they are
        // the screen still. Asked before the tooltip's grab, which would
        // hold the damage tracker's own connection.
        if let Some(capture_id) = s.capturer.quiet_since_read() {
            return Ok(protocol::success(
                id,
                &serde_json::json!({ "differing_pixels": 0, "capture_id": capture_id }),
            ));
        }
        let _tooltip = crate::teach::OutOfCapture::new(&s.x.conn)?;
        let screen = s.x.root_size()?;
        let (capture_id, differing) = s
            .capturer
            .rebaseline(&s.x.conn, s.x.root, &s.x.format, screen, tolerance as u8)?
            .ok_or_else(|| {
                Error::new(
                    Code::NoCapture,
                    "patch_baseline refreshes the last capture, and there has been none",
                    "Call capture first.",
                )
            })?;
        Ok(protocol::success(
            id,
            &serde_json::json!({ "differing_pixels": differing, "capture_id": capture_id }),
        ))
    }
    fn screen_changes(&mut self, id: &Value, _: &Params<'_>) -> Reply {
        let s = self.session()?;
        crate::changes::call(id, &s.x, &mut s.changes)
    }
    fn clipboard_read(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        let selection = p.selection()?;
        let text = self.clipboard()?.read(selection)?;
        Ok(protocol::success(id, &serde_json::json!({ "text": text })))
    }
    fn clipboard_write(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        let text = p
            .str("text")?
            .ok_or_else(|| p.bad("\"text\" is required".into()))?
            .to_owned();
        let selection = p.selection()?;
        self.clipboard()?.write(selection, &text)?;
        Ok(protocol::success(id, &serde_json::json!({ "ok": true })))
    }
    fn hide(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        let ids = p.required_window_ids("windows")?;
        let s = self.session()?;
        let hidden = s.wm()?.hide(&s.x.conn, s.x.root, &ids)?;
        Ok(protocol::success(
            id,
            &serde_json::json!({ "hidden": hidden }),
        ))
    }
    fn restore(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        let ids = p.required_window_ids("windows")?;
        let s = self.session()?;
        let restored = s.wm()?.restore(&s.x.conn, s.x.root, &ids)?;
        Ok(protocol::success(
            id,
            &serde_json::json!({ "restored": restored }),
        ))
    }
    fn window_state(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        let (window, state) = crate::winstate::params(p)?;
        let s = self.session()?;
        let applied = crate::winstate::set(&s.x.conn, s.x.root, s.wm()?, window, state)?;
        Ok(protocol::success(id, &applied))
    }
    fn teach_show(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        crate::teach::call_show(id, self.config.display.as_deref(), &p.map)
    }
    fn teach_poll(&mut self, id: &Value, _: &Params<'_>) -> Reply {
        crate::teach::call_poll(id)
    }
    fn teach_hide(&mut self, id: &Value, _: &Params<'_>) -> Reply {
        crate::teach::call_hide(id)
    }
    fn indicator(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        crate::teach::indicator::call(id, self.config.display.as_deref(), &p.map)
    }
    fn a11y_apps(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        self.a11y.call_apps(id, p, &x_windows(&mut self.x))
    }
    fn a11y_tree(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        self.a11y.call_tree(id, p, &x_windows(&mut self.x), |c| {
            tree_capture(&mut self.x, &mut self.next_capture_id, c)
        })
    }
    fn a11y_element(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        self.a11y.call_element(id, p, &x_windows(&mut self.x))
    }
    fn a11y_act(&mut self, id: &Value, p: &Params<'_>) -> Reply {
        self.a11y.call_act(id, p, || x_windows(&mut self.x))
    }
}

impl Session {
    /// Captures what `req` asks for: the source rectangle, the mask over
    /// it, then the pixels, scaled and encoded.
    fn capture(&mut self, id: &Value, req: &CaptureParams, capture_id: u64) -> Result<Vec<u8>> {
        self.capture_then(req, capture_id, |r| protocol::success(id, r))
    }

    /// Takes the capture and hands its result to `answer` (which encodes
    /// it), so the image text is not copied on its way out.
    fn capture_then<T>(
        &mut self,
        req: &CaptureParams,
        capture_id: u64,
        answer: impl FnOnce(&DisplayCaptureResult<'_>) -> T,
    ) -> Result<T> {
        let (source, display, screen, displays) = self.capture_source(req)?;
        let output = output_size(req.width, req.height, source.size())?;
        // The window list that places the mask and the pixels must show the
        // same moment: a masked window that moves, or a popup that opens,
        // between the two would leak. Holding the server while both are
        // read means no other client can change the screen in between.
        //
        // Asking the damage is a round trip on the tracker's own connection
        // made now, so every repaint the server did before this request is
        // counted; it also forgets the damage, as each capture's read must.
        // It comes before the grabs, which would hold that connection. A
        // round trip on this connection first, so that whatever it sent
        // before (a hide, a raise) is done and its repaints counted too.
        let synced = {
            use x11rb::protocol::xproto::ConnectionExt as _;
            self.x
                .conn
                .get_input_focus()
                .ok()
                .and_then(|c| c.reply().ok())
                .is_some()
        };
        let drawn = self.capturer.drawn_since_read().filter(|_| synced);
        let tooltip = crate::teach::OutOfCapture::new(&self.x.conn)?;
        let drawn = drawn.map(|mut d| {
            d.extend(tooltip.covered().filter_map(|r| r.intersect(&source)));
            d
        });
        let mut grab = capture::ServerGrab::new(&self.x.conn, !req.mask.is_empty())?;
        let painted = self.mask_regions(req, source)?;
        let mask_cover = (!painted.rects.is_empty()).then(|| MaskCover {
            pixels: mask::covered(&painted.rects, source),
            window: painted.largest,
        });
        let request = capture::Request {
            source,
            output,
            format: req.format,
            quality: req.quality,
            mask: &painted.rects,
            mask_color: req.mask_color,
            capture_id,
            drawn,
            // What lies under the tooltip or the indicator is among the
            // drawn rows, so the last image can be updated all the same.
            updatable: true,
        };
        let out = self.capturer.capture(
            &self.x.conn,
            self.x.root,
            &self.x.format,
            screen,
            &request,
            &mut || grab.release(),
        )?;
        log_capture(capture_id, source, output, req.format, &out);
        Ok(answer(&DisplayCaptureResult {
            capture: CaptureResult {
                format: req.format.name(),
                data: out.data,
                width: output.width,
                height: output.height,
                source,
                display,
                masked: painted.ids,
                mask_others: req.mask.others,
                mask_cover,
                method: out.method.name(),
                capture_id,
                reused: out.reused,
                incremental: out.updated,
            },
            displays: displays.as_deref(),
        }))
    }

    /// The rectangle a capture reads, the display it is (None for a
    /// rectangle the client gave), the root window's size, and the
    /// displays it was chosen from (None for a rectangle).
    fn capture_source(&mut self, req: &CaptureParams) -> Result<CaptureSource> {
        match req.rect {
            Some(rect) => {
                let screen = self.x.root_size()?;
                if !whole(screen).contains_rect(&rect) {
                    return Err(Error::out_of_bounds(
                        format!(
                            "rectangle {rect} is outside the screen ({}x{})",
                            screen.width, screen.height
                        ),
                        "Use a rectangle inside the screen; call displays for the geometry.",
                    ));
                }
                Ok((rect, None, screen, None))
            }
            None => self.display_source(req.display),
        }
    }

    /// The part of the root window display `wanted` (else the primary
    /// display) shows, its id, the root window's size and the displays.
    fn display_source(&mut self, wanted: Option<u32>) -> Result<CaptureSource> {
        let (list, screen) = self.displays()?;
        let chosen = match wanted {
            Some(wanted) => list.iter().find(|d| d.id == wanted).ok_or_else(|| {
                let known: Vec<String> = list.iter().map(|d| format!("{} ({})", d.id, d.name)).collect();
                Error::new(
                    Code::NoSuchDisplay,
                    format!("no display has id {wanted}; the displays are {}", known.join(", ")),
                    "Call displays for the current ids; monitors may have been unplugged or renamed.",
                )
            })?,
            None => list
                .iter()
                .find(|d| d.primary)
                .ok_or_else(|| Error::internal("the display list is empty"))?,
        };
        let rect = chosen.rect().intersect(&whole(screen)).ok_or_else(|| {
            Error::capture_failed(format!(
                "display {} ({}) lies outside the root window ({}x{})",
                chosen.name,
                chosen.rect(),
                screen.width,
                screen.height
            ))
        })?;
        let id = chosen.id;
        Ok((rect, Some(id), screen, Some(list)))
    }

    /// What to paint over `source` for the capture's mask; nothing when
    /// nothing is masked. Called with the server grabbed, so that the
    /// windows cannot move before the pixels are read.
    fn mask_regions(&self, req: &CaptureParams, source: Rect) -> Result<mask::Painted> {
        if req.mask.is_empty() {
            return Ok(mask::Painted::default());
        }
        // Never capture without the mask: a masked window must not leak.
        let wm = self.wm()?;
        let windows = self.mask_windows.visible(wm, &self.x.conn, self.x.root)?;
        let mut painted = mask::regions(&windows, &req.mask, source);
        painted
            .rects
            .extend(wm.ghost_rects(&self.x.conn, &req.mask, source, &windows)?);
        Ok(painted)
    }
}

/// The whole root window of this size.
fn whole(size: Size) -> Rect {
    Rect {
        x: 0,
        y: 0,
        width: size.width,
        height: size.height,
    }
}

/// Logs where a capture's time went.
fn log_capture(
    capture_id: u64,
    source: Rect,
    output: Size,
    format: ImageFormat,
    out: &capture::Output<'_>,
) {
    let t = &out.timings;
    if out.reused {
        log_debug!(
            "capture {capture_id}: {source} -> {}x{} {}: reused, nothing drawn since the last read, {} base64 bytes",
            output.width,
            output.height,
            format.name(),
            out.data.len()
        );
        return;
    }
    let part = match out.updated {
        Some(u) => format!(" ({} rows, {} of {} strips)", u.rows, u.strips, u.of),
        None => String::new(),
    };
    log_debug!(
        "capture {capture_id}: {source} -> {}x{} {}: {}{part} {:.2} ms, mask {:.2} ms, scale {:.2} ms, encode {:.2} ms, base64 {:.2} ms, {} base64 bytes",
        output.width,
        output.height,
        format.name(),
        out.method.name(),
        t.grab.as_secs_f64() * 1e3,
        t.mask.as_secs_f64() * 1e3,
        t.scale.as_secs_f64() * 1e3,
        t.encode.as_secs_f64() * 1e3,
        t.base64.as_secs_f64() * 1e3,
        out.data.len()
    );
}

/// Checks a requested output size against the source size: both or
/// neither, each side 1..=16384, at most 32 Mi pixels.
pub fn output_size(width: Option<i64>, height: Option<i64>, native: Size) -> Result<Size> {
    let (width, height) = match (width, height) {
        (None, None) => return Ok(native),
        (Some(w), Some(h)) => (w, h),
        _ => {
            return Err(Error::invalid_params(
                "capture: give both \"width\" and \"height\", or neither for the native size",
            ))
        }
    };
    for (name, v) in [("width", width), ("height", height)] {
        if !(1..=MAX_OUTPUT_SIDE).contains(&v) {
            return Err(Error::invalid_params(format!(
                "capture: \"{name}\" must be an integer in 1..={MAX_OUTPUT_SIDE}, got {v}"
            )));
        }
    }
    if width as u64 * height as u64 > MAX_OUTPUT_PIXELS {
        return Err(Error::invalid_params(format!(
            "capture: the output {width}x{height} is over {MAX_OUTPUT_PIXELS} pixels"
        )));
    }
    Ok(Size {
        width: width as u32,
        height: height as u32,
    })
}

struct CaptureParams {
    display: Option<u32>,
    rect: Option<Rect>,
    width: Option<i64>,
    height: Option<i64>,
    format: ImageFormat,
    quality: u8,
    mask: mask::Selection,
    mask_color: [u8; 3],
}

impl CaptureParams {
    fn parse(p: &Params<'_>) -> Result<CaptureParams> {
        let format = match p.str("format")? {
            None | Some("jpeg") => ImageFormat::Jpeg,
            Some("png") => ImageFormat::Png,
            Some(other) => {
                return Err(p.bad(format!(
                    "\"format\" must be \"jpeg\" or \"png\", got {other:?}"
                )))
            }
        };
        let width = p.int("width", 1, MAX_OUTPUT_SIDE)?;
        let height = p.int("height", 1, MAX_OUTPUT_SIDE)?;
        // Checked again against the source in output_size; this catches a
        // lone width or height, and an area over the cap, before any X
        // request (a bad size is a bad request, display or not).
        if width.is_some() != height.is_some() {
            return Err(
                p.bad("give both \"width\" and \"height\", or neither for the native size".into())
            );
        }
        // The source is not read yet; any native size checks the asked one.
        let unread = Size {
            width: 1,
            height: 1,
        };
        output_size(width, height, unread)?;
        let mask_color = match p.get("mask_color") {
            None => [24, 24, 24],
            Some(Value::Array(items)) if items.len() == 3 => {
                let mut rgb = [0u8; 3];
                for (i, v) in items.iter().enumerate() {
                    match v.as_i64() {
                        Some(c) if (0..=255).contains(&c) => rgb[i] = c as u8,
                        _ => {
                            return Err(p.bad(format!(
                                "\"mask_color\" entries must be integers 0..=255, got {v}"
                            )))
                        }
                    }
                }
                rgb
            }
            Some(other) => {
                return Err(p.bad(format!("\"mask_color\" must be [r, g, b], got {other}")))
            }
        };
        Ok(CaptureParams {
            display: p.int("display", 0, u32::MAX as i64)?.map(|d| d as u32),
            rect: p.rect("rect")?,
            width,
            height,
            format,
            quality: p.int("quality", 1, 100)?.unwrap_or(80) as u8,
            mask: mask::Selection {
                mask: p.window_ids("mask")?.unwrap_or_default(),
                others: p.bool("mask_others")?.unwrap_or(false),
                keep: p.window_ids("keep")?.unwrap_or_default(),
            },
            mask_color,
        })
    }
}

/// Typed access to a request's params with messages that name the field.
/// Absent and null fields are the same; unknown fields are ignored.
/// Every top-level window, hidden ones included, for matching accessible
/// windows to X windows; none while X or the window list is down (the
/// accessibility methods then work without X window ids).
/// The `capture` member of an `a11y_tree` request: the same capture,
/// masks included, that `capture` would take with these params. It runs on
/// this (the X) thread while the accessibility thread walks the tree.
fn tree_capture(x: &mut XState, next_capture_id: &mut u64, p: &Params<'_>) -> Result<Value> {
    let request = CaptureParams::parse(p)?;
    let s = match x {
        XState::Up(s) => s,
        XState::Down(e) => return Err(e.clone()),
    };
    let capture_id = *next_capture_id;
    let value = s
        .capture_then(&request, capture_id, |r| serde_json::to_value(r))?
        .map_err(|e| Error::internal(format!("encoding the capture result: {e}")))?;
    *next_capture_id += 1;
    Ok(value)
}

fn x_windows(x: &mut XState) -> Vec<Window> {
    let XState::Up(s) = x else {
        return Vec::new();
    };
    match s.wm() {
        Ok(wm) => wm
            .list(&s.x.conn, s.x.root, true)
            .map(|l| l.windows)
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}

/// Typed access to a request's params with messages that name the
/// field; the Wayland backend parses through it too.
pub struct Params<'a> {
    method: &'a str,
    map: Map<String, Value>,
}

impl<'a> Params<'a> {
    pub(crate) fn new(method: &'a str, params: Value) -> Result<Params<'a>> {
        match params {
            Value::Null => Ok(Params {
                method,
                map: Map::new(),
            }),
            Value::Object(map) => Ok(Params { method, map }),
            other => Err(Error::invalid_params(format!(
                "{method}: params must be an object, not {}",
                protocol::kind(&other)
            ))),
        }
    }

    pub(crate) fn method(&self) -> &str {
        self.method
    }

    pub(crate) fn bad(&self, what: String) -> Error {
        Error::invalid_params(format!("{}: {what}", self.method))
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Value> {
        self.map.get(name).filter(|v| !v.is_null())
    }

    pub(crate) fn int(&self, name: &str, min: i64, max: i64) -> Result<Option<i64>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        match v.as_i64() {
            Some(i) if (min..=max).contains(&i) => Ok(Some(i)),
            _ => Err(self.bad(format!(
                "\"{name}\" must be an integer in {min}..={max}, got {v}"
            ))),
        }
    }

    pub(crate) fn required_int(&self, name: &str, min: i64, max: i64) -> Result<i64> {
        self.int(name, min, max)?.ok_or_else(|| {
            self.bad(format!(
                "\"{name}\" is required (an integer in {min}..={max})"
            ))
        })
    }

    pub(crate) fn bool(&self, name: &str) -> Result<Option<bool>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(self.bad(format!("\"{name}\" must be true or false, got {v}"))),
        }
    }

    pub(crate) fn str(&self, name: &str) -> Result<Option<&str>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.bad(format!(
                "\"{name}\" must be a string, got {}",
                protocol::kind(v)
            ))),
        }
    }

    /// The clipboard methods' `"selection"`: `"clipboard"` when absent.
    fn selection(&self) -> Result<Selection> {
        match self.str("selection")? {
            None => Ok(Selection::Clipboard),
            Some(name) => Selection::parse(name).ok_or_else(|| {
                self.bad(format!(
                    "\"selection\" must be \"clipboard\", \"primary\" or \"cut_buffer\", got {name:?}"
                ))
            }),
        }
    }

    pub(crate) fn window_ids(&self, name: &str) -> Result<Option<Vec<u32>>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let bad = || {
            self.bad(format!(
                "\"{name}\" must be an array of window ids (integers 0..=4294967295), got {v}"
            ))
        };
        let Value::Array(items) = v else {
            return Err(bad());
        };
        items
            .iter()
            .map(|item| {
                item.as_u64()
                    .filter(|&id| id <= u32::MAX as u64)
                    .map(|id| id as u32)
                    .ok_or_else(bad)
            })
            .collect::<Result<Vec<u32>>>()
            .map(Some)
    }

    pub(crate) fn required_window_ids(&self, name: &str) -> Result<Vec<u32>> {
        self.window_ids(name)?
            .ok_or_else(|| self.bad(format!("\"{name}\" is required (an array of window ids)")))
    }

    pub(crate) fn rect(&self, name: &str) -> Result<Option<Rect>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let Value::Object(fields) = v else {
            return Err(self.bad(format!(
                "\"{name}\" must be {{\"x\", \"y\", \"width\", \"height\"}}, got {v}"
            )));
        };
        let field = |key: &str, min: i64| -> Result<i64> {
            match fields.get(key).and_then(Value::as_i64) {
                Some(i) if (min..=i32::MAX as i64).contains(&i) => Ok(i),
                _ => Err(self.bad(format!(
                    "\"{name}.{key}\" must be an integer in {min}..={}, got {}",
                    i32::MAX,
                    fields.get(key).unwrap_or(&Value::Null)
                ))),
            }
        };
        Ok(Some(Rect {
            x: field("x", i32::MIN as i64)? as i32,
            y: field("y", i32::MIN as i64)? as i32,
            width: field("width", 1)? as u32,
            height: field("height", 1)? as u32,
        }))
    }
}

#[derive(Serialize)]
struct DisplaysResult {
    displays: Vec<Display>,
}

/// What a capture reads: see `Session::capture_source`.
type CaptureSource = (Rect, Option<u32>, Size, Option<Vec<Display>>);

/// The X11 `capture` result: the shared fields, and for a display capture
/// the displays as the helper read them to place it, so that a client
/// that keeps the display list can check it against this capture's
/// moment instead of asking `displays` before every screenshot.
#[derive(Serialize)]
struct DisplayCaptureResult<'a> {
    #[serde(flatten)]
    capture: CaptureResult<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    displays: Option<&'a [Display]>,
}

/// The `capture` result, for both backends (the Wayland one fills it too).
#[derive(Serialize)]
pub(crate) struct CaptureResult<'a> {
    pub format: &'static str,
    pub data: &'a str,
    pub width: u32,
    pub height: u32,
    pub source: Rect,
    pub display: Option<u32>,
    pub masked: Vec<u32>,
    pub mask_others: bool,
    /// How much of the source the mask covers, when it covers any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mask_cover: Option<MaskCover>,
    pub method: &'static str,
    pub capture_id: u64,
    /// The previous capture's image served again under this id, because
    /// nothing was drawn in its source since it was read.
    pub reused: bool,
    /// The previous capture's image updated where it was drawn in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incremental: Option<capture::Updated>,
}

/// The `capture` result's `mask_cover`.
#[derive(Serialize)]
pub(crate) struct MaskCover {
    /// Source pixels painted over.
    pub pixels: u64,
    /// The window painted over the largest area (a window that closed a
    /// moment ago, whose place is still painted, is not counted).
    pub window: Option<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dispatch::Dispatcher;

    fn size(width: u32, height: u32) -> Size {
        Size { width, height }
    }

    #[test]
    fn output_size_rules() {
        let native = size(1920, 1080);
        assert_eq!(output_size(None, None, native).unwrap(), native);
        assert_eq!(
            output_size(Some(1456), Some(819), native).unwrap(),
            size(1456, 819)
        );
        // Upscaling is allowed within the caps.
        assert_eq!(
            output_size(Some(3840), Some(2160), native).unwrap(),
            size(3840, 2160)
        );
        assert_eq!(
            output_size(Some(7680), Some(4320), native).unwrap(),
            size(7680, 4320)
        );
        for (w, h) in [
            (Some(100), None),
            (None, Some(100)),
            (Some(0), Some(10)),
            (Some(10), Some(-1)),
            (Some(16385), Some(10)),
            (Some(16384), Some(16384)),
        ] {
            let err = output_size(w, h, native).unwrap_err();
            assert_eq!(err.code, Code::InvalidParams, "output_size({w:?}, {h:?})");
        }
    }

    fn no_display() -> Dispatcher<Server> {
        // An absolute socket path that cannot exist: fails at once.
        let mut d = Dispatcher::new(Server::new(Config {
            display: Some("/nonexistent/deskhand-test-socket:0".into()),
            no_shm: true,
        }));
        d.faults = false;
        d
    }

    fn call(server: &mut Dispatcher<Server>, request: Value) -> Value {
        let body = serde_json::to_vec(&request).unwrap();
        let outcome = server.handle(&body);
        serde_json::from_slice(&outcome.reply.expect("a reply")).unwrap()
    }

    #[test]
    fn handshake_without_display_reports_it() {
        let mut s = no_display();
        let r = call(
            &mut s,
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "displays"}),
        );
        assert_eq!(r["error"]["data"]["code"], "handshake_required");
        let r = call(
            &mut s,
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "handshake", "params": {"protocol_versions": [1, 2]}}),
        );
        assert_eq!(r["result"]["protocol_version"], 1);
        assert_eq!(
            r["result"]["capabilities"],
            serde_json::json!(["apps"]),
            "only apps, which reads files, works without X"
        );
        assert!(r["result"]["display_error"]
            .as_str()
            .unwrap()
            .contains("deskhand-test-socket"));
        let r = call(
            &mut s,
            serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "displays"}),
        );
        assert_eq!(r["error"]["data"]["code"], "display_unavailable");
        assert!(r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("deskhand-test-socket"));
        // Parameter errors are reported before the display is needed.
        let r = call(
            &mut s,
            serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "capture", "params": {"quality": 0}}),
        );
        assert_eq!(r["error"]["data"]["code"], "invalid_params");
    }

    #[test]
    fn incompatible_versions() {
        let mut s = no_display();
        let r = call(
            &mut s,
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "handshake", "params": {"protocol_versions": [7]}}),
        );
        assert_eq!(r["error"]["code"], -32009);
        let r = call(
            &mut s,
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "displays"}),
        );
        assert_eq!(r["error"]["data"]["code"], "handshake_required");
    }

    #[test]
    fn exit_and_notifications() {
        let mut s = no_display();
        let outcome = s.handle(br#"{"jsonrpc":"2.0","method":"windows"}"#);
        assert!(outcome.reply.is_none() && outcome.exit.is_none());
        let outcome = s.handle(br#"{"jsonrpc":"2.0","method":"exit"}"#);
        assert!(outcome.reply.is_none());
        assert_eq!(outcome.exit, Some(0));
    }

    #[test]
    fn faults_only_when_enabled() {
        let mut s = no_display();
        let r = call(
            &mut s,
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "fault.exit", "params": {"code": 3}}),
        );
        assert_eq!(r["error"]["data"]["code"], "method_not_found");
        s.faults = true;
        let outcome =
            s.handle(br#"{"jsonrpc":"2.0","id":1,"method":"fault.exit","params":{"code":3}}"#);
        assert_eq!(outcome.exit, Some(3));
        let outcome = s.handle(br#"{"jsonrpc":"2.0","id":1,"method":"fault.garbage"}"#);
        assert!(outcome.raw.is_some() && outcome.reply.is_none());
    }
}
