//! The sign that deskhand is in control (PROTOCOL.md "Control indicator"):
//! a small badge at the top of the primary monitor that says so and how
//! to stop it, shown while a turn lasts. It is the tooltip's kind of
//! window on a connection of its own, kept out of captures the same way
//! (`OutOfCapture`), but it takes no input: its input shape is empty, so
//! a click where it is reaches the window under it, and `windows` and
//! `window_at` leave it out.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::{json, Map, Value};
use x11rb::connection::{Connection, RequestConnection as _};
use x11rb::protocol::composite::{self, ConnectionExt as _};
use x11rb::protocol::shape::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    AtomEnum, ChangeWindowAttributesAux, ClipOrdering, ConfigureWindowAux, ConnectionExt as _,
    CreateGCAux, CreateWindowAux, EventMask, ImageFormat, PropMode, StackMode, WindowClass,
};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

use super::font::{self, Canvas, Typeset};
use super::{locked, overlay, xe};
use crate::capture::pixfmt::PixelFormat;
use crate::error::{Code, Error, Result};
use crate::protocol;
use crate::types::Rect;
use crate::xconn;

/// The badge's fill. Tests count pixels of exactly this colour, so no
/// stock theme should use it.
pub const FILL: [u8; 3] = [0xC8, 0x1D, 0x6B];
const INK: [u8; 3] = [0xFF, 0xFF, 0xFF];
/// What the badge says.
pub const TEXT: &str = "deskhand is in control \u{2014} press Escape to stop";
const PAD_X: u32 = 10;
const PAD_Y: u32 = 4;

const CREATING: &str = "creating the indicator window";

static BADGE: Mutex<Option<Badge>> = Mutex::new(None);
/// The badge's window, 0 before the first: `windows` leaves it out.
static WINDOW: AtomicU32 = AtomicU32::new(0);

/// Whether `window` is the badge, which takes no clicks and so is no
/// window a click could land on.
pub fn is_badge(window: u32) -> bool {
    window != 0 && WINDOW.load(Ordering::Relaxed) == window
}

/// `indicator {"visible": bool}`: shows or takes down the badge.
pub fn call(id: &Value, display: Option<&str>, params: &Map<String, Value>) -> Result<Vec<u8>> {
    let visible = match params.get("visible") {
        Some(Value::Bool(b)) => *b,
        other => {
            return Err(Error::invalid_params(format!(
                "indicator: \"visible\" must be true or false, got {}",
                other.map_or("nothing".to_owned(), |v| v.to_string())
            )))
        }
    };
    let mut slot = locked(&BADGE);
    if slot.as_ref().is_some_and(|b| !b.alive()) {
        *slot = None;
    }
    if !visible {
        if let Some(b) = slot.as_mut() {
            b.hide()?;
        }
        return Ok(protocol::success(
            id,
            &json!({ "visible": false, "bounds": null }),
        ));
    }
    if slot.is_none() {
        *slot = Some(Badge::open(display)?);
    }
    let bounds = slot.as_mut().expect("set above").show()?;
    Ok(protocol::success(
        id,
        &json!({ "visible": true, "bounds": bounds }),
    ))
}

struct Badge {
    conn: Arc<RustConnection>,
    root: u32,
    screen_num: usize,
    window: u32,
    size: (u32, u32),
    /// Where it is while shown; the event thread keeps it on top then.
    shown: Arc<Mutex<Option<Rect>>>,
}

impl Badge {
    /// Connects to `display`, checks that the server can keep the badge
    /// out of captures and let clicks through, draws it into its window's
    /// background (so the server repaints it without asking) and starts
    /// the thread that keeps it on top.
    fn open(display: Option<&str>) -> Result<Badge> {
        let name = xconn::display_name(display).ok_or_else(|| xconn::unavailable(None, ""))?;
        let (conn, screen_num) = xconn::open(&name)?;
        overlay::server_supports(&conn, screen_num).map_err(|e| {
            unsupported(
                e.message
                    .trim_start_matches("teach_show: ")
                    .replace("tooltip", "indicator"),
            )
        })?;
        if conn
            .extension_information(shape::X11_EXTENSION_NAME)
            .map_err(|e| Error::x11("querying extensions", e))?
            .is_none()
        {
            return Err(unsupported(
                "the X server lacks the SHAPE extension, which lets clicks pass through the indicator".to_owned(),
            ));
        }
        conn.composite_query_version(0, 4)
            .map_err(|e| Error::x11("querying Composite", e))?
            .reply()
            .map_err(|e| Error::x11("querying Composite", e))?;
        let root = conn.setup().roots[screen_num].root;
        let format = PixelFormat::of_root(conn.setup(), screen_num)?;
        let font = font::load()?;
        let text = Typeset::new(&font, 14.0);
        let (w, h) = (text.width(TEXT) + 2 * PAD_X, text.line_height() + 2 * PAD_Y);
        let mut canvas = Canvas::new(w, h, FILL);
        text.draw(&mut canvas, PAD_X as i32, PAD_Y as i32, TEXT, INK);
        let window = create_window(&conn, root, &format, &canvas)?;
        conn.change_window_attributes(
            root,
            &ChangeWindowAttributesAux::new().event_mask(EventMask::SUBSTRUCTURE_NOTIFY),
        )
        .map_err(xe("watching the window stack"))?;
        conn.flush().map_err(|e| Error::x11("flushing", e))?;
        WINDOW.store(window, Ordering::Relaxed);
        let conn = Arc::new(conn);
        let shown = Arc::new(Mutex::new(None));
        let (thread_conn, thread_shown) = (Arc::clone(&conn), Arc::clone(&shown));
        thread::Builder::new()
            .name("indicator".into())
            .spawn(move || keep_on_top(&thread_conn, window, &thread_shown))
            .map_err(|e| Error::internal(format!("starting the indicator thread: {e}")))?;
        Ok(Badge {
            conn,
            root,
            screen_num,
            window,
            size: (w, h),
            shown,
        })
    }

    fn alive(&self) -> bool {
        self.conn.get_input_focus().is_ok_and(|c| c.reply().is_ok())
    }

    /// Puts the badge at the top centre of the primary monitor, above
    /// every window, and answers once the server has it on screen.
    fn show(&mut self) -> Result<Rect> {
        if let Some(at) = *locked(&self.shown) {
            return Ok(at);
        }
        let c = &*self.conn;
        overlay::refuse_under_compositor(c, self.screen_num)
            .map_err(|e| unsupported(e.message.trim_start_matches("teach_show: ").to_owned()))?;
        let screen = &c.setup().roots[self.screen_num];
        let monitor = overlay::monitors(c, self.root)
            .first()
            .copied()
            .unwrap_or(Rect {
                x: 0,
                y: 0,
                width: screen.width_in_pixels as u32,
                height: screen.height_in_pixels as u32,
            });
        let (w, h) = self.size;
        let at = Rect {
            x: monitor.x + (monitor.width as i32 - w as i32).max(0) / 2,
            y: monitor.y,
            width: w,
            height: h,
        };
        // As for the tooltip: every window keeps its own pixels, so a
        // capture that moves the badge aside shows what lies under it.
        c.composite_redirect_subwindows(self.root, composite::Redirect::AUTOMATIC)
            .map_err(xe("redirecting windows"))?
            .check()
            .map_err(|e| {
                unsupported(format!(
                    "the X server refused to redirect the windows ({e}), so captures could not leave the indicator out"
                ))
            })?;
        *locked(&self.shown) = Some(at);
        c.configure_window(
            self.window,
            &ConfigureWindowAux::new()
                .x(at.x)
                .y(at.y)
                .stack_mode(StackMode::ABOVE),
        )
        .map_err(xe("showing the indicator"))?;
        c.map_window(self.window)
            .map_err(xe("showing the indicator"))?;
        super::set_shown(self.window, Some(at));
        c.sync()
            .map_err(|e| Error::x11("showing the indicator", e))?;
        Ok(at)
    }

    fn hide(&mut self) -> Result<()> {
        let c = &*self.conn;
        if locked(&self.shown).take().is_none() {
            return Ok(());
        }
        c.unmap_window(self.window)
            .map_err(xe("hiding the indicator"))?;
        super::set_shown(self.window, None);
        c.composite_unredirect_subwindows(self.root, composite::Redirect::AUTOMATIC)
            .map_err(xe("ending window redirection"))?;
        c.sync()
            .map_err(|e| Error::x11("hiding the indicator", e))?;
        Ok(())
    }
}

/// An override-redirect window with the badge as its background and an
/// empty input shape.
fn create_window(
    c: &RustConnection,
    root: u32,
    format: &PixelFormat,
    canvas: &Canvas,
) -> Result<u32> {
    let (w, h) = (canvas.width as u16, canvas.height as u16);
    let pixmap = c.generate_id().map_err(xe(CREATING))?;
    c.create_pixmap(format.depth, pixmap, root, w, h)
        .map_err(xe(CREATING))?;
    let gc = c.generate_id().map_err(xe(CREATING))?;
    c.create_gc(gc, pixmap, &CreateGCAux::new())
        .map_err(xe(CREATING))?;
    c.put_image(
        ImageFormat::Z_PIXMAP,
        pixmap,
        gc,
        w,
        h,
        0,
        0,
        0,
        format.depth,
        &overlay::encode(format, canvas),
    )
    .map_err(xe(CREATING))?;
    c.free_gc(gc).map_err(xe(CREATING))?;
    let window = c.generate_id().map_err(xe(CREATING))?;
    c.create_window(
        x11rb::COPY_DEPTH_FROM_PARENT,
        window,
        root,
        0,
        0,
        w,
        h,
        0,
        WindowClass::INPUT_OUTPUT,
        x11rb::COPY_FROM_PARENT,
        &CreateWindowAux::new()
            .override_redirect(1)
            .background_pixmap(pixmap),
    )
    .map_err(xe(CREATING))?;
    c.free_pixmap(pixmap).map_err(xe(CREATING))?;
    // No input region at all: every click goes to the window beneath.
    c.shape_rectangles(
        shape::SO::SET,
        shape::SK::INPUT,
        ClipOrdering::UNSORTED,
        window,
        0,
        0,
        &[],
    )
    .map_err(xe(CREATING))?;
    let atom = |n: &[u8]| -> Result<u32> {
        Ok(c.intern_atom(false, n)
            .map_err(xe(CREATING))?
            .reply()
            .map_err(xe(CREATING))?
            .atom)
    };
    let (wtype, notification) = (
        atom(b"_NET_WM_WINDOW_TYPE")?,
        atom(b"_NET_WM_WINDOW_TYPE_NOTIFICATION")?,
    );
    c.change_property32(
        PropMode::REPLACE,
        window,
        wtype,
        AtomEnum::ATOM,
        &[notification],
    )
    .map_err(xe(CREATING))?;
    c.change_property8(
        PropMode::REPLACE,
        window,
        AtomEnum::WM_NAME,
        AtomEnum::STRING,
        b"deskhand is in control",
    )
    .map_err(xe(CREATING))?;
    c.change_property8(
        PropMode::REPLACE,
        window,
        AtomEnum::WM_CLASS,
        AtomEnum::STRING,
        b"deskhand-indicator\0Deskhand-indicator\0",
    )
    .map_err(xe(CREATING))?;
    Ok(window)
}

/// Runs until the connection breaks: raises the badge above any window
/// that is mapped or restacked while it is shown.
fn keep_on_top(conn: &RustConnection, window: u32, shown: &Mutex<Option<Rect>>) {
    loop {
        let other = match conn.wait_for_event() {
            Ok(Event::MapNotify(e)) => e.window,
            Ok(Event::ConfigureNotify(e)) => e.window,
            Ok(_) => continue,
            Err(e) => {
                log_warn!("indicator: the X connection ended ({e}); the indicator is gone");
                locked(shown).take();
                super::set_shown(window, None);
                return;
            }
        };
        if other != window && locked(shown).is_some() {
            let _ = conn.configure_window(
                window,
                &ConfigureWindowAux::new().stack_mode(StackMode::ABOVE),
            );
            let _ = conn.flush();
        }
    }
}

fn unsupported(message: String) -> Error {
    Error::new(
        Code::Unsupported,
        format!("indicator: {message}"),
        "The on-screen sign of control needs an X server with Composite and SHAPE and no compositing manager; serve with --indicator off to go without it.",
    )
}
