//! Fresh reads of one element, in as few rounds as the toolkit allows, and
//! the staleness check `a11y_act` runs before it acts (`expect`), so that
//! an element action is one request: read, compare, act.

use futures_lite::future;
use serde_json::Value;

use super::bus::{CallError, Obj, Route};
use super::tree::{self, Base, Extra, Node, ACCESSIBLE, ACTION, COMPONENT, TEXT, VALUE};
use super::{element_error, extents, match_x_window, offset, stale, A11y, CALL_TIMEOUT};
use crate::error::{Code, Error, Result};
use crate::server::Params;
use crate::types::{Rect, Window};

/// What the caller saw of an element (a11y_act's `expect`): the action
/// goes ahead only if the element still has this role, name and place.
#[derive(Debug, Clone, PartialEq)]
pub struct Expect {
    pub role: String,
    pub name: String,
    /// None: the caller saw no known place (absent, null, or one of the
    /// unknown places `known` drops).
    pub bounds: Option<Rect>,
}

impl Expect {
    pub(crate) fn parse(p: &Params<'_>) -> Result<Option<Expect>> {
        let Some(v) = p.get("expect") else {
            return Ok(None);
        };
        let Value::Object(m) = v else {
            return Err(
                p.bad("\"expect\" must be an object {\"role\", \"name\", \"bounds\"?}".into())
            );
        };
        let text = |k: &str| match m.get(k) {
            Some(Value::String(s)) => Ok(s.clone()),
            _ => Err(p.bad(format!(
                "\"expect.{k}\" must be a string (the node's {k} from a11y_tree)"
            ))),
        };
        let bounds = match m.get("bounds") {
            None | Some(Value::Null) => None,
            Some(b) => Some(rect(b).ok_or_else(|| {
                p.bad("\"expect.bounds\" must be a Rect {\"x\", \"y\", \"width\", \"height\"} of integers".into())
            })?),
        };
        Ok(Some(Expect {
            role: text("role")?,
            name: text("name")?,
            bounds: known(bounds),
        }))
    }

    /// How `node` differs from what was expected, first difference only.
    pub fn changed(&self, node: &Node) -> Option<(&'static str, String)> {
        let now = known(node.bounds);
        if node.role != self.role {
            Some((
                "role",
                format!("its role was {:?}, now {:?}", self.role, node.role),
            ))
        } else if node.name != self.name {
            Some((
                "name",
                format!("its name was {:?}, now {:?}", self.name, node.name),
            ))
        } else if now != self.bounds {
            Some((
                "bounds",
                format!(
                    "it was at {}, now at {}",
                    fmt_rect(self.bounds),
                    fmt_rect(now)
                ),
            ))
        } else {
            None
        }
    }
}

fn rect(v: &Value) -> Option<Rect> {
    let n = |k: &str| v.get(k).and_then(Value::as_i64);
    let (x, y) = (n("x")?, n("y")?);
    let w = n("width").or_else(|| n("w"))?;
    let h = n("height").or_else(|| n("h"))?;
    Some(Rect {
        x: i32::try_from(x).ok()?,
        y: i32::try_from(y).ok()?,
        width: u32::try_from(w).ok()?,
        height: u32::try_from(h).ok()?,
    })
}

/// Drops the places toolkits give what they do not show (GTK: i32::MIN
/// corners for the contents of closed popovers) and empty ones: the same
/// rule as the supervisor's knownBounds, so both sides compare alike.
pub fn known(r: Option<Rect>) -> Option<Rect> {
    r.filter(|r| r.x > i32::MIN / 2 && r.y > i32::MIN / 2 && r.width > 0 && r.height > 0)
}

fn fmt_rect(r: Option<Rect>) -> String {
    match r {
        Some(r) => format!("{}x{}+{}+{}", r.width, r.height, r.x, r.y),
        None => "an unknown place".into(),
    }
}

/// Everything a fresh node needs, in one round: the calls for interfaces
/// the element may lack go out with the rest (a missing interface answers
/// an error as fast as a value) and are dropped by what GetInterfaces says.
pub async fn read_node(route: &Route, obj: &Obj) -> std::result::Result<(Base, Extra), CallError> {
    let t = CALL_TIMEOUT;
    let base = tree::read_base(route, obj, t, false);
    let bounds = tree::read_bounds(route, obj, t);
    // Named as the tree names them (Chromium's come from GetName), so the
    // actions a fresh read finds are the ones the state listed.
    let actions = async {
        super::actions::names(route, obj, t)
            .await
            .unwrap_or_default()
    };
    let text = async {
        super::bus::call::<_, String>(
            route,
            obj,
            TEXT,
            "GetText",
            &(0i32, tree::MAX_VALUE_CHARS),
            t,
        )
        .await
        .ok()
    };
    let range = async { tree::read_range(route, obj, t).await.ok() };
    let ((base, bounds), (actions, (text, range))) = future::zip(
        future::zip(base, bounds),
        future::zip(actions, future::zip(text, range)),
    )
    .await;
    let base = base?;
    let has = |i: &str| tree::has(&base.ifaces, i);
    let extra = Extra {
        bounds: bounds.filter(|_| has(COMPONENT)),
        actions: if has(ACTION) { actions } else { Vec::new() },
        value: text.filter(|_| has(TEXT)),
        range: range.filter(|_| has(VALUE)),
    };
    Ok((base, extra))
}

impl A11y {
    /// A fresh read of `obj` (of `pid`) as a11y_element gives it, with
    /// bounds in root-window coordinates.
    pub(super) fn fresh_node(
        &mut self,
        route: &Route,
        obj: &Obj,
        pid: u32,
        xwins: &[Window],
    ) -> Result<Node> {
        let window = self.window_of.get(&obj.to_ref()).cloned();
        let win_facts = async {
            match &window {
                Some(w) => {
                    let name =
                        super::bus::property::<String>(route, w, ACCESSIBLE, "Name", CALL_TIMEOUT);
                    let (name, own) = future::zip(name, extents(route, w)).await;
                    Some((name.unwrap_or_default(), own))
                }
                None => None,
            }
        };
        let (read, win_facts) = async_io::block_on(future::zip(read_node(route, obj), win_facts));
        let (base, extra) = read.map_err(|e| element_error(obj, "reading the element", e))?;
        if base.states.iter().any(|s| s == "defunct") {
            return Err(stale(obj, "the toolkit marks it defunct"));
        }
        let mut node = tree::node(obj, -1, 0, &base, extra);
        if let Some(b) = &mut node.bounds {
            let (dx, dy) = match win_facts {
                Some((name, own)) => match (own, match_x_window(xwins, pid, &name, own)) {
                    (Some(own), Some(x)) => offset(own, x),
                    _ => (0, 0),
                },
                None => self.window_offset(route, obj, pid, xwins),
            };
            b.x += dx;
            b.y += dy;
        }
        Ok(node)
    }
}

/// The stale_element error for an element that changed since it was seen.
pub fn changed_error(obj: &Obj, what: &str, why: String, node: &Node) -> Error {
    Error::new(
        Code::StaleElement,
        format!(
            "element {} has changed ({why}); nothing was done",
            obj.to_ref()
        ),
        "Read the tree again (a11y_tree) and use a ref from it.",
    )
    .with_data("changed", serde_json::json!(what))
    .with_data("node", serde_json::to_value(node).unwrap_or(Value::Null))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(role: &str, name: &str, bounds: Option<Rect>) -> Node {
        Node {
            reference: ":1.2/x".into(),
            parent: -1,
            depth: 0,
            role: role.into(),
            name: name.into(),
            description: None,
            value: None,
            range: None,
            states: vec![],
            bounds,
            actions: vec![],
            interfaces: vec![],
        }
    }

    #[test]
    fn changes_are_named() {
        let r = Rect {
            x: 10,
            y: 20,
            width: 30,
            height: 40,
        };
        let e = Expect {
            role: "check box".into(),
            name: "A".into(),
            bounds: Some(r),
        };
        assert_eq!(e.changed(&node("check box", "A", Some(r))), None);
        assert_eq!(
            e.changed(&node("push button", "A", Some(r))).unwrap().0,
            "role"
        );
        assert_eq!(
            e.changed(&node("check box", "B", Some(r))).unwrap().0,
            "name"
        );
        let moved = Rect { x: 11, ..r };
        assert_eq!(
            e.changed(&node("check box", "A", Some(moved))).unwrap().0,
            "bounds"
        );
        assert_eq!(
            e.changed(&node("check box", "A", None)).unwrap().0,
            "bounds"
        );
        // An unknown place matches an unknown place, however the toolkit spells it.
        let e = Expect { bounds: None, ..e };
        let hidden = Rect {
            x: i32::MIN,
            y: i32::MIN,
            width: 5,
            height: 5,
        };
        assert_eq!(e.changed(&node("check box", "A", Some(hidden))), None);
        assert_eq!(
            e.changed(&node("check box", "A", Some(Rect { width: 0, ..r }))),
            None
        );
    }
}
