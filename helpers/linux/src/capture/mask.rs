//! Masking: which parts of a capture belong to windows the caller wants
//! hidden, and painting them over.
//!
//! A masked window is painted where it is actually visible: its visible
//! shape (its frame bounds, for an unshaped window) minus whatever the
//! visible shapes of unmasked windows above it cover. Masked windows above
//! it need not be subtracted, since they are painted too.

use crate::capture::pixfmt::Layout4;
use crate::types::{Rect, Window};

/// `region` (disjoint rectangles) minus `cut`, still disjoint.
pub fn subtract(region: &[Rect], cut: &Rect) -> Vec<Rect> {
    let mut out = Vec::with_capacity(region.len() + 3);
    for r in region {
        let Some(overlap) = r.intersect(cut) else {
            out.push(*r);
            continue;
        };
        let (rx1, ry1) = (r.x as i64 + r.width as i64, r.y as i64 + r.height as i64);
        let (ox1, oy1) = (
            overlap.x as i64 + overlap.width as i64,
            overlap.y as i64 + overlap.height as i64,
        );
        // Full-width band above the overlap.
        if overlap.y > r.y {
            out.push(Rect {
                x: r.x,
                y: r.y,
                width: r.width,
                height: (overlap.y - r.y) as u32,
            });
        }
        // Full-width band below it.
        if oy1 < ry1 {
            out.push(Rect {
                x: r.x,
                y: oy1 as i32,
                width: r.width,
                height: (ry1 - oy1) as u32,
            });
        }
        // Left and right of it, within its rows.
        if overlap.x > r.x {
            out.push(Rect {
                x: r.x,
                y: overlap.y,
                width: (overlap.x - r.x) as u32,
                height: overlap.height,
            });
        }
        if ox1 < rx1 {
            out.push(Rect {
                x: ox1 as i32,
                y: overlap.y,
                width: (rx1 - ox1) as u32,
                height: overlap.height,
            });
        }
    }
    out
}

/// Which windows a capture paints over: those named, and with `others`
/// every window not in `keep`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    pub mask: Vec<u32>,
    /// Paint every window not in `keep` too (`mask_others`).
    pub others: bool,
    pub keep: Vec<u32>,
}

impl Selection {
    pub fn is_empty(&self) -> bool {
        self.mask.is_empty() && !self.others
    }

    pub fn masks(&self, id: u32) -> bool {
        self.mask.contains(&id) || (self.others && !self.keep.contains(&id))
    }
}

/// What a capture paints over (see [`regions`]).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Painted {
    /// Global coordinates, inside the clip.
    pub rects: Vec<Rect>,
    /// The windows painted: the requested ones in request order, then the
    /// others in stacking order.
    pub ids: Vec<u32>,
    /// The window painted over the largest area.
    pub largest: Option<u32>,
}

/// The areas to paint for a capture of `clip`, given the visible windows
/// top first. A window is painted where it shows pixels (its visible
/// shape), and only an unmasked window's visible shape uncovers what lies
/// below it: a full-screen overlay that shows a small cursor hides nothing
/// else, and one that shows everything hides everything.
pub fn regions(windows: &[Window], selection: &Selection, clip: Rect) -> Painted {
    let requested = &selection.mask;
    let mut above_unmasked: Vec<Rect> = Vec::new();
    let mut rects = Vec::new();
    let mut painted: Vec<u32> = Vec::new();
    let mut largest: Option<(u32, u64)> = None;
    for window in windows {
        if !selection.masks(window.id) {
            above_unmasked.extend_from_slice(window.visible_region());
            continue;
        }
        let mut region: Vec<Rect> = window
            .visible_region()
            .iter()
            .filter_map(|r| r.intersect(&clip))
            .collect();
        for cover in &above_unmasked {
            if region.is_empty() {
                break;
            }
            region = subtract(&region, cover);
        }
        if !region.is_empty() {
            let area = region
                .iter()
                .map(|r| r.width as u64 * r.height as u64)
                .sum();
            if largest.map_or(true, |(_, most)| area > most) {
                largest = Some((window.id, area));
            }
            rects.extend(region);
            painted.push(window.id);
        }
    }
    let mut ids: Vec<u32> = Vec::with_capacity(painted.len());
    for id in requested.iter().chain(painted.iter()) {
        if painted.contains(id) && !ids.contains(id) {
            ids.push(*id);
        }
    }
    Painted {
        rects,
        ids,
        largest: largest.map(|(id, _)| id),
    }
}

/// How many pixels of `clip` the rectangles cover, each pixel once.
pub fn covered(rects: &[Rect], clip: Rect) -> u64 {
    let rects: Vec<Rect> = rects.iter().filter_map(|r| r.intersect(&clip)).collect();
    let mut edges: Vec<i64> = rects
        .iter()
        .flat_map(|r| [r.y as i64, r.y as i64 + r.height as i64])
        .collect();
    edges.sort_unstable();
    edges.dedup();
    let mut total = 0u64;
    let mut spans: Vec<(i64, i64)> = Vec::new();
    for band in edges.windows(2) {
        let (top, bottom) = (band[0], band[1]);
        spans.clear();
        spans.extend(
            rects
                .iter()
                .filter(|r| r.y as i64 <= top && bottom <= r.y as i64 + r.height as i64)
                .map(|r| (r.x as i64, r.x as i64 + r.width as i64)),
        );
        spans.sort_unstable();
        let mut done = i64::MIN;
        let mut width = 0;
        for &(x0, x1) in &spans {
            let from = x0.max(done);
            if x1 > from {
                width += x1 - from;
            }
            done = done.max(x1);
        }
        total += width as u64 * (bottom - top) as u64;
    }
    total
}

/// Paints `rects` (global coordinates) into an image of 4-byte pixels whose
/// top-left pixel is at `origin` and whose rows are `width` pixels wide.
pub fn paint(
    pixels: &mut [u8],
    width: u32,
    origin: Rect,
    rects: &[Rect],
    layout: Layout4,
    color: [u8; 3],
) {
    let px = layout.pixel(color);
    let stride = width as usize * 4;
    for r in rects {
        let Some(r) = r.intersect(&origin) else {
            continue;
        };
        let x0 = (r.x - origin.x) as usize;
        let y0 = (r.y - origin.y) as usize;
        for y in y0..y0 + r.height as usize {
            let row = &mut pixels[y * stride + x0 * 4..y * stride + (x0 + r.width as usize) * 4];
            for dst in row.chunks_exact_mut(4) {
                dst.copy_from_slice(&px);
            }
        }
    }
}

/// Copies `src` into `dst`, images of 4-byte pixels whose top-left pixel
/// is at `origin` and whose rows are `width` pixels wide, with `rects`
/// painted over: `dst` ends up as a copy that `paint` then painted, but the
/// pixels painted are only filled, never copied first, so a mostly masked
/// screen costs a fill rather than a copy and a fill.
pub fn copy_painted(
    dst: &mut [u8],
    src: &[u8],
    width: u32,
    origin: Rect,
    rects: &[Rect],
    layout: Layout4,
    color: [u8; 3],
) {
    let px = layout.pixel(color);
    let stride = width as usize * 4;
    let rects: Vec<Rect> = rects.iter().filter_map(|r| r.intersect(&origin)).collect();
    // The painted columns of a row, as pixel ranges from the left edge.
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(rects.len());
    for (y, (d, s)) in dst
        .chunks_exact_mut(stride)
        .zip(src.chunks_exact(stride))
        .enumerate()
    {
        let row = origin.y as i64 + y as i64;
        spans.clear();
        spans.extend(
            rects
                .iter()
                .filter(|r| r.y as i64 <= row && row < r.y as i64 + r.height as i64)
                .map(|r| {
                    let x0 = (r.x - origin.x) as usize;
                    (x0, x0 + r.width as usize)
                }),
        );
        spans.sort_unstable();
        // Pixels left of `done` are written.
        let mut done = 0;
        for &(x0, x1) in &spans {
            if x0 > done {
                d[done * 4..x0 * 4].copy_from_slice(&s[done * 4..x0 * 4]);
            }
            let from = x0.max(done);
            if x1 > from {
                for p in d[from * 4..x1 * 4].chunks_exact_mut(4) {
                    p.copy_from_slice(&px);
                }
            }
            done = done.max(x1);
        }
        d[done * 4..].copy_from_slice(&s[done * 4..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::App;

    fn rect(x: i32, y: i32, width: u32, height: u32) -> Rect {
        Rect {
            x,
            y,
            width,
            height,
        }
    }

    fn area(rects: &[Rect]) -> u64 {
        rects.iter().map(|r| r.width as u64 * r.height as u64).sum()
    }

    fn covers(rects: &[Rect], x: i32, y: i32) -> usize {
        rects
            .iter()
            .filter(|r| r.contains(crate::types::Point { x, y }))
            .count()
    }

    /// Copying around the painted pixels gives what copying everything
    /// and painting over it gives, for overlapping rectangles, ones that
    /// reach past the image and an image that is not at the origin.
    #[test]
    fn copy_painted_is_a_copy_painted_over() {
        let (width, height) = (37u32, 23u32);
        let src: Vec<u8> = (0..width * height * 4)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let mut seed = 0x2545_f491u32;
        let mut next = |n: u32| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed % n
        };
        for case in 0..300 {
            let origin = rect(100, 200, width, height);
            let rects: Vec<Rect> = (0..case % 6)
                .map(|_| {
                    rect(
                        90 + next(50) as i32,
                        190 + next(40) as i32,
                        1 + next(30),
                        1 + next(20),
                    )
                })
                .collect();
            let mut want = src.clone();
            paint(&mut want, width, origin, &rects, Layout4::BGRX, [1, 2, 3]);
            let mut got = vec![0xee; src.len()];
            copy_painted(
                &mut got,
                &src,
                width,
                origin,
                &rects,
                Layout4::BGRX,
                [1, 2, 3],
            );
            assert!(got == want, "case {case}: {rects:?}");
        }
    }

    #[test]
    fn subtract_cases() {
        let base = rect(0, 0, 10, 10);
        // No overlap: unchanged.
        assert_eq!(subtract(&[base], &rect(20, 20, 5, 5)), vec![base]);
        // Full cover: nothing left.
        assert!(subtract(&[base], &rect(-1, -1, 12, 12)).is_empty());
        // A hole in the middle leaves 4 pieces and the right area.
        let holed = subtract(&[base], &rect(3, 3, 4, 4));
        assert_eq!(holed.len(), 4);
        assert_eq!(area(&holed), 100 - 16);
        // A corner bite.
        let bitten = subtract(&[base], &rect(5, 5, 10, 10));
        assert_eq!(area(&bitten), 75);
    }

    #[test]
    fn subtract_keeps_pieces_disjoint_and_exact() {
        let base = rect(2, 3, 17, 11);
        let cuts = [rect(0, 0, 5, 5), rect(10, 6, 3, 20), rect(6, 8, 2, 2)];
        let mut region = vec![base];
        for c in &cuts {
            region = subtract(&region, c);
        }
        for y in -2..20 {
            for x in -2..25 {
                let p = crate::types::Point { x, y };
                let want = base.contains(p) && !cuts.iter().any(|c| c.contains(p));
                let n = covers(&region, x, y);
                assert!(n <= 1, "({x},{y}) covered {n} times");
                assert_eq!(n == 1, want, "({x},{y})");
            }
        }
    }

    fn window(id: u32, bounds: Rect) -> Window {
        Window {
            id,
            title: String::new(),
            app: App::default(),
            bounds,
            client: bounds,
            minimized: false,
            hidden: false,
            focused: false,
            desktop: Some(0),
            override_redirect: false,
            shape: None,
            input: None,
        }
    }

    fn only(ids: &[u32]) -> Selection {
        Selection {
            mask: ids.to_vec(),
            ..Selection::default()
        }
    }

    #[test]
    fn mask_others_paints_every_window_not_kept() {
        let clip = rect(0, 0, 100, 100);
        // Top first: 1 is a popup nobody listed before the capture, over
        // the kept window 2; 3 is named in the mask and kept (mask wins).
        let windows = [
            window(1, rect(10, 10, 10, 10)),
            window(2, rect(0, 0, 50, 50)),
            window(3, rect(60, 60, 10, 10)),
            window(4, rect(80, 0, 10, 10)),
        ];
        let selection = Selection {
            mask: vec![3],
            others: true,
            keep: vec![2, 3],
        };
        let Painted {
            rects,
            ids: painted,
            ..
        } = regions(&windows, &selection, clip);
        assert_eq!(painted, vec![3, 1, 4]);
        assert_eq!(covers(&rects, 15, 15), 1, "the unlisted popup is painted");
        assert_eq!(covers(&rects, 30, 30), 0, "the kept window is not");
        assert_eq!(area(&rects), 300);
        // Without mask_others only the named window is painted.
        let painted = regions(&windows, &only(&[3]), clip).ids;
        assert_eq!(painted, vec![3]);
        assert!(only(&[]).is_empty() && !selection.is_empty());
    }

    #[test]
    fn regions_respect_stacking() {
        let clip = rect(0, 0, 100, 100);
        // Top first: 1 (unmasked) covers the left half of 2 (masked); 3
        // (masked) sits below everything; 4 (masked) is off-screen.
        let windows = [
            window(1, rect(0, 0, 50, 100)),
            window(2, rect(25, 10, 50, 10)),
            window(3, rect(0, 50, 10, 10)),
            window(4, rect(200, 200, 10, 10)),
            window(5, rect(60, 60, 10, 10)),
        ];
        let Painted {
            rects,
            ids: painted,
            largest,
        } = regions(&windows, &only(&[4, 2, 3, 5, 99]), clip);
        assert_eq!(largest, Some(2));
        // 3 is fully under 1; 4 is outside; 99 is unknown.
        assert_eq!(painted, vec![2, 5]);
        assert_eq!(area(&rects), 25 * 10 + 100);
        assert_eq!(covers(&rects, 30, 15), 0, "covered by unmasked window 1");
        assert_eq!(covers(&rects, 60, 15), 1);
    }

    #[test]
    fn masked_window_above_does_not_unmask_below() {
        let clip = rect(0, 0, 100, 100);
        let windows = [
            window(1, rect(0, 0, 20, 20)),
            window(2, rect(10, 10, 20, 20)),
        ];
        let Painted {
            rects,
            ids: painted,
            ..
        } = regions(&windows, &only(&[1, 2]), clip);
        assert_eq!(painted, vec![1, 2]);
        assert_eq!(covers(&rects, 15, 15), 2);
        assert_eq!(covers(&rects, 25, 25), 1);
    }

    #[test]
    fn shapes_decide_what_is_painted_and_uncovered() {
        let clip = rect(0, 0, 100, 100);
        let cursor = rect(40, 40, 5, 5);
        // Top first: an unapproved full-screen overlay that shows only a
        // cursor, over an approved window, over an unapproved one.
        let mut overlay = window(1, clip);
        overlay.shape = Some(vec![cursor]);
        let approved = window(2, rect(0, 0, 50, 50));
        let below = window(3, rect(0, 0, 100, 100));
        let windows = [overlay.clone(), approved.clone(), below.clone()];
        let p = regions(&windows, &only(&[1, 3]), clip);
        assert_eq!(covers(&p.rects, 42, 42), 1, "the cursor is painted");
        assert_eq!(covers(&p.rects, 10, 10), 0, "the approved window is not");
        assert_eq!(covers(&p.rects, 70, 70), 1, "the unapproved one below is");
        assert_eq!(p.largest, Some(3));
        // An approved overlay that shows only a cursor uncovers only that.
        let p = regions(&[overlay, below], &only(&[3]), clip);
        assert_eq!(covers(&p.rects, 42, 42), 0);
        assert_eq!(area(&p.rects), 100 * 100 - 25);
        // A window that shows nothing (input-only) is never painted.
        let mut input_only = window(4, clip);
        input_only.shape = Some(Vec::new());
        assert!(regions(&[input_only], &only(&[4]), clip).ids.is_empty());
    }

    #[test]
    fn covered_counts_each_pixel_once() {
        let clip = rect(0, 0, 100, 100);
        assert_eq!(covered(&[], clip), 0);
        assert_eq!(
            covered(&[rect(0, 0, 10, 10), rect(5, 5, 10, 10)], clip),
            175
        );
        assert_eq!(
            covered(&[rect(-50, -50, 500, 500), rect(5, 5, 10, 10)], clip),
            10_000
        );
        assert_eq!(
            covered(&[rect(0, 0, 10, 10), rect(20, 0, 10, 10)], clip),
            200
        );
    }

    #[test]
    fn paint_clips_to_image() {
        let origin = rect(10, 10, 4, 3);
        let mut pixels = vec![0u8; 4 * 3 * 4];
        paint(
            &mut pixels,
            4,
            origin,
            &[rect(12, 11, 10, 10)],
            Layout4::BGRX,
            [1, 2, 3],
        );
        for y in 0..3 {
            for x in 0..4 {
                let px = &pixels[(y * 4 + x) * 4..][..4];
                if x >= 2 && y >= 1 {
                    assert_eq!(px, [3, 2, 1, 0xff], "({x},{y})");
                } else {
                    assert_eq!(px, [0, 0, 0, 0], "({x},{y})");
                }
            }
        }
    }
}
