//! The toolkit's own list of its accessible objects (org.a11y.atspi.Cache
//! GetItems): role, name, description, states, interfaces, parent, index in
//! the parent and child count of every object it holds, in one call, where
//! a walk would spend five calls per node.
//!
//! What the toolkit reads into each item is live (GTK 3's bridge and GTK 4
//! read the widget when answering), but which objects it holds is not
//! always complete: GTK 3 leaves out the children of objects that manage
//! their descendants (big lists and tables), GTK 4 holds only the objects a
//! client has already been given. So a parent's children come from here only
//! when the items with that parent are exactly its child count, at indexes
//! 0..n; anything else is read with GetChildren, and an object not held here
//! is read call by call, as without a cache.
//!
//! The parents are another matter: GTK 4.8 gives its stack pages' objects
//! as the parents of their contents, where GetChildren (and so every other
//! client) skips them, which would add levels and nodes to the tree. Only
//! the cache of at-spi2-atk (toolkit name "gtk": GTK 3, and every ATK app)
//! is trusted for children; for the others (GTK 4 says "GTK", Qt "Qt") the
//! cache gives the nodes' own facts and GetChildren the structure.

use std::collections::HashMap;
use std::time::Duration;

use zbus::zvariant::OwnedObjectPath;

use super::bus::{self, Obj, Route};
use super::tree::{role_name, state_names, Base};

const CACHE_PATH: &str = "/org/a11y/atspi/cache";
const CACHE: &str = "org.a11y.atspi.Cache";

/// One GetItems item (AT-SPI 2.x, `((so)(so)(so)iiassusau)`): the object,
/// its application, its parent, its index in the parent, its child count,
/// interfaces, name, role, description and states.
type Item = (
    (String, OwnedObjectPath),
    (String, OwnedObjectPath),
    (String, OwnedObjectPath),
    i32,
    i32,
    Vec<String>,
    String,
    u32,
    String,
    Vec<u32>,
);

#[derive(Default)]
pub struct Cache {
    bases: HashMap<Obj, Base>,
    /// Parent → (index in the parent, child).
    kids: HashMap<Obj, Vec<(i32, Obj)>>,
}

impl Cache {
    pub fn len(&self) -> usize {
        self.bases.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bases.is_empty()
    }

    /// The object's facts, without its children.
    pub fn base(&self, obj: &Obj) -> Option<Base> {
        self.bases.get(obj).cloned()
    }

    /// The object's children in order, when the cache holds all of them.
    pub fn children(&self, obj: &Obj, child_count: i32) -> Option<Vec<Obj>> {
        if child_count <= 0 {
            return (child_count == 0).then(Vec::new);
        }
        let kids = self.kids.get(obj)?;
        if kids.len() != child_count as usize {
            return None;
        }
        let mut sorted: Vec<&(i32, Obj)> = kids.iter().collect();
        sorted.sort_by_key(|(i, _)| *i);
        if sorted.iter().enumerate().any(|(n, (i, _))| *i != n as i32) {
            return None;
        }
        Some(sorted.into_iter().map(|(_, o)| o.clone()).collect())
    }

    fn from_items(app: &str, items: Vec<Item>, trust_children: bool) -> Cache {
        let mut cache = Cache::default();
        for (obj, _app, parent, index, child_count, ifaces, name, role, description, states) in
            items
        {
            let obj = Obj::from_wire(obj);
            // Only the app's own objects: an embedded one is another app's
            // to describe.
            if obj.is_null() || obj.bus != app {
                continue;
            }
            let parent = Obj::from_wire(parent);
            if trust_children && !parent.is_null() && index >= 0 {
                cache
                    .kids
                    .entry(parent)
                    .or_default()
                    .push((index, obj.clone()));
            }
            cache.bases.insert(
                obj,
                Base {
                    role: role_name(role),
                    name,
                    description,
                    states: state_names(&states),
                    ifaces,
                    children: Vec::new(),
                    child_count,
                },
            );
        }
        cache
    }
}

/// The app's cache, or None when it has none (or answers in another
/// shape): the walk then reads every object itself.
pub async fn read(route: &Route, app: &str, limit: Duration) -> Option<Cache> {
    let obj = Obj {
        bus: app.to_owned(),
        path: CACHE_PATH.to_owned(),
    };
    let root = Obj {
        bus: app.to_owned(),
        path: "/org/a11y/atspi/accessible/root".to_owned(),
    };
    let items = bus::call::<_, Vec<Item>>(route, &obj, CACHE, "GetItems", &(), limit);
    let toolkit = bus::property::<String>(
        route,
        &root,
        "org.a11y.atspi.Application",
        "ToolkitName",
        limit,
    );
    let (items, toolkit) = futures_lite::future::zip(items, toolkit).await;
    let trust_children = toolkit.is_ok_and(|t| t == "gtk");
    match items {
        Ok(items) => Some(Cache::from_items(app, items, trust_children)),
        Err(e) => {
            log_debug!("no accessibility cache from {app}: {e}");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wire(bus: &str, path: &str) -> (String, OwnedObjectPath) {
        (
            bus.to_owned(),
            OwnedObjectPath::try_from(path.to_owned()).unwrap(),
        )
    }

    fn item(path: &str, parent: &str, index: i32, child_count: i32) -> Item {
        (
            wire(":1.5", path),
            wire(":1.5", "/org/a11y/atspi/accessible/root"),
            wire(":1.5", parent),
            index,
            child_count,
            vec!["org.a11y.atspi.Accessible".into()],
            format!("n{path}"),
            atspi_common::Role::Button as u32,
            String::new(),
            vec![1 << 4, 0],
        )
    }

    fn obj(path: &str) -> Obj {
        Obj {
            bus: ":1.5".into(),
            path: path.into(),
        }
    }

    #[test]
    fn children_only_when_complete() {
        let cache = Cache::from_items(
            ":1.5",
            vec![
                item("/a", "/r", 0, 2),
                item("/b", "/a", 1, 0),
                item("/c", "/a", 0, 0),
                item("/d", "/r", 1, 3),
                item("/e", "/d", 0, 0),
                item("/f", "/d", 0, 0),
                item("/g", "/d", 2, 0),
            ],
            true,
        );
        assert_eq!(
            cache.children(&obj("/a"), 2),
            Some(vec![obj("/c"), obj("/b")])
        );
        // Fewer items than the child count: not all of them are held.
        assert_eq!(cache.children(&obj("/r"), 3), None);
        // Three items but index 1 missing and 0 twice.
        assert_eq!(cache.children(&obj("/d"), 3), None);
        assert_eq!(cache.children(&obj("/c"), 0), Some(vec![]));
        assert_eq!(cache.children(&obj("/x"), -1), None);
        let b = cache.base(&obj("/b")).unwrap();
        assert_eq!(b.role, "push button");
        assert_eq!(b.name, "n/b");
        assert_eq!(b.states, vec!["checked".to_owned()]);
    }

    #[test]
    fn untrusted_parents_give_no_children() {
        let cache = Cache::from_items(":1.5", vec![item("/a", "/r", 0, 0)], false);
        assert_eq!(cache.children(&obj("/r"), 1), None);
        assert!(cache.base(&obj("/a")).is_some());
    }

    #[test]
    fn other_apps_objects_are_left_out() {
        let mut other = item("/z", "/r", 0, 0);
        other.0 = wire(":1.9", "/z");
        let cache = Cache::from_items(":1.5", vec![other, item("/a", "/r", 0, 0)], true);
        assert_eq!(cache.len(), 1);
        assert!(cache.base(&obj("/a")).is_some());
    }
}
