//! `patch_check`: has the screen around a point changed since the last
//! capture? The supervisor asks this before a click, so a model never
//! clicks on pixels it has not seen.

use serde::Serialize;
use x11rb::connection::Connection;

use crate::capture::pixfmt::{self, Layout4, PixelFormat};
use crate::capture::{get_image, Snapshot};
use crate::error::{Error, Result};
use crate::types::Rect;

#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct PatchResult {
    pub changed: bool,
    pub differing_pixels: u32,
    pub max_delta: u8,
    pub capture_id: u64,
}

/// The `size`×`size` patch centred on (`x`, `y`), if it lies inside `within`.
pub fn patch_rect(x: i64, y: i64, size: u32, within: Rect) -> Result<Rect> {
    let half = (size / 2) as i64;
    let (x0, y0) = (x - half, y - half);
    let fits = |v: i64| v >= i32::MIN as i64 && v <= i32::MAX as i64;
    let rect = (fits(x0) && fits(y0)).then_some(Rect {
        x: x0 as i32,
        y: y0 as i32,
        width: size,
        height: size,
    });
    match rect {
        Some(rect) if within.contains_rect(&rect) => Ok(rect),
        _ => Err(Error::out_of_bounds(
            format!(
                "the {size}x{size} patch around ({x}, {y}) is not inside the last capture ({within})"
            ),
            "Check a point at least size/2 pixels inside the last capture's source rectangle, or capture that area first.",
        )),
    }
}

/// Compares the live screen under `rect` with the same pixels of `last`.
pub fn check<C: Connection>(
    conn: &C,
    root: u32,
    format: &PixelFormat,
    last: &Snapshot<'_>,
    rect: Rect,
    tolerance: u8,
) -> Result<PatchResult> {
    let reply = get_image(conn, root, rect, " (did the screen shrink?)")?;
    if reply.data.len() < format.stride(rect.width) * rect.height as usize {
        return Err(Error::capture_failed(format!(
            "GetImage of the patch {rect} returned only {} bytes",
            reply.data.len()
        )));
    }
    let mut live = Vec::new();
    pixfmt::convert_to_bgrx(format, &reply.data, rect.width, rect.height, &mut live);
    let (differing_pixels, max_delta) = compare(last, rect, &live, tolerance);
    Ok(PatchResult {
        changed: differing_pixels > 0,
        differing_pixels,
        max_delta,
        capture_id: last.id,
    })
}

/// Counts pixels of `live` (BGRX, covering `rect`) whose largest channel
/// difference from the stored capture exceeds `tolerance`, and the largest
/// difference seen.
pub fn compare(last: &Snapshot<'_>, rect: Rect, live: &[u8], tolerance: u8) -> (u32, u8) {
    let mut differing = 0;
    let mut max_delta = 0u8;
    let stride = last.source.width as usize * 4;
    let dx = (rect.x - last.source.x) as usize;
    let dy = (rect.y - last.source.y) as usize;
    for row in 0..rect.height as usize {
        let stored_row = &last.pixels[(dy + row) * stride + dx * 4..][..rect.width as usize * 4];
        let live_row = &live[row * rect.width as usize * 4..][..rect.width as usize * 4];
        for (s, l) in stored_row.chunks_exact(4).zip(live_row.chunks_exact(4)) {
            let a = last.layout.rgb(s);
            let b = Layout4::BGRX.rgb(l);
            let delta = (0..3).map(|i| a[i].abs_diff(b[i])).max().unwrap_or(0);
            max_delta = max_delta.max(delta);
            if delta > tolerance {
                differing += 1;
            }
        }
    }
    (differing, max_delta)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rect(x: i32, y: i32, width: u32, height: u32) -> Rect {
        Rect {
            x,
            y,
            width,
            height,
        }
    }

    #[test]
    fn patch_must_lie_inside_the_capture() {
        let src = rect(100, 100, 50, 50);
        assert_eq!(patch_rect(110, 110, 9, src).unwrap(), rect(106, 106, 9, 9));
        assert_eq!(patch_rect(104, 104, 9, src).unwrap(), rect(100, 100, 9, 9));
        assert!(patch_rect(103, 110, 9, src).is_err());
        assert!(patch_rect(146, 110, 9, src).is_err());
        assert_eq!(patch_rect(145, 145, 9, src).unwrap(), rect(141, 141, 9, 9));
        assert!(patch_rect(i64::MAX, 0, 9, src).is_err());
        assert_eq!(patch_rect(100, 149, 1, src).unwrap(), rect(100, 149, 1, 1));
    }

    #[test]
    fn compare_counts_pixels_over_tolerance() {
        // Stored capture: 4x2 in XRGB, grey 100.
        let layout = Layout4::XRGB;
        let mut pixels = Vec::new();
        for _ in 0..8 {
            pixels.extend(layout.pixel([100, 100, 100]));
        }
        let last = Snapshot {
            id: 3,
            source: rect(10, 20, 4, 2),
            layout,
            pixels: &pixels,
        };
        // Live 2x2 patch at (12,20) in BGRX: one pixel off by 2, one by 30.
        let mut live = Vec::new();
        for rgb in [
            [100, 100, 100],
            [100, 102, 100],
            [70, 100, 100],
            [100, 100, 100],
        ] {
            live.extend(Layout4::BGRX.pixel(rgb));
        }
        let patch = rect(12, 20, 2, 2);
        assert_eq!(compare(&last, patch, &live, 0), (2, 30));
        assert_eq!(compare(&last, patch, &live, 2), (1, 30));
        assert_eq!(compare(&last, patch, &live, 30), (0, 30));
    }
}
