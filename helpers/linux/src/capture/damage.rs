//! Which parts of the screen the X server has drawn to, from the DAMAGE
//! extension, so `patch_baseline` re-reads the last capture's area only
//! when something in it was drawn since the previous read, and a capture
//! reads only the rows drawn in (see the capture module). A quiet screen
//! then costs one round trip instead of a full-area GetImage and compare,
//! which keeps the staleness settling off the other requests' path.
//!
//! The tracker has an X connection of its own: the damage events would
//! otherwise land among the window events the window table's epoch counts
//! (windows.rs), and every repaint would look like a window change.
//!
//! For `patch_baseline`, damage only ever saves a read: when it misses a
//! repaint, the stored pixels stay older than the screen, so `patch_check`
//! finds the area changed and the click is refused (fail closed), never
//! let through. A capture trusts it further: a repaint it misses is
//! missing from the image too, as it is from the image served again.

use x11rb::connection::Connection;
use x11rb::protocol::damage::{ConnectionExt as _, ReportLevel};
use x11rb::protocol::xfixes::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

use crate::types::Rect;

pub struct Damage {
    conn: RustConnection,
    damage: u32,
    region: u32,
}

impl Damage {
    /// Starts tracking the root window of `display`; the error says why it
    /// cannot (no DAMAGE or XFixes, or no connection).
    pub fn open(display: &str) -> Result<Damage, String> {
        let (conn, screen_num) = x11rb::connect(Some(display)).map_err(|e| e.to_string())?;
        let root = conn
            .setup()
            .roots
            .get(screen_num)
            .ok_or("no such screen")?
            .root;
        let fail = |what: &str, e: &dyn std::fmt::Display| format!("{what}: {e}");
        conn.xfixes_query_version(5, 0)
            .map_err(|e| fail("querying XFixes", &e))?
            .reply()
            .map_err(|e| fail("querying XFixes", &e))?;
        conn.damage_query_version(1, 1)
            .map_err(|e| fail("querying DAMAGE", &e))?
            .reply()
            .map_err(|e| fail("querying DAMAGE", &e))?;
        let damage = conn.generate_id().map_err(|e| fail("allocating ids", &e))?;
        let region = conn.generate_id().map_err(|e| fail("allocating ids", &e))?;
        conn.xfixes_create_region(region, &[])
            .map_err(|e| fail("creating a region", &e))?
            .check()
            .map_err(|e| fail("creating a region", &e))?;
        // NonEmpty: one event each time the damage goes from empty to not,
        // which drain() discards; the region is what counts.
        conn.damage_create(damage, root, ReportLevel::NON_EMPTY)
            .map_err(|e| fail("creating the damage object", &e))?
            .check()
            .map_err(|e| fail("creating the damage object", &e))?;
        Ok(Damage {
            conn,
            damage,
            region,
        })
    }

    /// Forgets the damage so far; returns once the server has, so a read
    /// on the main connection after this sees every later repaint counted.
    pub fn reset(&mut self) -> Result<(), String> {
        self.take().map(|_| ())
    }

    /// What was drawn inside `area` since the last reset or check (a
    /// repaint the moment before counts too), clipped to it, as disjoint
    /// rectangles (none when nothing was); and resets.
    pub fn drawn_within(&mut self, area: Rect) -> Result<Vec<Rect>, String> {
        Ok(self
            .take()?
            .iter()
            .filter_map(|r| r.intersect(&area))
            .collect())
    }

    /// Moves the damage so far into the region, empties it and reads the
    /// region's rectangles.
    fn take(&mut self) -> Result<Vec<Rect>, String> {
        let fail = |e: &dyn std::fmt::Display| format!("reading the screen damage: {e}");
        self.conn
            .damage_subtract(self.damage, x11rb::NONE, self.region)
            .map_err(|e| fail(&e))?;
        let reply = self
            .conn
            .xfixes_fetch_region(self.region)
            .map_err(|e| fail(&e))?
            .reply()
            .map_err(|e| fail(&e))?;
        while let Some(_event) = self.conn.poll_for_event().map_err(|e| fail(&e))? {}
        Ok(reply
            .rectangles
            .iter()
            .filter(|r| r.width > 0 && r.height > 0)
            .map(|r| Rect {
                x: r.x as i32,
                y: r.y as i32,
                width: r.width as u32,
                height: r.height as u32,
            })
            .collect())
    }
}
