//! Peer-to-peer connections to apps, so that tree reads and actions skip
//! the accessibility bus daemon (every call through it is two hops and
//! two message parses in a daemon that serves the whole session).
//!
//! An app that supports it gives the address of a socket of its own with
//! org.a11y.atspi.Application.GetApplicationBusAddress (GTK 3's at-spi2-atk
//! does; GTK 4.8 has no such method). The pitfalls, and what is done:
//! - No address, an empty one, an error, or a socket that refuses (gone,
//!   another user's, a failed handshake): the app stays on the bus, and
//!   this is remembered for its unique name, which is never reused.
//! - The socket is the app's word, not the system's: the peer's pid (the
//!   kernel's SO_PEERCRED) must be the pid the bus daemon gives for the
//!   unique name, or the connection is dropped and the bus used, so no app
//!   can answer for another.
//! - A peer-to-peer connection has no bus daemon: no names, no match
//!   rules, no Hello, no events from the registry; calls carry no
//!   destination (bus::call), object paths and refs are the same as on the
//!   bus, and everything that needs the daemon or the registry (listing
//!   apps, pids, registering for events) still goes through the bus.
//! - The connection dies with the app (or its bridge): a call that finds it
//!   broken marks the route, the entry is dropped, and a read is done again
//!   through the bus; entries of apps that left the registry are dropped.
//! - Every call keeps its deadline; connecting has one too (CONNECT_LIMIT),
//!   so a hung app costs one bounded try, then the bus's own deadlines.
//!
//! `DESKHAND_A11Y_P2P=0` turns it off (to measure, or to rule it out).

use std::collections::HashMap;
use std::time::Duration;

use zbus::Connection;

use super::bus::{self, Obj, Route};

const APPLICATION: &str = "org.a11y.atspi.Application";
const ROOT_PATH: &str = "/org/a11y/atspi/accessible/root";
/// Asking for the address and connecting: an app that answers its bus calls
/// answers these in a few milliseconds.
const CONNECT_LIMIT: Duration = Duration::from_millis(1000);
/// More apps than anyone drives at once; beyond it every entry is dropped
/// (the ones in use reconnect on their next request).
const MAX_DIRECT: usize = 32;

enum Entry {
    Up(Connection),
    /// Why not: logged once, kept so the app is not asked again.
    Refused,
}

pub struct Directs {
    enabled: bool,
    entries: HashMap<String, Entry>,
}

impl Default for Directs {
    fn default() -> Directs {
        Directs {
            enabled: std::env::var("DESKHAND_A11Y_P2P").map_or(true, |v| v != "0"),
            entries: HashMap::new(),
        }
    }
}

impl Directs {
    /// `bus` extended with the direct connection to app `app` (unique
    /// name, of `pid`) when it has or can get one.
    pub fn route(&mut self, bus: &Route, app: &str, pid: u32) -> Route {
        let mut route = bus.clone();
        if !self.enabled || !app.starts_with(':') {
            return route;
        }
        if !self.entries.contains_key(app) {
            if self.entries.len() >= MAX_DIRECT {
                self.entries.clear();
            }
            let entry = match connect(bus, app, pid) {
                Ok(c) => {
                    log_info!("reading {app} (pid {pid}) over its own socket");
                    Entry::Up(c)
                }
                Err(why) => {
                    log_info!("reading {app} (pid {pid}) through the bus: {why}");
                    Entry::Refused
                }
            };
            self.entries.insert(app.to_owned(), entry);
        }
        if let Some(Entry::Up(c)) = self.entries.get(app) {
            route.direct.insert(app.to_owned(), c.clone());
        }
        route
    }

    /// Drops the connections the route found broken.
    pub fn forget_lost(&mut self, route: &Route) {
        if route.direct_lost() {
            for app in route.direct.keys() {
                log_info!("the direct connection to {app} broke; back to the bus");
                self.entries.remove(app);
            }
        }
    }

    /// Drops the entries of apps no longer on the bus.
    pub fn retain(&mut self, live: impl Fn(&str) -> bool) {
        self.entries.retain(|app, _| live(app));
    }
}

fn connect(bus: &Route, app: &str, pid: u32) -> Result<Connection, String> {
    let root = Obj {
        bus: app.to_owned(),
        path: ROOT_PATH.to_owned(),
    };
    let address = async_io::block_on(bus::call::<_, String>(
        bus,
        &root,
        APPLICATION,
        "GetApplicationBusAddress",
        &(),
        CONNECT_LIMIT,
    ))
    .map_err(|e| format!("it gives no address of its own ({e})"))?;
    if address.is_empty() {
        return Err("it gives no address of its own".into());
    }
    let conn = bus::connect_direct(&address, CONNECT_LIMIT)
        .map_err(|e| format!("its socket {address} refused: {e}"))?;
    let creds = async_io::block_on(bus::with_timeout(CONNECT_LIMIT, async {
        conn.peer_credentials().await.map_err(zbus::Error::from)
    }))
    .map_err(|e| format!("cannot tell who serves {address}: {e}"))?;
    match creds.process_id() {
        Some(p) if p == pid => Ok(conn),
        other => Err(format!(
            "{address} is served by pid {other:?}, not the app's pid {pid}"
        )),
    }
}
