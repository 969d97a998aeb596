//! Reading accessible objects: one node's facts, and a window's subtree
//! read level by level with every call of a level in flight at once.

use std::time::{Duration, Instant};

use futures_lite::future;
use serde::Serialize;
use zbus::zvariant::OwnedObjectPath;

use super::bus::{self, CallError, Obj, Route};
use super::cache::Cache;
use crate::types::Rect;

pub const ACCESSIBLE: &str = "org.a11y.atspi.Accessible";
pub const COMPONENT: &str = "org.a11y.atspi.Component";
pub const ACTION: &str = "org.a11y.atspi.Action";
pub const TEXT: &str = "org.a11y.atspi.Text";
pub const EDITABLE_TEXT: &str = "org.a11y.atspi.EditableText";
pub const VALUE: &str = "org.a11y.atspi.Value";
pub const SELECTION: &str = "org.a11y.atspi.Selection";

/// Component coordinates relative to the screen (ATSPI_COORD_TYPE_SCREEN).
pub const COORD_SCREEN: u32 = 0;
/// Longest text read into a node's value.
pub const MAX_VALUE_CHARS: i32 = 4096;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_names_are_libatspi_names() {
        use atspi_common::Role;
        assert_eq!(role_name(Role::Button as u32), "push button");
        assert_eq!(role_name(Role::ToggleButton as u32), "toggle button");
        assert_eq!(role_name(Role::CheckBox as u32), "check box");
        assert_eq!(role_name(Role::MenuItem as u32), "menu item");
        assert_eq!(role_name(Role::Text as u32), "text");
        assert_eq!(role_name(100_000), "role 100000");
    }

    #[test]
    fn states_skip_unknown_bits() {
        // Bit 4 is ATSPI_STATE_CHECKED; bit 63 is beyond every known state.
        assert_eq!(state_names(&[1 << 4, 1 << 31]), vec!["checked".to_owned()]);
        assert!(state_names(&[0, 0]).is_empty());
    }

    #[test]
    fn refs_round_trip() {
        let o = Obj::parse_ref(":1.42/org/a11y/atspi/accessible/7").unwrap();
        assert_eq!(o.bus, ":1.42");
        assert_eq!(o.path, "/org/a11y/atspi/accessible/7");
        assert_eq!(o.to_ref(), ":1.42/org/a11y/atspi/accessible/7");
        for bad in ["", "org.a11y/x", ":1.2", ":1.2/bad path", "/x", ":/x"] {
            assert!(Obj::parse_ref(bad).is_none(), "{bad}");
        }
    }
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Range {
    pub min: f64,
    pub max: f64,
    pub current: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<f64>,
}

/// One element as the protocol gives it (helpers/PROTOCOL.md, "Accessibility").
#[derive(Clone, Debug, Serialize)]
pub struct Node {
    #[serde(rename = "ref")]
    pub reference: String,
    pub parent: i64,
    pub depth: u32,
    pub role: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<Range>,
    pub states: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Rect>,
    pub actions: Vec<String>,
    pub interfaces: Vec<String>,
}

/// What the first round of calls learns about an object.
#[derive(Clone, Debug, Default)]
pub struct Base {
    pub role: String,
    pub name: String,
    pub description: String,
    pub states: Vec<String>,
    /// Full D-Bus interface names.
    pub ifaces: Vec<String>,
    pub children: Vec<Obj>,
    /// The Accessible's ChildCount; −1 when the toolkit did not say.
    pub child_count: i32,
}

/// What the second round adds, per the interfaces.
#[derive(Clone, Debug, Default)]
pub struct Extra {
    pub bounds: Option<Rect>,
    pub actions: Vec<String>,
    pub value: Option<String>,
    pub range: Option<Range>,
}

/// The AT-SPI role name libatspi gives (`atspi_role_get_name`): the enum
/// nick with spaces, "push button", "check box", "menu item". atspi-common's
/// own `name()` is a shorter English label ("button"), so the name is
/// spelled from the variant instead.
pub fn role_name(n: u32) -> String {
    use atspi_common::Role;
    match Role::try_from(n) {
        // The variants whose names are not libatspi's nick.
        Ok(Role::Button) => "push button".into(),
        Ok(Role::HTMLContainer) => "html container".into(),
        Ok(Role::CHART) => "chart".into(),
        Ok(r) => {
            let camel = format!("{r:?}");
            let mut out = String::with_capacity(camel.len() + 4);
            for (i, ch) in camel.chars().enumerate() {
                if ch.is_ascii_uppercase() && i > 0 {
                    out.push(' ');
                }
                out.push(ch.to_ascii_lowercase());
            }
            out
        }
        Err(_) => format!("role {n}"),
    }
}

pub fn state_names(words: &[u32]) -> Vec<String> {
    let lo = words.first().copied().unwrap_or(0) as u64;
    let hi = words.get(1).copied().unwrap_or(0) as u64;
    let bits = lo | hi << 32;
    // Bit by bit, so a state newer than atspi-common is skipped, not fatal.
    (0..64)
        .filter(|i| bits & (1u64 << i) != 0)
        .filter_map(|i| atspi_common::StateSet::from_bits(1u64 << i).ok())
        .flat_map(|set| set.iter())
        .map(|s| s.to_static_str().to_owned())
        .collect()
}

/// The protocol's short interface names for the ones it lists.
fn short_ifaces(ifaces: &[String]) -> Vec<String> {
    let table = [
        (ACTION, "action"),
        (COMPONENT, "component"),
        (TEXT, "text"),
        (EDITABLE_TEXT, "editable_text"),
        (VALUE, "value"),
        (SELECTION, "selection"),
    ];
    table
        .iter()
        .filter(|(full, _)| ifaces.iter().any(|i| i == full))
        .map(|(_, short)| (*short).to_owned())
        .collect()
}

pub fn has(ifaces: &[String], iface: &str) -> bool {
    ifaces.iter().any(|i| i == iface)
}

/// The first round: role, name, description, states, interfaces and
/// children, five calls in flight at once.
pub async fn read_base(
    route: &Route,
    obj: &Obj,
    limit: Duration,
    children: bool,
) -> Result<Base, CallError> {
    let role = bus::call::<_, u32>(route, obj, ACCESSIBLE, "GetRole", &(), limit);
    let states = bus::call::<_, Vec<u32>>(route, obj, ACCESSIBLE, "GetState", &(), limit);
    let ifaces = bus::call::<_, Vec<String>>(route, obj, ACCESSIBLE, "GetInterfaces", &(), limit);
    let props = super::props::get_all(
        route,
        obj,
        ACCESSIBLE,
        &["Name", "Description", "ChildCount"],
        limit,
    );
    let kids = async {
        if children {
            read_children(route, obj, limit).await
        } else {
            Ok(Vec::new())
        }
    };
    let ((role, states), (ifaces, (props, kids))) = future::zip(
        future::zip(role, states),
        future::zip(ifaces, future::zip(props, kids)),
    )
    .await;
    let props = props?;
    let text = |k: &str| {
        props
            .get(k)
            .and_then(|v| String::try_from(v.try_clone().ok()?).ok())
            .unwrap_or_default()
    };
    Ok(Base {
        role: role_name(role?),
        name: text("Name"),
        description: text("Description"),
        states: state_names(&states?),
        ifaces: ifaces?,
        children: kids?,
        child_count: props
            .get("ChildCount")
            .and_then(|v| i32::try_from(v.try_clone().ok()?).ok())
            .unwrap_or(-1),
    })
}

pub async fn read_children(
    route: &Route,
    obj: &Obj,
    limit: Duration,
) -> Result<Vec<Obj>, CallError> {
    let kids = bus::call::<_, Vec<(String, OwnedObjectPath)>>(
        route,
        obj,
        ACCESSIBLE,
        "GetChildren",
        &(),
        limit,
    )
    .await?;
    Ok(kids
        .into_iter()
        .map(Obj::from_wire)
        .filter(|o| !o.is_null())
        .collect())
}

/// The second round: bounds, actions, text and range, as the interfaces
/// allow. A call that fails leaves its part out rather than the node.
pub async fn read_extra(
    route: &Route,
    obj: &Obj,
    base: &Base,
    limit: Duration,
    want_bounds: bool,
) -> Extra {
    let ifaces = &base.ifaces;
    let bounds = async {
        if !want_bounds || !has(ifaces, COMPONENT) {
            return None;
        }
        read_bounds(route, obj, limit).await
    };
    let actions = async {
        if !has(ifaces, ACTION) {
            return Vec::new();
        }
        super::actions::names(route, obj, limit)
            .await
            .unwrap_or_default()
    };
    let value = async {
        if !has(ifaces, TEXT) {
            return None;
        }
        bus::call::<_, String>(route, obj, TEXT, "GetText", &(0i32, MAX_VALUE_CHARS), limit)
            .await
            .ok()
    };
    let range = async {
        if !has(ifaces, VALUE) {
            return None;
        }
        read_range(route, obj, limit).await.ok()
    };
    let ((bounds, actions), (value, range)) =
        future::zip(future::zip(bounds, actions), future::zip(value, range)).await;
    Extra {
        bounds,
        actions,
        value,
        range,
    }
}

/// Component.GetExtents in screen coordinates; None when the object has
/// no Component or the call fails.
pub async fn read_bounds(route: &Route, obj: &Obj, limit: Duration) -> Option<Rect> {
    let (x, y, w, h) = bus::call::<_, (i32, i32, i32, i32)>(
        route,
        obj,
        COMPONENT,
        "GetExtents",
        &(COORD_SCREEN,),
        limit,
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

/// Whether a node's children are left out of the tree because the node is
/// not on screen: it is not showing, and either not visible either (GTK 3's
/// closed menus, Qt's and Chromium's hidden parts) or of no size (GTK 4,
/// which marks only top-levels showing, gives its hidden stack pages 0×0).
/// Reading what nobody can see or act on cost GTK 4 two thirds of its tree.
pub fn hides_children(states: &[String], bounds: Option<&Rect>) -> bool {
    let has_state = |s: &str| states.iter().any(|x| x == s);
    if has_state("showing") {
        return false;
    }
    !has_state("visible") || bounds.is_some_and(|b| b.width == 0 || b.height == 0)
}

pub async fn read_range(route: &Route, obj: &Obj, limit: Duration) -> Result<Range, CallError> {
    let props = super::props::get_all(
        route,
        obj,
        VALUE,
        &[
            "MinimumValue",
            "MaximumValue",
            "CurrentValue",
            "MinimumIncrement",
        ],
        limit,
    )
    .await?;
    let num = |k: &str| {
        props
            .get(k)
            .and_then(|v| f64::try_from(v.try_clone().ok()?).ok())
    };
    Ok(Range {
        min: num("MinimumValue").unwrap_or(0.0),
        max: num("MaximumValue").unwrap_or(0.0),
        current: num("CurrentValue").unwrap_or(0.0),
        step: num("MinimumIncrement").filter(|s| *s > 0.0),
    })
}

pub fn node(obj: &Obj, parent: i64, depth: u32, base: &Base, extra: Extra) -> Node {
    Node {
        reference: obj.to_ref(),
        parent,
        depth,
        role: base.role.clone(),
        name: base.name.clone(),
        description: (!base.description.is_empty()).then(|| base.description.clone()),
        value: extra.value,
        range: extra.range,
        states: base.states.clone(),
        bounds: extra.bounds,
        actions: extra.actions,
        interfaces: short_ifaces(&base.ifaces),
    }
}

/// Budgets for one tree read.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    pub max_nodes: usize,
    pub max_depth: u32,
    pub deadline: Instant,
}

pub struct Walk {
    pub nodes: Vec<Node>,
    pub truncated: Option<&'static str>,
}

/// Reads the subtree of `root` (its Base already known): breadth first,
/// each level's calls all in flight together, then every node's second
/// round together; returns the nodes in depth-first pre-order. What the
/// app's `cache` holds is not asked again (see cache.rs).
pub fn walk(
    route: &Route,
    cache: Option<&Cache>,
    root: &Obj,
    root_base: Base,
    budget: Budget,
) -> Walk {
    struct Item {
        obj: Obj,
        parent: Option<usize>,
        depth: u32,
        base: Base,
        /// Read with the first round (below the root), so that a node off
        /// screen can be known before its children are read.
        bounds: Option<Option<Rect>>,
    }
    let mut items = vec![Item {
        obj: root.clone(),
        parent: None,
        depth: 0,
        base: root_base,
        bounds: None,
    }];
    let mut truncated = None;
    let mut level: Vec<usize> = vec![0];
    let mut seen: std::collections::HashSet<Obj> = [root.clone()].into();
    while !level.is_empty() {
        let mut next: Vec<(Obj, usize, u32)> = Vec::new();
        for &i in &level {
            let it = &items[i];
            if let Some(bounds) = &it.bounds {
                if hides_children(&it.base.states, bounds.as_ref()) {
                    continue;
                }
            }
            if it.depth >= budget.max_depth {
                if !it.base.children.is_empty() || it.base.child_count > 0 {
                    truncated.get_or_insert("depth");
                }
                continue;
            }
            if it.base.children.is_empty() {
                continue;
            }
            for c in &it.base.children {
                // A toolkit bug can make an object its own descendant.
                if seen.insert(c.clone()) {
                    next.push((c.clone(), i, it.depth + 1));
                }
            }
        }
        if next.is_empty() {
            break;
        }
        let room = budget.max_nodes.saturating_sub(items.len());
        if next.len() > room {
            next.truncate(room);
            truncated = Some("nodes");
        }
        let Some(left) = budget.deadline.checked_duration_since(Instant::now()) else {
            truncated = Some("time");
            break;
        };
        // GetExtents goes out with the rest, whatever the interfaces: an
        // object without Component answers an error as fast as a rect.
        // GetChildren waits for ChildCount, states and bounds: half the
        // nodes are leaves and many are off screen, and a call saved is
        // worth more than the round trip (the app answers one at a time).
        // An object the toolkit's cache holds needs only its bounds here.
        let reads = next.iter().map(|&(ref obj, _, depth)| async move {
            let (base, bounds) = match cache.and_then(|c| c.base(obj)) {
                Some(b) => (Ok(b), read_bounds(route, obj, left).await),
                None => {
                    future::zip(
                        read_base(route, obj, left, false),
                        read_bounds(route, obj, left),
                    )
                    .await
                }
            };
            let mut base = match base {
                Ok(b) => b,
                Err(e) => return (Err(e), None),
            };
            let bounds = bounds.filter(|_| has(&base.ifaces, COMPONENT));
            if base.child_count != 0
                && depth < budget.max_depth
                && !hides_children(&base.states, bounds.as_ref())
            {
                match cache.and_then(|c| c.children(obj, base.child_count)) {
                    Some(kids) => base.children = kids,
                    None => match read_children(route, obj, left).await {
                        Ok(kids) => base.children = kids,
                        Err(e) => return (Err(e), None),
                    },
                }
            }
            (Ok(base), bounds)
        });
        let bases = run_all(reads);
        level = Vec::with_capacity(next.len());
        for ((obj, parent, depth), (base, bounds)) in next.into_iter().zip(bases) {
            match base {
                Ok(base) => {
                    level.push(items.len());
                    items.push(Item {
                        obj,
                        parent: Some(parent),
                        depth,
                        base,
                        bounds: Some(bounds),
                    });
                }
                Err(CallError::Timeout(_)) => truncated = Some("time"),
                // Gone between GetChildren and now: children come and go.
                Err(_) => {}
            }
        }
        if truncated == Some("nodes") || truncated == Some("time") {
            break;
        }
    }
    let left = budget
        .deadline
        .checked_duration_since(Instant::now())
        .unwrap_or(Duration::from_millis(1));
    let extras = run_all(items.iter().map(|it| async {
        match it.bounds {
            Some(bounds) => Extra {
                bounds,
                ..read_extra(route, &it.obj, &it.base, left, false).await
            },
            None => read_extra(route, &it.obj, &it.base, left, true).await,
        }
    }));
    if Instant::now() >= budget.deadline {
        truncated.get_or_insert("time");
    }
    // Depth-first pre-order over the breadth-first items.
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); items.len()];
    for (i, it) in items.iter().enumerate() {
        if let Some(p) = it.parent {
            children[p].push(i);
        }
    }
    let mut extras: Vec<Option<Extra>> = extras.into_iter().map(Some).collect();
    let mut nodes = Vec::with_capacity(items.len());
    let mut stack: Vec<(usize, i64)> = vec![(0, -1)];
    while let Some((i, parent)) = stack.pop() {
        let it = &items[i];
        let idx = nodes.len() as i64;
        nodes.push(node(
            &it.obj,
            parent,
            it.depth,
            &it.base,
            extras[i].take().unwrap_or_default(),
        ));
        for &c in children[i].iter().rev() {
            stack.push((c, idx));
        }
    }
    Walk { nodes, truncated }
}

/// Runs all futures concurrently on one thread and returns their outputs
/// in order. An executor (not a poll-everything loop) so that each reply
/// wakes only the call it answers: a level can have a thousand calls out.
pub fn run_all<'a, T: 'a, F>(futs: impl IntoIterator<Item = F>) -> Vec<T>
where
    F: std::future::Future<Output = T> + 'a,
{
    let ex = async_executor::LocalExecutor::new();
    let tasks: Vec<_> = futs.into_iter().map(|f| ex.spawn(f)).collect();
    async_io::block_on(ex.run(async {
        let mut out = Vec::with_capacity(tasks.len());
        for t in tasks {
            out.push(t.await);
        }
        out
    }))
}
