//! The connections to AT-SPI (the accessibility bus and the apps' own
//! peer-to-peer sockets) and one bounded D-Bus call on them.
//!
//! zbus runs the socket on its own internal executor thread; the helper's
//! single request thread blocks on each request's futures with
//! `async_io::block_on`. That keeps the JSON-RPC loop synchronous (one
//! request at a time, as the protocol says) while one request still has
//! hundreds of D-Bus calls outstanding at once, and needs no tokio runtime.

use std::future::Future;
use std::time::{Duration, Instant};

use async_io::Timer;
use futures_lite::future;
use serde::de::DeserializeOwned;
use serde::Serialize;
use zbus::connection::Builder;
use zbus::zvariant::{DynamicType, OwnedObjectPath};
use zbus::Connection;

use crate::error::{Code, Error, Result};

/// How long connecting (session bus, GetAddress, accessibility bus) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// The hint every a11y_unavailable error carries.
pub const ENABLE_HINT: &str = "Turn accessibility on for the session: install at-spi2-core, make sure at-spi-bus-launcher runs on the session bus (GNOME and most desktops start it; elsewhere run `/usr/libexec/at-spi-bus-launcher --launch-immediately`), and `gsettings set org.gnome.desktop.interface toolkit-accessibility true`; then restart the app (Qt apps also need QT_ACCESSIBILITY=1).";

pub fn unavailable(message: impl Into<String>) -> Error {
    Error::new(Code::A11yUnavailable, message, ENABLE_HINT)
}

/// An accessible object: the bus name of its app and its object path.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Obj {
    pub bus: String,
    pub path: String,
}

impl Obj {
    /// The protocol's opaque ref: the unique bus name, then the path
    /// (unique names never contain '/').
    pub fn to_ref(&self) -> String {
        format!("{}{}", self.bus, self.path)
    }

    pub fn parse_ref(r: &str) -> Option<Obj> {
        let i = r.find('/')?;
        let (bus, path) = r.split_at(i);
        if !bus.starts_with(':') || bus.len() < 2 || path.contains("//") {
            return None;
        }
        zbus::zvariant::ObjectPath::try_from(path).ok()?;
        Some(Obj {
            bus: bus.to_owned(),
            path: path.to_owned(),
        })
    }

    pub fn from_wire((bus, path): (String, OwnedObjectPath)) -> Obj {
        Obj {
            bus,
            path: path.as_str().to_owned(),
        }
    }

    /// The null reference toolkits use for "no object".
    pub fn is_null(&self) -> bool {
        self.bus.is_empty() || self.path == "/org/a11y/atspi/null"
    }
}

/// Connects to the accessibility bus: AT_SPI_BUS_ADDRESS when set, else
/// the address org.a11y.Bus gives on the session bus.
pub fn connect() -> Result<Connection> {
    let started = Instant::now();
    let address = match std::env::var("AT_SPI_BUS_ADDRESS") {
        Ok(a) if !a.is_empty() => a,
        _ => {
            let session = bounded(CONNECT_TIMEOUT, "connecting to the session bus", async {
                Builder::session()?.build().await
            })
            .map_err(|e| {
                unavailable(format!(
                    "no session bus, so no accessibility bus either ({})",
                    e.message
                ))
            })?;
            let reply = bounded(
                CONNECT_TIMEOUT,
                "asking org.a11y.Bus for the accessibility bus",
                async {
                    session
                        .call_method(
                            Some("org.a11y.Bus"),
                            "/org/a11y/bus",
                            Some("org.a11y.Bus"),
                            "GetAddress",
                            &(),
                        )
                        .await
                },
            )
            .map_err(|e| {
                unavailable(format!(
                    "the session has no accessibility bus: {}",
                    e.message
                ))
            })?;
            reply
                .body()
                .deserialize::<String>()
                .map_err(|e| unavailable(format!("org.a11y.Bus.GetAddress answered oddly: {e}")))?
        }
    };
    let conn = bounded(
        CONNECT_TIMEOUT,
        "connecting to the accessibility bus",
        async { Builder::address(address.as_str())?.build().await },
    )
    .map_err(|e| {
        unavailable(format!(
            "cannot reach the accessibility bus at {address}: {}",
            e.message
        ))
    })?;
    log_info!(
        "connected to the accessibility bus in {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    Ok(conn)
}

/// Runs `fut` for at most `limit`; a zbus error or the timeout becomes an
/// Error naming `what`.
pub fn bounded<T, F>(limit: Duration, what: &str, fut: F) -> Result<T>
where
    F: Future<Output = zbus::Result<T>>,
{
    async_io::block_on(with_timeout(limit, fut)).map_err(|e| e.into_error(what))
}

/// Why one D-Bus call failed.
#[derive(Debug)]
pub enum CallError {
    Timeout(Duration),
    Bus(zbus::Error),
}

impl CallError {
    /// The D-Bus error name, when the peer answered with an error.
    pub fn dbus_name(&self) -> Option<String> {
        match self {
            CallError::Bus(zbus::Error::MethodError(name, _, _)) => Some(name.as_str().to_owned()),
            _ => None,
        }
    }

    pub fn dbus_message(&self) -> String {
        match self {
            CallError::Bus(zbus::Error::MethodError(_, Some(m), _)) => m.clone(),
            other => other.to_string(),
        }
    }

    /// The object or its app is gone.
    pub fn is_gone(&self) -> bool {
        match self.dbus_name().as_deref() {
            Some("org.freedesktop.DBus.Error.UnknownObject")
            | Some("org.freedesktop.DBus.Error.ServiceUnknown")
            | Some("org.freedesktop.DBus.Error.NameHasNoOwner")
            | Some("org.freedesktop.DBus.Error.NoReply") => true,
            // GDBus answers a path nobody registered with UnknownMethod
            // "Object does not exist at path ...".
            Some("org.freedesktop.DBus.Error.UnknownMethod") => {
                self.dbus_message().contains("does not exist at path")
            }
            _ => false,
        }
    }

    /// The object lacks the interface or method.
    pub fn is_unsupported(&self) -> bool {
        matches!(
            self.dbus_name().as_deref(),
            Some("org.freedesktop.DBus.Error.UnknownInterface")
                | Some("org.freedesktop.DBus.Error.UnknownMethod")
                | Some("org.freedesktop.DBus.Error.UnknownProperty")
                | Some("org.freedesktop.DBus.Error.NotSupported")
        ) && !self.is_gone()
    }

    /// The connection itself is broken: reconnect on the next request.
    pub fn is_connection_lost(&self) -> bool {
        matches!(
            self,
            CallError::Bus(zbus::Error::InputOutput(_)) | CallError::Bus(zbus::Error::Handshake(_))
        )
    }

    pub fn into_error(self, what: &str) -> Error {
        match self {
            CallError::Timeout(d) => Error::new(
                Code::A11yUnavailable,
                format!("{what}: no answer within {} ms", d.as_millis()),
                "The app is busy or hung; wait and retry, or give a larger deadline_ms.",
            ),
            e if e.is_connection_lost() => unavailable(format!("{what}: the accessibility bus connection broke: {e}")),
            e => Error::new(
                Code::A11yUnavailable,
                format!("{what}: {e}"),
                "Retry; if it keeps failing, the app's accessibility support is broken (see the helper's stderr).",
            ),
        }
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Timeout(d) => write!(f, "no answer within {} ms", d.as_millis()),
            CallError::Bus(e) => write!(f, "{e}"),
        }
    }
}

pub async fn with_timeout<T, F>(limit: Duration, fut: F) -> std::result::Result<T, CallError>
where
    F: Future<Output = zbus::Result<T>>,
{
    future::or(async { fut.await.map_err(CallError::Bus) }, async {
        Timer::after(limit).await;
        Err(CallError::Timeout(limit))
    })
    .await
}

/// Where the calls of one request go: the accessibility bus, and for each
/// app (by unique bus name) that gave one, its direct connection. Cheap to
/// clone: connections are shared handles.
#[derive(Clone)]
pub struct Route {
    pub bus: Connection,
    pub direct: std::collections::HashMap<String, Connection>,
    /// Set when a call found a direct connection broken.
    lost: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl Route {
    pub fn bus_only(bus: Connection) -> Route {
        Route {
            bus,
            direct: Default::default(),
            lost: Default::default(),
        }
    }

    /// Whether a call on this route found a direct connection broken.
    pub fn direct_lost(&self) -> bool {
        self.lost.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Which way calls to the app with this unique name go, as a11y_tree's
    /// `via` says.
    pub fn via(&self, bus_name: &str) -> &'static str {
        if self.is_direct(bus_name) {
            "p2p"
        } else {
            "bus"
        }
    }

    /// Whether calls to the app with this unique name skip the bus daemon.
    pub fn is_direct(&self, bus_name: &str) -> bool {
        self.direct.contains_key(bus_name)
    }
}

/// Connects peer-to-peer to an app's own socket (the address its
/// org.a11y.atspi.Application.GetApplicationBusAddress gives). There is no
/// bus daemon on it: no Hello, no names, no match rules.
pub fn connect_direct(
    address: &str,
    limit: Duration,
) -> std::result::Result<Connection, CallError> {
    async_io::block_on(with_timeout(limit, async {
        Builder::address(address)?.p2p().build().await
    }))
}

/// One method call on an accessible object, deserialized as `R`, bounded
/// by `limit`: on the app's direct connection when the route has one (with
/// no destination, since a peer-to-peer connection has no names), else
/// through the bus.
pub async fn call<B, R>(
    route: &Route,
    obj: &Obj,
    iface: &str,
    method: &str,
    body: &B,
    limit: Duration,
) -> std::result::Result<R, CallError>
where
    B: Serialize + DynamicType,
    R: DeserializeOwned + zbus::zvariant::Type,
{
    let (conn, dest) = match route.direct.get(&obj.bus) {
        Some(c) => (c, None),
        None => (&route.bus, Some(obj.bus.as_str())),
    };
    let reply = with_timeout(
        limit,
        conn.call_method(dest, obj.path.as_str(), Some(iface), method, body),
    )
    .await;
    let msg = match reply {
        Ok(m) => m,
        Err(e) => {
            // An error answer or a slow peer means the socket still works.
            let broken =
                matches!(&e, CallError::Bus(b) if !matches!(b, zbus::Error::MethodError(..)));
            if broken && dest.is_none() {
                route.lost.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            return Err(e);
        }
    };
    msg.body().deserialize::<R>().map_err(CallError::Bus)
}

/// One property of an accessible object.
pub async fn property<R>(
    route: &Route,
    obj: &Obj,
    iface: &str,
    name: &str,
    limit: Duration,
) -> std::result::Result<R, CallError>
where
    R: TryFrom<zbus::zvariant::OwnedValue>,
    R::Error: Into<zbus::zvariant::Error>,
{
    let v: zbus::zvariant::OwnedValue = call(
        route,
        obj,
        "org.freedesktop.DBus.Properties",
        "Get",
        &(iface, name),
        limit,
    )
    .await?;
    R::try_from(v).map_err(|e| CallError::Bus(zbus::Error::Variant(e.into())))
}
