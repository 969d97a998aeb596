//! Scaling 4-byte pixels with fast_image_resize (SIMD convolution).

use fast_image_resize::images::{Image, ImageRef};
use fast_image_resize::{FilterType, PixelType, ResizeAlg, ResizeOptions, Resizer};

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
        }
    }

    /// Uses `n` threads whatever the machine has, for tests.
    #[cfg(test)]
    pub fn force_threads(&mut self, n: usize) {
        self.resizers = (0..n).map(|_| Resizer::new()).collect();
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
    /// and runs `then` on each strip as soon as it is scaled, with the
    /// strip's entry of `states`, its row count and its pixels. The strips
    /// are shared out among one thread per resizer. Returns how many
    /// strips were scaled.
    ///
    /// Each strip resizes a fractional crop of the source whose filter taps
    /// still reach past the crop into the whole image, reading only the
    /// source rows `source_rows` names, so a strip comes out the same
    /// whichever other strips are scaled with it: a strip scaled again
    /// from a source changed only outside those rows is the same pixels.
    #[allow(clippy::too_many_arguments)]
    pub fn scale_strips<S: Send>(
        &mut self,
        src: &[u8],
        from: Size,
        to: Size,
        dst: &mut Vec<u8>,
        rows: u32,
        states: &mut [S],
        wanted: impl Fn(usize) -> bool,
        then: impl Fn(&mut S, u32, &[u8]) -> Result<()> + Sync,
    ) -> Result<usize> {
        let len = to.width as usize * to.height as usize * 4;
        if dst.len() != len {
            // Only the first capture at a new size pays for this fill.
            dst.resize(len, 0);
        }
        if rows == 0 || to.height.div_ceil(rows) as usize > states.len() {
            return Err(Error::internal(format!(
                "scaling {} rows in strips of {rows}: only {} strip states",
                to.height,
                states.len()
            )));
        }
        let src = ImageRef::new(from.width, from.height, src, PixelType::U8x4)
            .map_err(|e| Error::internal(format!("wrapping the source image: {e}")))?;
        let y_scale = from.height as f64 / to.height as f64;
        let stride = to.width as usize * 4;
        let mut jobs: Vec<(&mut [u8], &mut S, u32, ResizeOptions)> = dst
            .chunks_mut(rows as usize * stride)
            .zip(states.iter_mut())
            .enumerate()
            .filter(|(i, _)| wanted(*i))
            .map(|(i, (band, state))| {
                let first = i as u32 * rows;
                let height = (band.len() / stride) as u32;
                let options = ResizeOptions::new()
                    .resize_alg(ResizeAlg::Convolution(self.filter))
                    // The fourth byte is padding (0 on depth-24 visuals),
                    // not alpha: premultiplying by it would turn the image
                    // black.
                    .use_alpha(false)
                    .crop(
                        0.0,
                        first as f64 * y_scale,
                        from.width as f64,
                        height as f64 * y_scale,
                    );
                (band, state, height, options)
            })
            .collect();
        let count = jobs.len();
        // Taken from the back: the first strips go first.
        jobs.reverse();
        let queue = std::sync::Mutex::new(jobs);
        let work = |resizer: &mut Resizer| -> Result<()> {
            loop {
                let job = queue.lock().unwrap_or_else(|e| e.into_inner()).pop();
                let Some((band, state, height, options)) = job else {
                    return Ok(());
                };
                let mut out = Image::from_slice_u8(to.width, height, band, PixelType::U8x4)
                    .map_err(|e| Error::internal(format!("wrapping the output strip: {e}")))?;
                resizer
                    .resize(&src, &mut out, &options)
                    .map_err(|e| Error::internal(format!("resizing: {e}")))?;
                then(state, height, out.buffer())?;
            }
        };
        let threads = self.resizers.len().min(count).max(1);
        let (first, others) = self
            .resizers
            .split_first_mut()
            .expect("at least one resizer");
        if threads == 1 {
            work(first)?;
            return Ok(count);
        }
        let work = &work;
        std::thread::scope(|scope| {
            let handles: Vec<_> = others[..threads - 1]
                .iter_mut()
                .map(|resizer| scope.spawn(move || work(resizer)))
                .collect();
            let mut result = work(first);
            for handle in handles {
                let strip = handle
                    .join()
                    .unwrap_or_else(|_| Err(Error::internal("a resize thread panicked")));
                result = result.and(strip);
            }
            result
        })?;
        Ok(count)
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
