//! Reading several properties of one interface, without crashing Qt 5.
//!
//! `org.freedesktop.DBus.Properties.GetAll` is one call for all of an
//! interface's properties, which the tree reads use. Qt 5's AT-SPI bridge
//! crashes its app on it: PyQt5 on Qt 5.15.8 (Debian 12) dies with a
//! segmentation fault on `GetAll("org.a11y.atspi.Accessible")`, while
//! `Get` of each property works. So for an app whose `ToolkitName` is "Qt"
//! the properties are read one `Get` each; every
//! other app keeps the single `GetAll`. The toolkit is asked once per bus
//! name (a unique name is never reused while the bus runs).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use zbus::zvariant::OwnedValue;

use super::bus::{self, CallError, Obj, Route};

const PROPERTIES: &str = "org.freedesktop.DBus.Properties";
const APPLICATION: &str = "org.a11y.atspi.Application";
const ROOT: &str = "/org/a11y/atspi/accessible/root";

/// Bus name → whether that app's toolkit is Qt.
static QT_APPS: Mutex<Option<HashMap<String, bool>>> = Mutex::new(None);

/// The named properties of `iface` on `obj`, like `GetAll` (a property the
/// object lacks is left out).
pub async fn get_all(
    route: &Route,
    obj: &Obj,
    iface: &str,
    names: &[&'static str],
    limit: Duration,
) -> std::result::Result<HashMap<String, OwnedValue>, CallError> {
    if !is_qt(route, &obj.bus, limit).await {
        return bus::call::<_, HashMap<String, OwnedValue>>(
            route,
            obj,
            PROPERTIES,
            "GetAll",
            &(iface,),
            limit,
        )
        .await;
    }
    // One after the other: only Qt apps come here, and the nodes of a
    // level are read in parallel anyway.
    let mut out = HashMap::new();
    for &name in names {
        match bus::call::<_, OwnedValue>(route, obj, PROPERTIES, "Get", &(iface, name), limit).await
        {
            Ok(v) => {
                out.insert(name.to_owned(), v);
            }
            Err(e @ CallError::Timeout(_)) => return Err(e),
            Err(_) => {}
        }
    }
    Ok(out)
}

async fn is_qt(route: &Route, bus_name: &str, limit: Duration) -> bool {
    if let Some(known) = QT_APPS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .get(bus_name)
    {
        return *known;
    }
    let root = Obj {
        bus: bus_name.to_owned(),
        path: ROOT.to_owned(),
    };
    let qt = match bus::property::<String>(route, &root, APPLICATION, "ToolkitName", limit).await {
        Ok(name) => name == "Qt",
        // Unknown this time: ask again next time, and meanwhile take the
        // careful way, which works for every toolkit.
        Err(_) => return true,
    };
    QT_APPS
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(bus_name.to_owned(), qt);
    qt
}
