//! Displays: the RandR 1.5 monitors (`xrandr --listmonitors`), in the
//! server's order, or the whole root window when there are none.

use std::collections::HashMap;

use serde::Serialize;
use x11rb::connection::Connection;
use x11rb::protocol::randr::ConnectionExt as _;
use x11rb::protocol::xproto::ConnectionExt as _;

use crate::error::{Error, Result};
use crate::types::{Point, Rect, Size};

/// One display (helpers/PROTOCOL.md, "displays").
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Display {
    pub id: u32,
    pub name: String,
    pub origin: Point,
    pub logical: Size,
    pub physical: Size,
    pub scale: f64,
    pub primary: bool,
    pub mm: Size,
}

impl Display {
    /// The display's area in root coordinates.
    pub fn rect(&self) -> Rect {
        Rect {
            x: self.origin.x,
            y: self.origin.y,
            width: self.logical.width,
            height: self.logical.height,
        }
    }
}

/// FNV-1a, 32 bit: a display's id is this hash of its name, so it stays the
/// same across helper restarts and reconnects.
pub fn fnv1a32(bytes: &[u8]) -> u32 {
    let mut hash: u32 = 0x811c_9dc5;
    for &b in bytes {
        hash ^= b as u32;
        hash = hash.wrapping_mul(0x0100_0193);
    }
    hash
}

/// A monitor as RandR reports it, its name resolved.
#[derive(Clone, Debug)]
pub struct Monitor {
    pub name: String,
    pub rect: Rect,
    pub mm: Size,
    pub primary: bool,
}

/// Builds the display list. With no monitors, the root is one display named
/// `screen`. Exactly one display is primary: the one RandR marks, else the
/// first (it is what `capture` takes by default).
pub fn from_monitors(monitors: Vec<Monitor>, root: Size, root_mm: Size) -> Vec<Display> {
    let monitors = if monitors.is_empty() {
        vec![Monitor {
            name: "screen".into(),
            rect: Rect {
                x: 0,
                y: 0,
                width: root.width,
                height: root.height,
            },
            mm: root_mm,
            primary: true,
        }]
    } else {
        monitors
    };
    let primary = monitors.iter().position(|m| m.primary).unwrap_or(0);
    monitors
        .into_iter()
        .enumerate()
        .map(|(i, m)| Display {
            id: fnv1a32(m.name.as_bytes()),
            name: m.name,
            origin: Point {
                x: m.rect.x,
                y: m.rect.y,
            },
            logical: m.rect.size(),
            physical: m.rect.size(),
            scale: 1.0,
            primary: i == primary,
            mm: m.mm,
        })
        .collect()
}

/// Queries the displays and the root window's current size in one round
/// trip (two the first time a monitor name is seen). `randr` is the
/// server's RandR version; `names` caches atom names, which never change
/// while the server runs.
pub fn query<C: Connection>(
    conn: &C,
    root: u32,
    randr: Option<(u32, u32)>,
    root_mm: Size,
    names: &mut HashMap<u32, String>,
) -> Result<(Vec<Display>, Size)> {
    let geometry = conn
        .get_geometry(root)
        .map_err(|e| Error::x11("sending GetGeometry", e))?;
    let monitors_cookie = if randr.is_some_and(|v| v >= (1, 5)) {
        Some(
            conn.randr_get_monitors(root, true)
                .map_err(|e| Error::x11("sending RRGetMonitors", e))?,
        )
    } else {
        None
    };
    let geometry = geometry
        .reply()
        .map_err(|e| Error::x11("reading the root geometry", e))?;
    let root_size = Size {
        width: geometry.width as u32,
        height: geometry.height as u32,
    };
    let infos = match monitors_cookie {
        Some(cookie) => {
            cookie
                .reply()
                .map_err(|e| Error::x11("reading RRGetMonitors", e))?
                .monitors
        }
        None => Vec::new(),
    };
    // Look up every new name before reading any reply.
    let mut unknown: Vec<u32> = infos
        .iter()
        .map(|m| m.name)
        .filter(|a| !names.contains_key(a))
        .collect();
    unknown.sort_unstable();
    unknown.dedup();
    let cookies = unknown
        .iter()
        .map(|&atom| conn.get_atom_name(atom).map(|c| (atom, c)))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|e| Error::x11("sending GetAtomName", e))?;
    for (atom, cookie) in cookies {
        let name = match cookie.reply() {
            Ok(r) => String::from_utf8_lossy(&r.name).into_owned(),
            Err(e) => {
                crate::log_warn!(
                    "monitor name atom {atom} has no name ({e}); calling it by the atom"
                );
                format!("monitor-{atom}")
            }
        };
        names.insert(atom, name);
    }
    let monitors = infos
        .iter()
        .filter(|m| m.width > 0 && m.height > 0)
        .map(|m| Monitor {
            name: names[&m.name].clone(),
            rect: Rect {
                x: m.x as i32,
                y: m.y as i32,
                width: m.width as u32,
                height: m.height as u32,
            },
            mm: Size {
                width: m.width_in_millimeters,
                height: m.height_in_millimeters,
            },
            primary: m.primary,
        })
        .collect();
    Ok((from_monitors(monitors, root_size, root_mm), root_size))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_ids() {
        // Reference values of FNV-1a 32.
        assert_eq!(fnv1a32(b""), 0x811c9dc5);
        assert_eq!(fnv1a32(b"a"), 0xe40c292c);
        assert_eq!(fnv1a32(b"foobar"), 0xbf9cf968);
        assert_eq!(fnv1a32(b"DP-1"), 498784119);
        assert_eq!(fnv1a32(b"screen"), fnv1a32("screen".as_bytes()));
    }

    fn monitor(name: &str, x: i32, primary: bool) -> Monitor {
        Monitor {
            name: name.into(),
            rect: Rect {
                x,
                y: 0,
                width: 1920,
                height: 1080,
            },
            mm: Size {
                width: 508,
                height: 286,
            },
            primary,
        }
    }

    #[test]
    fn keeps_server_order_and_primary() {
        let root = Size {
            width: 3840,
            height: 1080,
        };
        let d = from_monitors(
            vec![monitor("HDMI-1", 0, false), monitor("DP-1", 1920, true)],
            root,
            root,
        );
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].name, "HDMI-1");
        assert!(!d[0].primary);
        assert!(d[1].primary);
        assert_eq!(d[1].id, 498784119);
        assert_eq!(d[1].origin, Point { x: 1920, y: 0 });
        assert_eq!(d[1].logical, d[1].physical);
        assert_eq!(d[1].scale, 1.0);
    }

    #[test]
    fn first_is_primary_when_none_is_marked() {
        let root = Size {
            width: 1920,
            height: 1080,
        };
        let d = from_monitors(
            vec![monitor("a", 0, false), monitor("b", 0, false)],
            root,
            root,
        );
        assert!(d[0].primary && !d[1].primary);
    }

    #[test]
    fn falls_back_to_the_root() {
        let root = Size {
            width: 1024,
            height: 768,
        };
        let mm = Size {
            width: 270,
            height: 203,
        };
        let d = from_monitors(Vec::new(), root, mm);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].name, "screen");
        assert_eq!(d[0].id, fnv1a32(b"screen"));
        assert_eq!(
            d[0].rect(),
            Rect {
                x: 0,
                y: 0,
                width: 1024,
                height: 768
            }
        );
        assert_eq!(d[0].mm, mm);
        assert!(d[0].primary);
    }
}
