//! `screen_changes`: which parts of the screen look different since the
//! previous call. The supervisor calls it before an input action and then
//! until the screen is quiet, to tell the model what the action changed
//! (its "effect").
//!
//! DAMAGE says where the X server drew, on a tracker of its own (the
//! capture's tracker resets with each capture and `patch_baseline`); a
//! repaint with the same pixels (a hover that changes nothing, a widget
//! redrawn as it was) is not a change, so the drawn areas are read and
//! compared with the helper's copy of the screen, and only the bounds of
//! the pixels that differ are reported. The copy is updated as it is
//! compared, so each call answers "since the previous call".

use serde::Serialize;
use x11rb::connection::Connection;

use crate::capture::damage::Damage;
use crate::capture::get_image;
use crate::capture::pixfmt::{self, PixelFormat};
use crate::error::{Code, Error, Result};
use crate::types::{Rect, Size};
use crate::xconn::XConn;

/// Beyond this many drawn rectangles one read of their bounds is cheaper
/// than a round trip each.
const MAX_READS: usize = 16;
/// The side of the square cells changes are reported in.
const CELL: u32 = 16;

pub struct Changes {
    damage: Damage,
    screen: Size,
    /// The screen as the previous call saw it, BGRX.
    pixels: Vec<u8>,
}

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct ChangesResult {
    /// Where pixels differ, as runs of 16×16 cells (clipped to the drawn
    /// areas), one per row of cells.
    pub changed: Vec<Rect>,
    /// True on the first call (or after the screen was resized): there was
    /// nothing to compare with, and `changed` is empty (or the screen).
    pub first: bool,
}

impl Changes {
    /// Starts following `display` and reads the whole screen once.
    pub fn open<C: Connection>(
        conn: &C,
        root: u32,
        format: &PixelFormat,
        display: &str,
        screen: Size,
    ) -> Result<Changes> {
        let mut damage = Damage::open(display).map_err(|e| {
            Error::new(
                Code::Unsupported,
                format!("cannot follow what the X server draws: {e}"),
                "This display cannot tell what changed; take a screenshot instead.",
            )
        })?;
        damage.reset().map_err(Error::capture_failed)?;
        let mut pixels = Vec::new();
        read(conn, root, format, full(screen), &mut pixels)?;
        Ok(Changes {
            damage,
            screen,
            pixels,
        })
    }

    /// What changed since the previous call.
    pub fn take<C: Connection>(
        &mut self,
        conn: &C,
        root: u32,
        format: &PixelFormat,
        screen: Size,
    ) -> Result<ChangesResult> {
        let mut drawn = self
            .damage
            .drawn_within(full(screen))
            .map_err(Error::capture_failed)?;
        if screen != self.screen {
            self.screen = screen;
            read(conn, root, format, full(screen), &mut self.pixels)?;
            return Ok(ChangesResult {
                changed: vec![full(screen)],
                first: true,
            });
        }
        if drawn.len() > MAX_READS {
            drawn = vec![bounds(&drawn)];
        }
        let mut changed = Vec::new();
        let mut live = Vec::new();
        for rect in drawn {
            read(conn, root, format, rect, &mut live)?;
            self.compare_and_store(rect, &live, &mut changed);
        }
        Ok(ChangesResult {
            changed,
            first: false,
        })
    }

    /// The parts of `rect` whose pixels in `live` (BGRX, covering `rect`)
    /// differ from the copy, which then takes them: the runs of changed
    /// CELL×CELL cells of each row of cells, clipped to `rect`, so that
    /// two things changing apart in one drawn area stay apart.
    fn compare_and_store(&mut self, rect: Rect, live: &[u8], out: &mut Vec<Rect>) {
        let stride = self.screen.width as usize * 4;
        let w = rect.width as usize * 4;
        let cx0 = rect.x as u32 / CELL;
        let cols = (rect.x as u32 + rect.width).div_ceil(CELL) - cx0;
        let mut row_cells = vec![false; cols as usize];
        let mut band = rect.y as u32 / CELL;
        let flush = |band: u32, cells: &mut [bool], out: &mut Vec<Rect>| {
            let mut i = 0;
            while i < cells.len() {
                if !cells[i] {
                    i += 1;
                    continue;
                }
                let j = (i..cells.len()).find(|&j| !cells[j]).unwrap_or(cells.len());
                let cell = Rect {
                    x: ((cx0 + i as u32) * CELL) as i32,
                    y: (band * CELL) as i32,
                    width: (j - i) as u32 * CELL,
                    height: CELL,
                };
                if let Some(r) = cell.intersect(&rect) {
                    out.push(r);
                }
                cells[i..j].iter_mut().for_each(|c| *c = false);
                i = j;
            }
        };
        for row in 0..rect.height as usize {
            let y = rect.y as u32 + row as u32;
            if y / CELL != band {
                flush(band, &mut row_cells, out);
                band = y / CELL;
            }
            let at = y as usize * stride + rect.x as usize * 4;
            let stored = &mut self.pixels[at..at + w];
            let new = &live[row * w..(row + 1) * w];
            if stored == new {
                continue;
            }
            for (i, (s, n)) in stored.chunks_exact(4).zip(new.chunks_exact(4)).enumerate() {
                if s[..3] != n[..3] {
                    row_cells[((rect.x as u32 + i as u32) / CELL - cx0) as usize] = true;
                }
            }
            stored.copy_from_slice(new);
        }
        flush(band, &mut row_cells, out);
    }
}

/// Answers `screen_changes`: the first call starts the tracker; an error
/// drops it, so the next call starts afresh.
pub fn call(id: &serde_json::Value, x: &XConn, tracker: &mut Option<Changes>) -> Result<Vec<u8>> {
    let screen = x.root_size()?;
    let result = match tracker.as_mut() {
        None => {
            *tracker = Some(Changes::open(
                &x.conn, x.root, &x.format, &x.display, screen,
            )?);
            Ok(ChangesResult {
                changed: Vec::new(),
                first: true,
            })
        }
        Some(t) => t.take(&x.conn, x.root, &x.format, screen),
    };
    if result.is_err() {
        *tracker = None;
    }
    Ok(crate::protocol::success(id, &result?))
}

fn full(screen: Size) -> Rect {
    Rect {
        x: 0,
        y: 0,
        width: screen.width,
        height: screen.height,
    }
}

fn bounds(rects: &[Rect]) -> Rect {
    let x0 = rects.iter().map(|r| r.x).min().unwrap_or(0);
    let y0 = rects.iter().map(|r| r.y).min().unwrap_or(0);
    let x1 = rects
        .iter()
        .map(|r| r.x + r.width as i32)
        .max()
        .unwrap_or(0);
    let y1 = rects
        .iter()
        .map(|r| r.y + r.height as i32)
        .max()
        .unwrap_or(0);
    Rect {
        x: x0,
        y: y0,
        width: (x1 - x0) as u32,
        height: (y1 - y0) as u32,
    }
}

/// Reads `rect` of the root window into `dst` as BGRX.
fn read<C: Connection>(
    conn: &C,
    root: u32,
    format: &PixelFormat,
    rect: Rect,
    dst: &mut Vec<u8>,
) -> Result<()> {
    let reply = get_image(conn, root, rect, " (did the screen shrink?)")?;
    if reply.data.len() < format.stride(rect.width) * rect.height as usize {
        return Err(Error::capture_failed(format!(
            "GetImage of {rect} returned only {} bytes",
            reply.data.len()
        )));
    }
    pixfmt::convert_to_bgrx(format, &reply.data, rect.width, rect.height, dst);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_cover_every_rect() {
        let r = |x, y, width, height| Rect {
            x,
            y,
            width,
            height,
        };
        assert_eq!(bounds(&[r(5, 6, 2, 2), r(1, 10, 3, 1)]), r(1, 6, 6, 5));
    }
}
