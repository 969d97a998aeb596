//! Top-level windows through EWMH and ICCCM (PROTOCOL.md `windows`,
//! `window_at`, `hide`, `restore`).
//!
//! The list is every top-level window that can show pixels or take a
//! click: the window manager's clients, and the mapped children of the root
//! it does not manage (override-redirect menus, tooltips, popups and
//! notifications). Its order is the X server's real stacking order (the
//! root's children, bottom to top), not the window manager's claim, and a
//! window counts as hidden only when X says it is not viewable: a mapped
//! window that sets `_NET_WM_STATE_HIDDEN` or skips the taskbar is on
//! screen, and listed as such, so masking and the click gates see it.
//!
//! Listing sends every window's requests before reading any reply, so a
//! desktop with fifty windows costs a few round trips, not six hundred. A
//! window that is destroyed while it is being read is left out: that race
//! is normal on a live desktop and only a lost connection is an error.

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::Serialize;
use x11rb::connection::Connection;
use x11rb::cookie::Cookie;
use x11rb::errors::{ConnectionError, ReplyError};
use x11rb::protocol::res::{self, ClientIdMask, ClientIdSpec, ConnectionExt as _};
use x11rb::protocol::shape::{self, ConnectionExt as _, GetRectanglesReply, SK};
use x11rb::protocol::xproto::{
    AtomEnum, ChangeWindowAttributesAux, ClientMessageEvent, ConnectionExt as _, EventMask,
    GetGeometryReply, GetPropertyReply, GetWindowAttributesReply, MapState, Rectangle,
    TranslateCoordinatesReply, WindowClass,
};
use x11rb::protocol::Event;

use crate::apps::{Apps, Clues};
use crate::capture::ghosts::Ghosts;
use crate::capture::mask::{subtract, Selection};
use crate::epoch::{Epoch, EpochResult};
use crate::error::{Code, Error, Result};
use crate::types::{App, Point, Rect, Window};

x11rb::atom_manager! {
    Atoms: AtomsCookie {
        UTF8_STRING,
        WM_STATE,
        WM_CHANGE_STATE,
        WM_CLIENT_LEADER,
        _NET_CLIENT_LIST_STACKING,
        _NET_CLIENT_LIST,
        _NET_ACTIVE_WINDOW,
        _NET_CURRENT_DESKTOP,
        _NET_WM_NAME,
        _NET_WM_PID,
        _NET_WM_USER_TIME,
        _NET_WM_STATE,
        _NET_WM_STATE_HIDDEN,
        _NET_WM_DESKTOP,
        _NET_FRAME_EXTENTS,
        _GTK_APPLICATION_ID,
    }
}

/// ICCCM WM_STATE values.
const ICONIC_STATE: u32 = 3;
/// `_NET_WM_DESKTOP` of a window shown on every desktop.
const ALL_DESKTOPS: u32 = 0xFFFF_FFFF;
/// How long hide and restore wait for the window manager.
const STATE_CHANGE_TIMEOUT: Duration = Duration::from_secs(1);
const POLL_INTERVAL: Duration = Duration::from_millis(10);
/// A restored frame that has not moved for this long is where it will stay.
const SETTLE_TIME: Duration = Duration::from_millis(60);

/// The result of `windows` (PROTOCOL.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct WindowList {
    /// Stacking order, top first.
    pub windows: Vec<Window>,
    pub focused: Option<u32>,
    pub frontmost: Option<App>,
}

/// The window-manager view of one X screen: interned atoms, the X-Resource
/// extension if present, and the app-identity cache.
#[derive(Debug)]
pub struct Wm {
    atoms: Atoms,
    /// X-Resource 1.2 (QueryClientIds) is available.
    xres: bool,
    /// The Shape extension 1.1 (input shapes) is available.
    shape: bool,
    resource_id_mask: u32,
    hostname: Option<String>,
    apps: Mutex<Apps>,
    /// Frame bounds of the windows `hide` minimized, so `restore` can wait
    /// until they are back in place.
    hidden_bounds: Mutex<HashMap<u32, Rect>>,
    /// Where the root's children were until a moment ago (see
    /// [`Wm::watch`]), and which clients each child holds.
    ghosts: Mutex<Ghosts>,
    clients_in: Mutex<HashMap<u32, Vec<u32>>>,
    /// `_NET_WM_CM_Sn`, owned while a compositing manager runs.
    compositor_selection: std::sync::OnceLock<u32>,
    /// What `windows_epoch` answers (see [`crate::epoch`]).
    epoch: Epoch,
}

/// Everything read from the server about one client window.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Facts {
    id: u32,
    title: String,
    pid: Option<u32>,
    /// The pid came from the X server (X-Resource), so it is local.
    pid_from_server: bool,
    machine: Option<String>,
    instance: Option<String>,
    class: Option<String>,
    gtk_application_id: Option<String>,
    client: Rect,
    border: u32,
    /// `_NET_FRAME_EXTENTS`: left, right, top, bottom.
    extents: Option<[u32; 4]>,
    net_hidden: bool,
    iconic: bool,
    viewable: bool,
    desktop: Option<u32>,
    override_redirect: bool,
    /// Listed by the window manager as one of its clients.
    managed: bool,
    /// WM_TRANSIENT_FOR: the window this one belongs to.
    transient_for: Option<u32>,
    /// WM_CLIENT_LEADER: the window that stands for the whole client.
    client_leader: Option<u32>,
    /// The shapes of the child of the root that holds it (see [`Shapes`]).
    shapes: Shapes,
}

/// Where a child of the root shows pixels and takes pointer input, in root
/// coordinates; None where that is its whole rectangle.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Shapes {
    visible: Option<Vec<Rect>>,
    input: Option<Vec<Rect>>,
}

/// A child of the root's shape requests in flight (see
/// [`Wm::request_shapes`]).
struct ShapeProbe<'c, C: Connection> {
    top: u32,
    geometry: Cookie<'c, C, GetGeometryReply>,
    attributes: Cookie<'c, C, GetWindowAttributesReply>,
    bounding: Cookie<'c, C, GetRectanglesReply>,
    input: Cookie<'c, C, GetRectanglesReply>,
}

/// A window's requests in flight (see [`Wm::describe`]).
struct Probe<'c, C: Connection> {
    id: u32,
    attributes: Cookie<'c, C, GetWindowAttributesReply>,
    geometry: Cookie<'c, C, GetGeometryReply>,
    origin: Cookie<'c, C, TranslateCoordinatesReply>,
    net_wm_name: Cookie<'c, C, GetPropertyReply>,
    wm_name: Cookie<'c, C, GetPropertyReply>,
    pid: Cookie<'c, C, GetPropertyReply>,
    wm_class: Cookie<'c, C, GetPropertyReply>,
    extents: Cookie<'c, C, GetPropertyReply>,
    net_state: Cookie<'c, C, GetPropertyReply>,
    wm_state: Cookie<'c, C, GetPropertyReply>,
    desktop: Cookie<'c, C, GetPropertyReply>,
    gtk_id: Cookie<'c, C, GetPropertyReply>,
    machine: Cookie<'c, C, GetPropertyReply>,
    transient_for: Cookie<'c, C, GetPropertyReply>,
    client_leader: Cookie<'c, C, GetPropertyReply>,
}

/// Why a window could not be read.
enum Failure {
    /// The window (or its client) is gone: skip it.
    Vanished,
    /// The connection is broken: give up.
    Fatal(Error),
}

/// What hide and restore poll for.
#[derive(Debug, Default)]
struct Shown {
    /// Client id -> viewable.
    windows: HashMap<u32, bool>,
    /// Client id -> frame bounds.
    bounds: HashMap<u32, Rect>,
    /// Client id -> the window manager's frame around it.
    frame_of: HashMap<u32, u32>,
    /// Frame id -> viewable.
    frames: HashMap<u32, bool>,
}

impl Shown {
    fn viewable(&self, id: u32) -> bool {
        self.windows.get(&id) == Some(&true)
    }

    /// Whether the frame around client `id` is viewable; None without one.
    fn frame_viewable(&self, id: u32) -> Option<bool> {
        let frame = self.frame_of.get(&id)?;
        Some(self.frames.get(frame) == Some(&true))
    }
}

fn sent(context: &str, err: ConnectionError) -> Error {
    Error::x11(context, err)
}

/// Treats X protocol errors on one window as "the window vanished" and
/// connection errors as fatal.
fn per_window<T>(reply: std::result::Result<T, ReplyError>) -> std::result::Result<T, Failure> {
    match reply {
        Ok(value) => Ok(value),
        Err(ReplyError::X11Error(_)) => Err(Failure::Vanished),
        Err(ReplyError::ConnectionError(err)) => {
            Err(Failure::Fatal(Error::x11("reading window properties", err)))
        }
    }
}

/// Like [`per_window`], but an X error is an answer the server would not
/// give (None), not a vanished window.
fn optional<T>(
    reply: std::result::Result<T, ReplyError>,
) -> std::result::Result<Option<T>, Failure> {
    match reply {
        Ok(value) => Ok(Some(value)),
        Err(ReplyError::X11Error(_)) => Ok(None),
        Err(ReplyError::ConnectionError(err)) => {
            Err(Failure::Fatal(Error::x11("reading window shapes", err)))
        }
    }
}

fn no_such_window(id: u32) -> Error {
    Error::new(
        Code::NoSuchWindow,
        format!("window {id} is not a top-level client window (it may have been closed)"),
        "Call windows for current ids.",
    )
}

fn u32s(reply: &GetPropertyReply) -> Vec<u32> {
    reply
        .value32()
        .map(|values| values.collect())
        .unwrap_or_default()
}

fn first_u32(reply: &GetPropertyReply) -> Option<u32> {
    reply.value32().and_then(|mut values| values.next())
}

fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// A text property: UTF8_STRING (and anything not STRING) as UTF-8,
/// STRING as Latin-1 (ICCCM). Trailing NULs are dropped.
fn text(reply: &GetPropertyReply) -> Option<String> {
    if reply.format != 8 || reply.type_ == u32::from(AtomEnum::NONE) {
        return None;
    }
    let bytes = reply.value.as_slice();
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let bytes = &bytes[..end];
    Some(if reply.type_ == u32::from(AtomEnum::STRING) {
        latin1(bytes)
    } else {
        String::from_utf8_lossy(bytes).into_owned()
    })
}

/// WM_CLASS is "instance\0class\0".
fn parse_wm_class(bytes: &[u8]) -> (Option<String>, Option<String>) {
    let mut parts = bytes
        .split(|&b| b == 0)
        .map(|part| (!part.is_empty()).then(|| latin1(part)));
    let instance = parts.next().flatten();
    let class = parts.next().flatten();
    (instance, class)
}

/// The frame rectangle: the client area grown by the frame extents
/// (left, right, top, bottom), or by the client's own border when the
/// window manager publishes no extents.
fn frame_bounds(client: Rect, extents: Option<[u32; 4]>, border: u32) -> Rect {
    let [left, right, top, bottom] = extents.unwrap_or([border; 4]);
    let grow = |v: u32| i64::from(v);
    let x = i64::from(client.x) - grow(left);
    let y = i64::from(client.y) - grow(top);
    let width = i64::from(client.width) + grow(left) + grow(right);
    let height = i64::from(client.height) + grow(top) + grow(bottom);
    Rect {
        x: x.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
        y: y.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32,
        width: width.clamp(0, i64::from(u32::MAX)) as u32,
        height: height.clamp(0, i64::from(u32::MAX)) as u32,
    }
}

/// The window a pointer event at `p` lands in: the topmost visible one
/// whose input shape holds it (a window that lets clicks through, such as
/// a drag icon or a cursor overlay, is passed over); `windows` is in
/// stacking order, top first.
pub fn topmost_at(windows: &[Window], p: Point) -> Option<&Window> {
    windows.iter().find(|w| !w.hidden && w.takes_input_at(p))
}

/// The shapes of a child of the root from its geometry and its bounding
/// and input rectangles (relative to its origin inside the border; None
/// when the server would not say, which counts as unshaped). Shapes equal
/// to the whole window are left out; an input-only window shows nothing,
/// and takes input only where its input shape and its bounding one meet,
/// as the server delivers it.
fn shapes_of(
    g: &GetGeometryReply,
    input_only: bool,
    bounding: Option<Vec<Rectangle>>,
    input: Option<Vec<Rectangle>>,
) -> Shapes {
    let bw = i32::from(g.border_width);
    let whole = Rect {
        x: -bw,
        y: -bw,
        width: u32::from(g.width) + 2 * g.border_width as u32,
        height: u32::from(g.height) + 2 * g.border_width as u32,
    };
    let clip = |rects: Option<Vec<Rectangle>>| -> Vec<Rect> {
        match rects {
            Some(rects) => rects
                .iter()
                .filter_map(|r| {
                    Rect {
                        x: i32::from(r.x),
                        y: i32::from(r.y),
                        width: u32::from(r.width),
                        height: u32::from(r.height),
                    }
                    .intersect(&whole)
                })
                .collect(),
            None => vec![whole],
        }
    };
    let bounding = clip(bounding);
    let input: Vec<Rect> = clip(input)
        .iter()
        .flat_map(|i| bounding.iter().filter_map(|b| i.intersect(b)))
        .collect();
    let (ox, oy) = (i32::from(g.x) + bw, i32::from(g.y) + bw);
    let placed = |rects: Vec<Rect>| -> Option<Vec<Rect>> {
        (rects != [whole]).then(|| {
            rects
                .into_iter()
                .map(|r| Rect {
                    x: r.x + ox,
                    y: r.y + oy,
                    ..r
                })
                .collect()
        })
    };
    Shapes {
        visible: if input_only {
            Some(Vec::new())
        } else {
            placed(bounding)
        },
        input: placed(input),
    }
}

/// One entry of the stacking order (see [`stacking_bottom_up`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stacked {
    /// A window-manager client.
    Client(u32),
    /// A child of the root that holds no client: override-redirect, or
    /// mapped behind the window manager's back.
    Unmanaged(u32),
}

/// The real stacking order, bottom first: the root's `children` (bottom
/// first, as QueryTree gives them) with each frame replaced by the clients
/// inside it (`top_of`: client -> the root child that holds it), in the
/// window manager's order. Clients whose root child was not found go to the
/// bottom, where they can cover nothing that is painted over: an approved
/// window placed too high would hide a masked one below it.
fn stacking_bottom_up(
    children: &[u32],
    clients_bottom_up: &[u32],
    top_of: &HashMap<u32, u32>,
) -> Vec<Stacked> {
    let mut inside: HashMap<u32, Vec<u32>> = HashMap::new();
    let mut out = Vec::with_capacity(children.len());
    for &client in clients_bottom_up {
        match top_of.get(&client) {
            Some(&top) if children.contains(&top) => inside.entry(top).or_default().push(client),
            _ => out.push(Stacked::Client(client)),
        }
    }
    for &child in children {
        match inside.remove(&child) {
            Some(clients) => out.extend(clients.into_iter().map(Stacked::Client)),
            None => out.push(Stacked::Unmanaged(child)),
        }
    }
    out
}

/// Whether two host names denote the same machine, allowing one of them to
/// be fully qualified.
fn same_host(a: &str, b: &str) -> bool {
    let short = |h: &str| h.split('.').next().unwrap_or("").to_ascii_lowercase();
    a.eq_ignore_ascii_case(b) || short(a) == short(b)
}

fn local_hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for its whole length, and gethostname
    // writes at most that many bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8(buf[..end].to_vec()).ok()
}

impl Facts {
    /// Off screen because it was iconified. `_NET_WM_STATE_HIDDEN` and
    /// WM_STATE are what the client and window manager claim; only the map
    /// state says whether the pixels are on screen, so a mapped window is
    /// never minimized, whatever it claims.
    fn minimized(&self) -> bool {
        !self.viewable && (self.net_hidden || self.iconic)
    }

    fn visible(&self) -> bool {
        self.viewable
    }

    fn clues(&self, hostname: Option<&str>) -> Clues {
        let pid_is_local = self.pid_from_server
            || match (self.machine.as_deref(), hostname) {
                (Some(machine), Some(host)) => same_host(machine, host),
                _ => true,
            };
        Clues {
            pid: self.pid,
            pid_is_local,
            instance: self.instance.clone(),
            class: self.class.clone(),
            gtk_application_id: self.gtk_application_id.clone(),
        }
    }

    fn window(&self, app: App, active: Option<u32>) -> Window {
        Window {
            id: self.id,
            title: self.title.clone(),
            app,
            bounds: frame_bounds(self.client, self.extents, self.border),
            client: self.client,
            minimized: self.minimized(),
            hidden: !self.viewable,
            focused: active == Some(self.id),
            desktop: self.desktop.filter(|&d| d != ALL_DESKTOPS),
            override_redirect: self.override_redirect,
            shape: self.shapes.visible.clone(),
            input: self.shapes.input.clone(),
        }
    }

    /// Whether anything says which program owns the window.
    fn attributed(&self) -> bool {
        self.pid.is_some() || self.class.is_some() || self.instance.is_some()
    }

    /// Takes the owner's identity from `owner` (the window it is transient
    /// for, or its client leader), keeping what the window says itself.
    fn inherit(&mut self, owner: &Facts) {
        if self.pid.is_none() {
            self.pid = owner.pid;
            self.pid_from_server = owner.pid_from_server;
            self.machine = owner.machine.clone();
        }
        if self.class.is_none() && self.instance.is_none() {
            self.class = owner.class.clone();
            self.instance = owner.instance.clone();
        }
        if self.gtk_application_id.is_none() {
            self.gtk_application_id = owner.gtk_application_id.clone();
        }
    }
}

impl Wm {
    pub fn new<C: Connection>(conn: &C) -> Result<Wm> {
        let atoms = Atoms::new(conn)
            .map_err(|e| sent("interning window-manager atoms", e))?
            .reply()
            .map_err(|e| Error::x11("interning window-manager atoms", e))?;
        let xres = match conn.extension_information(res::X11_EXTENSION_NAME) {
            Ok(Some(_)) => match conn.res_query_version(1, 2) {
                Ok(cookie) => cookie
                    .reply()
                    .is_ok_and(|v| (v.server_major, v.server_minor) >= (1, 2)),
                Err(e) => return Err(sent("querying the X-Resource version", e)),
            },
            Ok(None) => false,
            Err(e) => return Err(sent("querying the X-Resource extension", e)),
        };
        let shape = match conn.extension_information(shape::X11_EXTENSION_NAME) {
            Ok(Some(_)) => match conn.shape_query_version() {
                Ok(cookie) => cookie
                    .reply()
                    .is_ok_and(|v| (v.major_version, v.minor_version) >= (1, 1)),
                Err(e) => return Err(sent("querying the Shape version", e)),
            },
            Ok(None) => false,
            Err(e) => return Err(sent("querying the Shape extension", e)),
        };
        Ok(Wm {
            atoms,
            xres,
            shape,
            resource_id_mask: conn.setup().resource_id_mask,
            hostname: local_hostname(),
            apps: Mutex::new(Apps::from_env()),
            hidden_bounds: Mutex::new(HashMap::new()),
            ghosts: Mutex::new(Ghosts::default()),
            clients_in: Mutex::new(HashMap::new()),
            compositor_selection: std::sync::OnceLock::new(),
            epoch: Epoch::default(),
        })
    }

    /// Starts following the root's children (SubstructureNotify), so that
    /// captures can paint where a masked window was until a moment ago
    /// ([`Wm::ghost_rects`]), and the root's properties and focus, so that
    /// [`Wm::epoch`] can tell when the window table may have changed.
    pub fn watch<C: Connection>(&self, conn: &C, root: u32, screen_num: usize) -> Result<()> {
        let name = format!("_NET_WM_CM_S{screen_num}");
        let atom = conn
            .intern_atom(false, name.as_bytes())
            .map_err(|e| sent("interning the compositor selection", e))?
            .reply()
            .map_err(|e| Error::x11("interning the compositor selection", e))?
            .atom;
        let _ = self.compositor_selection.set(atom);
        conn.change_window_attributes(
            root,
            &ChangeWindowAttributesAux::new().event_mask(
                EventMask::SUBSTRUCTURE_NOTIFY
                    | EventMask::PROPERTY_CHANGE
                    | EventMask::FOCUS_CHANGE,
            ),
        )
        .map_err(|e| sent("watching the root window", e))?;
        let children = conn
            .query_tree(root)
            .map_err(|e| sent("reading the window tree", e))?
            .reply()
            .map_err(|e| Error::x11("reading the window tree", e))?
            .children;
        let cookies = children
            .iter()
            .map(|&id| Ok((id, conn.get_geometry(id)?, conn.get_window_attributes(id)?)))
            .collect::<std::result::Result<Vec<_>, ConnectionError>>()
            .map_err(|e| sent("reading the root's children", e))?;
        let mut ghosts = self.ghosts.lock().unwrap_or_else(|p| p.into_inner());
        for (id, geometry, attributes) in cookies {
            let (Ok(g), Ok(a)) = (per_window(geometry.reply()), per_window(attributes.reply()))
            else {
                continue;
            };
            let border = u32::from(g.border_width);
            let rect = Rect {
                x: i32::from(g.x),
                y: i32::from(g.y),
                width: u32::from(g.width) + 2 * border,
                height: u32::from(g.height) + 2 * border,
            };
            ghosts.seen(id, rect, a.map_state == MapState::VIEWABLE);
        }
        self.epoch.go_live();
        Ok(())
    }

    /// The windows epoch (see [`crate::epoch`]): after a round trip, so
    /// that every event the server sent before it is counted. Fails when
    /// the root is not watched, since then nothing would move it on.
    pub fn epoch<C: Connection>(&self, conn: &C, root: u32) -> Result<EpochResult> {
        if !self.epoch.live() {
            return Err(Error::new(
                Code::Unsupported,
                "this helper is not following window changes, so it has no windows epoch",
                "List the windows with windows every time.",
            ));
        }
        let focus = conn
            .get_input_focus()
            .map_err(|e| sent("asking for the input focus", e))?
            .reply()
            .map_err(|e| Error::x11("asking for the input focus", e))?
            .focus;
        self.drain(conn, root)?;
        self.epoch.focus(focus);
        Ok(self.epoch.result())
    }

    /// Reads the events that have arrived, for a client told of the
    /// epoch's moves instead of asking (see [`crate::epoch::Push`]).
    pub fn follow_events<C: Connection>(&self, conn: &C, root: u32) -> Result<()> {
        self.drain(conn, root)
    }

    /// The epoch as the events read so far leave it, without a round trip;
    /// None when the root is not watched.
    pub fn current_epoch(&self) -> Option<EpochResult> {
        self.epoch.live().then(|| self.epoch.result())
    }

    /// Reads the events about the root's children that have arrived.
    fn drain<C: Connection>(&self, conn: &C, root: u32) -> Result<()> {
        let mut ghosts = self.ghosts.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        while let Some(event) = conn
            .poll_for_event()
            .map_err(|e| Error::x11("reading window events", e))?
        {
            // Any event at all, an error about a vanished window included,
            // but the time stamp GTK and Qt apps set on every key press
            // and click, which no listing reads.
            if !matches!(&event, Event::PropertyNotify(e) if e.atom == self.atoms._NET_WM_USER_TIME)
            {
                self.epoch.bump();
            }
            if let Event::DestroyNotify(e) = &event {
                self.epoch.gone(e.window);
            }
            ghosts.event(&event, root, now);
        }
        Ok(())
    }

    /// The recent places of windows that `selection` masks, clipped to
    /// `clip`: a window that closed or moved a moment ago may still show
    /// there, until the app beneath repaints. Only where it was itself
    /// visible: what the windows stacked above it then still show there
    /// (as `windows`, the visible ones top first, has them now) was never
    /// its pixels. Without a compositing manager only the parts over one
    /// of `windows` count, since the X server repaints the bare root at
    /// once; with one, the whole screen is what it last drew, so all of
    /// them count. The clients inside a frame decide for it; a child of
    /// the root whose clients are unknown decides for itself, so under
    /// `mask_others` it is painted.
    pub fn ghost_rects<C: Connection>(
        &self,
        conn: &C,
        selection: &Selection,
        clip: Rect,
        windows: &[Window],
    ) -> Result<Vec<Rect>> {
        let composited = match self.compositor_selection.get() {
            Some(&atom) => {
                conn.get_selection_owner(atom)
                    .map_err(|e| sent("asking for the compositing manager", e))?
                    .reply()
                    .map_err(|e| Error::x11("asking for the compositing manager", e))?
                    .owner
                    != x11rb::NONE
            }
            None => false,
        };
        let under: Vec<Rect> = if composited {
            vec![clip]
        } else {
            windows.iter().map(|w| w.bounds).collect()
        };
        let mut ghosts = self.ghosts.lock().unwrap_or_else(|p| p.into_inner());
        let clients_in = self.clients_in.lock().unwrap_or_else(|p| p.into_inner());
        let held =
            |top: u32| -> Vec<u32> { clients_in.get(&top).cloned().unwrap_or_else(|| vec![top]) };
        let mut rects = Vec::new();
        for g in ghosts.recent(Instant::now()) {
            if crate::teach::is_tooltip(g.window)
                || !held(g.window).iter().any(|&c| selection.masks(c))
            {
                continue;
            }
            let Some(mut region) = g.rect.intersect(&clip).map(|r| vec![r]) else {
                continue;
            };
            for (top, then) in &g.above {
                let ids = held(*top);
                let shown = windows
                    .iter()
                    .filter(|w| ids.contains(&w.id))
                    .flat_map(|w| w.visible_region().iter().filter_map(|r| r.intersect(then)));
                for cover in shown {
                    region = subtract(&region, &cover);
                }
            }
            rects.extend(
                region
                    .iter()
                    .flat_map(|r| under.iter().filter_map(move |u| r.intersect(u))),
            );
        }
        Ok(rects)
    }

    /// All client windows in stacking order, top first, as listed by the
    /// window manager. `include_hidden=false` leaves out minimized and
    /// unviewable ones (other desktops included).
    pub fn list<C: Connection>(
        &self,
        conn: &C,
        root: u32,
        include_hidden: bool,
    ) -> Result<WindowList> {
        let (facts, active) = self.snapshot(conn, root)?;
        let mut apps = self
            .apps
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        apps.refresh();
        let hostname = self.hostname.as_deref();
        let mut frontmost = None;
        let mut windows = Vec::with_capacity(facts.len());
        for f in &facts {
            let app = apps.resolve(&f.clues(hostname));
            if active == Some(f.id) {
                frontmost = Some(app.clone());
            }
            if include_hidden || f.visible() {
                windows.push(f.window(app, active));
            }
        }
        let focused = frontmost.as_ref().and(active);
        Ok(WindowList {
            windows,
            focused,
            frontmost,
        })
    }

    /// The window a pointer event at `p` would land in (see [`topmost_at`]).
    pub fn window_at<C: Connection>(
        &self,
        conn: &C,
        root: u32,
        p: Point,
    ) -> Result<Option<Window>> {
        let list = self.list(conn, root, false)?;
        Ok(topmost_at(&list.windows, p).cloned())
    }

    /// Iconifies each visible window among `ids` (ICCCM WM_CHANGE_STATE)
    /// and waits up to a second until its frame is off screen. Returns the
    /// ids that went from visible to hidden. Unknown ids fail the call
    /// before any window is touched.
    pub fn hide<C: Connection>(&self, conn: &C, root: u32, ids: &[u32]) -> Result<Vec<u32>> {
        let (facts, _) = self.snapshot(conn, root)?;
        let wanted = validate(ids, &facts)?;
        // The window manager cannot iconify a window it does not manage,
        // and unmapping another client's popup would leave it broken:
        // those stay, masked in captures and refused as targets.
        let targets: Vec<&Facts> = facts
            .iter()
            .filter(|f| wanted.contains(&f.id) && f.visible() && f.managed)
            .collect();
        if targets.is_empty() {
            return Ok(Vec::new());
        }
        let managed = self.wm_running(conn, root)?;
        {
            let mut before = self.hidden_bounds.lock().unwrap_or_else(|p| p.into_inner());
            // Forget windows that have closed since they were hidden.
            before.retain(|id, _| facts.iter().any(|f| f.id == *id));
            for f in &targets {
                before.insert(f.id, frame_bounds(f.client, f.extents, f.border));
            }
        }
        for f in &targets {
            if managed {
                let event = ClientMessageEvent::new(
                    32,
                    f.id,
                    self.atoms.WM_CHANGE_STATE,
                    [ICONIC_STATE, 0, 0, 0, 0],
                );
                conn.send_event(
                    false,
                    root,
                    EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
                    event,
                )
                .map_err(|e| sent("asking the window manager to minimize a window", e))?;
            } else {
                // No window manager to ask: take the window off screen
                // ourselves, as ICCCM tells unmanaged clients to do.
                conn.unmap_window(f.id)
                    .map_err(|e| sent("unmapping a window", e))?;
            }
        }
        conn.flush().map_err(|e| sent("sending hide requests", e))?;
        let ids: Vec<u32> = targets.iter().map(|f| f.id).collect();
        // The client goes unviewable at once, but a window manager that
        // animates iconifying (openbox) keeps the frame on screen until
        // the animation ends; a capture taken before then would show it.
        self.wait_for(conn, root, &ids, |id, shown| {
            !shown.viewable(id) && shown.frame_viewable(id) != Some(true)
        })
    }

    /// Maps back each hidden window among `ids`, bottom-most first so their
    /// relative stacking is kept, and waits up to a second until they are
    /// viewable and back at the frame position they had when [`Wm::hide`]
    /// hid them. Returns the ids that are viewable again. Windows that are
    /// merely on another desktop are left alone.
    pub fn restore<C: Connection>(&self, conn: &C, root: u32, ids: &[u32]) -> Result<Vec<u32>> {
        let (facts, _) = self.snapshot(conn, root)?;
        let wanted = validate(ids, &facts)?;
        let current_desktop = self.root_u32(conn, root, self.atoms._NET_CURRENT_DESKTOP)?;
        let on_current_desktop = |f: &Facts| match (f.desktop, current_desktop) {
            (Some(d), Some(current)) => d == ALL_DESKTOPS || d == current,
            _ => true,
        };
        // `facts` is top first; restore from the bottom up.
        let targets: Vec<u32> = facts
            .iter()
            .rev()
            .filter(|f| wanted.contains(&f.id))
            .filter(|f| f.minimized() || (!f.viewable && on_current_desktop(f)))
            .map(|f| f.id)
            .collect();
        if targets.is_empty() {
            return Ok(Vec::new());
        }
        let expected: HashMap<u32, Rect> = {
            let mut before = self.hidden_bounds.lock().unwrap_or_else(|p| p.into_inner());
            targets
                .iter()
                .filter_map(|id| before.remove(id).map(|r| (*id, r)))
                .collect()
        };
        for &id in &targets {
            // An iconic window's MapRequest makes the window manager
            // deiconify it in its old frame position and raise it; mapping
            // bottom-most first leaves the top one on top.
            conn.map_window(id)
                .map_err(|e| sent("mapping a window", e))?;
        }
        conn.flush()
            .map_err(|e| sent("sending restore requests", e))?;
        // A deiconify animation grows the frame from the icon to its old
        // place; wait for the old place, or for the frame to stop moving
        // when we do not know where it was.
        let mut last_seen: HashMap<u32, (Rect, Instant)> = HashMap::new();
        let restored = self.wait_for(conn, root, &targets, |id, shown| {
            let Some(bounds) = shown.bounds.get(&id).copied() else {
                return false;
            };
            if !shown.viewable(id) {
                return false;
            }
            if let Some(want) = expected.get(&id) {
                return bounds == *want;
            }
            let now = Instant::now();
            let since = last_seen.entry(id).or_insert((bounds, now));
            if since.0 != bounds {
                *since = (bounds, now);
            }
            now.duration_since(since.1) >= SETTLE_TIME
        })?;
        // Past the timeout, a window that is on screen counts as restored
        // even if the window manager put it elsewhere.
        let shown = self.shown(conn, root, &targets, &HashMap::new())?;
        Ok(targets
            .iter()
            .copied()
            .filter(|id| restored.contains(id) || shown.viewable(*id))
            .collect())
    }

    /// The child of the root that contains `window`: its frame under a
    /// reparenting window manager, else the window itself.
    fn top_level<C: Connection>(&self, conn: &C, root: u32, window: u32) -> Result<Option<u32>> {
        let mut current = window;
        for _ in 0..16 {
            let tree = match per_window(
                conn.query_tree(current)
                    .map_err(|e| sent("reading the window tree", e))?
                    .reply(),
            ) {
                Ok(tree) => tree,
                Err(Failure::Vanished) => return Ok(None),
                Err(Failure::Fatal(err)) => return Err(err),
            };
            if tree.parent == root || tree.parent == x11rb::NONE {
                return Ok(Some(current));
            }
            current = tree.parent;
        }
        Ok(None)
    }

    /// Reads the viewability and frame bounds of `ids` and the viewability
    /// of their frames (`frame_of`). Vanished windows are absent.
    fn shown<C: Connection>(
        &self,
        conn: &C,
        root: u32,
        ids: &[u32],
        frame_of: &HashMap<u32, u32>,
    ) -> Result<Shown> {
        let mut shown = Shown {
            frame_of: frame_of.clone(),
            ..Shown::default()
        };
        for f in self.describe_without_pids(conn, root, ids)? {
            shown.windows.insert(f.id, f.viewable);
            shown
                .bounds
                .insert(f.id, frame_bounds(f.client, f.extents, f.border));
        }
        let cookies = frame_of
            .values()
            .map(|&id| conn.get_window_attributes(id).map(|c| (id, c)))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| sent("reading window state", e))?;
        for (id, cookie) in cookies {
            match per_window(cookie.reply()) {
                Ok(attrs) => {
                    shown
                        .frames
                        .insert(id, attrs.map_state == MapState::VIEWABLE);
                }
                Err(Failure::Vanished) => {}
                Err(Failure::Fatal(err)) => return Err(err),
            }
        }
        Ok(shown)
    }

    /// Polls every [`POLL_INTERVAL`] until `done` holds for every window or
    /// [`STATE_CHANGE_TIMEOUT`] passes; returns the ids that got there, in
    /// `ids` order. Windows destroyed meanwhile are dropped.
    fn wait_for<C: Connection>(
        &self,
        conn: &C,
        root: u32,
        ids: &[u32],
        mut done: impl FnMut(u32, &Shown) -> bool,
    ) -> Result<Vec<u32>> {
        let mut frame_of = HashMap::new();
        for &id in ids {
            if let Some(frame) = self.top_level(conn, root, id)? {
                if frame != id {
                    frame_of.insert(id, frame);
                }
            }
        }
        let deadline = Instant::now() + STATE_CHANGE_TIMEOUT;
        let mut finished: HashSet<u32> = HashSet::new();
        loop {
            let shown = self.shown(conn, root, ids, &frame_of)?;
            for &id in ids {
                if !finished.contains(&id) && shown.windows.contains_key(&id) && done(id, &shown) {
                    finished.insert(id);
                }
            }
            let pending = ids
                .iter()
                .any(|id| !finished.contains(id) && shown.windows.contains_key(id));
            if !pending || Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(POLL_INTERVAL);
        }
        Ok(ids
            .iter()
            .copied()
            .filter(|id| finished.contains(id))
            .collect())
    }

    /// Whether some client redirects the root's substructure, which is
    /// what makes it the window manager.
    fn wm_running<C: Connection>(&self, conn: &C, root: u32) -> Result<bool> {
        let attrs = conn
            .get_window_attributes(root)
            .map_err(|e| sent("reading the root window", e))?
            .reply()
            .map_err(|e| Error::x11("reading the root window", e))?;
        Ok(attrs
            .all_event_masks
            .contains(EventMask::SUBSTRUCTURE_REDIRECT))
    }

    fn root_property<C: Connection>(
        &self,
        conn: &C,
        root: u32,
        atom: u32,
        max_longs: u32,
    ) -> Result<GetPropertyReply> {
        conn.get_property(false, root, atom, AtomEnum::ANY, 0, max_longs)
            .map_err(|e| sent("reading a root window property", e))?
            .reply()
            .map_err(|e| Error::x11("reading a root window property", e))
    }

    fn root_u32<C: Connection>(&self, conn: &C, root: u32, atom: u32) -> Result<Option<u32>> {
        Ok(first_u32(&self.root_property(conn, root, atom, 1)?))
    }

    /// The client windows bottom to top: `_NET_CLIENT_LIST_STACKING`, else
    /// `_NET_CLIENT_LIST`, else the ICCCM clients found in the window tree.
    fn clients_bottom_up<C: Connection>(&self, conn: &C, root: u32) -> Result<Vec<u32>> {
        for atom in [
            self.atoms._NET_CLIENT_LIST_STACKING,
            self.atoms._NET_CLIENT_LIST,
        ] {
            let reply = self.root_property(conn, root, atom, 1 << 16)?;
            if reply.format == 32 {
                return Ok(u32s(&reply));
            }
        }
        self.tree_clients(conn, root)
    }

    /// Without an EWMH window manager: each child of the root that carries
    /// WM_STATE, or has a descendant that does (a frame), or else is an
    /// ordinary window with a WM_CLASS (no window manager at all).
    fn tree_clients<C: Connection>(&self, conn: &C, root: u32) -> Result<Vec<u32>> {
        let children = match per_window(
            conn.query_tree(root)
                .map_err(|e| sent("reading the window tree", e))?
                .reply(),
        ) {
            Ok(tree) => tree.children,
            Err(Failure::Fatal(err)) => return Err(err),
            Err(Failure::Vanished) => return Ok(Vec::new()),
        };
        let mut clients = Vec::new();
        for child in children {
            match self.find_client(conn, child, 0) {
                Ok(Some(client)) => clients.push(client),
                Ok(None) => {
                    let plain = (|| -> std::result::Result<bool, Failure> {
                        let attrs = per_window(
                            conn.get_window_attributes(child)
                                .map_err(|e| Failure::Fatal(sent("reading a window", e)))?
                                .reply(),
                        )?;
                        let class = per_window(
                            conn.get_property(
                                false,
                                child,
                                AtomEnum::WM_CLASS,
                                AtomEnum::STRING,
                                0,
                                64,
                            )
                            .map_err(|e| Failure::Fatal(sent("reading WM_CLASS", e)))?
                            .reply(),
                        )?;
                        Ok(!attrs.override_redirect && !class.value.is_empty())
                    })();
                    match plain {
                        Ok(true) => clients.push(child),
                        Ok(false) | Err(Failure::Vanished) => {}
                        Err(Failure::Fatal(err)) => return Err(err),
                    }
                }
                Err(Failure::Vanished) => {}
                Err(Failure::Fatal(err)) => return Err(err),
            }
        }
        Ok(clients)
    }

    /// The window at or below `window` that has WM_STATE (ICCCM's mark of a
    /// managed client), searching a few levels of frames.
    fn find_client<C: Connection>(
        &self,
        conn: &C,
        window: u32,
        depth: u32,
    ) -> std::result::Result<Option<u32>, Failure> {
        let state = per_window(
            conn.get_property(false, window, self.atoms.WM_STATE, AtomEnum::ANY, 0, 0)
                .map_err(|e| Failure::Fatal(sent("reading WM_STATE", e)))?
                .reply(),
        )?;
        if state.type_ != u32::from(AtomEnum::NONE) {
            return Ok(Some(window));
        }
        if depth >= 3 {
            return Ok(None);
        }
        let tree = per_window(
            conn.query_tree(window)
                .map_err(|e| Failure::Fatal(sent("reading the window tree", e)))?
                .reply(),
        )?;
        for child in tree.children.into_iter().rev() {
            match self.find_client(conn, child, depth + 1) {
                Ok(Some(found)) => return Ok(Some(found)),
                Ok(None) | Err(Failure::Vanished) => {}
                Err(fatal) => return Err(fatal),
            }
        }
        Ok(None)
    }

    /// Facts about every top-level window, top first, and the active
    /// window: the clients, and the viewable root children that hold no
    /// client, in the server's stacking order.
    fn snapshot<C: Connection>(&self, conn: &C, root: u32) -> Result<(Vec<Facts>, Option<u32>)> {
        let mut clients = self.clients_bottom_up(conn, root)?;
        let mut seen = HashSet::new();
        clients.retain(|id| *id != 0 && *id != root && seen.insert(*id));
        let children = match per_window(
            conn.query_tree(root)
                .map_err(|e| sent("reading the window tree", e))?
                .reply(),
        ) {
            Ok(tree) => tree.children,
            Err(Failure::Fatal(err)) => return Err(err),
            Err(Failure::Vanished) => Vec::new(),
        };
        let top_of = self.top_levels(conn, root, &clients)?;
        self.remember_frames(&top_of);
        let order = stacking_bottom_up(&children, &clients, &top_of);
        let candidates: Vec<u32> = order
            .iter()
            .filter_map(|s| match s {
                Stacked::Unmanaged(id) => Some(*id),
                Stacked::Client(_) => None,
            })
            .collect();
        // Frames are asked in the same round trip: a frame on screen
        // shows its client's title even while the client is unmapped
        // (openbox animates iconifying that way).
        let frames: Vec<u32> = top_of
            .iter()
            .filter(|(client, top)| client != top)
            .map(|(_, &top)| top)
            .collect();
        let viewable = self.viewable_among(conn, &[candidates.as_slice(), &frames].concat())?;
        let unmanaged: HashSet<u32> = candidates
            .iter()
            .copied()
            .filter(|id| viewable.contains(id))
            .collect();
        let mut ids: Vec<u32> = order
            .iter()
            .filter_map(|s| match *s {
                Stacked::Client(id) => Some(id),
                Stacked::Unmanaged(id) => unmanaged.contains(&id).then_some(id),
            })
            .collect();
        ids.reverse();
        let active = self
            .root_u32(conn, root, self.atoms._NET_ACTIVE_WINDOW)?
            .filter(|&id| id != 0);
        let top = |id: &u32| top_of.get(id).copied().unwrap_or(*id);
        let tops: Vec<u32> = {
            let mut seen = HashSet::new();
            ids.iter().map(top).filter(|t| seen.insert(*t)).collect()
        };
        self.follow(conn, &[ids.as_slice(), &frames].concat())?;
        let shape_probes = self.request_shapes(conn, &tops)?;
        let mut facts = self.describe(conn, root, &ids)?;
        let shapes = self.collect_shapes(shape_probes)?;
        let managed: HashSet<u32> = clients.into_iter().collect();
        for f in &mut facts {
            f.managed = managed.contains(&f.id);
            if let Some(top) = top_of.get(&f.id).filter(|&&top| top != f.id) {
                f.viewable |= viewable.contains(top);
            }
            f.shapes = shapes.get(&top(&f.id)).cloned().unwrap_or_default();
        }
        self.attribute(conn, root, &mut facts)?;
        // Every event sent before these replies has arrived by now.
        self.drain(conn, root)?;
        Ok((facts, active))
    }

    /// Follows the properties of windows not followed yet (their class,
    /// state and pid decide the gates), before they are read, so that a
    /// change after the read moves the epoch on. A window that is gone by
    /// then makes an X error, which moves it on too. Their focus too: the
    /// focus can move between two clients with no event on the root, and
    /// a client told of the epoch's moves makes no GetInputFocus.
    /// Their shapes too, which decide where they are masked and clicked.
    fn follow<C: Connection>(&self, conn: &C, ids: &[u32]) -> Result<()> {
        if !self.epoch.live() {
            return Ok(());
        }
        for id in self.epoch.unwatched(ids) {
            conn.change_window_attributes(
                id,
                &ChangeWindowAttributesAux::new().event_mask(
                    EventMask::PROPERTY_CHANGE
                        | EventMask::STRUCTURE_NOTIFY
                        | EventMask::FOCUS_CHANGE,
                ),
            )
            .map_err(|e| sent("following a window's properties", e))?;
            if self.shape {
                conn.shape_select_input(id, true)
                    .map_err(|e| sent("following a window's shape", e))?;
            }
        }
        Ok(())
    }

    /// Asks for the shapes of the children of the root `tops`; the
    /// replies are read by [`Wm::collect_shapes`], after other requests
    /// have gone out, so they cost no round trip of their own.
    fn request_shapes<'c, C: Connection>(
        &self,
        conn: &'c C,
        tops: &[u32],
    ) -> Result<Vec<ShapeProbe<'c, C>>> {
        if !self.shape {
            return Ok(Vec::new());
        }
        tops.iter()
            .map(|&top| {
                Ok(ShapeProbe {
                    top,
                    geometry: conn.get_geometry(top)?,
                    attributes: conn.get_window_attributes(top)?,
                    bounding: conn.shape_get_rectangles(top, SK::BOUNDING)?,
                    input: conn.shape_get_rectangles(top, SK::INPUT)?,
                })
            })
            .collect::<std::result::Result<Vec<_>, ConnectionError>>()
            .map_err(|e| sent("asking for window shapes", e))
    }

    /// The shapes asked for by [`Wm::request_shapes`], by window; a
    /// window that vanished meanwhile is left out.
    fn collect_shapes<C: Connection>(
        &self,
        probes: Vec<ShapeProbe<'_, C>>,
    ) -> Result<HashMap<u32, Shapes>> {
        let mut out = HashMap::with_capacity(probes.len());
        for p in probes {
            let read = (|| -> std::result::Result<Shapes, Failure> {
                let geometry = per_window(p.geometry.reply())?;
                let attributes = per_window(p.attributes.reply())?;
                // A window the server will not describe the shape of is
                // judged by its rectangle.
                let rects = |r: std::result::Result<Option<GetRectanglesReply>, Failure>| {
                    r.map(|reply| reply.map(|reply| reply.rectangles))
                };
                let bounding = rects(optional(p.bounding.reply()))?;
                let input = rects(optional(p.input.reply()))?;
                Ok(shapes_of(
                    &geometry,
                    attributes.class == WindowClass::INPUT_ONLY,
                    bounding,
                    input,
                ))
            })();
            match read {
                Ok(shapes) => {
                    out.insert(p.top, shapes);
                }
                Err(Failure::Vanished) => {}
                Err(Failure::Fatal(err)) => return Err(err),
            }
        }
        Ok(out)
    }

    /// Notes which clients each child of the root holds, keeping what was
    /// known about children that have just gone (their ghosts need it).
    fn remember_frames(&self, top_of: &HashMap<u32, u32>) {
        let mut now: HashMap<u32, Vec<u32>> = HashMap::new();
        for (&client, &top) in top_of {
            now.entry(top).or_default().push(client);
        }
        let mut known = self.clients_in.lock().unwrap_or_else(|p| p.into_inner());
        let mut ghosts = self.ghosts.lock().unwrap_or_else(|p| p.into_inner());
        for g in ghosts.recent(Instant::now()) {
            if let (Entry::Vacant(slot), Some(old)) = (now.entry(g.window), known.get(&g.window)) {
                slot.insert(old.clone());
            }
        }
        *known = now;
    }

    /// For each of `ids`, the child of the root that holds it (its frame
    /// under a reparenting window manager, else itself), one level of the
    /// tree per round trip. Vanished windows are absent.
    fn top_levels<C: Connection>(
        &self,
        conn: &C,
        root: u32,
        ids: &[u32],
    ) -> Result<HashMap<u32, u32>> {
        let mut out = HashMap::with_capacity(ids.len());
        let mut pending: Vec<(u32, u32)> = ids.iter().map(|&id| (id, id)).collect();
        for _ in 0..16 {
            if pending.is_empty() {
                break;
            }
            let cookies = pending
                .iter()
                .map(|&(client, window)| conn.query_tree(window).map(|c| (client, window, c)))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| sent("reading the window tree", e))?;
            let mut next = Vec::new();
            for (client, window, cookie) in cookies {
                match per_window(cookie.reply()) {
                    Ok(tree) if tree.parent == root || tree.parent == x11rb::NONE => {
                        out.insert(client, window);
                    }
                    Ok(tree) => next.push((client, tree.parent)),
                    Err(Failure::Vanished) => {}
                    Err(Failure::Fatal(err)) => return Err(err),
                }
            }
            pending = next;
        }
        Ok(out)
    }

    /// The viewable windows among `ids`.
    fn viewable_among<C: Connection>(&self, conn: &C, ids: &[u32]) -> Result<HashSet<u32>> {
        let cookies = ids
            .iter()
            .map(|&id| conn.get_window_attributes(id).map(|c| (id, c)))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| sent("reading window state", e))?;
        let mut out = HashSet::new();
        for (id, cookie) in cookies {
            match per_window(cookie.reply()) {
                Ok(attrs) if attrs.map_state == MapState::VIEWABLE => {
                    out.insert(id);
                }
                Ok(_) | Err(Failure::Vanished) => {}
                Err(Failure::Fatal(err)) => return Err(err),
            }
        }
        Ok(out)
    }

    /// Gives a window that says nothing about its owner (no pid, from the
    /// window or from X-Resource, and no WM_CLASS) the identity of the
    /// window it is transient for, else of its client leader. A window
    /// still unattributed keeps an empty identity, which no grant matches:
    /// it is treated as an unapproved app's.
    fn attribute<C: Connection>(&self, conn: &C, root: u32, facts: &mut [Facts]) -> Result<()> {
        let owner_of = |f: &Facts| {
            [f.transient_for, f.client_leader]
                .into_iter()
                .flatten()
                .find(|&o| o != 0 && o != f.id)
        };
        let owners: Vec<u32> = {
            let mut seen = HashSet::new();
            facts
                .iter()
                .filter(|f| !f.attributed())
                .filter_map(owner_of)
                .filter(|o| seen.insert(*o))
                .collect()
        };
        if owners.is_empty() {
            return Ok(());
        }
        let described = self.describe(conn, root, &owners)?;
        let by_id: HashMap<u32, &Facts> = described.iter().map(|f| (f.id, f)).collect();
        for f in facts.iter_mut().filter(|f| !f.attributed()) {
            let candidates = [f.transient_for, f.client_leader];
            if let Some(owner) = candidates
                .into_iter()
                .flatten()
                .filter_map(|o| by_id.get(&o))
                .find(|o| o.attributed())
            {
                f.inherit(owner);
            }
        }
        Ok(())
    }

    /// Reads the facts about `ids`, skipping windows that no longer exist.
    fn describe<C: Connection>(&self, conn: &C, root: u32, ids: &[u32]) -> Result<Vec<Facts>> {
        let mut facts = self.describe_without_pids(conn, root, ids)?;
        self.fill_pids_from_server(conn, &mut facts)?;
        Ok(facts)
    }

    /// [`Wm::describe`] without the X-Resource pid lookup.
    fn describe_without_pids<C: Connection>(
        &self,
        conn: &C,
        root: u32,
        ids: &[u32],
    ) -> Result<Vec<Facts>> {
        let probes = ids
            .iter()
            .map(|&id| self.probe(conn, root, id))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| sent("requesting window properties", e))?;
        let mut facts = Vec::with_capacity(probes.len());
        for probe in probes {
            match self.collect(probe) {
                Ok(f) => facts.push(f),
                Err(Failure::Vanished) => {}
                Err(Failure::Fatal(err)) => return Err(err),
            }
        }
        Ok(facts)
    }

    fn probe<'c, C: Connection>(
        &self,
        conn: &'c C,
        root: u32,
        id: u32,
    ) -> std::result::Result<Probe<'c, C>, ConnectionError> {
        let a = &self.atoms;
        let prop = |atom: u32, max_longs: u32| {
            conn.get_property(false, id, atom, AtomEnum::ANY, 0, max_longs)
        };
        Ok(Probe {
            id,
            attributes: conn.get_window_attributes(id)?,
            geometry: conn.get_geometry(id)?,
            origin: conn.translate_coordinates(id, root, 0, 0)?,
            net_wm_name: prop(a._NET_WM_NAME, 2048)?,
            wm_name: prop(AtomEnum::WM_NAME.into(), 2048)?,
            pid: prop(a._NET_WM_PID, 1)?,
            wm_class: prop(AtomEnum::WM_CLASS.into(), 256)?,
            extents: prop(a._NET_FRAME_EXTENTS, 4)?,
            net_state: prop(a._NET_WM_STATE, 64)?,
            wm_state: prop(a.WM_STATE, 2)?,
            desktop: prop(a._NET_WM_DESKTOP, 1)?,
            gtk_id: prop(a._GTK_APPLICATION_ID, 256)?,
            machine: prop(AtomEnum::WM_CLIENT_MACHINE.into(), 256)?,
            transient_for: prop(AtomEnum::WM_TRANSIENT_FOR.into(), 1)?,
            client_leader: prop(a.WM_CLIENT_LEADER, 1)?,
        })
    }

    fn collect<C: Connection>(&self, p: Probe<'_, C>) -> std::result::Result<Facts, Failure> {
        let attributes = per_window(p.attributes.reply())?;
        let geometry = per_window(p.geometry.reply())?;
        let origin = per_window(p.origin.reply())?;
        let net_wm_name = per_window(p.net_wm_name.reply())?;
        let wm_name = per_window(p.wm_name.reply())?;
        let pid = per_window(p.pid.reply())?;
        let wm_class = per_window(p.wm_class.reply())?;
        let extents = per_window(p.extents.reply())?;
        let net_state = per_window(p.net_state.reply())?;
        let wm_state = per_window(p.wm_state.reply())?;
        let desktop = per_window(p.desktop.reply())?;
        let gtk_id = per_window(p.gtk_id.reply())?;
        let machine = per_window(p.machine.reply())?;
        let transient_for = per_window(p.transient_for.reply())?;
        let client_leader = per_window(p.client_leader.reply())?;

        let title = text(&net_wm_name)
            .filter(|t| !t.is_empty())
            .or_else(|| text(&wm_name))
            .unwrap_or_default();
        let (instance, class) = if wm_class.format == 8 {
            parse_wm_class(&wm_class.value)
        } else {
            (None, None)
        };
        let extents = match u32s(&extents).as_slice() {
            &[left, right, top, bottom] => Some([left, right, top, bottom]),
            _ => None,
        };
        Ok(Facts {
            id: p.id,
            title,
            pid: first_u32(&pid).filter(|&pid| pid != 0),
            pid_from_server: false,
            machine: text(&machine).filter(|m| !m.is_empty()),
            instance,
            class,
            gtk_application_id: text(&gtk_id).filter(|g| !g.is_empty()),
            client: Rect {
                x: i32::from(origin.dst_x),
                y: i32::from(origin.dst_y),
                width: u32::from(geometry.width),
                height: u32::from(geometry.height),
            },
            border: u32::from(geometry.border_width),
            extents,
            net_hidden: u32s(&net_state).contains(&self.atoms._NET_WM_STATE_HIDDEN),
            iconic: first_u32(&wm_state) == Some(ICONIC_STATE),
            viewable: attributes.map_state == MapState::VIEWABLE,
            desktop: first_u32(&desktop),
            override_redirect: attributes.override_redirect,
            managed: false,
            transient_for: first_u32(&transient_for).filter(|&w| w != 0),
            client_leader: first_u32(&client_leader).filter(|&w| w != 0),
            shapes: Shapes::default(),
        })
    }

    /// For windows without `_NET_WM_PID`, asks the X server which local
    /// process owns the connection that created them (X-Resource 1.2).
    fn fill_pids_from_server<C: Connection>(&self, conn: &C, facts: &mut [Facts]) -> Result<()> {
        if !self.xres {
            return Ok(());
        }
        let clients: HashSet<u32> = facts
            .iter()
            .filter(|f| f.pid.is_none())
            .map(|f| f.id & !self.resource_id_mask)
            .collect();
        let cookies = clients
            .into_iter()
            .map(|client| {
                let spec = ClientIdSpec {
                    client,
                    mask: ClientIdMask::LOCAL_CLIENT_PID,
                };
                conn.res_query_client_ids(&[spec]).map(|c| (client, c))
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(|e| sent("asking X-Resource for client pids", e))?;
        let mut pids: HashMap<u32, u32> = HashMap::new();
        for (client, cookie) in cookies {
            let reply = match per_window(cookie.reply()) {
                Ok(reply) => reply,
                Err(Failure::Vanished) => continue,
                Err(Failure::Fatal(err)) => return Err(err),
            };
            let pid = reply
                .ids
                .iter()
                .find(|v| v.spec.mask.contains(ClientIdMask::LOCAL_CLIENT_PID))
                .and_then(|v| v.value.first().copied());
            if let Some(pid) = pid.filter(|&p| p != 0) {
                pids.insert(client, pid);
            }
        }
        for f in facts.iter_mut().filter(|f| f.pid.is_none()) {
            if let Some(&pid) = pids.get(&(f.id & !self.resource_id_mask)) {
                f.pid = Some(pid);
                f.pid_from_server = true;
            }
        }
        Ok(())
    }
}

/// Checks that every id is a listed client; returns the set of ids.
fn validate(ids: &[u32], facts: &[Facts]) -> Result<HashSet<u32>> {
    let known: HashSet<u32> = facts.iter().map(|f| f.id).collect();
    if let Some(&unknown) = ids.iter().find(|id| !known.contains(id)) {
        return Err(no_such_window(unknown));
    }
    Ok(ids.iter().copied().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(x: i32, y: i32, width: u32, height: u32) -> Rect {
        Rect {
            x,
            y,
            width,
            height,
        }
    }

    fn window(id: u32, bounds: Rect) -> Window {
        Window {
            id,
            title: format!("w{id}"),
            app: App::default(),
            bounds,
            client: bounds,
            minimized: false,
            hidden: false,
            focused: false,
            desktop: Some(0),
            override_redirect: false,
            shape: None,
            input: None,
        }
    }

    #[test]
    fn frame_bounds_grow_by_extents_or_border() {
        let client = rect(11, 31, 482, 294);
        assert_eq!(
            frame_bounds(client, Some([1, 1, 20, 1]), 0),
            rect(10, 11, 484, 315)
        );
        assert_eq!(frame_bounds(client, None, 2), rect(9, 29, 486, 298));
        assert_eq!(frame_bounds(client, None, 0), client);
        // A window partly off the left edge keeps negative coordinates.
        assert_eq!(
            frame_bounds(rect(-5, 0, 10, 10), Some([4, 4, 4, 4]), 0),
            rect(-9, -4, 18, 18)
        );
    }

    #[test]
    fn topmost_at_prefers_higher_windows_and_skips_hidden() {
        let mut minimized = window(1, rect(0, 0, 300, 300));
        minimized.minimized = true;
        minimized.hidden = true;
        let mut unmapped = window(2, rect(0, 0, 300, 300));
        unmapped.hidden = true;
        let top = window(3, rect(100, 100, 100, 100));
        let below = window(4, rect(50, 50, 200, 200));
        let bottom = window(5, rect(0, 0, 1000, 1000));
        let list = vec![minimized, unmapped, top, below, bottom];

        let at = |x, y| topmost_at(&list, Point { x, y }).map(|w| w.id);
        assert_eq!(at(150, 150), Some(3), "overlap of 3, 4 and 5");
        assert_eq!(at(100, 100), Some(3), "top-left corner is inside");
        assert_eq!(at(200, 200), Some(4), "right/bottom edge is outside 3");
        assert_eq!(at(60, 60), Some(4));
        assert_eq!(at(10, 10), Some(5), "minimized and unmapped are skipped");
        assert_eq!(at(1000, 5), None);
        assert_eq!(topmost_at(&[], Point { x: 0, y: 0 }), None);
    }

    #[test]
    fn topmost_at_passes_over_windows_that_let_clicks_through() {
        let mut overlay = window(1, rect(0, 0, 1000, 1000));
        overlay.input = Some(Vec::new());
        let mut icon = window(2, rect(100, 100, 64, 64));
        icon.input = Some(vec![rect(100, 100, 10, 10)]);
        let below = window(3, rect(0, 0, 500, 500));
        let list = vec![overlay, icon, below];
        let at = |x, y| topmost_at(&list, Point { x, y }).map(|w| w.id);
        assert_eq!(at(150, 150), Some(3));
        assert_eq!(at(105, 105), Some(2));
        assert_eq!(at(700, 700), None);
    }

    #[test]
    fn shapes_are_placed_and_left_out_when_whole() {
        let g = GetGeometryReply {
            depth: 24,
            sequence: 0,
            length: 0,
            root: 1,
            x: 100,
            y: 50,
            width: 200,
            height: 100,
            border_width: 1,
        };
        let r = |x, y, width, height| Rectangle {
            x,
            y,
            width,
            height,
        };
        let whole = vec![r(-1, -1, 202, 102)];
        assert_eq!(
            shapes_of(&g, false, Some(whole.clone()), Some(whole.clone())),
            Shapes::default()
        );
        assert_eq!(shapes_of(&g, false, None, None), Shapes::default());
        // A cursor shown, no input taken: placed on the root.
        let cursor = shapes_of(&g, false, Some(vec![r(10, 10, 5, 5)]), Some(Vec::new()));
        assert_eq!(cursor.visible, Some(vec![rect(111, 61, 5, 5)]));
        assert_eq!(cursor.input, Some(Vec::new()));
        // Input is taken only where the window is also shown.
        let cut = shapes_of(&g, false, Some(vec![r(0, 0, 50, 50)]), None);
        assert_eq!(cut.input, Some(vec![rect(101, 51, 50, 50)]));
        // An input-only window shows nothing.
        let input_only = shapes_of(&g, true, None, None);
        assert_eq!(
            (input_only.visible, input_only.input),
            (Some(Vec::new()), None)
        );
    }

    #[test]
    fn stacking_follows_the_root_children() {
        // Root children bottom first: frame 10 (client 1), popup 20,
        // frame 30 (client 3), popup 40. The window manager lists the
        // clients in another order, and client 5 whose frame vanished.
        let children = [10, 20, 30, 40];
        let clients = [3, 1, 5];
        let top_of = HashMap::from([(1, 10), (3, 30), (5, 99)]);
        assert_eq!(
            stacking_bottom_up(&children, &clients, &top_of),
            vec![
                Stacked::Client(5),
                Stacked::Client(1),
                Stacked::Unmanaged(20),
                Stacked::Client(3),
                Stacked::Unmanaged(40),
            ]
        );
        // Without a reparenting window manager the clients are the
        // children themselves.
        let top_of = HashMap::from([(10, 10), (30, 30)]);
        assert_eq!(
            stacking_bottom_up(&[10, 20, 30], &[10, 30], &top_of),
            vec![
                Stacked::Client(10),
                Stacked::Unmanaged(20),
                Stacked::Client(30)
            ]
        );
    }

    #[test]
    fn attribution_falls_back_to_the_owner() {
        let owner = Facts {
            id: 1,
            pid: Some(42),
            class: Some("Owner".into()),
            ..Facts::default()
        };
        let mut popup = Facts {
            id: 2,
            transient_for: Some(1),
            ..Facts::default()
        };
        assert!(!popup.attributed());
        popup.inherit(&owner);
        assert_eq!(
            (popup.pid, popup.class.as_deref()),
            (Some(42), Some("Owner"))
        );
        // What the window says about itself is kept.
        let mut named = Facts {
            id: 3,
            class: Some("Own".into()),
            ..Facts::default()
        };
        named.inherit(&owner);
        assert_eq!((named.pid, named.class.as_deref()), (Some(42), Some("Own")));
    }

    #[test]
    fn wm_class_and_text_decoding() {
        assert_eq!(
            parse_wm_class(b"xterm\0DeskTest\0"),
            (Some("xterm".into()), Some("DeskTest".into()))
        );
        assert_eq!(parse_wm_class(b"\0Class\0"), (None, Some("Class".into())));
        assert_eq!(parse_wm_class(b""), (None, None));

        let reply = |type_: u32, value: &[u8]| GetPropertyReply {
            format: 8,
            sequence: 0,
            length: 0,
            type_,
            bytes_after: 0,
            value_len: value.len() as u32,
            value: value.to_vec(),
        };
        let utf8 = 300;
        assert_eq!(
            text(&reply(utf8, "héllo ✓\0".as_bytes())).as_deref(),
            Some("héllo ✓")
        );
        assert_eq!(
            text(&reply(AtomEnum::STRING.into(), b"caf\xe9")).as_deref(),
            Some("café")
        );
        assert_eq!(text(&reply(AtomEnum::NONE.into(), b"")), None);
    }

    #[test]
    fn hostnames_compare_short_names() {
        assert!(same_host("box", "box.example.org"));
        assert!(same_host("BOX.example.org", "box"));
        assert!(!same_host("box", "other"));
    }

    #[test]
    fn validate_names_the_unknown_id() {
        let facts = vec![
            Facts {
                id: 7,
                ..Facts::default()
            },
            Facts {
                id: 9,
                ..Facts::default()
            },
        ];
        assert_eq!(validate(&[9, 7, 9], &facts).unwrap(), HashSet::from([7, 9]));
        let err = validate(&[7, 12345], &facts).unwrap_err();
        assert_eq!(err.code, Code::NoSuchWindow);
        assert!(err.message.contains("12345"), "{}", err.message);
        assert!(
            err.hint.contains("call windows") || err.hint.contains("Call windows"),
            "{}",
            err.hint
        );
    }

    #[test]
    fn facts_visibility_and_local_pid() {
        let f = Facts {
            id: 1,
            pid: Some(42),
            machine: Some("elsewhere".into()),
            viewable: true,
            desktop: Some(ALL_DESKTOPS),
            ..Facts::default()
        };
        assert!(f.visible());
        assert!(!f.clues(Some("here")).pid_is_local);
        assert!(f.clues(Some("elsewhere.lan")).pid_is_local);
        assert_eq!(f.window(App::default(), Some(1)).desktop, None);
        assert!(f.window(App::default(), Some(1)).focused);
        let iconic = Facts {
            iconic: true,
            viewable: false,
            ..f.clone()
        };
        assert!(!iconic.visible());
        assert!(iconic.window(App::default(), None).minimized);
        // Claims are not enough: a mapped window is on screen.
        let claims = Facts {
            net_hidden: true,
            iconic: true,
            ..f.clone()
        };
        assert!(claims.visible());
        let w = claims.window(App::default(), None);
        assert!(!w.minimized && !w.hidden);
    }
}

/// Helpers for tests that need a real X server (DISPLAY), shared with the
/// clipboard tests.
#[cfg(test)]
pub(crate) mod xtest {
    use std::process::{Child, Command, Stdio};
    use std::sync::{Mutex, MutexGuard};
    use std::time::{Duration, Instant};

    /// True when DISPLAY is set. Without it the test is skipped, except
    /// under CI, where a missing display is a failure.
    pub(crate) fn display_available(test: &str) -> bool {
        if std::env::var_os("DISPLAY").is_some_and(|d| !d.is_empty()) {
            return true;
        }
        if std::env::var_os("CI").is_some_and(|v| !v.is_empty()) {
            panic!(
                "{test}: DISPLAY is not set but CI is; start Xvfb and openbox and export DISPLAY"
            );
        }
        eprintln!(
            "skipping {test}: DISPLAY is not set (start Xvfb and a window manager to run it)"
        );
        false
    }

    static X_LOCK: Mutex<()> = Mutex::new(());

    /// Serializes tests that change what is on screen or in the clipboard.
    pub(crate) fn lock() -> MutexGuard<'static, ()> {
        X_LOCK.lock().unwrap_or_else(|poison| poison.into_inner())
    }

    /// A child process killed and reaped when dropped.
    pub(crate) struct Reaped(pub Child);

    impl Drop for Reaped {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }

    pub(crate) fn spawn(program: &str, args: &[&str]) -> Reaped {
        let child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {program}: {e}"));
        Reaped(child)
    }

    /// Runs a command to completion and returns its stdout.
    pub(crate) fn output(program: &str, args: &[&str]) -> String {
        let out = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("running {program}: {e}"));
        assert!(
            out.status.success(),
            "{program} {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("utf-8 output")
    }

    /// Retries `f` every 20 ms until it returns Some, for up to `secs`.
    pub(crate) fn eventually<T>(secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            if let Some(value) = f() {
                return value;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

#[cfg(test)]
mod x_tests {
    use super::xtest::{display_available, eventually, lock, output, spawn, Reaped};
    use super::*;
    use x11rb::protocol::xproto::{CreateWindowAux, PropMode, WindowClass};
    use x11rb::rust_connection::RustConnection;
    use x11rb::wrapper::ConnectionExt as _;

    struct Session {
        conn: RustConnection,
        root: u32,
        wm: Wm,
    }

    fn session() -> Session {
        let (conn, screen) = x11rb::connect(None).expect("connecting to DISPLAY");
        let root = conn.setup().roots[screen].root;
        let wm = Wm::new(&conn).expect("Wm::new");
        Session { conn, root, wm }
    }

    fn unique_title(tag: &str) -> String {
        static COUNTER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("{tag}-{}-{n}", std::process::id())
    }

    /// Starts an xterm and waits until the window manager shows it.
    fn xterm(s: &Session, title: &str, geometry: &str) -> (Reaped, Window) {
        let child = spawn(
            "xterm",
            &[
                "-class",
                "DeskTest",
                "-T",
                title,
                "-geometry",
                geometry,
                "-e",
                "sleep",
                "60",
            ],
        );
        let window = eventually(10, &format!("xterm {title} to appear"), || {
            let list = s.wm.list(&s.conn, s.root, false).expect("list");
            list.windows.into_iter().find(|w| w.title == title)
        });
        (child, window)
    }

    fn find(s: &Session, id: u32, include_hidden: bool) -> Option<Window> {
        s.wm.list(&s.conn, s.root, include_hidden)
            .expect("list")
            .windows
            .into_iter()
            .find(|w| w.id == id)
    }

    /// `xwininfo` geometry of the client, or with `frame` of the window
    /// manager's frame around it (the ancestor that is a child of the root).
    fn xwininfo_rect(id: u32, frame: bool) -> Rect {
        let mut id = id;
        if frame {
            loop {
                let out = output("xwininfo", &["-children", "-id", &id.to_string()]);
                let id_after = |label: &str| -> u32 {
                    let line = out.lines().find(|l| l.trim().starts_with(label)).unwrap();
                    let hex = line
                        .split(':')
                        .nth(1)
                        .unwrap()
                        .split_whitespace()
                        .next()
                        .unwrap();
                    u32::from_str_radix(hex.trim_start_matches("0x"), 16).unwrap()
                };
                let parent = id_after("Parent window id");
                if parent == id_after("Root window id") {
                    break;
                }
                id = parent;
            }
        }
        let out = output("xwininfo", &["-id", &id.to_string()]);
        let field = |name: &str| -> i64 {
            out.lines()
                .find_map(|l| l.trim().strip_prefix(name))
                .unwrap_or_else(|| panic!("xwininfo has no {name}: {out}"))
                .trim()
                .parse()
                .unwrap()
        };
        // xwininfo's upper-left is the outer corner, outside the border:
        // the client area starts inside it, a frame's bounds include it.
        let border = field("Border width:");
        let (inset, grow) = if frame { (0, 2 * border) } else { (border, 0) };
        Rect {
            x: (field("Absolute upper-left X:") + inset) as i32,
            y: (field("Absolute upper-left Y:") + inset) as i32,
            width: (field("Width:") + grow) as u32,
            height: (field("Height:") + grow) as u32,
        }
    }

    fn frame_extents(id: u32) -> Option<[u32; 4]> {
        let out = output("xprop", &["-id", &id.to_string(), "_NET_FRAME_EXTENTS"]);
        let (_, values) = out.split_once('=')?;
        let v: Vec<u32> = values
            .split(',')
            .map(|s| s.trim().parse().unwrap())
            .collect();
        Some([v[0], v[1], v[2], v[3]])
    }

    fn active_window() -> Option<u32> {
        let out = output("xprop", &["-root", "_NET_ACTIVE_WINDOW"]);
        let hex = out.split_once("# ")?.1.trim().split(',').next()?.trim();
        u32::from_str_radix(hex.trim_start_matches("0x"), 16).ok()
    }

    #[test]
    fn xterm_identity_and_geometry() {
        if !display_available("xterm_identity_and_geometry") {
            return;
        }
        let _x = lock();
        let s = session();
        let title = unique_title("hello");
        let (child, w) = xterm(&s, &title, "60x10+40+50");

        assert_eq!(w.app.pid, Some(child.0.id()));
        assert_eq!(w.app.class.as_deref(), Some("DeskTest"));
        assert_eq!(w.app.instance.as_deref(), Some("xterm"));
        let xterm_exe =
            std::fs::canonicalize(output("sh", &["-c", "command -v xterm"]).trim()).unwrap();
        assert_eq!(w.app.exe.as_deref(), xterm_exe.to_str());
        if std::path::Path::new("/usr/share/applications/debian-xterm.desktop").exists() {
            assert_eq!(w.app.desktop_id.as_deref(), Some("debian-xterm"));
            assert_eq!(w.app.name, "XTerm");
        }
        assert!(!w.minimized && !w.hidden);

        // Client area and frame agree with xwininfo and xprop.
        assert_eq!(w.client, xwininfo_rect(w.id, false));
        assert_eq!(w.bounds, frame_bounds(w.client, frame_extents(w.id), 0));
        if frame_extents(w.id).is_some() {
            assert_eq!(w.bounds, xwininfo_rect(w.id, true));
        }

        // The focus agrees with the root's _NET_ACTIVE_WINDOW.
        output("xdotool", &["windowactivate", "--sync", &w.id.to_string()]);
        let list = eventually(5, "xterm to be active", || {
            let list = s.wm.list(&s.conn, s.root, false).unwrap();
            (list.focused == Some(w.id)).then_some(list)
        });
        assert_eq!(active_window(), Some(w.id));
        assert_eq!(
            list.frontmost.as_ref().map(|a| a.pid),
            Some(Some(child.0.id()))
        );
        assert!(list.windows.iter().find(|x| x.id == w.id).unwrap().focused);

        // window_at: inside the client, and on the frame's title bar.
        let centre = Point {
            x: w.client.x + w.client.width as i32 / 2,
            y: w.client.y + w.client.height as i32 / 2,
        };
        let hit = s.wm.window_at(&s.conn, s.root, centre).unwrap();
        assert_eq!(hit.map(|h| h.id), Some(w.id));
        let on_frame = Point {
            x: w.bounds.x + 1,
            y: w.bounds.y + 1,
        };
        let hit = s.wm.window_at(&s.conn, s.root, on_frame).unwrap();
        assert_eq!(hit.map(|h| h.id), Some(w.id));
    }

    #[test]
    fn window_at_follows_stacking() {
        if !display_available("window_at_follows_stacking") {
            return;
        }
        let _x = lock();
        let s = session();
        let (_a, a) = xterm(&s, &unique_title("stack-a"), "60x15+100+100");
        let (_b, b) = xterm(&s, &unique_title("stack-b"), "60x15+200+150");
        let a = eventually(5, "a at its position", || {
            find(&s, a.id, false).filter(|w| w.bounds.intersect(&b.bounds).is_some())
        });
        let overlap = a.bounds.intersect(&b.bounds).expect("the xterms overlap");
        let p = Point {
            x: overlap.x + overlap.width as i32 / 2,
            y: overlap.y + overlap.height as i32 / 2,
        };
        for top in [a.id, b.id, a.id] {
            output("xdotool", &["windowactivate", "--sync", &top.to_string()]);
            eventually(5, "raised window to be hit", || {
                let hit = s.wm.window_at(&s.conn, s.root, p).unwrap()?;
                (hit.id == top).then_some(())
            });
            let list = s.wm.list(&s.conn, s.root, false).unwrap();
            let pos = |id| list.windows.iter().position(|w| w.id == id).unwrap();
            let other = if top == a.id { b.id } else { a.id };
            assert!(pos(top) < pos(other), "list is top first");
        }
    }

    #[test]
    fn hide_and_restore_keep_frames_and_order() {
        if !display_available("hide_and_restore_keep_frames_and_order") {
            return;
        }
        let _x = lock();
        let s = session();
        let (_a, a) = xterm(&s, &unique_title("hide-a"), "50x12+300+200");
        let (_b, b) = xterm(&s, &unique_title("hide-b"), "50x12+360+260");
        output("xdotool", &["windowactivate", "--sync", &b.id.to_string()]);
        output("xdotool", &["windowactivate", "--sync", &a.id.to_string()]);
        let (a, b) = eventually(5, "a above b", || {
            let list = s.wm.list(&s.conn, s.root, false).unwrap();
            let pos = |id| list.windows.iter().position(|w| w.id == id);
            match (pos(a.id), pos(b.id)) {
                (Some(pa), Some(pb)) if pa < pb => {
                    Some((list.windows[pa].clone(), list.windows[pb].clone()))
                }
                _ => None,
            }
        });

        // Unknown ids fail before anything changes.
        let err =
            s.wm.hide(&s.conn, s.root, &[a.id, 0x7fff_fff0])
                .unwrap_err();
        assert_eq!(err.code, Code::NoSuchWindow);
        assert!(err.message.contains(&0x7fff_fff0u32.to_string()));
        assert!(
            find(&s, a.id, false).is_some(),
            "a untouched after the failed call"
        );

        let mut hidden = s.wm.hide(&s.conn, s.root, &[a.id, b.id]).unwrap();
        hidden.sort();
        let mut want = vec![a.id, b.id];
        want.sort();
        assert_eq!(hidden, want);
        assert!(find(&s, a.id, false).is_none() && find(&s, b.id, false).is_none());
        let a_hidden = find(&s, a.id, true).expect("listed with include_hidden");
        assert!(a_hidden.hidden);
        if frame_extents(a.id).is_some() {
            assert!(a_hidden.minimized, "iconified under a window manager");
        }
        assert_eq!(
            s.wm.hide(&s.conn, s.root, &[a.id]).unwrap(),
            Vec::<u32>::new()
        );
        let p = Point {
            x: a.client.x + 5,
            y: a.client.y + 5,
        };
        assert_ne!(
            s.wm.window_at(&s.conn, s.root, p).unwrap().map(|w| w.id),
            Some(a.id)
        );

        let mut restored = s.wm.restore(&s.conn, s.root, &[a.id, b.id]).unwrap();
        restored.sort();
        assert_eq!(restored, want);
        let list = s.wm.list(&s.conn, s.root, false).unwrap();
        let get = |id| list.windows.iter().find(|w| w.id == id).cloned().unwrap();
        let (a2, b2) = (get(a.id), get(b.id));
        assert_eq!((a2.bounds, a2.client), (a.bounds, a.client));
        assert_eq!((b2.bounds, b2.client), (b.bounds, b.client));
        assert!(!a2.minimized && !b2.minimized);
        let pos = |id| list.windows.iter().position(|w| w.id == id).unwrap();
        assert!(pos(a.id) < pos(b.id), "a is still above b");
        assert_eq!(
            s.wm.restore(&s.conn, s.root, &[a.id]).unwrap(),
            Vec::<u32>::new()
        );
    }

    /// A plain window of this process, mapped; managed by the window
    /// manager unless `override_redirect`.
    fn own_window(
        conn: &RustConnection,
        root: u32,
        area: Rect,
        override_redirect: bool,
        title: &str,
    ) -> u32 {
        let id = conn.generate_id().unwrap();
        conn.create_window(
            0,
            id,
            root,
            area.x as i16,
            area.y as i16,
            area.width as u16,
            area.height as u16,
            0,
            WindowClass::INPUT_OUTPUT,
            0,
            &CreateWindowAux::new().override_redirect(u32::from(override_redirect)),
        )
        .unwrap();
        conn.change_property8(
            PropMode::REPLACE,
            id,
            AtomEnum::WM_NAME,
            AtomEnum::STRING,
            title.as_bytes(),
        )
        .unwrap();
        conn.map_window(id).unwrap();
        conn.flush().unwrap();
        id
    }

    #[test]
    fn override_redirect_windows_are_listed_on_top_with_their_owner() {
        if !display_available("override_redirect_windows_are_listed_on_top_with_their_owner") {
            return;
        }
        let _x = lock();
        let s = session();
        let (_term, term) = xterm(&s, &unique_title("or-owner"), "60x15+100+100");
        let (conn, screen) = x11rb::connect(None).unwrap();
        let root = conn.setup().roots[screen].root;
        let area = Rect {
            x: term.client.x + 20,
            y: term.client.y + 20,
            width: 80,
            height: 40,
        };
        let popup = own_window(&conn, root, area, true, "popup");
        let w = eventually(5, "the override-redirect window", || find(&s, popup, false));
        assert!(w.override_redirect && !w.hidden && !w.minimized);
        assert_eq!((w.bounds, w.client), (area, area));
        // Attributed by X-Resource to the process that made it.
        if s.wm.xres {
            assert_eq!(w.app.pid, Some(std::process::id()));
        }
        let list = s.wm.list(&s.conn, s.root, false).unwrap();
        let pos = |id| list.windows.iter().position(|w| w.id == id).unwrap();
        assert!(pos(popup) < pos(term.id), "the popup is above the xterm");
        let inside = Point {
            x: area.x + 5,
            y: area.y + 5,
        };
        let hit = s.wm.window_at(&s.conn, s.root, inside).unwrap();
        assert_eq!(hit.map(|h| h.id), Some(popup), "window_at sees the popup");
        // hide leaves it alone: no window manager can minimize it.
        assert_eq!(
            s.wm.hide(&s.conn, s.root, &[popup]).unwrap(),
            Vec::<u32>::new()
        );
        // Unmapped, it is gone from the list, even with include_hidden.
        conn.unmap_window(popup).unwrap();
        conn.flush().unwrap();
        eventually(5, "the unmapped popup to leave the list", || {
            find(&s, popup, true).is_none().then_some(())
        });
    }

    fn skip_taskbar(conn: &RustConnection) -> u32 {
        conn.intern_atom(false, b"_NET_WM_STATE_SKIP_TASKBAR")
            .unwrap()
            .reply()
            .unwrap()
            .atom
    }

    #[test]
    fn a_mapped_window_claiming_hidden_is_visible() {
        if !display_available("a_mapped_window_claiming_hidden_is_visible") {
            return;
        }
        let _x = lock();
        let s = session();
        let (_term, term) = xterm(&s, &unique_title("claims-hidden"), "40x10+500+300");
        // What a client may write on any window; only the window manager's
        // own changes follow ICCCM and EWMH client messages.
        let state = [s.wm.atoms._NET_WM_STATE_HIDDEN, skip_taskbar(&s.conn)];
        s.conn
            .change_property32(
                PropMode::REPLACE,
                term.id,
                s.wm.atoms._NET_WM_STATE,
                AtomEnum::ATOM,
                &state,
            )
            .unwrap();
        s.conn.flush().unwrap();
        eventually(5, "the claim to be set", || {
            let facts = s.wm.describe(&s.conn, s.root, &[term.id]).unwrap();
            facts.first().filter(|f| f.net_hidden).map(|_| ())
        });
        eventually(5, "the window manager to leave it mapped", || {
            let facts = s.wm.describe(&s.conn, s.root, &[term.id]).unwrap();
            facts.first().filter(|f| f.viewable).map(|_| ())
        });
        let w = find(&s, term.id, false).expect("listed without include_hidden");
        assert!(!w.minimized && !w.hidden, "{w:?}");
        let centre = Point {
            x: w.client.x + 10,
            y: w.client.y + 10,
        };
        let hit = s.wm.window_at(&s.conn, s.root, centre).unwrap();
        assert_eq!(hit.map(|h| h.id), Some(term.id));
    }

    #[test]
    fn pid_from_x_resource_and_vanished_windows() {
        if !display_available("pid_from_x_resource_and_vanished_windows") {
            return;
        }
        let _x = lock();
        let s = session();
        if !s.wm.xres {
            eprintln!("skipping the X-Resource part: the server has no XRes 1.2");
            return;
        }
        // A window with WM_CLASS but no _NET_WM_PID, made by this process.
        let (conn, screen) = x11rb::connect(None).unwrap();
        let root = conn.setup().roots[screen].root;
        let id = conn.generate_id().unwrap();
        conn.create_window(
            0,
            id,
            root,
            20,
            20,
            120,
            80,
            0,
            WindowClass::INPUT_OUTPUT,
            0,
            &CreateWindowAux::new(),
        )
        .unwrap();
        conn.change_property8(
            PropMode::REPLACE,
            id,
            AtomEnum::WM_CLASS,
            AtomEnum::STRING,
            b"nopid\0NoPid\0",
        )
        .unwrap();
        let title = unique_title("nopid");
        conn.change_property8(
            PropMode::REPLACE,
            id,
            AtomEnum::WM_NAME,
            AtomEnum::STRING,
            title.as_bytes(),
        )
        .unwrap();
        conn.map_window(id).unwrap();
        conn.flush().unwrap();

        let w = eventually(5, "the pid-less window", || find(&s, id, false));
        assert_eq!(w.title, title);
        assert_eq!(w.app.pid, Some(std::process::id()));
        let own_exe = std::fs::read_link("/proc/self/exe").unwrap();
        assert_eq!(w.app.exe.as_deref(), own_exe.to_str());
        assert_eq!(w.app.class.as_deref(), Some("NoPid"));
        assert_eq!(w.app.name, "NoPid");

        // A destroyed window among the ids is skipped, not an error.
        conn.destroy_window(id).unwrap();
        conn.flush().unwrap();
        drop(conn);
        let any = s.wm.list(&s.conn, s.root, true).unwrap().windows;
        let mut ids: Vec<u32> = any.iter().map(|w| w.id).collect();
        ids.insert(0, id);
        let facts = eventually(5, "the destroyed window to be skipped", || {
            let facts = s.wm.describe(&s.conn, s.root, &ids).unwrap();
            facts.iter().all(|f| f.id != id).then_some(facts)
        });
        assert!(
            facts.len() + 1 >= ids.len() - 1,
            "only the vanished window is dropped"
        );
    }
}
