//! Encoding 4-byte pixels as JPEG (libjpeg-turbo) or PNG.

use crate::capture::pixfmt::{self, Layout4};
use crate::error::{Error, Result};
use crate::types::Size;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageFormat {
    Jpeg,
    Png,
}

impl ImageFormat {
    pub fn name(self) -> &'static str {
        match self {
            ImageFormat::Jpeg => "jpeg",
            ImageFormat::Png => "png",
        }
    }
}

/// Encoders and their output buffers, reused across captures.
#[derive(Default)]
pub struct Encoder {
    jpeg: Option<turbojpeg::Compressor>,
    /// JPEG output. Its length only grows (to turbojpeg's worst-case bound)
    /// so that encoding never has to clear megabytes first.
    jpeg_buf: Vec<u8>,
    png_buf: Vec<u8>,
    rgb: Vec<u8>,
}

impl Encoder {
    /// Encodes `pixels` (tightly packed, `layout`) and returns the encoded
    /// bytes, borrowed from the encoder until the next call.
    pub fn encode(
        &mut self,
        pixels: &[u8],
        size: Size,
        layout: Layout4,
        format: ImageFormat,
        quality: u8,
    ) -> Result<&[u8]> {
        match format {
            ImageFormat::Jpeg => self.jpeg(pixels, size, layout, quality),
            ImageFormat::Png => self.png(pixels, size, layout),
        }
    }

    fn jpeg(&mut self, pixels: &[u8], size: Size, layout: Layout4, quality: u8) -> Result<&[u8]> {
        let compressor = match &mut self.jpeg {
            Some(c) => c,
            none => none.insert(new_compressor()?),
        };
        let (w, h) = (size.width as usize, size.height as usize);
        let len = compress(
            compressor,
            &mut self.jpeg_buf,
            pixels,
            w,
            h,
            layout,
            quality,
        )?;
        Ok(&self.jpeg_buf[..len])
    }

    fn png(&mut self, pixels: &[u8], size: Size, layout: Layout4) -> Result<&[u8]> {
        let fail = |e: png::EncodingError| Error::internal(format!("PNG encoder: {e}"));
        pixfmt::to_rgb(layout, pixels, &mut self.rgb);
        self.png_buf.clear();
        let mut encoder = png::Encoder::new(&mut self.png_buf, size.width, size.height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        encoder.set_compression(png::Compression::Fast);
        encoder.set_filter(png::FilterType::Sub);
        encoder.set_adaptive_filter(png::AdaptiveFilterType::NonAdaptive);
        let mut writer = encoder.write_header().map_err(fail)?;
        writer.write_image_data(&self.rgb).map_err(fail)?;
        writer.finish().map_err(fail)?;
        Ok(&self.png_buf)
    }
}

fn jpeg_error(what: &str, e: turbojpeg::Error) -> Error {
    Error::internal(format!("JPEG encoder: {what}: {e}"))
}

/// A JPEG compressor with the settings every capture uses.
pub(crate) fn new_compressor() -> Result<turbojpeg::Compressor> {
    let mut c = turbojpeg::Compressor::new().map_err(|e| jpeg_error("creating", e))?;
    // 4:2:0 halves the chroma work; text stays sharp because luma is
    // kept at full resolution.
    c.set_subsamp(turbojpeg::Subsamp::Sub2x2)
        .map_err(|e| jpeg_error("subsampling", e))?;
    Ok(c)
}

/// Compresses `w`×`h` tightly packed pixels into `buf`, whose length only
/// grows (to turbojpeg's worst-case bound) so that encoding never has to
/// clear megabytes first; returns the JPEG's length.
pub(crate) fn compress(
    compressor: &mut turbojpeg::Compressor,
    buf: &mut Vec<u8>,
    pixels: &[u8],
    w: usize,
    h: usize,
    layout: Layout4,
    quality: u8,
) -> Result<usize> {
    let format = layout
        .turbojpeg_format()
        .ok_or_else(|| Error::internal(format!("no turbojpeg format for {layout:?}")))?;
    compressor
        .set_quality(quality as i32)
        .map_err(|e| jpeg_error("setting quality", e))?;
    let bound = compressor
        .buf_len(w, h)
        .map_err(|e| jpeg_error("sizing the buffer", e))?;
    if buf.len() < bound {
        buf.resize(bound, 0);
    }
    let image = turbojpeg::Image {
        pixels: &pixels[..w * h * 4],
        width: w,
        pitch: w * 4,
        height: h,
        format,
    };
    compressor
        .compress_to_slice(image, buf)
        .map_err(|e| jpeg_error("compressing", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gradient(size: Size) -> Vec<u8> {
        let mut v = Vec::new();
        for y in 0..size.height {
            for x in 0..size.width {
                v.extend([(x * 3) as u8, (y * 5) as u8, ((x + y) * 7) as u8, 0]);
            }
        }
        v
    }

    #[test]
    fn png_round_trips_exactly_without_alpha() {
        let size = Size {
            width: 37,
            height: 21,
        };
        let pixels = gradient(size);
        let mut enc = Encoder::default();
        let data = enc
            .encode(&pixels, size, Layout4::BGRX, ImageFormat::Png, 80)
            .unwrap()
            .to_vec();
        let decoder = png::Decoder::new(&data[..]);
        let mut reader = decoder.read_info().unwrap();
        let mut out = vec![0; reader.output_buffer_size()];
        let info = reader.next_frame(&mut out).unwrap();
        assert_eq!(info.color_type, png::ColorType::Rgb);
        assert_eq!((info.width, info.height), (37, 21));
        for (i, px) in pixels.chunks_exact(4).enumerate() {
            assert_eq!(&out[i * 3..i * 3 + 3], &[px[2], px[1], px[0]], "pixel {i}");
        }
    }

    #[test]
    fn jpeg_decodes_to_the_right_colours() {
        let size = Size {
            width: 64,
            height: 48,
        };
        // Flat orange with a zero padding byte, as a depth-24 server sends it.
        let pixels = [0x00u8, 0x80, 0xff, 0x00].repeat(64 * 48);
        let mut enc = Encoder::default();
        let data = enc
            .encode(&pixels, size, Layout4::BGRX, ImageFormat::Jpeg, 90)
            .unwrap()
            .to_vec();
        assert_eq!(&data[..2], &[0xff, 0xd8]);
        let img = turbojpeg::decompress(&data, turbojpeg::PixelFormat::RGB).unwrap();
        assert_eq!((img.width, img.height), (64, 48));
        for px in img.pixels.chunks_exact(3) {
            assert!(
                px[0].abs_diff(0xff) <= 3 && px[1].abs_diff(0x80) <= 3 && px[2] <= 3,
                "{px:?}"
            );
        }
        // A second, smaller encode reuses the buffer and still works.
        let small = Size {
            width: 8,
            height: 8,
        };
        let data2 = enc
            .encode(
                &pixels[..8 * 8 * 4],
                small,
                Layout4::BGRX,
                ImageFormat::Jpeg,
                50,
            )
            .unwrap();
        assert_eq!(turbojpeg::read_header(data2).unwrap().width, 8);
    }
}
