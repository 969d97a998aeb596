//! Which input devices speak for the user. deskhand (and xdotool, and any
//! other client) injects input through XTEST, and the server reports
//! every such event with an XTEST slave device as its XI2 `sourceid`. So
//! only events from a slave device that is not an XTEST device may press
//! the tooltip's buttons: an allowlist of real hardware, not a blocklist
//! of deskhand's own device.

use x11rb::connection::Connection;
use x11rb::protocol::xinput::{self, ConnectionExt as _, DeviceType};
use x11rb::protocol::xproto::{AtomEnum, ConnectionExt as _};

/// The variable that names devices to trust although they are XTEST
/// devices. Test-only: Xvfb has no input hardware, so the tests make a
/// second master device and inject through its XTEST slave, and name that
/// slave here. deskhand never sets it; a model cannot set a helper's
/// environment.
pub const TRUSTED_ENV: &str = "DESKHAND_TEACH_TRUSTED_DEVICES";

/// Why a device was or was not taken as the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub trusted: bool,
    pub name: String,
    pub why: &'static str,
}

/// The devices named in `$DESKHAND_TEACH_TRUSTED_DEVICES` (comma
/// separated), read once at startup.
pub fn trusted_names_from_env() -> Vec<String> {
    std::env::var(TRUSTED_ENV)
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Decides whether events whose XI2 source is `sourceid` come from the
/// user. Anything the server will not describe is not the user.
pub fn judge<C: Connection>(conn: &C, sourceid: u16, trusted_names: &[String]) -> Verdict {
    let info = conn
        .xinput_xi_query_device(sourceid)
        .ok()
        .and_then(|c| c.reply().ok())
        .and_then(|r| r.infos.into_iter().find(|i| i.deviceid == sourceid));
    let Some(info) = info else {
        return Verdict {
            trusted: false,
            name: format!("device {sourceid}"),
            why: "the server does not describe it",
        };
    };
    let name = String::from_utf8_lossy(&info.name).into_owned();
    if trusted_names.contains(&name) {
        return Verdict {
            trusted: true,
            name,
            why: "named in DESKHAND_TEACH_TRUSTED_DEVICES (tests only)",
        };
    }
    if !matches!(
        info.type_,
        DeviceType::SLAVE_POINTER | DeviceType::SLAVE_KEYBOARD | DeviceType::FLOATING_SLAVE
    ) {
        return Verdict {
            trusted: false,
            name,
            why: "it is not a physical (slave) device",
        };
    }
    if is_xtest(conn, sourceid) || name.contains("XTEST") {
        return Verdict {
            trusted: false,
            name,
            why: "it is an XTEST device, through which programs (deskhand among them) inject input",
        };
    }
    Verdict {
        trusted: true,
        name,
        why: "it is a physical input device",
    }
}

/// The server marks its XTEST slaves with the "XTEST Device" property.
fn is_xtest<C: Connection>(conn: &C, deviceid: u16) -> bool {
    let Ok(atom) = conn
        .intern_atom(true, b"XTEST Device")
        .map_err(drop)
        .and_then(|c| c.reply().map_err(drop))
    else {
        return false;
    };
    if atom.atom == 0 {
        return false;
    }
    conn.xinput_xi_get_property(deviceid, false, atom.atom, u32::from(AtomEnum::ANY), 0, 1)
        .ok()
        .and_then(|c| c.reply().ok())
        .is_some_and(|r| match r.items {
            xinput::XIGetPropertyItems::Data8(d) => d.first().is_some_and(|v| *v != 0),
            xinput::XIGetPropertyItems::Data16(d) => d.first().is_some_and(|v| *v != 0),
            xinput::XIGetPropertyItems::Data32(d) => d.first().is_some_and(|v| *v != 0),
            _ => false,
        })
}
