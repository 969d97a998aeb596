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

/// How `Scaler::scale_then` cuts its output: bands a multiple of `align`
/// rows high (but the last), at most one per entry of `states`, each
/// band's `then` getting its own entry.
pub struct Bands<'a, S> {
    pub align: u32,
    pub states: &'a mut [S],
}

/// Resizers with their scratch buffers, reused across captures: one per
/// band of output rows, each band scaled on its own thread.
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

    /// Uses `n` bands (threads) whatever the machine has, for tests.
    #[cfg(test)]
    pub fn force_threads(&mut self, n: usize) {
        self.resizers = (0..n).map(|_| Resizer::new()).collect();
    }

    /// Scales tightly packed 4-byte pixels `src` of size `from` into `dst`
    /// (resized to fit `to`; its allocation is reused).
    ///
    /// The output is cut into horizontal bands scaled in parallel. Each band
    /// resizes a fractional crop of the source whose filter taps still reach
    /// past the crop into the whole image, so the bands are the same pixels
    /// a single resize would produce: no seams.
    pub fn scale(&mut self, src: &[u8], from: Size, to: Size, dst: &mut Vec<u8>) -> Result<()> {
        let mut states = vec![(); self.resizers.len()];
        let bands = Bands {
            align: 1,
            states: &mut states,
        };
        self.scale_then(src, from, to, dst, bands, |_, _, _| Ok(()))
            .map(|_| ())
    }

    /// Like `scale`, with every band but the last a multiple of
    /// `bands.align` rows high, and `then` run on each band's own thread as
    /// soon as that band is scaled, with the band's entry of
    /// `bands.states`, its row count and its pixels. Returns how many bands
    /// there were and the rows of each but the last.
    pub fn scale_then<S: Send>(
        &mut self,
        src: &[u8],
        from: Size,
        to: Size,
        dst: &mut Vec<u8>,
        bands: Bands<'_, S>,
        then: impl Fn(&mut S, u32, &[u8]) -> Result<()> + Sync,
    ) -> Result<(usize, u32)> {
        let len = to.width as usize * to.height as usize * 4;
        if dst.len() != len {
            // Only the first capture at a new size pays for this fill.
            dst.resize(len, 0);
        }
        let Bands { align, states } = bands;
        let src = ImageRef::new(from.width, from.height, src, PixelType::U8x4)
            .map_err(|e| Error::internal(format!("wrapping the source image: {e}")))?;
        let most = self.resizers.len().min(states.len()).max(1) as u32;
        let bands = (to.height / MIN_ROWS_PER_BAND).clamp(1, most);
        let rows_per_band = to.height.div_ceil(bands).next_multiple_of(align.max(1));
        let y_scale = from.height as f64 / to.height as f64;
        let filter = self.filter;
        let mut jobs = Vec::with_capacity(bands as usize);
        let mut rest: &mut [u8] = dst;
        let mut row = 0;
        for (resizer, state) in self.resizers.iter_mut().zip(states.iter_mut()) {
            if row == to.height {
                break;
            }
            let rows = rows_per_band.min(to.height - row);
            let (band, tail) = rest.split_at_mut(rows as usize * to.width as usize * 4);
            rest = tail;
            let options = ResizeOptions::new()
                .resize_alg(ResizeAlg::Convolution(filter))
                // The fourth byte is padding (0 on depth-24 visuals), not
                // alpha: premultiplying by it would turn the image black.
                .use_alpha(false)
                .crop(
                    0.0,
                    row as f64 * y_scale,
                    from.width as f64,
                    rows as f64 * y_scale,
                );
            jobs.push((resizer, state, band, rows, options));
            row += rows;
        }
        let count = jobs.len();
        let run = |(resizer, state, band, rows, options): (
            &mut Resizer,
            &mut S,
            &mut [u8],
            u32,
            ResizeOptions,
        )| {
            let mut out = Image::from_slice_u8(to.width, rows, band, PixelType::U8x4)
                .map_err(|e| Error::internal(format!("wrapping the output band: {e}")))?;
            resizer
                .resize(&src, &mut out, &options)
                .map_err(|e| Error::internal(format!("resizing: {e}")))?;
            then(state, rows, out.buffer())
        };
        if jobs.len() == 1 {
            run(jobs.pop().expect("one job"))?;
            return Ok((count, rows_per_band));
        }
        std::thread::scope(|scope| {
            let mut jobs = jobs.into_iter();
            let first = jobs.next().expect("at least two jobs");
            let handles: Vec<_> = jobs.map(|job| scope.spawn(move || run(job))).collect();
            let mut result = run(first);
            for handle in handles {
                let band = handle
                    .join()
                    .unwrap_or_else(|_| Err(Error::internal("a resize thread panicked")));
                result = result.and(band);
            }
            result
        })?;
        Ok((count, rows_per_band))
    }
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
}
