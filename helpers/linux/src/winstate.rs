//! `window_state`: maximize, fullscreen, minimize or restore one top-level
//! window by asking the window manager, the way a pager or a taskbar does
//! (EWMH `_NET_WM_STATE` client messages, ICCCM iconify through
//! [`Wm::hide`] / [`Wm::restore`]). Nothing is typed or clicked, so the
//! pointer stays where it is; maximizing or fullscreening a window in the
//! background leaves it there, while restoring a minimized one maps it
//! back, which window managers answer by raising it.
//!
//! The result is read back from the window's own `_NET_WM_STATE`, so a
//! window manager that ignores the request is an error, not a silent
//! success.

use std::time::{Duration, Instant};

use serde::Serialize;
use x11rb::connection::Connection;
use x11rb::protocol::xproto::{AtomEnum, ClientMessageEvent, ConnectionExt, EventMask};

use crate::error::{Code, Error, Result};
use crate::server::Params;
use crate::windows::Wm;

x11rb::atom_manager! {
    StateAtoms: StateAtomsCookie {
        _NET_SUPPORTED,
        _NET_WM_STATE,
        _NET_WM_STATE_MAXIMIZED_VERT,
        _NET_WM_STATE_MAXIMIZED_HORZ,
        _NET_WM_STATE_FULLSCREEN,
        _NET_WM_STATE_HIDDEN,
    }
}

/// `_NET_WM_STATE` client-message actions (EWMH).
const REMOVE: u32 = 0;
const ADD: u32 = 1;
/// Source indication 2: the request comes from a pager or taskbar acting
/// for the user, which window managers honour even for a window in the
/// background.
const SOURCE_PAGER: u32 = 2;
/// How long to wait for the window manager to apply the change.
const APPLY_TIMEOUT: Duration = Duration::from_secs(3);
const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// The states `window_state` sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Normal,
    Maximized,
    Minimized,
    Fullscreen,
}

impl State {
    pub fn parse(name: &str) -> Option<State> {
        match name {
            "normal" => Some(State::Normal),
            "maximized" => Some(State::Maximized),
            "minimized" => Some(State::Minimized),
            "fullscreen" => Some(State::Fullscreen),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            State::Normal => "normal",
            State::Maximized => "maximized",
            State::Minimized => "minimized",
            State::Fullscreen => "fullscreen",
        }
    }
}

/// The result of `window_state` (PROTOCOL.md).
#[derive(Debug, Serialize)]
pub struct Applied {
    pub window: u32,
    pub state: &'static str,
    /// Whether anything had to change (false: it was in that state).
    pub changed: bool,
    /// The window's `_NET_WM_STATE` afterwards, as lower-case names without
    /// the prefix ("maximized_vert", "fullscreen", "hidden"…).
    pub net_wm_state: Vec<String>,
}

/// What the window is now, from its `_NET_WM_STATE` and the window list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Now {
    max_vert: bool,
    max_horz: bool,
    fullscreen: bool,
    minimized: bool,
}

impl Now {
    fn is(&self, s: State) -> bool {
        match s {
            State::Minimized => self.minimized,
            State::Fullscreen => self.fullscreen && !self.minimized,
            State::Maximized => {
                self.max_vert && self.max_horz && !self.fullscreen && !self.minimized
            }
            State::Normal => {
                !self.max_vert && !self.max_horz && !self.fullscreen && !self.minimized
            }
        }
    }
}

/// The params of `window_state`: `{"window": WindowId, "state": name}`.
pub(crate) fn params(p: &Params<'_>) -> Result<(u32, State)> {
    let window = p.required_int("window", 1, u32::MAX as i64)? as u32;
    let name = p.str("state")?.ok_or_else(|| {
        p.bad(
            "\"state\" is required: \"normal\", \"maximized\", \"minimized\" or \"fullscreen\""
                .into(),
        )
    })?;
    let state = State::parse(name).ok_or_else(|| {
        p.bad(format!(
            "\"state\" must be \"normal\", \"maximized\", \"minimized\" or \"fullscreen\", got {name:?}"
        ))
    })?;
    Ok((window, state))
}

/// Puts window `id` into `state` and waits until the window manager shows
/// it there.
pub fn set<C: Connection>(conn: &C, root: u32, wm: &Wm, id: u32, state: State) -> Result<Applied> {
    let atoms = StateAtoms::new(conn)
        .map_err(|e| Error::x11("interning the window state atoms", e))?
        .reply()
        .map_err(|e| Error::x11("interning the window state atoms", e))?;
    let now = read(conn, root, wm, &atoms, id)?;
    if now.is(state) {
        return Ok(Applied {
            window: id,
            state: state.name(),
            changed: false,
            net_wm_state: names(conn, id, &atoms)?,
        });
    }
    if !supported(conn, root, &atoms)? {
        return Err(Error::new(
            Code::Unsupported,
            "no EWMH window manager runs on this display (the root has no _NET_SUPPORTED with _NET_WM_STATE_MAXIMIZED_VERT), so window states cannot be set",
            "Start a window manager, or resize the window with the app's own controls.",
        ));
    }

    if state == State::Minimized {
        wm.hide(conn, root, &[id])?;
    } else {
        if now.minimized {
            wm.restore(conn, root, &[id])?;
        }
        let full = [atoms._NET_WM_STATE_FULLSCREEN, 0];
        let max = [
            atoms._NET_WM_STATE_MAXIMIZED_VERT,
            atoms._NET_WM_STATE_MAXIMIZED_HORZ,
        ];
        // One message per state, fullscreen first: openbox puts a window
        // back into the state it had before fullscreen when that goes, so
        // removing both in one message can leave it half maximized.
        let requests: &[(u32, [u32; 2])] = match state {
            State::Normal => &[(REMOVE, full), (REMOVE, max)],
            State::Maximized => &[(REMOVE, full), (ADD, max)],
            State::Fullscreen => &[(ADD, full)],
            State::Minimized => unreachable!("handled above"),
        };
        for (action, props) in requests {
            request(conn, root, &atoms, id, *action, props)?;
        }
        conn.flush()
            .map_err(|e| Error::x11("sending the window state request", e))?;
    }

    let deadline = Instant::now() + APPLY_TIMEOUT;
    loop {
        let now = read(conn, root, wm, &atoms, id)?;
        if now.is(state) {
            return Ok(Applied {
                window: id,
                state: state.name(),
                changed: true,
                net_wm_state: names(conn, id, &atoms)?,
            });
        }
        if Instant::now() >= deadline {
            return Err(Error::new(
                Code::Unsupported,
                format!(
                    "the window manager did not make window {id} {} within {}s (its _NET_WM_STATE is [{}])",
                    state.name(),
                    APPLY_TIMEOUT.as_secs(),
                    names(conn, id, &atoms)?.join(", ")
                ),
                "The window may not allow it (a fixed-size dialog cannot be maximized); use the window's own controls.",
            ));
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// Reads the window's state; unknown and unmanaged windows are refused.
fn read<C: Connection>(conn: &C, root: u32, wm: &Wm, atoms: &StateAtoms, id: u32) -> Result<Now> {
    let list = wm.list(conn, root, true)?;
    let Some(w) = list.windows.iter().find(|w| w.id == id) else {
        return Err(Error::new(
            Code::NoSuchWindow,
            format!("window {id} is not a top-level window on this display"),
            "List the windows again; it may have closed.",
        ));
    };
    if w.override_redirect {
        return Err(Error::new(
            Code::Unsupported,
            format!("window {id} is a menu, tooltip or popup the window manager does not manage, so it has no window state"),
            "Pick the application's main window.",
        ));
    }
    let state = net_state(conn, id, atoms)?;
    Ok(Now {
        max_vert: state.contains(&atoms._NET_WM_STATE_MAXIMIZED_VERT),
        max_horz: state.contains(&atoms._NET_WM_STATE_MAXIMIZED_HORZ),
        fullscreen: state.contains(&atoms._NET_WM_STATE_FULLSCREEN),
        minimized: w.minimized,
    })
}

fn net_state<C: Connection>(conn: &C, id: u32, atoms: &StateAtoms) -> Result<Vec<u32>> {
    let reply = conn
        .get_property(false, id, atoms._NET_WM_STATE, AtomEnum::ATOM, 0, 64)
        .map_err(|e| Error::x11("reading _NET_WM_STATE", e))?
        .reply()
        .map_err(|e| Error::x11("reading _NET_WM_STATE", e))?;
    Ok(reply.value32().map(|v| v.collect()).unwrap_or_default())
}

fn names<C: Connection>(conn: &C, id: u32, atoms: &StateAtoms) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for atom in net_state(conn, id, atoms)? {
        let name = conn
            .get_atom_name(atom)
            .map_err(|e| Error::x11("naming a window state atom", e))?
            .reply()
            .map_err(|e| Error::x11("naming a window state atom", e))?
            .name;
        let name = String::from_utf8_lossy(&name);
        out.push(
            name.strip_prefix("_NET_WM_STATE_")
                .unwrap_or(&name)
                .to_ascii_lowercase(),
        );
    }
    Ok(out)
}

fn supported<C: Connection>(conn: &C, root: u32, atoms: &StateAtoms) -> Result<bool> {
    let reply = conn
        .get_property(false, root, atoms._NET_SUPPORTED, AtomEnum::ATOM, 0, 4096)
        .map_err(|e| Error::x11("reading _NET_SUPPORTED", e))?
        .reply()
        .map_err(|e| Error::x11("reading _NET_SUPPORTED", e))?;
    Ok(reply
        .value32()
        .is_some_and(|mut v| v.any(|a| a == atoms._NET_WM_STATE_MAXIMIZED_VERT)))
}

fn request<C: Connection>(
    conn: &C,
    root: u32,
    atoms: &StateAtoms,
    id: u32,
    action: u32,
    props: &[u32],
) -> Result<()> {
    let first = props.first().copied().unwrap_or(0);
    let second = props.get(1).copied().unwrap_or(0);
    let event = ClientMessageEvent::new(
        32,
        id,
        atoms._NET_WM_STATE,
        [action, first, second, SOURCE_PAGER, 0],
    );
    conn.send_event(
        false,
        root,
        EventMask::SUBSTRUCTURE_REDIRECT | EventMask::SUBSTRUCTURE_NOTIFY,
        event,
    )
    .map_err(|e| Error::x11("asking the window manager to change a window's state", e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn states_parse_only_their_names() {
        for s in [
            State::Normal,
            State::Maximized,
            State::Minimized,
            State::Fullscreen,
        ] {
            assert_eq!(State::parse(s.name()), Some(s));
        }
        assert_eq!(State::parse("Maximized"), None);
        assert_eq!(State::parse("restored"), None);
    }

    #[test]
    fn maximized_needs_both_axes_and_no_fullscreen() {
        let base = Now {
            max_vert: true,
            max_horz: true,
            fullscreen: false,
            minimized: false,
        };
        assert!(base.is(State::Maximized));
        assert!(!Now {
            max_horz: false,
            ..base
        }
        .is(State::Maximized));
        assert!(!Now {
            fullscreen: true,
            ..base
        }
        .is(State::Maximized));
        assert!(!Now {
            minimized: true,
            ..base
        }
        .is(State::Maximized));
        assert!(Now {
            minimized: true,
            ..base
        }
        .is(State::Minimized));
        assert!(!base.is(State::Normal));
    }
}
