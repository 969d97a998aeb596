//! The tooltip window: its own X connection, shared with one event thread
//! that repaints on Expose, keeps the window on top, and turns the user's
//! clicks and Escape into a choice. The request thread only shows, hides
//! and reads the choice, so the JSON-RPC loop never waits on the user.

use std::sync::{Arc, Mutex, MutexGuard};
use std::thread;

use ab_glyph::FontVec;
use x11rb::connection::Connection;
use x11rb::protocol::composite::{self, ConnectionExt as _};
use x11rb::protocol::randr::ConnectionExt as _;
use x11rb::protocol::xinput::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    AtomEnum, ConfigureWindowAux, ConnectionExt as _, CreateGCAux, CreateWindowAux, EventMask,
    ImageFormat, PropMode, StackMode, WindowClass,
};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use super::font::{self, Canvas, Typeset};
use super::{trust, xe};
use crate::capture::pixfmt::{ByteOrder, PixelFormat};
use crate::error::{Code, Error, Result};
use crate::types::{Point, Rect};
use crate::xconn;

/// The tooltip's fill. Tests count pixels of exactly this colour, so no
/// stock theme should use it.
pub const BACKGROUND: [u8; 3] = [0xFF, 0xF1, 0xB8];
const BORDER: [u8; 3] = [0x6B, 0x55, 0x00];
const TEXT: [u8; 3] = [0x1A, 0x1A, 0x1A];
const PREVIEW: [u8; 3] = [0x4A, 0x4A, 0x60];
const NEXT_FILL: [u8; 3] = [0x1F, 0x5F, 0xD0];
const NEXT_TEXT: [u8; 3] = [0xFF, 0xFF, 0xFF];
const EXIT_FILL: [u8; 3] = [0xE2, 0xE2, 0xE2];
const EXIT_TEXT: [u8; 3] = [0x20, 0x20, 0x20];

const PAD: u32 = 14;
const MAX_TEXT_WIDTH: u32 = 380;
const MIN_WIDTH: u32 = 240;
const BUTTON_HEIGHT: u32 = 28;
const BUTTON_GAP: u32 = 8;
/// How far the tooltip sits from its anchor, so it never covers the
/// point it is about.
const ANCHOR_GAP: i32 = 18;
const KEYSYM_ESCAPE: u32 = 0xff1b;

/// What the user chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    Next,
    Exit,
}

impl Choice {
    pub fn name(self) -> &'static str {
        match self {
            Choice::Next => "next",
            Choice::Exit => "exit",
        }
    }
}

/// One tooltip to show.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spec {
    pub explanation: String,
    pub next_preview: String,
    pub anchor: Option<Point>,
    pub step: Option<u32>,
    pub total: Option<u32>,
}

/// Where a shown tooltip and its buttons are, in root coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shown {
    pub bounds: Rect,
    pub next: Rect,
    pub exit: Rect,
}

/// What the event thread shares with the request thread.
#[derive(Default)]
struct State {
    window: u32,
    gc: u32,
    visible: bool,
    /// The rendered window contents as PutImage data.
    image: Vec<u8>,
    size: (u16, u16),
    /// Button rectangles in window coordinates.
    next: Rect,
    exit: Rect,
    choice: Option<Choice>,
    /// The button a trusted press went down on; its release there chooses.
    pressed: Option<Choice>,
    escape_keycodes: Vec<u8>,
    trusted_names: Vec<String>,
    depth: u8,
}

pub struct Overlay {
    conn: Arc<RustConnection>,
    root: u32,
    screen_num: usize,
    format: PixelFormat,
    font: FontVec,
    state: Arc<Mutex<State>>,
    redirected: bool,
}

impl Overlay {
    /// Connects to `display` (None: `$DISPLAY`), checks that the server can
    /// keep the tooltip out of captures and tell real input from XTEST, and
    /// starts the event thread.
    pub fn open(display: Option<&str>) -> Result<Overlay> {
        let name = xconn::display_name(display).ok_or_else(|| xconn::unavailable(None, ""))?;
        let (conn, screen_num) = xconn::open(&name)?;
        let root = conn.setup().roots[screen_num].root;
        let format = PixelFormat::of_root(conn.setup(), screen_num)?;
        server_supports(&conn, screen_num)?;
        conn.composite_query_version(0, 4)
            .map_err(|e| Error::x11("querying Composite", e))?
            .reply()
            .map_err(|e| Error::x11("querying Composite", e))?;
        let v = conn
            .xinput_xi_query_version(2, 2)
            .map_err(|e| Error::x11("querying XInput", e))?
            .reply()
            .map_err(|e| Error::x11("querying XInput", e))?;
        if v.major_version < 2 {
            return Err(unsupported(format!(
                "the X server has XInput {}.{}; the tooltip needs 2.0 or later to see which device clicked",
                v.major_version, v.minor_version
            )));
        }
        let font = font::load()?;
        let conn = Arc::new(conn);
        let state = Arc::new(Mutex::new(State {
            trusted_names: trust::trusted_names_from_env(),
            depth: format.depth,
            ..State::default()
        }));
        // Escape anywhere, and the stacking of every top-level window.
        conn.xinput_xi_select_events(
            root,
            &[xinput::EventMask {
                deviceid: xinput::Device::ALL_MASTER.into(),
                mask: vec![xinput::XIEventMask::RAW_KEY_PRESS],
            }],
        )
        .map_err(|e| Error::x11("selecting key events", e))?;
        conn.change_window_attributes(
            root,
            &x11rb::protocol::xproto::ChangeWindowAttributesAux::new()
                .event_mask(EventMask::SUBSTRUCTURE_NOTIFY),
        )
        .map_err(|e| Error::x11("watching the window stack", e))?;
        conn.flush().map_err(|e| Error::x11("flushing", e))?;
        let thread_conn = Arc::clone(&conn);
        let thread_state = Arc::clone(&state);
        thread::Builder::new()
            .name("teach-overlay".into())
            .spawn(move || event_loop(&thread_conn, &thread_state))
            .map_err(|e| Error::internal(format!("starting the overlay thread: {e}")))?;
        Ok(Overlay {
            conn,
            root,
            screen_num,
            format,
            font,
            state,
            redirected: false,
        })
    }

    /// The connection still works (the X server may have gone away).
    pub fn alive(&self) -> bool {
        self.conn.get_input_focus().is_ok_and(|c| c.reply().is_ok())
    }

    /// Shows `spec`, replacing what was shown before, with no choice made.
    pub fn show(&mut self, spec: &Spec) -> Result<Shown> {
        refuse_under_compositor(&*self.conn, self.screen_num)?;
        let monitors = self.monitors()?;
        let screen = Rect {
            x: 0,
            y: 0,
            width: self.conn.setup().roots[self.screen_num].width_in_pixels as u32,
            height: self.conn.setup().roots[self.screen_num].height_in_pixels as u32,
        };
        if let Some(a) = spec.anchor {
            if !screen.contains(a) {
                return Err(Error::out_of_bounds(
                    format!(
                        "teach_show: anchor ({}, {}) is outside the screen ({}x{})",
                        a.x, a.y, screen.width, screen.height
                    ),
                    "Give an anchor inside the screen, or none to centre the tooltip.",
                ));
            }
        }
        let monitor = pick_monitor(&monitors, spec.anchor).unwrap_or(screen);
        let layout = self.render(spec, monitor.width.saturating_sub(2 * PAD))?;
        let (w, h) = (layout.canvas.width, layout.canvas.height);
        let pos = place(
            Rect {
                x: 0,
                y: 0,
                width: w,
                height: h,
            },
            monitor,
            spec.anchor,
        );
        let image = self.encode(&layout.canvas);
        self.redirect()?;
        let c = &*self.conn;
        let mut st = lock(&self.state);
        if st.window == 0 {
            st.window = self.create_window()?;
            st.gc = c.generate_id().map_err(xe("showing the tooltip"))?;
            c.create_gc(st.gc, st.window, &CreateGCAux::new())
                .map_err(xe("showing the tooltip"))?;
        }
        st.image = image;
        st.size = (w as u16, h as u16);
        st.next = layout.next;
        st.exit = layout.exit;
        st.choice = None;
        st.pressed = None;
        st.escape_keycodes = escape_keycodes(c);
        c.configure_window(
            st.window,
            &ConfigureWindowAux::new()
                .x(pos.x)
                .y(pos.y)
                .width(w)
                .height(h)
                .stack_mode(StackMode::ABOVE),
        )
        .map_err(xe("showing the tooltip"))?;
        c.map_window(st.window).map_err(xe("showing the tooltip"))?;
        st.visible = true;
        paint(c, &st).map_err(xe("showing the tooltip"))?;
        let window = st.window;
        drop(st);
        super::set_shown(
            window,
            Some(Rect {
                x: pos.x,
                y: pos.y,
                width: w,
                height: h,
            }),
        );
        // Answer only once the server has the tooltip on screen.
        c.sync().map_err(|e| Error::x11("showing the tooltip", e))?;
        let global = |r: Rect| Rect {
            x: pos.x + r.x,
            y: pos.y + r.y,
            ..r
        };
        Ok(Shown {
            bounds: Rect {
                x: pos.x,
                y: pos.y,
                width: w,
                height: h,
            },
            next: global(layout.next),
            exit: global(layout.exit),
        })
    }

    /// Takes the tooltip down and forgets the choice.
    pub fn hide(&mut self) -> Result<()> {
        let c = &*self.conn;
        let mut st = lock(&self.state);
        st.visible = false;
        st.choice = None;
        st.pressed = None;
        if st.window != 0 {
            c.unmap_window(st.window)
                .map_err(|e| Error::x11("hiding the tooltip", e))?;
        }
        let window = st.window;
        drop(st);
        super::set_shown(window, None);
        if std::mem::take(&mut self.redirected) {
            c.composite_unredirect_subwindows(self.root, composite::Redirect::AUTOMATIC)
                .map_err(|e| Error::x11("ending window redirection", e))?;
        }
        c.sync().map_err(|e| Error::x11("hiding the tooltip", e))?;
        Ok(())
    }

    /// The tooltip's window; 0 before the first show.
    pub fn window(&self) -> u32 {
        lock(&self.state).window
    }

    /// Whether the tooltip is up, and what the user chose.
    pub fn poll(&self) -> (bool, Option<Choice>) {
        let st = lock(&self.state);
        (st.visible, st.choice)
    }

    /// While the tooltip is up, every top-level window keeps its own
    /// off-screen copy (automatic Composite redirection), so the server can
    /// paint what lies under the tooltip the moment a capture moves it
    /// aside, without asking the apps to repaint (they cannot, inside the
    /// capture's server grab). The server drops this with our connection.
    fn redirect(&mut self) -> Result<()> {
        if self.redirected {
            return Ok(());
        }
        self.conn
            .composite_redirect_subwindows(self.root, composite::Redirect::AUTOMATIC)
            .map_err(|e| Error::x11("redirecting windows", e))?
            .check()
            .map_err(|e| {
                unsupported(format!(
                    "the X server refused to redirect the windows ({e}), so captures could not leave the tooltip out"
                ))
            })?;
        self.redirected = true;
        Ok(())
    }

    fn monitors(&self) -> Result<Vec<Rect>> {
        Ok(monitors(&*self.conn, self.root))
    }

    fn create_window(&self) -> Result<u32> {
        let c = &*self.conn;
        let window = c.generate_id().map_err(xe("creating the tooltip window"))?;
        c.create_window(
            x11rb::COPY_DEPTH_FROM_PARENT,
            window,
            self.root,
            0,
            0,
            1,
            1,
            0,
            WindowClass::INPUT_OUTPUT,
            x11rb::COPY_FROM_PARENT,
            &CreateWindowAux::new()
                .override_redirect(1)
                .background_pixel(self.pixel(BACKGROUND))
                .event_mask(EventMask::EXPOSURE),
        )
        .map_err(xe("creating the tooltip window"))?;
        // Button events through XI2 only: they name the device that sent
        // them. No grab, so only the tooltip's own area takes clicks.
        c.xinput_xi_select_events(
            window,
            &[xinput::EventMask {
                deviceid: xinput::Device::ALL_MASTER.into(),
                mask: vec![xinput::XIEventMask::BUTTON_PRESS | xinput::XIEventMask::BUTTON_RELEASE],
            }],
        )
        .map_err(xe("creating the tooltip window"))?;
        let atom = |n: &[u8]| -> Result<u32> {
            Ok(c.intern_atom(false, n)
                .map_err(xe("creating the tooltip window"))?
                .reply()
                .map_err(xe("creating the tooltip window"))?
                .atom)
        };
        let (wtype, tooltip) = (
            atom(b"_NET_WM_WINDOW_TYPE")?,
            atom(b"_NET_WM_WINDOW_TYPE_TOOLTIP")?,
        );
        c.change_property32(PropMode::REPLACE, window, wtype, AtomEnum::ATOM, &[tooltip])
            .map_err(xe("creating the tooltip window"))?;
        c.change_property8(
            PropMode::REPLACE,
            window,
            AtomEnum::WM_NAME,
            AtomEnum::STRING,
            b"deskhand teaching",
        )
        .map_err(xe("creating the tooltip window"))?;
        c.change_property8(
            PropMode::REPLACE,
            window,
            AtomEnum::WM_CLASS,
            AtomEnum::STRING,
            b"deskhand-teach\0Deskhand-teach\0",
        )
        .map_err(xe("creating the tooltip window"))?;
        Ok(window)
    }

    /// Lays out and paints the tooltip; `room` is the widest it may be.
    fn render(&self, spec: &Spec, room: u32) -> Result<Layout> {
        let body = Typeset::new(&self.font, 16.0);
        let small = Typeset::new(&self.font, 13.0);
        let label = Typeset::new(&self.font, 14.0);
        let text_width = MAX_TEXT_WIDTH.min(room.saturating_sub(2 * PAD)).max(80);
        let header = match (spec.step, spec.total) {
            (Some(s), Some(t)) => Some(format!("Step {s} of {t}")),
            (Some(s), None) => Some(format!("Step {s}")),
            _ => None,
        };
        let explanation = body.wrap(&spec.explanation, text_width);
        let preview = if spec.next_preview.trim().is_empty() {
            Vec::new()
        } else {
            small.wrap(&format!("Next: {}", spec.next_preview), text_width)
        };
        let next_w = label.width("Next") + 36;
        let exit_w = label.width("Exit") + 36;
        let buttons_w = next_w + BUTTON_GAP + exit_w;
        let widest = explanation
            .iter()
            .map(|l| body.width(l))
            .chain(preview.iter().map(|l| small.width(l)))
            .chain(header.iter().map(|h| small.width(h)))
            .max()
            .unwrap_or(0)
            .max(buttons_w);
        let width = (widest + 2 * PAD).max(MIN_WIDTH);
        let mut height = PAD;
        if header.is_some() {
            height += small.line_height() + 4;
        }
        height += body.line_height() * explanation.len() as u32;
        if !preview.is_empty() {
            height += 8 + small.line_height() * preview.len() as u32;
        }
        height += 14 + BUTTON_HEIGHT + PAD;
        if width > u16::MAX as u32 || height > 4096 {
            return Err(Error::invalid_params(
                "teach_show: the explanation and preview are too long to fit a tooltip; shorten them",
            ));
        }
        let mut canvas = Canvas::new(width, height, BACKGROUND);
        canvas.stroke_rect(0, 0, width, height, BORDER);
        let mut y = PAD as i32;
        if let Some(h) = &header {
            small.draw(&mut canvas, PAD as i32, y, h, PREVIEW);
            y += small.line_height() as i32 + 4;
        }
        for line in &explanation {
            body.draw(&mut canvas, PAD as i32, y, line, TEXT);
            y += body.line_height() as i32;
        }
        if !preview.is_empty() {
            y += 8;
            for line in &preview {
                small.draw(&mut canvas, PAD as i32, y, line, PREVIEW);
                y += small.line_height() as i32;
            }
        }
        let by = (height - PAD - BUTTON_HEIGHT) as i32;
        let next = Rect {
            x: (width - PAD - next_w) as i32,
            y: by,
            width: next_w,
            height: BUTTON_HEIGHT,
        };
        let exit = Rect {
            x: next.x - (BUTTON_GAP + exit_w) as i32,
            y: by,
            width: exit_w,
            height: BUTTON_HEIGHT,
        };
        for (r, fill, ink, text) in [
            (next, NEXT_FILL, NEXT_TEXT, "Next"),
            (exit, EXIT_FILL, EXIT_TEXT, "Exit"),
        ] {
            canvas.fill_rect(r.x, r.y, r.width, r.height, fill);
            canvas.stroke_rect(r.x, r.y, r.width, r.height, BORDER);
            let tx = r.x + ((r.width - label.width(text)) / 2) as i32;
            let ty = r.y + ((r.height.saturating_sub(label.line_height())) / 2) as i32;
            label.draw(&mut canvas, tx, ty, text, ink);
        }
        Ok(Layout { canvas, next, exit })
    }

    fn pixel(&self, rgb: [u8; 3]) -> u32 {
        pixel(&self.format, rgb)
    }

    fn encode(&self, canvas: &Canvas) -> Vec<u8> {
        encode(&self.format, canvas)
    }
}

/// The pixel value of `rgb` in `format`.
pub fn pixel(format: &PixelFormat, rgb: [u8; 3]) -> u32 {
    let f = format;
    channel(rgb[0], f.red_mask) | channel(rgb[1], f.green_mask) | channel(rgb[2], f.blue_mask)
}

/// The canvas as ZPixmap data in the server's byte order (32 bits per
/// pixel, so rows need no padding).
pub fn encode(format: &PixelFormat, canvas: &Canvas) -> Vec<u8> {
    let mut out = Vec::with_capacity(canvas.pixels.len() * 4);
    for px in &canvas.pixels {
        let v = pixel(format, *px);
        match format.byte_order {
            ByteOrder::LsbFirst => out.extend_from_slice(&v.to_le_bytes()),
            ByteOrder::MsbFirst => out.extend_from_slice(&v.to_be_bytes()),
        }
    }
    out
}

/// The RandR monitors, the primary first; empty when RandR cannot say.
pub fn monitors<C: Connection>(conn: &C, root: u32) -> Vec<Rect> {
    let reply = conn
        .randr_get_monitors(root, true)
        .ok()
        .and_then(|c| c.reply().ok());
    reply
        .map(|r| {
            let mut list: Vec<(bool, Rect)> = r
                .monitors
                .iter()
                .map(|m| {
                    (
                        m.primary,
                        Rect {
                            x: m.x as i32,
                            y: m.y as i32,
                            width: m.width as u32,
                            height: m.height as u32,
                        },
                    )
                })
                .collect();
            // The primary first: it hosts an unanchored tooltip.
            list.sort_by_key(|(primary, _)| !primary);
            list.into_iter().map(|(_, r)| r).collect()
        })
        .unwrap_or_default()
}

/// A compositing manager paints the screen itself, from its own
/// connection: moving the tooltip aside inside a capture's server grab
/// would not reach the pixels, so captures would show it. Refuse rather
/// than leak the tooltip into what the model sees.
pub fn refuse_under_compositor<C: Connection>(conn: &C, screen_num: usize) -> Result<()> {
    let name = format!("_NET_WM_CM_S{}", screen_num);
    let atom = conn
        .intern_atom(false, name.as_bytes())
        .map_err(|e| Error::x11("asking for the compositor", e))?
        .reply()
        .map_err(|e| Error::x11("asking for the compositor", e))?
        .atom;
    let owner = conn
        .get_selection_owner(atom)
        .map_err(|e| Error::x11("asking for the compositor", e))?
        .reply()
        .map_err(|e| Error::x11("asking for the compositor", e))?
        .owner;
    if owner != 0 {
        return Err(unsupported(format!(
            "a compositing manager owns {name}, and deskhand cannot keep the tooltip out of captures under one yet"
        )));
    }
    Ok(())
}

/// Whether this server can show the tooltip with every rule kept: a
/// 32-bit root, Composite, XInput 2, no compositing manager (and, checked
/// by the caller, a font). The handshake lists `teach` only then.
pub fn server_supports<C: Connection>(conn: &C, screen_num: usize) -> Result<()> {
    let format = PixelFormat::of_root(conn.setup(), screen_num)?;
    if format.bits_per_pixel != 32 {
        return Err(unsupported(format!(
            "the root window has {} bits per pixel; the tooltip is drawn only at 32",
            format.bits_per_pixel
        )));
    }
    require_extension(
        conn,
        composite::X11_EXTENSION_NAME,
        "Composite",
        "keep the tooltip out of captures (it gives the windows under it their own pixels)",
    )?;
    require_extension(
        conn,
        xinput::X11_EXTENSION_NAME,
        "XInputExtension",
        "tell the user's clicks from injected (XTEST) ones",
    )?;
    refuse_under_compositor(conn, screen_num)
}

struct Layout {
    canvas: Canvas,
    next: Rect,
    exit: Rect,
}

fn channel(value: u8, mask: u32) -> u32 {
    if mask == 0 {
        return 0;
    }
    let shift = mask.trailing_zeros();
    let bits = (mask >> shift).count_ones().min(8);
    ((value as u32) >> (8 - bits)) << shift & mask
}

fn unsupported(message: String) -> Error {
    Error::new(
        Code::Unsupported,
        format!("teach_show: {message}"),
        "Teaching needs an X server with Composite and XInput 2 and no compositing manager (Xorg or Xvfb with a plain window manager); run the task without teaching.",
    )
}

fn require_extension<C: Connection>(
    conn: &C,
    name: &'static str,
    shown: &str,
    why: &str,
) -> Result<()> {
    let present = conn
        .extension_information(name)
        .map_err(|e| Error::x11("querying extensions", e))?
        .is_some();
    if present {
        Ok(())
    } else {
        Err(unsupported(format!(
            "the X server lacks the {shown} extension, which the tooltip needs to {why}"
        )))
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // The event thread holds no invariant across a panic worth refusing.
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// The monitor the tooltip goes on: the one holding the anchor, else the
/// nearest to it, else (no anchor) the primary.
fn pick_monitor(monitors: &[Rect], anchor: Option<Point>) -> Option<Rect> {
    let Some(a) = anchor else {
        return monitors.first().copied();
    };
    monitors.iter().copied().min_by_key(|m| {
        let dx = (m.x as i64 - a.x as i64)
            .max(a.x as i64 - (m.x as i64 + m.width as i64 - 1))
            .max(0);
        let dy = (m.y as i64 - a.y as i64)
            .max(a.y as i64 - (m.y as i64 + m.height as i64 - 1))
            .max(0);
        dx * dx + dy * dy
    })
}

/// Where a tooltip of `size` goes on `monitor`: below and right of the
/// anchor, flipped to the other side where it would leave the monitor,
/// then clamped inside it; centred when there is no anchor.
pub fn place(size: Rect, monitor: Rect, anchor: Option<Point>) -> Point {
    let (w, h) = (size.width as i32, size.height as i32);
    let (mx, my) = (monitor.x, monitor.y);
    let (mr, mb) = (
        monitor.x + monitor.width as i32,
        monitor.y + monitor.height as i32,
    );
    let (x, y) = match anchor {
        None => (
            mx + (monitor.width as i32 - w) / 2,
            my + (monitor.height as i32 - h) / 2,
        ),
        Some(a) => {
            let mut x = a.x + ANCHOR_GAP;
            if x + w > mr {
                x = a.x - ANCHOR_GAP - w;
            }
            let mut y = a.y + ANCHOR_GAP;
            if y + h > mb {
                y = a.y - ANCHOR_GAP - h;
            }
            (x, y)
        }
    };
    Point {
        x: x.min(mr - w).max(mx),
        y: y.min(mb - h).max(my),
    }
}

fn escape_keycodes<C: Connection>(conn: &C) -> Vec<u8> {
    let setup = conn.setup();
    let (min, max) = (setup.min_keycode, setup.max_keycode);
    let Some(map) = conn
        .get_keyboard_mapping(min, max - min + 1)
        .ok()
        .and_then(|c| c.reply().ok())
    else {
        return Vec::new();
    };
    let per = map.keysyms_per_keycode.max(1) as usize;
    map.keysyms
        .chunks(per)
        .enumerate()
        .filter(|(_, syms)| syms.contains(&KEYSYM_ESCAPE))
        .map(|(i, _)| min + i as u8)
        .collect()
}

fn paint<C: Connection>(
    conn: &C,
    st: &State,
) -> std::result::Result<(), x11rb::errors::ConnectionError> {
    if st.window == 0 || st.image.is_empty() {
        return Ok(());
    }
    conn.put_image(
        ImageFormat::Z_PIXMAP,
        st.window,
        st.gc,
        st.size.0,
        st.size.1,
        0,
        0,
        0,
        st.depth,
        &st.image,
    )?;
    conn.flush()
}

/// Runs until the connection breaks: repaints, keeps the tooltip on top
/// and records the user's choice.
fn event_loop(conn: &RustConnection, state: &Mutex<State>) {
    loop {
        let event = match conn.wait_for_event() {
            Ok(e) => e,
            Err(e) => {
                log_warn!("teaching overlay: the X connection ended ({e}); the tooltip is gone");
                let window = {
                    let mut st = lock(state);
                    st.visible = false;
                    st.window
                };
                super::set_shown(window, None);
                return;
            }
        };
        match event {
            Event::Expose(e) if e.count == 0 => {
                let st = lock(state);
                if st.visible && e.window == st.window {
                    let _ = paint(conn, &st);
                }
            }
            Event::MapNotify(e) => keep_on_top(conn, state, e.window),
            Event::ConfigureNotify(e) => keep_on_top(conn, state, e.window),
            Event::XinputButtonPress(e) => on_button(
                conn, state, e.event, e.detail, e.sourceid, e.event_x, e.event_y, true,
            ),
            Event::XinputButtonRelease(e) => on_button(
                conn, state, e.event, e.detail, e.sourceid, e.event_x, e.event_y, false,
            ),
            Event::XinputRawKeyPress(e) => {
                let is_escape = {
                    let st = lock(state);
                    st.visible
                        && st.choice.is_none()
                        && st.escape_keycodes.contains(&(e.detail as u8))
                };
                if is_escape {
                    let names = lock(state).trusted_names.clone();
                    let verdict = trust::judge(conn, e.sourceid, &names);
                    if verdict.trusted {
                        log_info!(
                            "teaching overlay: Escape from {} ({}): exit",
                            verdict.name,
                            verdict.why
                        );
                        let mut st = lock(state);
                        if st.visible && st.choice.is_none() {
                            st.choice = Some(Choice::Exit);
                        }
                    } else {
                        log_info!(
                            "teaching overlay: ignoring Escape from {}: {}",
                            verdict.name,
                            verdict.why
                        );
                    }
                }
            }
            _ => {}
        }
    }
}

/// Raises the tooltip above a window that was mapped or restacked.
fn keep_on_top(conn: &RustConnection, state: &Mutex<State>, other: u32) {
    let st = lock(state);
    if st.visible && st.window != 0 && other != st.window {
        let _ = conn.configure_window(
            st.window,
            &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE),
        );
        let _ = conn.flush();
    }
}

#[allow(clippy::too_many_arguments)]
fn on_button(
    conn: &RustConnection,
    state: &Mutex<State>,
    window: u32,
    button: u32,
    sourceid: u16,
    fx: i32,
    fy: i32,
    press: bool,
) {
    let at = Point {
        x: fx >> 16,
        y: fy >> 16,
    };
    let (hit, names) = {
        let st = lock(state);
        if !st.visible || window != st.window || button != 1 || st.choice.is_some() {
            return;
        }
        let hit = if st.next.contains(at) {
            Some(Choice::Next)
        } else if st.exit.contains(at) {
            Some(Choice::Exit)
        } else {
            None
        };
        (hit, st.trusted_names.clone())
    };
    let Some(hit) = hit else {
        return;
    };
    let verdict = trust::judge(conn, sourceid, &names);
    if !verdict.trusted {
        log_info!(
            "teaching overlay: ignoring a {} on {} from {}: {}",
            if press { "press" } else { "release" },
            hit.name(),
            verdict.name,
            verdict.why
        );
        return;
    }
    let mut st = lock(state);
    if press {
        st.pressed = Some(hit);
    } else if st.pressed.take() == Some(hit) && st.choice.is_none() {
        log_info!("teaching overlay: {} chose {}", verdict.name, hit.name());
        st.choice = Some(hit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MON: Rect = Rect {
        x: 0,
        y: 0,
        width: 1000,
        height: 800,
    };
    const TIP: Rect = Rect {
        x: 0,
        y: 0,
        width: 300,
        height: 120,
    };

    #[test]
    fn place_keeps_the_tooltip_beside_the_anchor_and_on_the_monitor() {
        let cases = [
            (Some(Point { x: 100, y: 100 }), Point { x: 118, y: 118 }),
            // Near the right edge: flips to the left of the anchor.
            (
                Some(Point { x: 950, y: 100 }),
                Point {
                    x: 950 - 18 - 300,
                    y: 118,
                },
            ),
            // Near the bottom: flips above.
            (
                Some(Point { x: 100, y: 780 }),
                Point {
                    x: 118,
                    y: 780 - 18 - 120,
                },
            ),
            // No anchor: centred.
            (None, Point { x: 350, y: 340 }),
        ];
        for (anchor, want) in cases {
            let got = place(TIP, MON, anchor);
            assert_eq!(got, want, "place({anchor:?}) = {got:?}, want {want:?}");
        }
        let second = Rect {
            x: 1000,
            y: 0,
            width: 800,
            height: 600,
        };
        let got = place(TIP, second, Some(Point { x: 1790, y: 590 }));
        assert!(
            got.x >= 1000 && got.x + 300 <= 1800 && got.y + 120 <= 600,
            "place on the second monitor = {got:?}"
        );
    }

    #[test]
    fn pick_monitor_takes_the_one_holding_the_anchor_or_the_nearest() {
        let left = Rect {
            x: 0,
            y: 0,
            width: 1000,
            height: 800,
        };
        let right = Rect {
            x: 1000,
            y: 200,
            width: 800,
            height: 600,
        };
        let mons = [left, right];
        assert_eq!(
            pick_monitor(&mons, Some(Point { x: 1500, y: 300 })),
            Some(right)
        );
        assert_eq!(
            pick_monitor(&mons, Some(Point { x: 10, y: 10 })),
            Some(left)
        );
        // In the dead corner above the right monitor: the right one is nearer.
        assert_eq!(
            pick_monitor(&mons, Some(Point { x: 1700, y: 50 })),
            Some(right)
        );
        assert_eq!(pick_monitor(&mons, None), Some(left));
    }

    #[test]
    fn channel_scales_to_the_mask() {
        assert_eq!(channel(0xAB, 0x00ff_0000), 0x00AB_0000);
        assert_eq!(channel(0xFF, 0xF800), 0xF800);
        assert_eq!(channel(0x12, 0), 0);
    }
}
