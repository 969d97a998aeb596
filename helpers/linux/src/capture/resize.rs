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

    /// Scales tightly packed 4-byte pixels `src` of size `from` into `dst`
    /// (resized to fit `to`; its allocation is reused).
    ///
    /// The output is cut into horizontal bands scaled in parallel. Each band
    /// resizes a fractional crop of the source whose filter taps still reach
    /// past the crop into the whole image, so the bands are the same pixels
    /// a single resize would produce: no seams.
    pub fn scale(&mut self, src: &[u8], from: Size, to: Size, dst: &mut Vec<u8>) -> Result<()> {
        let len = to.width as usize * to.height as usize * 4;
        if dst.len() != len {
            // Only the first capture at a new size pays for this fill.
            dst.resize(len, 0);
        }
        let src = ImageRef::new(from.width, from.height, src, PixelType::U8x4)
            .map_err(|e| Error::internal(format!("wrapping the source image: {e}")))?;
        let bands = (to.height / MIN_ROWS_PER_BAND).clamp(1, self.resizers.len() as u32);
        let rows_per_band = to.height.div_ceil(bands);
        let y_scale = from.height as f64 / to.height as f64;
        let filter = self.filter;
        let mut jobs = Vec::with_capacity(bands as usize);
        let mut rest: &mut [u8] = dst;
        let mut row = 0;
        for resizer in self.resizers.iter_mut().take(bands as usize) {
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
            jobs.push((resizer, band, rows, options));
            row += rows;
        }
        let run =
            |(resizer, band, rows, options): (&mut Resizer, &mut [u8], u32, ResizeOptions)| {
                let mut out = Image::from_slice_u8(to.width, rows, band, PixelType::U8x4)
                    .map_err(|e| Error::internal(format!("wrapping the output band: {e}")))?;
                resizer
                    .resize(&src, &mut out, &options)
                    .map_err(|e| Error::internal(format!("resizing: {e}")))
            };
        if jobs.len() == 1 {
            return run(jobs.pop().expect("one job"));
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
        })
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
