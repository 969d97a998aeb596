//! Mutter's D-Bus APIs: DisplayConfig for the monitors, one RemoteDesktop
//! session with a ScreenCast session linked to it for input and frames.
//!
//! The sessions live as long as the helper's bus connection: mutter stops
//! them when their creator leaves the bus, so a crashed helper leaves no
//! stream or virtual input device behind.

use std::collections::HashMap;
use std::time::Duration;

use futures_lite::StreamExt;
use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};
use zbus::{Connection, MatchRule, MessageStream};

use crate::a11y::bus::with_timeout;
use crate::error::{Code, Error, Result};

const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest wait for mutter to announce a stream's PipeWire node.
const NODE_TIMEOUT: Duration = Duration::from_secs(20);

const DISPLAY_CONFIG: &str = "org.gnome.Mutter.DisplayConfig";
const REMOTE_DESKTOP: &str = "org.gnome.Mutter.RemoteDesktop";
const SCREEN_CAST: &str = "org.gnome.Mutter.ScreenCast";

/// One monitor as mutter's DisplayConfig describes it.
#[derive(Clone, Debug)]
pub struct Monitor {
    /// The connector (e.g. "Meta-0" for a virtual monitor, "eDP-1").
    pub connector: String,
    pub x: i32,
    pub y: i32,
    /// The current mode, in pixels.
    pub width: i32,
    pub height: i32,
    pub scale: f64,
    pub primary: bool,
    /// Whether the layout is in logical pixels (a scaled monitor then
    /// covers mode / scale of the layout).
    pub logical_layout: bool,
}

/// A monitor's ScreenCast stream: its object path (the input methods name
/// it) and the PipeWire node carrying its frames.
#[derive(Clone, Debug)]
pub struct Stream {
    pub connector: String,
    pub path: String,
    pub node: u32,
}

/// The helper's sessions on the session bus.
pub struct Session {
    conn: Connection,
    remote: OwnedObjectPath,
    pub streams: Vec<Stream>,
}

fn unavailable(what: impl std::fmt::Display) -> Error {
    Error::new(
        Code::DisplayUnavailable,
        format!("cannot reach GNOME's remote desktop service: {what}"),
        "Run deskhand inside the GNOME session (its DBUS_SESSION_BUS_ADDRESS), on mutter 43 or later.",
    )
}

fn run<T>(what: &str, fut: impl std::future::Future<Output = zbus::Result<T>>) -> Result<T> {
    async_io::block_on(with_timeout(CALL_TIMEOUT, fut))
        .map_err(|e| unavailable(format!("{what}: {e}")))
}

async fn call<B, R>(
    conn: &Connection,
    dest: &str,
    path: &str,
    iface: &str,
    method: &str,
    body: &B,
) -> zbus::Result<R>
where
    B: serde::Serialize + zbus::zvariant::DynamicType,
    R: serde::de::DeserializeOwned + zbus::zvariant::Type,
{
    let reply = conn
        .call_method(Some(dest), path, Some(iface), method, body)
        .await?;
    reply.body().deserialize::<R>()
}

type MonitorSpec = (String, String, String, String);
type Mode = (
    String,
    i32,
    i32,
    f64,
    f64,
    Vec<f64>,
    HashMap<String, OwnedValue>,
);
type PhysicalMonitor = (MonitorSpec, Vec<Mode>, HashMap<String, OwnedValue>);
type LogicalMonitor = (
    i32,
    i32,
    f64,
    u32,
    bool,
    Vec<MonitorSpec>,
    HashMap<String, OwnedValue>,
);
type State = (
    u32,
    Vec<PhysicalMonitor>,
    Vec<LogicalMonitor>,
    HashMap<String, OwnedValue>,
);

/// Connects to the session bus.
pub fn connect() -> Result<Connection> {
    run("connecting to the session bus", async {
        zbus::connection::Builder::session()?.build().await
    })
}

/// The monitors in mutter's current layout, primary first.
pub fn monitors(conn: &Connection) -> Result<Vec<Monitor>> {
    let (_, physical, logical, props): State = run(
        "DisplayConfig.GetCurrentState",
        call(
            conn,
            DISPLAY_CONFIG,
            "/org/gnome/Mutter/DisplayConfig",
            DISPLAY_CONFIG,
            "GetCurrentState",
            &(),
        ),
    )?;
    // layout-mode 1 is logical, 2 physical (mutter's MetaLogicalMonitorLayoutMode).
    let logical_layout = props
        .get("layout-mode")
        .and_then(|v| u32::try_from(v).ok())
        .is_some_and(|m| m == 1);
    let mut out = Vec::new();
    for (x, y, scale, _transform, primary, specs, _) in logical {
        for spec in specs {
            let Some((_, modes, _)) = physical.iter().find(|(s, _, _)| *s == spec) else {
                continue;
            };
            let current = modes.iter().find(|m| {
                m.6.get("is-current")
                    .and_then(|v| bool::try_from(v).ok())
                    .unwrap_or(false)
            });
            let Some(mode) = current else { continue };
            out.push(Monitor {
                connector: spec.0.clone(),
                x,
                y,
                width: mode.1,
                height: mode.2,
                scale,
                primary,
                logical_layout,
            });
        }
    }
    out.sort_by_key(|m| !m.primary);
    Ok(out)
}

impl Session {
    /// Creates a RemoteDesktop session, a ScreenCast session linked to it
    /// recording every monitor (cursor hidden, as X11 captures are), and
    /// starts them; returns once mutter named each stream's PipeWire node.
    pub fn start(conn: Connection, monitors: &[Monitor]) -> Result<Session> {
        let remote: OwnedObjectPath = run(
            "RemoteDesktop.CreateSession",
            call(
                &conn,
                REMOTE_DESKTOP,
                "/org/gnome/Mutter/RemoteDesktop",
                REMOTE_DESKTOP,
                "CreateSession",
                &(),
            ),
        )?;
        let id: OwnedValue = run(
            "reading the remote desktop SessionId",
            call(
                &conn,
                REMOTE_DESKTOP,
                remote.as_str(),
                "org.freedesktop.DBus.Properties",
                "Get",
                &("org.gnome.Mutter.RemoteDesktop.Session", "SessionId"),
            ),
        )?;
        let id = String::try_from(id)
            .map_err(|e| unavailable(format!("SessionId is not a string: {e}")))?;
        let mut props: HashMap<&str, Value<'_>> = HashMap::new();
        props.insert("remote-desktop-session-id", Value::from(id.as_str()));
        let cast: OwnedObjectPath = run(
            "ScreenCast.CreateSession",
            call(
                &conn,
                SCREEN_CAST,
                "/org/gnome/Mutter/ScreenCast",
                SCREEN_CAST,
                "CreateSession",
                &(props,),
            ),
        )?;
        let mut pending = Vec::new();
        for m in monitors {
            let mut props: HashMap<&str, Value<'_>> = HashMap::new();
            // 0: hidden. The pointer is not part of an X11 screenshot either.
            props.insert("cursor-mode", Value::U32(0));
            let stream: OwnedObjectPath = run(
                "ScreenCast.Session.RecordMonitor",
                call(
                    &conn,
                    SCREEN_CAST,
                    cast.as_str(),
                    "org.gnome.Mutter.ScreenCast.Session",
                    "RecordMonitor",
                    &(m.connector.as_str(), props),
                ),
            )?;
            // Subscribe before Start: the node is announced once, then.
            let rule = MatchRule::builder()
                .msg_type(zbus::message::Type::Signal)
                .interface("org.gnome.Mutter.ScreenCast.Stream")
                .and_then(|b| b.member("PipeWireStreamAdded"))
                .and_then(|b| b.path(stream.as_str().to_owned()))
                .map_err(|e| Error::internal(format!("building a match rule: {e}")))?
                .build()
                .to_owned();
            let signals = run(
                "subscribing to PipeWireStreamAdded",
                MessageStream::for_match_rule(rule, &conn, None),
            )?;
            pending.push((m.connector.clone(), stream, signals));
        }
        run(
            "RemoteDesktop.Session.Start",
            call::<_, ()>(
                &conn,
                REMOTE_DESKTOP,
                remote.as_str(),
                "org.gnome.Mutter.RemoteDesktop.Session",
                "Start",
                &(),
            ),
        )?;
        let mut streams = Vec::new();
        for (connector, path, mut signals) in pending {
            let node = async_io::block_on(with_timeout(NODE_TIMEOUT, async {
                loop {
                    match signals.next().await {
                        Some(Ok(msg)) => {
                            if let Ok((node,)) = msg.body().deserialize::<(u32,)>() {
                                return Ok(node);
                            }
                        }
                        Some(Err(e)) => return Err(e),
                        None => {
                            return Err(zbus::Error::Failure("the bus connection closed".into()))
                        }
                    }
                }
            }))
            .map_err(|e| {
                unavailable(format!(
                    "mutter did not announce the PipeWire node of {connector}'s stream: {e}"
                ))
            })?;
            streams.push(Stream {
                connector,
                path: path.as_str().to_owned(),
                node,
            });
        }
        Ok(Session {
            conn,
            remote,
            streams,
        })
    }

    fn notify<B>(&self, method: &str, body: &B) -> Result<()>
    where
        B: serde::Serialize + zbus::zvariant::DynamicType,
    {
        async_io::block_on(with_timeout(
            CALL_TIMEOUT,
            call::<_, ()>(
                &self.conn,
                REMOTE_DESKTOP,
                self.remote.as_str(),
                "org.gnome.Mutter.RemoteDesktop.Session",
                method,
                body,
            ),
        ))
        .map_err(|e| {
            Error::new(
                Code::Internal,
                format!("mutter refused {method}: {e}"),
                "Retry; if it keeps failing, the remote desktop session ended (see the helper's stderr).",
            )
        })
    }

    /// Moves the pointer to (x, y) in the stream's own coordinates.
    pub fn motion(&self, stream: &str, x: f64, y: f64) -> Result<()> {
        self.notify("NotifyPointerMotionAbsolute", &(stream, x, y))
    }

    /// Presses or releases an evdev button (BTN_LEFT is 0x110).
    pub fn button(&self, code: i32, pressed: bool) -> Result<()> {
        self.notify("NotifyPointerButton", &(code, pressed))
    }

    /// Scrolls `steps` wheel clicks on axis 0 (vertical) or 1 (horizontal).
    pub fn axis_discrete(&self, axis: u32, steps: i32) -> Result<()> {
        self.notify("NotifyPointerAxisDiscrete", &(axis, steps))
    }

    /// Presses or releases the key that types `keysym`.
    pub fn keysym(&self, keysym: u32, pressed: bool) -> Result<()> {
        self.notify("NotifyKeyboardKeysym", &(keysym, pressed))
    }
}
