//! Scaling 4-byte pixels with fast_image_resize (SIMD convolution).

use fast_image_resize::images::{Image, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};

use crate::capture::pool::Pool;
use crate::error::{Error, Result};
use crate::types::Size;

/// The filter used for every resize. Bilinear convolution (its support
/// grows with the scale factor, so downscaling still averages every source
/// pixel) keeps text legible and is the fastest convolution filter; see
/// benches/pipeline.rs for the numbers against CatmullRom and Lanczos3.
pub const FILTER: FilterType = FilterType::Bilinear;

/// Below this many output rows the work is too small to be worth a thread.
const MIN_ROWS_PER_BAND: u32 = 128;

/// Resizers with their scratch buffers, reused across captures: one per
/// thread that scales.
pub struct Scaler {
    resizers: Vec<Resizer>,
    filter: FilterType,
    /// The source scaled vertically only, full width: the strips' first
    /// pass.
    mid: Vec<u8>,
    /// The threads besides the caller's.
    pool: Pool,
}

impl Default for Scaler {
    fn default() -> Self {
        Scaler::with_filter(FILTER)
    }
}

impl Scaler {
    pub fn with_filter(filter: FilterType) -> Scaler {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
        Scaler {
            resizers: (0..threads).map(|_| Resizer::new()).collect(),
            filter,
            mid: Vec::new(),
            pool: Pool::default(),
        }
    }

    /// Uses `n` threads whatever the machine has, for tests.
    #[cfg(test)]
    pub fn force_threads(&mut self, n: usize) {
        self.resizers = (0..n).map(|_| Resizer::new()).collect();
    }

    /// Runs `f` on runs of whole rows of `data`, one per thread the
    /// scaler uses (see `Pool::for_bands`).
    pub fn in_bands(
        &mut self,
        data: &mut [u8],
        row_bytes: usize,
        f: &(dyn Fn(usize, &mut [u8]) + Sync),
    ) {
        self.pool.for_bands(self.resizers.len(), data, row_bytes, f)
    }

    /// Scales tightly packed 4-byte pixels `src` of size `from` into `dst`
    /// (resized to fit `to`; its allocation is reused), in one band of
    /// rows per thread.
    pub fn scale(&mut self, src: &[u8], from: Size, to: Size, dst: &mut Vec<u8>) -> Result<()> {
        let bands = (to.height / MIN_ROWS_PER_BAND).clamp(1, self.resizers.len() as u32);
        let rows = to.height.div_ceil(bands);
        let mut states = vec![(); bands as usize];
        self.scale_strips(
            src,
            from,
            to,
            dst,
            rows,
            &mut states,
            |_| true,
            |_, _, _| Ok(()),
        )
        .map(|_| ())
    }

    /// Scales the strips of `to` that `wanted` picks, each `rows` output
    /// rows high but the last, into their rows of `dst` (resized to fit
    /// `to` if it does not; the other strips' rows are left as they are),
    /// and runs `then` on each strip once it is scaled, with the strip's
    /// entry of `states`, its row count and its pixels. Each thread takes
    /// an even share of the strips, top to bottom, as contiguous runs.
    /// Returns how many strips were scaled.
    ///
    /// A strip is scaled in two passes, as the resizer itself would do it:
    /// vertically from its own fractional crop of the source (whose filter
    /// taps still reach past the crop into the whole image), reading only
    /// the source rows `source_rows` names, then horizontally, row by row,
    /// in one pass over each run of wanted strips, so that the horizontal
    /// filter is set up once per run rather than per strip. Either way a
    /// strip comes out the same whichever other strips are scaled with it:
    /// a strip scaled again from a source changed only outside its source
    /// rows is the same pixels.
    #[allow(clippy::too_many_arguments)]
    pub fn scale_strips<S: Send>(
        &mut self,
        src: &[u8],
        from: Size,
        to: Size,
        dst: &mut Vec<u8>,
        rows: u32,
        states: &mut [S],
        wanted: impl Fn(usize) -> bool + Sync,
        then: impl Fn(&mut S, u32, &[u8]) -> Result<()> + Sync,
    ) -> Result<usize> {
        let len = to.width as usize * to.height as usize * 4;
        if dst.len() != len {
            // Only the first capture at a new size pays for this fill.
            dst.resize(len, 0);
        }
        let mid_len = from.width as usize * to.height as usize * 4;
        if self.mid.len() != mid_len {
            self.mid.resize(mid_len, 0);
        }
        let count = to.height.div_ceil(rows.max(1)) as usize;
        if rows == 0 || count > states.len() {
            return Err(Error::internal(format!(
                "scaling {} rows in strips of {rows}: only {} strip states",
                to.height,
                states.len()
            )));
        }
        let src = ImageRef::new(from.width, from.height, src, PixelType::U8x4)
            .map_err(|e| Error::internal(format!("wrapping the source image: {e}")))?;
        let y_scale = from.height as f64 / to.height as f64;
        let (out_stride, mid_stride) = (to.width as usize * 4, from.width as usize * 4);
        let threads = self.resizers.len().min(count).max(1);
        let per = count.div_ceil(threads);
        let filter = self.filter;
        // Each thread's run: its first strip, and its rows of dst and of
        // the vertically scaled pixels, and its strips' states.
        let mut jobs = Vec::with_capacity(threads);
        let (mut out, mut mid, mut state) = (
            dst.as_mut_slice(),
            self.mid.as_mut_slice(),
            &mut states[..count],
        );
        for (t, resizer) in self.resizers.iter_mut().enumerate() {
            let first = t * per;
            if first >= count {
                break;
            }
            let n = per.min(count - first);
            let run_rows =
                ((first + n) * rows as usize).min(to.height as usize) - first * rows as usize;
            let (o, o_rest) = std::mem::take(&mut out).split_at_mut(run_rows * out_stride);
            let (m, m_rest) = std::mem::take(&mut mid).split_at_mut(run_rows * mid_stride);
            let (st, st_rest) = std::mem::take(&mut state).split_at_mut(n);
            (out, mid, state) = (o_rest, m_rest, st_rest);
            jobs.push((resizer, first, o, m, st));
        }
        let work = |(resizer, first, out, mid, states): (
            &mut Resizer,
            usize,
            &mut [u8],
            &mut [u8],
            &mut [S],
        )|
         -> Result<usize> {
            let n = states.len();
            let strip_rows = |k: usize| {
                let top = (first + k) as u32 * rows;
                (top, rows.min(to.height - top))
            };
            let mut done = 0;
            let mut i = 0;
            while i < n {
                if !wanted(first + i) {
                    i += 1;
                    continue;
                }
                let mut j = i + 1;
                while j < n && wanted(first + j) {
                    j += 1;
                }
                for k in i..j {
                    let (top, height) = strip_rows(k);
                    let at = k * rows as usize;
                    let part = &mut mid[at * mid_stride..(at + height as usize) * mid_stride];
                    let mut image = Image::from_slice_u8(from.width, height, part, PixelType::U8x4)
                        .map_err(|e| Error::internal(format!("wrapping a strip: {e}")))?;
                    let options = ResizeOptions::new()
                        .resize_alg(ResizeAlg::Convolution(filter))
                        // The fourth byte is padding (0 on depth-24
                        // visuals), not alpha: premultiplying by it would
                        // turn the image black.
                        .use_alpha(false)
                        .crop(
                            0.0,
                            top as f64 * y_scale,
                            from.width as f64,
                            height as f64 * y_scale,
                        );
                    resizer
                        .resize(&src, &mut image, &options)
                        .map_err(|e| Error::internal(format!("resizing: {e}")))?;
                }
                let (r0, r1) = (i * rows as usize, j * rows as usize);
                let r1 = r1.min(out.len() / out_stride);
                let height = (r1 - r0) as u32;
                let across = ImageRef::new(
                    from.width,
                    height,
                    &mid[r0 * mid_stride..r1 * mid_stride],
                    PixelType::U8x4,
                )
                .map_err(|e| Error::internal(format!("wrapping strips: {e}")))?;
                let mut image = Image::from_slice_u8(
                    to.width,
                    height,
                    &mut out[r0 * out_stride..r1 * out_stride],
                    PixelType::U8x4,
                )
                .map_err(|e| Error::internal(format!("wrapping strips: {e}")))?;
                let options = ResizeOptions::new()
                    .resize_alg(ResizeAlg::Convolution(filter))
                    .use_alpha(false);
                resizer
                    .resize(&across, &mut image, &options)
                    .map_err(|e| Error::internal(format!("resizing: {e}")))?;
                for (k, state) in states.iter_mut().enumerate().take(j).skip(i) {
                    let (_, height) = strip_rows(k);
                    let at = k * rows as usize;
                    let pixels = &out[at * out_stride..(at + height as usize) * out_stride];
                    then(state, height, pixels)?;
                }
                done += j - i;
                i = j;
            }
            Ok(done)
        };
        if threads == 1 {
            return work(jobs.pop().expect("at least one strip"));
        }
        let work = &work;
        let runs: Vec<Box<dyn FnOnce() -> Result<usize> + Send + '_>> = jobs
            .into_iter()
            .map(|job| Box::new(move || work(job)) as Box<dyn FnOnce() -> Result<usize> + Send>)
            .collect();
        let mut done = 0;
        for outcome in self.pool.run(runs) {
            done += outcome.unwrap_or_else(|_| Err(Error::internal("a resize thread panicked")))?;
        }
        Ok(done)
    }
}

/// The source rows (of `from_height`) that output rows `out` (of
/// `to_height`) are made from, widened to any filter up to Lanczos3's
/// support and rounded outwards, so that a change outside them cannot
/// change those output rows.
pub fn source_rows(
    from_height: u32,
    to_height: u32,
    out: std::ops::Range<u32>,
) -> std::ops::Range<u32> {
    let scale = from_height as f64 / to_height.max(1) as f64;
    // The filter's radius in source rows: its support (3 at most, for
    // Lanczos3) times the reduction; one row more each side for rounding.
    let radius = 3.0 * scale.max(1.0) + 1.0;
    let start = (out.start as f64 * scale - radius).floor().max(0.0) as u32;
    let end = (out.end as f64 * scale + radius)
        .ceil()
        .min(from_height as f64) as u32;
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(size: Size) -> Vec<u8> {
        let mut v = Vec::new();
        for y in 0..size.height {
            for x in 0..size.width {
                v.extend([(x * 7 + y) as u8, (y * 13) as u8, ((x ^ y) * 5) as u8, 0]);
            }
        }
        v
    }

    #[test]
    fn bands_match_a_single_resize() {
        let from = Size {
            width: 640,
            height: 600,
        };
        let to = Size {
            width: 481,
            height: 397,
        };
        let src = pattern(from);
        let mut banded = Vec::new();
        let mut scaler = Scaler {
            resizers: (0..3).map(|_| Resizer::new()).collect(),
            filter: FILTER,
            mid: Vec::new(),
            pool: Pool::default(),
        };
        scaler.scale(&src, from, to, &mut banded).unwrap();
        let mut single = Vec::new();
        let mut one = Scaler::default();
        one.resizers.truncate(1);
        one.scale(&src, from, to, &mut single).unwrap();
        let worst = banded
            .iter()
            .zip(&single)
            .map(|(a, b)| a.abs_diff(*b))
            .max()
            .unwrap();
        assert!(
            worst <= 1,
            "banded and single resizes differ by up to {worst}"
        );
    }

    #[test]
    fn zero_padding_byte_does_not_darken() {
        // Depth-24 pixels arrive with padding 0; the result must keep colour.
        let from = Size {
            width: 8,
            height: 8,
        };
        let src: Vec<u8> = [200u8, 100, 50, 0].repeat(64);
        let mut dst = Vec::new();
        Scaler::default()
            .scale(
                &src,
                from,
                Size {
                    width: 3,
                    height: 5,
                },
                &mut dst,
            )
            .unwrap();
        assert_eq!(dst.len(), 3 * 5 * 4);
        for px in dst.chunks_exact(4) {
            assert_eq!(&px[..3], &[200, 100, 50]);
        }
    }

    /// A strip scaled from a source changed everywhere but the rows
    /// `source_rows` names for it is the same pixels.
    #[test]
    fn a_strip_reads_no_rows_but_its_source_rows() {
        let from = Size {
            width: 300,
            height: 700,
        };
        for to in [
            Size {
                width: 200,
                height: 509,
            },
            Size {
                width: 300,
                height: 1000,
            },
        ] {
            let rows = 32;
            let count = to.height.div_ceil(rows) as usize;
            let src = pattern(from);
            let mut scaler = Scaler::default();
            let mut first = Vec::new();
            let mut states = vec![(); count];
            scaler
                .scale_strips(
                    &src,
                    from,
                    to,
                    &mut first,
                    rows,
                    &mut states,
                    |_| true,
                    |_, _, _| Ok(()),
                )
                .unwrap();
            for i in [0, 5, count - 1] {
                let out = i as u32 * rows..((i as u32 + 1) * rows).min(to.height);
                let keep = source_rows(from.height, to.height, out.clone());
                let mut changed: Vec<u8> = src.iter().map(|b| b ^ 0x5a).collect();
                let bytes = keep.start as usize * from.width as usize * 4
                    ..keep.end as usize * from.width as usize * 4;
                changed[bytes.clone()].copy_from_slice(&src[bytes]);
                let mut again = first.clone();
                scaler
                    .scale_strips(
                        &changed,
                        from,
                        to,
                        &mut again,
                        rows,
                        &mut states,
                        |j| j == i,
                        |_, _, _| Ok(()),
                    )
                    .unwrap();
                let stride = to.width as usize * 4;
                let strip = out.start as usize * stride..out.end as usize * stride;
                assert!(
                    again[strip.clone()] == first[strip],
                    "{to:?}: strip {i} read outside {keep:?}"
                );
            }
        }
    }
}
