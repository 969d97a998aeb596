//! The accessibility methods (`a11y_apps`, `a11y_tree`, `a11y_element`,
//! `a11y_act`; helpers/PROTOCOL.md, "Accessibility") over AT-SPI.
//!
//! The helper talks to the accessibility bus with zbus, as a bus client
//! like any screen reader, and to each app that offers one over the app's
//! own socket (direct.rs: its pitfalls and how each is handled), so that a
//! tree read's calls skip the bus daemon. Every call is bounded by a
//! deadline whichever way it goes. The bus connection is made on first use
//! and made again after it breaks; a session without an accessibility bus
//! answers `available: false` (a11y_apps) or `a11y_unavailable`. A tree
//! read takes what it can from the toolkit's cache (cache.rs) in one call.
//!
//! Acting goes through the API only (Action.DoAction, EditableText,
//! Value, Component.GrabFocus/ScrollTo, Selection): never synthetic
//! input, so the pointer, the stacking order and the focused window stay as
//! they are.

pub mod actions;
pub mod bus;
pub mod cache;
pub mod direct;
pub mod element;
pub mod props;
pub mod tree;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;
use zbus::zvariant::{OwnedObjectPath, Value as ZValue};

use crate::error::{Code, Error, Result};
use crate::protocol;
use crate::server::Params;
use crate::types::{Rect, Window};
use bus::{CallError, Obj, Route};
use tree::{
    Base, Budget, Node, ACCESSIBLE, ACTION, COMPONENT, EDITABLE_TEXT, SELECTION, TEXT, VALUE,
};

/// Deadline of a single call outside a tree read.
const CALL_TIMEOUT: Duration = Duration::from_millis(2000);
const REGISTRY: &str = "org.a11y.atspi.Registry";
const DESKTOP_PATH: &str = "/org/a11y/atspi/accessible/root";

/// Tree budgets: defaults and the largest values accepted.
const DEFAULT_MAX_NODES: i64 = 2000;
const DEFAULT_MAX_DEPTH: i64 = 60;
const DEFAULT_DEADLINE_MS: i64 = 2000;

/// The accessibility bus connection and what is known about its peers.
pub struct A11y {
    conn: Option<Route>,
    /// Unique bus name → pid. Unique names are never reused on a bus.
    pids: HashMap<String, u32>,
    directs: direct::Directs,
    /// Use the toolkits' caches (DESKHAND_A11Y_CACHE=0 turns it off, to
    /// measure or to rule it out).
    use_cache: bool,
    /// Element ref → the top-level window it was read under by the latest
    /// tree reads, so a fresh read of it finds its window offset in one
    /// call instead of a walk up its ancestors.
    window_of: HashMap<String, Obj>,
}

impl Default for A11y {
    fn default() -> A11y {
        A11y {
            conn: None,
            pids: HashMap::new(),
            directs: direct::Directs::default(),
            use_cache: std::env::var("DESKHAND_A11Y_CACHE").map_or(true, |v| v != "0"),
            window_of: HashMap::new(),
        }
    }
}

/// Most element refs remembered in `window_of`; a few big trees' worth.
const MAX_WINDOW_OF: usize = 20_000;

#[derive(Serialize)]
struct WindowRef {
    #[serde(rename = "ref")]
    reference: String,
    title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    window: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    bounds: Option<Rect>,
}

#[derive(Serialize)]
struct AppInfo {
    pid: u32,
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    toolkit: Option<String>,
    bus: String,
    windows: Vec<WindowRef>,
}

#[derive(Serialize)]
struct AppsResult {
    available: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    apps: Vec<AppInfo>,
}

#[derive(Serialize)]
struct TreeResult {
    window: WindowRef,
    nodes: Vec<Node>,
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated: Option<&'static str>,
    elapsed_ms: u64,
    /// "p2p" when the app's own socket served the read, "bus" otherwise.
    via: &'static str,
    /// The `capture` result asked for with the tree, in `capture`'s shape.
    #[serde(skip_serializing_if = "Option::is_none")]
    capture: Option<Value>,
    /// Why that capture failed; the tree is good all the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    capture_error: Option<String>,
}

/// An `a11y_act` operation, checked before anything is called.
#[derive(Debug, Clone, PartialEq)]
enum Op {
    Action(String),
    SetText(String),
    InsertText(String),
    SetValue(f64),
    Focus,
    ScrollTo,
    Select,
}

impl Op {
    fn name(&self) -> &'static str {
        match self {
            Op::Action(_) => "action",
            Op::SetText(_) => "set_text",
            Op::InsertText(_) => "insert_text",
            Op::SetValue(_) => "set_value",
            Op::Focus => "focus",
            Op::ScrollTo => "scroll_to",
            Op::Select => "select",
        }
    }

    fn parse(p: &Params<'_>) -> Result<Op> {
        let op = p
            .str("op")?
            .ok_or_else(|| p.bad("\"op\" is required: action, set_text, insert_text, set_value, focus, scroll_to or select".into()))?;
        let text = |name: &str| -> Result<String> {
            p.str(name)?
                .map(str::to_owned)
                .ok_or_else(|| p.bad(format!("op {op:?} needs \"{name}\" (a string)")))
        };
        Ok(match op {
            "action" => Op::Action(text("action")?),
            "set_text" => Op::SetText(text("text")?),
            "insert_text" => Op::InsertText(text("text")?),
            "set_value" => match p.get("value") {
                Some(Value::Number(n)) => Op::SetValue(
                    n.as_f64()
                        .filter(|v| v.is_finite())
                        .ok_or_else(|| p.bad(format!("\"value\" must be a finite number, got {n}")))?,
                ),
                Some(v) => return Err(p.bad(format!("\"value\" must be a number, got {}", protocol::kind(v)))),
                None => return Err(p.bad("op \"set_value\" needs \"value\" (a number)".into())),
            },
            "focus" => Op::Focus,
            "scroll_to" => Op::ScrollTo,
            "select" => Op::Select,
            other => {
                return Err(p.bad(format!(
                    "unknown op {other:?}; use action, set_text, insert_text, set_value, focus, scroll_to or select"
                )))
            }
        })
    }
}

fn pid_param(p: &Params<'_>) -> Result<u32> {
    Ok(p.required_int("pid", 1, u32::MAX as i64)? as u32)
}

fn ref_param(p: &Params<'_>) -> Result<Obj> {
    let r = p
        .str("ref")?
        .ok_or_else(|| p.bad("\"ref\" is required (a node's ref from a11y_tree)".into()))?;
    Obj::parse_ref(r).ok_or_else(|| {
        p.bad(format!(
            "\"ref\" {r:?} is not a ref a11y_tree gives (a unique bus name followed by an object path)"
        ))
    })
}

fn stale(obj: &Obj, why: impl std::fmt::Display) -> Error {
    Error::new(
        Code::StaleElement,
        format!("element {} no longer exists ({why})", obj.to_ref()),
        "Read the tree again (a11y_tree) and use a ref from it.",
    )
}

/// Maps a failed call on an element to the protocol's error.
fn element_error(obj: &Obj, what: &str, e: CallError) -> Error {
    if e.is_gone() {
        return stale(obj, e.dbus_message());
    }
    if e.is_unsupported() {
        return Error::new(
            Code::Unsupported,
            format!(
                "{what}: element {} does not support it ({})",
                obj.to_ref(),
                e.dbus_message()
            ),
            "Check the node's interfaces and actions in a11y_tree and pick an op it supports.",
        );
    }
    e.into_error(what)
}

impl A11y {
    pub fn new() -> A11y {
        A11y::default()
    }

    fn conn(&mut self) -> Result<Route> {
        if let Some(c) = &self.conn {
            return Ok(c.clone());
        }
        let route = Route::bus_only(bus::connect()?);
        // GTK 3's bridge only serves its cache and its events once some
        // client listens; registering is what a screen reader does.
        let reg = Obj {
            bus: REGISTRY.into(),
            path: "/org/a11y/atspi/registry".into(),
        };
        let registered = async_io::block_on(bus::call::<_, ()>(
            &route,
            &reg,
            REGISTRY,
            "RegisterEvent",
            &("object:children-changed", Vec::<String>::new(), ""),
            CALL_TIMEOUT,
        ));
        if let Err(e) = registered {
            log_debug!("registering for events: {e}");
        }
        self.conn = Some(route.clone());
        Ok(route)
    }

    /// Forgets a broken connection so the next request reconnects.
    fn check<T>(&mut self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r {
            if e.code == Code::A11yUnavailable && e.message.contains("connection broke") {
                self.conn = None;
            }
        }
        r
    }

    fn pid_of(&mut self, route: &Route, bus_name: &str) -> Option<u32> {
        if let Some(&p) = self.pids.get(bus_name) {
            return Some(p);
        }
        let dbus = Obj {
            bus: "org.freedesktop.DBus".into(),
            path: "/org/freedesktop/DBus".into(),
        };
        let pid = async_io::block_on(bus::call::<_, u32>(
            route,
            &dbus,
            "org.freedesktop.DBus",
            "GetConnectionUnixProcessID",
            &(bus_name,),
            CALL_TIMEOUT,
        ))
        .ok()?;
        self.pids.insert(bus_name.to_owned(), pid);
        Some(pid)
    }

    /// The registered apps' root objects.
    fn app_roots(&mut self, route: &Route) -> Result<Vec<Obj>> {
        let desktop = Obj {
            bus: REGISTRY.into(),
            path: DESKTOP_PATH.into(),
        };
        let kids = async_io::block_on(bus::call::<_, Vec<(String, OwnedObjectPath)>>(
            route,
            &desktop,
            ACCESSIBLE,
            "GetChildren",
            &(),
            CALL_TIMEOUT,
        ))
        .map_err(|e| e.into_error("listing the apps registered with the AT-SPI registry"))?;
        let roots: Vec<Obj> = kids
            .into_iter()
            .map(Obj::from_wire)
            .filter(|o| !o.is_null())
            .collect();
        self.directs
            .retain(|app| roots.iter().any(|r| r.bus == app));
        Ok(roots)
    }

    /// Checks that `obj` belongs to the app with `pid`: a ref is only ever
    /// acted on inside the app the supervisor approved.
    fn check_owner(&mut self, route: &Route, obj: &Obj, pid: u32) -> Result<()> {
        match self.pid_of(route, &obj.bus) {
            Some(p) if p == pid => Ok(()),
            Some(p) => Err(Error::invalid_params(format!(
                "ref {} belongs to pid {p}, not pid {pid}",
                obj.to_ref()
            ))),
            None => Err(stale(
                obj,
                format!("its app {} left the accessibility bus", obj.bus),
            )),
        }
    }

    pub(crate) fn call_apps(
        &mut self,
        id: &Value,
        _p: &Params<'_>,
        xwins: &[Window],
    ) -> Result<Vec<u8>> {
        let r = self.apps(xwins);
        let r = self.check(r);
        let result = match r {
            Ok(apps) => AppsResult {
                available: true,
                reason: None,
                apps,
            },
            Err(e) if e.code == Code::A11yUnavailable => AppsResult {
                available: false,
                reason: Some(format!("{} ({})", e.message, e.hint)),
                apps: Vec::new(),
            },
            Err(e) => return Err(e),
        };
        Ok(protocol::success(id, &result))
    }

    fn apps(&mut self, xwins: &[Window]) -> Result<Vec<AppInfo>> {
        let route = self.conn()?;
        let roots = self.app_roots(&route)?;
        let c = &route;
        let infos = tree::run_all(roots.iter().map(|root| async move {
            let name = bus::property::<String>(c, root, ACCESSIBLE, "Name", CALL_TIMEOUT);
            let toolkit = bus::property::<String>(
                c,
                root,
                "org.a11y.atspi.Application",
                "ToolkitName",
                CALL_TIMEOUT,
            );
            let windows = window_list(c, root);
            let (name, (toolkit, windows)) =
                futures_lite::future::zip(name, futures_lite::future::zip(toolkit, windows)).await;
            (
                name.unwrap_or_default(),
                toolkit.ok().filter(|t| !t.is_empty()),
                windows,
            )
        }));
        let mut apps = Vec::new();
        for (root, (name, toolkit, windows)) in roots.iter().zip(infos) {
            let Some(pid) = self.pid_of(&route, &root.bus) else {
                continue; // left the bus meanwhile
            };
            let windows = windows
                .into_iter()
                .map(|(obj, base, bounds)| {
                    let x = match_x_window(xwins, pid, &base.name, bounds);
                    WindowRef {
                        reference: obj.to_ref(),
                        title: base.name,
                        window: x.map(|w| w.id),
                        bounds: screen_bounds(bounds, x),
                    }
                })
                .collect();
            apps.push(AppInfo {
                pid,
                name,
                toolkit,
                bus: root.bus.clone(),
                windows,
            });
        }
        Ok(apps)
    }

    pub(crate) fn call_tree(
        &mut self,
        id: &Value,
        p: &Params<'_>,
        xwins: &[Window],
        capture: impl FnOnce(&Params<'_>) -> Result<Value>,
    ) -> Result<Vec<u8>> {
        let started = Instant::now();
        let pid = pid_param(p)?;
        let capture_params = match p.get("capture") {
            None => None,
            Some(v @ Value::Object(_)) => Some(Params::new("a11y_tree capture", v.clone())?),
            Some(other) => {
                return Err(p.bad(format!(
                    "\"capture\" must be an object of capture params, not {}",
                    protocol::kind(other)
                )))
            }
        };
        let want_window = p.int("window", 0, u32::MAX as i64)?.map(|w| w as u32);
        let want_title = p.str("title")?.map(str::to_owned);
        let max_nodes = p.int("max_nodes", 1, 100_000)?.unwrap_or(DEFAULT_MAX_NODES) as usize;
        let max_depth = p.int("max_depth", 0, 10_000)?.unwrap_or(DEFAULT_MAX_DEPTH) as u32;
        let deadline_ms = p
            .int("deadline_ms", 1, 600_000)?
            .unwrap_or(DEFAULT_DEADLINE_MS) as u64;
        let budget = Budget {
            max_nodes,
            max_depth,
            deadline: started + Duration::from_millis(deadline_ms),
        };
        // elapsed_ms is the walk's own time, without the capture's.
        let walk = |a: &mut A11y| {
            let r = a.tree(pid, want_window, want_title.as_deref(), budget, xwins);
            (r, started.elapsed().as_millis() as u64)
        };
        let ((r, elapsed_ms), shot) = match &capture_params {
            None => (walk(self), None),
            // The walk waits on the app and the capture on the X server:
            // overlapped, the pair takes about as long as the slower one.
            Some(cp) => std::thread::scope(|s| {
                let walker = s.spawn(|| walk(self));
                let shot = capture(cp);
                let r = walker
                    .join()
                    .unwrap_or_else(|_| (Err(Error::internal("the tree walk panicked")), 0));
                (r, Some(shot))
            }),
        };
        let (window, walk, via) = self.check(r)?;
        let (capture, capture_error) = match shot {
            None => (None, None),
            Some(Ok(v)) => (Some(v), None),
            Some(Err(e)) => (None, Some(e.message)),
        };
        Ok(protocol::success(
            id,
            &TreeResult {
                window,
                nodes: walk.nodes,
                truncated: walk.truncated,
                elapsed_ms,
                via,
                capture,
                capture_error,
            },
        ))
    }

    fn app_of(&mut self, route: &Route, pid: u32) -> Result<Vec<Obj>> {
        let roots = self.app_roots(route)?;
        let mine: Vec<Obj> = roots
            .into_iter()
            .filter(|r| self.pid_of(route, &r.bus) == Some(pid))
            .collect();
        if mine.is_empty() {
            return Err(Error::new(
                Code::NoSuchWindow,
                format!("pid {pid} has no accessible app on the accessibility bus"),
                "Check the pid with a11y_apps; the app may not support accessibility, may have started before the accessibility bus (restart it), or may need QT_ACCESSIBILITY=1 (Qt) or --force-renderer-accessibility (Chromium, Electron).",
            ));
        }
        Ok(mine)
    }

    fn tree(
        &mut self,
        pid: u32,
        want_window: Option<u32>,
        want_title: Option<&str>,
        budget: Budget,
        xwins: &[Window],
    ) -> Result<(WindowRef, tree::Walk, &'static str)> {
        let bus_route = self.conn()?;
        let roots = self.app_of(&bus_route, pid)?;
        let mut route = bus_route.clone();
        for r in &roots {
            let d = self.directs.route(&bus_route, &r.bus, pid);
            route.direct.extend(d.direct);
        }
        let first = self.tree_via(&route, &roots, pid, want_window, want_title, budget, xwins);
        if !route.direct_lost() {
            return first;
        }
        // The app closed its socket (or died) during the read: read again
        // through the bus, which knows whether it is still there.
        self.directs.forget_lost(&route);
        self.tree_via(
            &bus_route,
            &roots,
            pid,
            want_window,
            want_title,
            budget,
            xwins,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn tree_via(
        &mut self,
        route: &Route,
        roots: &[Obj],
        pid: u32,
        want_window: Option<u32>,
        want_title: Option<&str>,
        budget: Budget,
        xwins: &[Window],
    ) -> Result<(WindowRef, tree::Walk, &'static str)> {
        let c = route;
        let lists = tree::run_all(roots.iter().map(|root| window_list(c, root)));
        let windows: Vec<(Obj, Base, Option<Rect>)> = lists.into_iter().flatten().collect();
        let xwin = match want_window {
            Some(wid) => Some(xwins.iter().find(|w| w.id == wid).ok_or_else(|| {
                Error::new(
                    Code::NoSuchWindow,
                    format!("no window {wid} (0x{wid:x}) on the display"),
                    "Use a window id from the windows method.",
                )
            })?),
            None => None,
        };
        let chosen = pick_window(&windows, pid, xwin, want_title, xwins).ok_or_else(|| {
            let titles: Vec<&str> = windows.iter().map(|(_, b, _)| b.name.as_str()).collect();
            Error::new(
                Code::NoSuchWindow,
                match (want_window, want_title) {
                    (Some(w), _) => format!("pid {pid} has no accessible window matching X window {w} (its accessible windows: {titles:?})"),
                    (None, Some(t)) => format!("pid {pid} has no accessible window titled {t:?} (its accessible windows: {titles:?})"),
                    (None, None) => format!("pid {pid} has no accessible window"),
                },
                "Pick a window from a11y_apps.",
            )
        })?;
        let (obj, base, bounds) = windows[chosen].clone();
        let x = xwin.or_else(|| match_x_window(xwins, pid, &base.name, bounds));
        let window = WindowRef {
            reference: obj.to_ref(),
            title: base.name.clone(),
            window: x.map(|w| w.id),
            bounds: screen_bounds(bounds, x),
        };
        let cache = if self.use_cache {
            let left = budget
                .deadline
                .checked_duration_since(Instant::now())
                .unwrap_or(Duration::from_millis(1));
            async_io::block_on(cache::read(route, &obj.bus, left))
        } else {
            None
        };
        let mut walk = tree::walk(route, cache.as_ref(), &obj, base, budget);
        if self.window_of.len() + walk.nodes.len() > MAX_WINDOW_OF {
            self.window_of.clear();
        }
        for n in &walk.nodes {
            self.window_of.insert(n.reference.clone(), obj.clone());
        }
        if let (Some(own), Some(x)) = (bounds, x) {
            let (dx, dy) = offset(own, x);
            if (dx, dy) != (0, 0) {
                for n in &mut walk.nodes {
                    if let Some(b) = &mut n.bounds {
                        b.x += dx;
                        b.y += dy;
                    }
                }
            }
        }
        Ok((window, walk, route.via(&obj.bus)))
    }

    pub(crate) fn call_element(
        &mut self,
        id: &Value,
        p: &Params<'_>,
        xwins: &[Window],
    ) -> Result<Vec<u8>> {
        let pid = pid_param(p)?;
        let obj = ref_param(p)?;
        let r = self.element(pid, &obj, xwins);
        let node = self.check(r)?;
        Ok(protocol::success(id, &serde_json::json!({ "node": node })))
    }

    fn element(&mut self, pid: u32, obj: &Obj, xwins: &[Window]) -> Result<Node> {
        let bus_route = self.conn()?;
        self.check_owner(&bus_route, obj, pid)?;
        let route = self.directs.route(&bus_route, &obj.bus, pid);
        let node = self.fresh_node(&route, obj, pid, xwins);
        if !route.direct_lost() {
            return node;
        }
        self.directs.forget_lost(&route);
        self.fresh_node(&bus_route, obj, pid, xwins)
    }

    /// The offset from the toolkit's "screen" coordinates to the root
    /// window's, for toolkits (GTK 4 on X11) that report them relative to
    /// the top-level: found by walking up to the element's window.
    fn window_offset(
        &mut self,
        route: &Route,
        obj: &Obj,
        pid: u32,
        xwins: &[Window],
    ) -> (i32, i32) {
        let mut cur = obj.clone();
        for _ in 0..200 {
            let parent = async_io::block_on(bus::property::<(String, OwnedObjectPath)>(
                route,
                &cur,
                ACCESSIBLE,
                "Parent",
                CALL_TIMEOUT,
            ));
            let Ok(parent) = parent.map(Obj::from_wire) else {
                return (0, 0);
            };
            if parent.is_null() || parent.bus != obj.bus {
                return (0, 0);
            }
            let role = async_io::block_on(bus::call::<_, u32>(
                route,
                &parent,
                ACCESSIBLE,
                "GetRole",
                &(),
                CALL_TIMEOUT,
            ));
            if role.ok() == Some(atspi_common::Role::Application as u32) {
                // cur is the top-level window.
                let name = async_io::block_on(bus::property::<String>(
                    route,
                    &cur,
                    ACCESSIBLE,
                    "Name",
                    CALL_TIMEOUT,
                ))
                .unwrap_or_default();
                let own = async_io::block_on(extents(route, &cur));
                let x = match_x_window(xwins, pid, &name, own);
                return match (own, x) {
                    (Some(own), Some(x)) => offset(own, x),
                    _ => (0, 0),
                };
            }
            cur = parent;
        }
        (0, 0)
    }

    /// `xwins` is asked for only when `expect` needs the element's place.
    pub(crate) fn call_act(
        &mut self,
        id: &Value,
        p: &Params<'_>,
        xwins: impl FnOnce() -> Vec<Window>,
    ) -> Result<Vec<u8>> {
        let pid = pid_param(p)?;
        let obj = ref_param(p)?;
        let op = Op::parse(p)?;
        let expect = element::Expect::parse(p)?;
        let r = self.act(pid, &obj, &op, expect.as_ref(), xwins);
        self.check(r)?;
        Ok(protocol::success(
            id,
            &serde_json::json!({ "ok": true, "op": op.name() }),
        ))
    }

    fn act(
        &mut self,
        pid: u32,
        obj: &Obj,
        op: &Op,
        expect: Option<&element::Expect>,
        xwins: impl FnOnce() -> Vec<Window>,
    ) -> Result<()> {
        let bus_route = self.conn()?;
        self.check_owner(&bus_route, obj, pid)?;
        let route = self.directs.route(&bus_route, &obj.bus, pid);
        let r = self.act_via(&route, pid, obj, op, expect, xwins);
        // No second try through the bus: the action may have run already.
        self.directs.forget_lost(&route);
        r
    }

    fn act_via(
        &mut self,
        route: &Route,
        pid: u32,
        obj: &Obj,
        op: &Op,
        expect: Option<&element::Expect>,
        xwins: impl FnOnce() -> Vec<Window>,
    ) -> Result<()> {
        // The staleness check and the action in one request: the element
        // is read afresh and compared with what the caller saw; a changed
        // one is refused before anything is done to it.
        let mut known_actions = None;
        if let Some(expect) = expect {
            let node = self.fresh_node(route, obj, pid, &xwins())?;
            if let Some((what, why)) = expect.changed(&node) {
                return Err(element::changed_error(obj, what, why, &node));
            }
            known_actions = Some(node.actions);
        }
        let c = route;
        let t = CALL_TIMEOUT;
        let what = format!("a11y_act {}", op.name());
        let err = |e: CallError| element_error(obj, &what, e);
        let refused = |detail: &str| {
            Error::new(
                Code::Unsupported,
                format!("{what}: element {} refused it{detail}", obj.to_ref()),
                "The element may be insensitive or read-only; read it again with a11y_element and check its states.",
            )
        };
        let done: bool = match op {
            Op::Action(name) => {
                let names: Vec<String> = match known_actions {
                    Some(names) => names,
                    None => async_io::block_on(actions::names(c, obj, t)).map_err(&err)?,
                };
                let Some(index) = names.iter().position(|n| n == name) else {
                    return Err(unsupported_action(obj, name, &names));
                };
                async_io::block_on(bus::call::<_, bool>(
                    c,
                    obj,
                    ACTION,
                    "DoAction",
                    &(index as i32,),
                    t,
                ))
                .map_err(&err)?
            }
            Op::SetText(text) => async_io::block_on(bus::call::<_, bool>(
                c,
                obj,
                EDITABLE_TEXT,
                "SetTextContents",
                &(text.as_str(),),
                t,
            ))
            .map_err(&err)?,
            Op::InsertText(text) => {
                let caret =
                    async_io::block_on(bus::property::<i32>(c, obj, TEXT, "CaretOffset", t))
                        .unwrap_or(-1);
                let at = if caret >= 0 {
                    caret
                } else {
                    async_io::block_on(bus::property::<i32>(c, obj, TEXT, "CharacterCount", t))
                        .map_err(&err)?
                };
                let len = text.chars().count() as i32;
                async_io::block_on(bus::call::<_, bool>(
                    c,
                    obj,
                    EDITABLE_TEXT,
                    "InsertText",
                    &(at, text.as_str(), len),
                    t,
                ))
                .map_err(&err)?
            }
            Op::SetValue(v) => {
                let range = async_io::block_on(tree::read_range(c, obj, t)).map_err(&err)?;
                if *v < range.min || *v > range.max {
                    return Err(Error::invalid_params(format!(
                        "a11y_act set_value: {v} is outside the element's range {}..={}",
                        range.min, range.max
                    )));
                }
                async_io::block_on(bus::call::<_, ()>(
                    c,
                    obj,
                    "org.freedesktop.DBus.Properties",
                    "Set",
                    &(VALUE, "CurrentValue", ZValue::from(*v)),
                    t,
                ))
                .map_err(&err)?;
                true
            }
            Op::Focus => {
                async_io::block_on(bus::call::<_, bool>(c, obj, COMPONENT, "GrabFocus", &(), t))
                    .map_err(&err)?
            }
            Op::ScrollTo => {
                // ATSPI_SCROLL_TOP_LEFT
                async_io::block_on(bus::call::<_, bool>(
                    c,
                    obj,
                    COMPONENT,
                    "ScrollTo",
                    &(0u32,),
                    t,
                ))
                .map_err(&err)?
            }
            Op::Select => {
                let parent = async_io::block_on(bus::property::<(String, OwnedObjectPath)>(
                    c, obj, ACCESSIBLE, "Parent", t,
                ))
                .map_err(&err)
                .map(Obj::from_wire)?;
                if parent.is_null() {
                    return Err(refused(": it has no parent to select it in"));
                }
                let index = async_io::block_on(bus::call::<_, i32>(
                    c,
                    obj,
                    ACCESSIBLE,
                    "GetIndexInParent",
                    &(),
                    t,
                ))
                .map_err(&err)?;
                async_io::block_on(bus::call::<_, bool>(
                    c,
                    &parent,
                    SELECTION,
                    "SelectChild",
                    &(index,),
                    t,
                ))
                .map_err(|e| {
                    element_error(&parent, &format!("{what} (in the parent's Selection)"), e)
                })?
            }
        };
        if !done {
            return Err(refused(""));
        }
        Ok(())
    }
}

fn unsupported_action(obj: &Obj, name: &str, names: &[String]) -> Error {
    Error::new(
        Code::Unsupported,
        format!(
            "element {} exposes no action {name:?}; it exposes {names:?}",
            obj.to_ref()
        ),
        "Use one of the exposed action names exactly (the node's actions in a11y_tree).",
    )
    .with_data("actions", serde_json::json!(names))
}

async fn extents(route: &Route, obj: &Obj) -> Option<Rect> {
    let (x, y, w, h) = bus::call::<_, (i32, i32, i32, i32)>(
        route,
        obj,
        COMPONENT,
        "GetExtents",
        &(tree::COORD_SCREEN,),
        CALL_TIMEOUT,
    )
    .await
    .ok()?;
    (w >= 0 && h >= 0).then_some(Rect {
        x,
        y,
        width: w as u32,
        height: h as u32,
    })
}

/// An app's top-level windows with their facts and own bounds.
async fn window_list(route: &Route, root: &Obj) -> Vec<(Obj, Base, Option<Rect>)> {
    let Ok(kids) = bus::call::<_, Vec<(String, OwnedObjectPath)>>(
        route,
        root,
        ACCESSIBLE,
        "GetChildren",
        &(),
        CALL_TIMEOUT,
    )
    .await
    else {
        return Vec::new();
    };
    let kids: Vec<Obj> = kids
        .into_iter()
        .map(Obj::from_wire)
        .filter(|o| !o.is_null())
        .collect();
    let mut out = Vec::new();
    for k in kids {
        let (base, bounds) = futures_lite::future::zip(
            tree::read_base(route, &k, CALL_TIMEOUT, true),
            extents(route, &k),
        )
        .await;
        if let Ok(base) = base {
            out.push((k, base, bounds));
        }
    }
    out
}

/// The X window (of `pid`) an accessible window is: same title and size,
/// the nearest position breaking ties.
fn match_x_window<'a>(
    xwins: &'a [Window],
    pid: u32,
    title: &str,
    bounds: Option<Rect>,
) -> Option<&'a Window> {
    xwins
        .iter()
        .filter(|w| w.app.pid == Some(pid) && !w.override_redirect)
        .filter_map(|w| {
            let mut score = 0i64;
            if !title.is_empty() && w.title == title {
                score += 1_000_000;
            }
            if let Some(b) = bounds {
                let dw = (b.width as i64 - w.client.width as i64).abs();
                let dh = (b.height as i64 - w.client.height as i64).abs();
                if dw <= 2 && dh <= 2 {
                    score += 100_000;
                }
                let dx = (b.x as i64 - w.client.x as i64).abs();
                let dy = (b.y as i64 - w.client.y as i64).abs();
                score -= (dx + dy + dw + dh).min(99_999);
            }
            (score > 0 || (bounds.is_none() && title.is_empty())).then_some((score, w))
        })
        .max_by_key(|(score, _)| *score)
        .map(|(_, w)| w)
}

/// The offset to add to a toolkit's coordinates: zero when it reports
/// real screen positions, the X window's origin when it reports the
/// top-level at 0,0 although the window is elsewhere (GTK 4 on X11).
fn offset(own: Rect, x: &Window) -> (i32, i32) {
    if own.x == 0 && own.y == 0 && (x.client.x, x.client.y) != (0, 0) {
        (x.client.x, x.client.y)
    } else {
        (0, 0)
    }
}

fn screen_bounds(own: Option<Rect>, x: Option<&Window>) -> Option<Rect> {
    match (own, x) {
        (Some(mut b), Some(x)) => {
            let (dx, dy) = offset(b, x);
            b.x += dx;
            b.y += dy;
            Some(b)
        }
        (Some(b), None) => Some(b),
        (None, Some(x)) => Some(x.client),
        (None, None) => None,
    }
}

/// Which accessible window a11y_tree reads: the one matching the X window,
/// else the title, else the active one, else the first showing one.
fn pick_window(
    windows: &[(Obj, Base, Option<Rect>)],
    pid: u32,
    xwin: Option<&Window>,
    title: Option<&str>,
    xwins: &[Window],
) -> Option<usize> {
    if let Some(x) = xwin {
        return windows.iter().position(|(_, b, r)| {
            match_x_window(xwins, pid, &b.name, *r).map(|w| w.id) == Some(x.id)
        });
    }
    if let Some(t) = title {
        return windows
            .iter()
            .position(|(_, b, _)| b.name == t)
            .or_else(|| windows.iter().position(|(_, b, _)| b.name.contains(t)));
    }
    let has = |b: &Base, s: &str| b.states.iter().any(|x| x == s);
    windows
        .iter()
        .position(|(_, b, _)| has(b, "active"))
        .or_else(|| windows.iter().position(|(_, b, _)| has(b, "showing")))
        .or(if windows.is_empty() { None } else { Some(0) })
}
