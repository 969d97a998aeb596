//! KWin's windows (backend "kde-kwin"): org_kde_plasma_window_management,
//! which KWin offers only to a client its desktop entry authorizes (see
//! [`AUTHORIZATION`]).
//!
//! Unlike wlr-foreign-toplevel it tells each window's pid, frame geometry
//! and the stacking order (`stacking_order_uuid_changed`, bottom first),
//! so `windows` lists real bounds top first and `window_at` is answered
//! from them. Where a piece is unknown (no stacking order yet, a shown
//! window without geometry) `window_at` refuses instead of guessing.

use wayland_client::{event_created_child, Connection, Dispatch, Proxy, QueueHandle};
use wayland_protocols_plasma::plasma_window_management::client::{
    org_kde_plasma_window::{self, OrgKdePlasmaWindow},
    org_kde_plasma_window_management::{self, OrgKdePlasmaWindowManagement},
};

use super::state::{State, Wl};
use crate::error::{Code, Error, Result};
use crate::types::{Point, Rect, Window};

/// The handshake's backend name on KWin.
pub const BACKEND: &str = "kde-kwin";

/// Whether the compositor is KWin: it offers KDE's globals (plasma window
/// management when deskhand is authorized, plasma shell to every client).
/// Not XDG_CURRENT_DESKTOP: the supervisor trusts a kde-kwin window list's
/// stacking order, which only plasma window management gives.
pub fn is_kwin(wl: &Wl) -> bool {
    wl.globals.plasma.is_some() || wl.globals.kde_shell
}

/// The desktop entry keys that authorize a client on KWin, for messages.
pub const AUTHORIZATION: &str = "X-KDE-Wayland-Interfaces=org_kde_kwin_fake_input,org_kde_kwin_keystate,org_kde_plasma_window_management,zkde_screencast_unstable_v1 and X-KDE-DBUS-Restricted-Interfaces=org.kde.KWin.ScreenShot2";

/// What `missing` says on KWin when deskhand is not authorized.
pub const NOT_AUTHORIZED_SHOTS: &str = "org.kde.KWin.ScreenShot2 (screenshots): KWin grants it only to a program a desktop entry authorizes; add ~/.local/share/applications/deskhand-helper.desktop with Exec=<the helper's full path> and X-KDE-DBUS-Restricted-Interfaces=org.kde.KWin.ScreenShot2";
pub const NOT_AUTHORIZED_WINDOWS: &str = "org_kde_plasma_window_management (window list, hiding, masking, window_at): KWin offers it only to a program a desktop entry authorizes; add ~/.local/share/applications/deskhand-helper.desktop with Exec=<the helper's full path> and X-KDE-Wayland-Interfaces=org_kde_kwin_fake_input,org_kde_kwin_keystate,org_kde_plasma_window_management,zkde_screencast_unstable_v1";

/// The oldest plasma window management deskhand binds: 13 announces
/// windows with their uuid, which the stacking order names.
pub const MIN_VERSION: u32 = 13;
pub const MAX_VERSION: u32 = 16;

// The state flags of org_kde_plasma_window_management (its `state` enum).
const ACTIVE: u32 = 0x1;
const MINIMIZED: u32 = 0x2;

/// One window as KWin describes it.
#[derive(Clone, Debug)]
pub struct KdeWindow {
    /// deskhand's id for it: a counter, stable for the window's life.
    pub id: u32,
    pub uuid: String,
    pub handle: OrgKdePlasmaWindow,
    pub title: String,
    pub app_id: String,
    pub pid: Option<u32>,
    /// The frame geometry, in the layout's logical pixels.
    pub geometry: Option<Rect>,
    pub flags: u32,
    /// KWin has sent all it knows of the window (`initial_state`).
    pub ready: bool,
    pub unmapped: bool,
}

/// What KWin told of its windows.
#[derive(Debug)]
pub struct KdeState {
    pub windows: Vec<KdeWindow>,
    next_id: u32,
    /// Uuids bottom first; None until KWin sent an order.
    pub stacking: Option<Vec<String>>,
}

impl Default for KdeState {
    fn default() -> KdeState {
        KdeState {
            windows: Vec::new(),
            next_id: 1,
            stacking: None,
        }
    }
}

impl KdeState {
    /// The live windows, top of the stacking order first (windows it does
    /// not name yet on top, the newest first: they were just mapped).
    pub fn stacked(&self) -> Vec<&KdeWindow> {
        let live = self.windows.iter().filter(|w| !w.unmapped);
        let order = self.stacking.as_deref().unwrap_or(&[]);
        let rank = |w: &KdeWindow| {
            order
                .iter()
                .position(|u| *u == w.uuid)
                .map_or(usize::MAX - w.id as usize, |i| i)
        };
        let mut out: Vec<&KdeWindow> = live.collect();
        out.sort_by_key(|w| std::cmp::Reverse(rank(w)));
        out
    }
}

/// Binds plasma window management when KWin offers it to this client.
pub fn bind(
    globals: &wayland_client::globals::GlobalList,
    qh: &QueueHandle<State>,
) -> Option<OrgKdePlasmaWindowManagement> {
    globals.bind(qh, MIN_VERSION..=MAX_VERSION, ()).ok()
}

/// The windows, top first, as the protocol's Windows.
pub fn window_list(wl: &Wl, include_hidden: bool) -> Vec<Window> {
    wl.state
        .kde
        .stacked()
        .into_iter()
        .filter(|w| w.ready)
        .map(|w| to_window(w, &wl.state))
        .filter(|w| include_hidden || !w.hidden)
        .collect()
}

fn to_window(w: &KdeWindow, state: &State) -> Window {
    let minimized = w.flags & MINIMIZED != 0;
    // A window without geometry may be anywhere: its bounds are the whole
    // layout, so a mask covers too much rather than too little.
    let bounds = w.geometry.unwrap_or_else(|| layout(state));
    Window {
        id: w.id,
        title: w.title.clone(),
        app: super::identity(&w.app_id, w.pid),
        bounds,
        client: bounds,
        minimized,
        hidden: minimized,
        focused: w.flags & ACTIVE != 0,
        desktop: None,
        override_redirect: false,
        shape: None,
        input: None,
    }
}

fn layout(state: &State) -> Rect {
    state
        .outputs
        .values()
        .map(|(_, o)| {
            let s = o.scale.max(1);
            Rect {
                x: o.x,
                y: o.y,
                width: (o.mode_width / s).max(0) as u32,
                height: (o.mode_height / s).max(0) as u32,
            }
        })
        .reduce(super::union)
        .unwrap_or_default()
}

/// The topmost shown window whose frame holds `point`, or None; an error
/// when KWin has not told enough to be sure.
pub fn window_at(wl: &Wl, point: Point) -> Result<Option<Window>> {
    let k = &wl.state.kde;
    if k.stacking.is_none() {
        return Err(unknown("KWin has not sent its stacking order"));
    }
    for w in k.stacked() {
        if w.flags & MINIMIZED != 0 {
            continue;
        }
        if !w.ready {
            return Err(unknown(&format!(
                "KWin has not finished describing window {:?}",
                w.title
            )));
        }
        let Some(g) = w.geometry else {
            return Err(unknown(&format!(
                "KWin gave no geometry for window {:?}",
                w.title
            )));
        };
        if contains(&g, point) {
            return Ok(Some(to_window(w, &wl.state)));
        }
    }
    Ok(None)
}

fn contains(r: &Rect, p: Point) -> bool {
    p.x >= r.x
        && p.y >= r.y
        && (p.x as i64) < r.x as i64 + r.width as i64
        && (p.y as i64) < r.y as i64 + r.height as i64
}

fn unknown(why: &str) -> Error {
    Error::new(
        Code::Unsupported,
        format!("{why}, so deskhand cannot say whose window is under the point"),
        "Try again in a moment; refuse the action rather than guess if it persists.",
    )
}

/// Minimises (or unminimises and activates) window `id`; false when KWin
/// lists no such window.
pub fn set_minimized(wl: &Wl, id: u32, minimized: bool) -> bool {
    let Some(w) = wl
        .state
        .kde
        .windows
        .iter()
        .find(|w| w.id == id && !w.unmapped)
    else {
        return false;
    };
    if minimized {
        w.handle.set_state(MINIMIZED, MINIMIZED);
    } else {
        w.handle.set_state(MINIMIZED | ACTIVE, ACTIVE);
    }
    true
}

impl Dispatch<OrgKdePlasmaWindowManagement, ()> for State {
    fn event(
        state: &mut Self,
        manager: &OrgKdePlasmaWindowManagement,
        event: org_kde_plasma_window_management::Event,
        _: &(),
        _: &Connection,
        qh: &QueueHandle<Self>,
    ) {
        use org_kde_plasma_window_management::Event;
        state.bump();
        match event {
            Event::WindowWithUuid { uuid, .. } => {
                let k = &mut state.kde;
                if k.windows.iter().any(|w| w.uuid == uuid && !w.unmapped) {
                    return;
                }
                let handle = manager.get_window_by_uuid(uuid.clone(), qh, ());
                let id = k.next_id;
                k.next_id += 1;
                k.windows.push(KdeWindow {
                    id,
                    uuid,
                    handle,
                    title: String::new(),
                    app_id: String::new(),
                    pid: None,
                    geometry: None,
                    flags: 0,
                    ready: false,
                    unmapped: false,
                });
            }
            Event::StackingOrderUuidChanged { uuids } => {
                state.kde.stacking = Some(parse_stacking(&uuids));
            }
            _ => {}
        }
    }

    event_created_child!(State, OrgKdePlasmaWindowManagement, [
        org_kde_plasma_window_management::EVT_WINDOW_OPCODE => (OrgKdePlasmaWindow, ()),
    ]);
}

/// The uuids of a `stacking_order_uuid_changed`, bottom first.
pub fn parse_stacking(uuids: &str) -> Vec<String> {
    uuids
        .split(';')
        .filter(|u| !u.is_empty())
        .map(str::to_owned)
        .collect()
}

impl Dispatch<OrgKdePlasmaWindow, ()> for State {
    fn event(
        state: &mut Self,
        handle: &OrgKdePlasmaWindow,
        event: org_kde_plasma_window::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use org_kde_plasma_window::Event;
        // Any change of a window may change the list (fail closed).
        state.bump();
        let Some(w) = state.kde.windows.iter_mut().find(|w| &w.handle == handle) else {
            return;
        };
        match event {
            Event::TitleChanged { title } => w.title = title,
            Event::AppIdChanged { app_id } => w.app_id = app_id,
            Event::PidChanged { pid } => w.pid = (pid != 0).then_some(pid),
            Event::StateChanged { flags } => w.flags = flags,
            Event::Geometry {
                x,
                y,
                width,
                height,
            } => {
                w.geometry = Some(Rect {
                    x,
                    y,
                    width,
                    height,
                })
            }
            Event::InitialState => w.ready = true,
            Event::Unmapped => {
                w.unmapped = true;
                if handle.version() >= 4 {
                    handle.destroy();
                }
            }
            _ => {}
        }
        state.kde.windows.retain(|w| !w.unmapped);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stacking_is_read_bottom_first_without_empty_names() {
        assert_eq!(
            parse_stacking("{a};{b};;{c}"),
            vec!["{a}".to_owned(), "{b}".into(), "{c}".into()]
        );
        assert!(parse_stacking("").is_empty());
    }

    #[test]
    fn a_point_on_the_edge_belongs_to_the_rectangle_only_inside() {
        let r = Rect {
            x: 10,
            y: 20,
            width: 5,
            height: 5,
        };
        assert!(contains(&r, Point { x: 10, y: 20 }));
        assert!(contains(&r, Point { x: 14, y: 24 }));
        assert!(!contains(&r, Point { x: 15, y: 24 }));
        assert!(!contains(&r, Point { x: 9, y: 20 }));
    }
}
