//! The windows a capture's mask is placed from. Listing them costs several
//! X round trips per capture, as much as a third of the time a capture
//! spends outside its pixels. While the windows epoch has not moved since
//! the last listing, that listing is still what the server would answer
//! (see [`crate::epoch`]: every event about the windows a listing reads
//! moves it on), so it is used again.
//!
//! The epoch is asked under the capture's server grab, and asking makes a
//! round trip first, so every event the server sent before the grab has
//! been read: nothing can change between that answer and the pixels. A
//! listing is kept only when the epoch did not move while it was read, so
//! a change in the middle of a listing never hides behind its key.

use std::cell::RefCell;

use x11rb::connection::Connection;

use crate::epoch::EpochResult;
use crate::error::Result;
use crate::types::Window;
use crate::windows::Wm;

/// The last listing and the epoch it was read under.
#[derive(Default)]
pub struct MaskWindows {
    last: RefCell<Option<(EpochResult, Vec<Window>)>>,
}

impl MaskWindows {
    /// The visible windows, top first, as they are now. Call it with the
    /// server grabbed.
    pub fn visible<C: Connection>(&self, wm: &Wm, conn: &C, root: u32) -> Result<Vec<Window>> {
        // No epoch (the root is not followed): list every time.
        let before = wm.epoch(conn, root).ok();
        if let (Some(now), Some((then, windows))) = (&before, &*self.last.borrow()) {
            if now == then {
                return Ok(windows.clone());
            }
        }
        self.last.replace(None);
        let windows = wm.list(conn, root, false)?.windows;
        if let Some(before) = before {
            if wm.current_epoch().as_ref() == Some(&before) {
                self.last.replace(Some((before, windows.clone())));
            }
        }
        Ok(windows)
    }
}
