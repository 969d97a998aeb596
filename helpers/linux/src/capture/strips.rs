//! JPEG encoding in horizontal strips of `STRIP_ROWS` rows, so that the
//! cores share the strips out, each scaling and then encoding its own,
//! and a capture that changed a few rows makes only the strips they reach
//! again; the strips are joined into one baseline JPEG with restart
//! markers.
//!
//! Each strip is a whole JPEG of the same width, quality and (standard)
//! tables. A restart marker resets the DC predictors, which is exactly the
//! state a strip's encoding starts from, so the joined file decodes to the
//! same pixels a single encode gives: every 8×8 block is the same, and a
//! strip boundary falls on an MCU row, which no chroma sample straddles.

use crate::capture::pixfmt::Layout4;
use crate::error::{Error, Result};

/// The height of an MCU row with 4:2:0 subsampling: strips but the last
/// are a multiple of it.
pub const MCU_ROWS: u32 = 16;
const MCU_COLS: u32 = 16;

/// The output rows of each strip but the last: two MCU rows, so that a
/// small change makes little again, and the threads' shares of a whole
/// image (26 strips at 819 rows) come out within a strip of even.
pub const STRIP_ROWS: u32 = 2 * MCU_ROWS;

/// One strip's encoder and output, reused across captures.
#[derive(Default)]
pub struct Strip {
    compressor: Option<turbojpeg::Compressor>,
    buf: Vec<u8>,
    len: usize,
}

impl Strip {
    /// Encodes `rows` rows of `width` tightly packed pixels.
    pub fn encode(
        &mut self,
        pixels: &[u8],
        width: u32,
        rows: u32,
        layout: Layout4,
        quality: u8,
    ) -> Result<()> {
        let compressor = match &mut self.compressor {
            Some(c) => c,
            none => none.insert(super::encode::new_compressor()?),
        };
        self.len = super::encode::compress(
            compressor,
            &mut self.buf,
            pixels,
            width as usize,
            rows as usize,
            layout,
            quality,
        )?;
        Ok(())
    }

    /// The strip's JPEG, as last encoded.
    pub fn jpeg(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// The restart interval, in MCUs, of strips `strip_rows` high and `width`
/// wide, when a JPEG can hold it.
pub fn restart_interval(width: u32, strip_rows: u32) -> Option<u16> {
    if strip_rows == 0 || strip_rows % MCU_ROWS != 0 {
        return None;
    }
    let mcus = (strip_rows / MCU_ROWS) as u64 * width.div_ceil(MCU_COLS) as u64;
    u16::try_from(mcus).ok()
}

/// Joins `strips`, each but the last `strip_rows` high, into one JPEG
/// `height` rows high, written to `out`.
pub fn join(
    strips: &[Strip],
    height: u32,
    strip_rows: u32,
    width: u32,
    out: &mut Vec<u8>,
) -> Result<()> {
    let bad = |what: &str| Error::internal(format!("joining JPEG strips: {what}"));
    let interval =
        restart_interval(width, strip_rows).ok_or_else(|| bad("no restart interval fits"))?;
    let height = u16::try_from(height).map_err(|_| bad("the image is too tall"))?;
    out.clear();
    for (i, strip) in strips.iter().enumerate() {
        let jpeg = strip.jpeg();
        let (headers, data) = split(jpeg).ok_or_else(|| bad("a strip is not a baseline JPEG"))?;
        if i == 0 {
            let sos = last_segment(headers)?;
            let head = &headers[..sos];
            let sof = find_marker(head, 0xC0).ok_or_else(|| bad("no baseline SOF"))?;
            out.extend_from_slice(head);
            // SOF0: FF C0, length, precision, then the height.
            out[sof + 5..sof + 7].copy_from_slice(&height.to_be_bytes());
            out.extend_from_slice(&[0xFF, 0xDD, 0x00, 0x04]);
            out.extend_from_slice(&interval.to_be_bytes());
            out.extend_from_slice(&headers[sos..]);
        } else {
            out.extend_from_slice(&[0xFF, 0xD0 + ((i - 1) % 8) as u8]);
        }
        out.extend_from_slice(data);
    }
    out.extend_from_slice(&[0xFF, 0xD9]);
    Ok(())
}

/// Splits a JPEG into its header segments (SOI through SOS) and its
/// entropy-coded data (without EOI); None for anything but a single-scan
/// file with no restart markers or DRI segment of its own.
fn split(jpeg: &[u8]) -> Option<(&[u8], &[u8])> {
    if jpeg.len() < 4 || jpeg[..2] != [0xFF, 0xD8] || jpeg[jpeg.len() - 2..] != [0xFF, 0xD9] {
        return None;
    }
    let mut at = 2;
    loop {
        if jpeg.get(at)? != &0xFF {
            return None;
        }
        let marker = *jpeg.get(at + 1)?;
        let len = u16::from_be_bytes([*jpeg.get(at + 2)?, *jpeg.get(at + 3)?]) as usize;
        match marker {
            // DRI, or a frame that is not baseline (C4 is DHT, CC DAC).
            0xDD | 0xC1..=0xC3 | 0xC5..=0xCB | 0xCD..=0xCF => return None,
            _ => {}
        }
        at += 2 + len;
        if marker == 0xDA {
            let data = jpeg.get(at..jpeg.len() - 2)?;
            // Only stuffed FF 00 bytes may appear in the scan data.
            let mut rest = data;
            while let Some(p) = rest.iter().position(|&b| b == 0xFF) {
                if rest.get(p + 1) != Some(&0x00) {
                    return None;
                }
                rest = &rest[p + 2..];
            }
            return Some((&jpeg[..at], data));
        }
    }
}

/// The offset of the last segment (SOS) in a header block.
fn last_segment(headers: &[u8]) -> Result<usize> {
    let mut at = 2;
    loop {
        let next = at + segment_len_at(headers, at)?;
        if next >= headers.len() {
            return Ok(at);
        }
        at = next;
    }
}

/// The length of the segment at `at`, marker included.
fn segment_len_at(headers: &[u8], at: usize) -> Result<usize> {
    match headers.get(at..at + 4) {
        Some([0xFF, _, hi, lo]) => Ok(2 + u16::from_be_bytes([*hi, *lo]) as usize),
        _ => Err(Error::internal(
            "joining JPEG strips: a broken header segment",
        )),
    }
}

/// The offset of the first segment with `marker` in a header block.
fn find_marker(headers: &[u8], marker: u8) -> Option<usize> {
    let mut at = 2;
    while at + 4 <= headers.len() {
        if headers[at] != 0xFF {
            return None;
        }
        if headers[at + 1] == marker {
            return Some(at);
        }
        at += 2 + u16::from_be_bytes([headers[at + 2], headers[at + 3]]) as usize;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::resize::Scaler;
    use crate::types::Size;

    /// Smooth colour with sharp text-like detail, so that both the DC
    /// prediction and the chroma subsampling are exercised at the seams.
    fn scene(size: Size) -> Vec<u8> {
        let mut v = Vec::new();
        for y in 0..size.height {
            for x in 0..size.width {
                let ink = (x / 3 + y / 5) % 7 == 0;
                let (b, g, r) = if ink {
                    (20, 20, 20)
                } else {
                    ((x / 4) as u8, (y / 3) as u8, ((x + y) / 6) as u8)
                };
                v.extend([b, g, r, 0]);
            }
        }
        v
    }

    fn decode(jpeg: &[u8]) -> turbojpeg::Image<Vec<u8>> {
        turbojpeg::decompress(jpeg, turbojpeg::PixelFormat::RGB).expect("a decodable JPEG")
    }

    #[test]
    fn joined_strips_decode_like_one_encode() {
        let from = Size {
            width: 1000,
            height: 700,
        };
        // Widths and heights that are not multiples of the MCU.
        for to in [
            Size {
                width: 731,
                height: 509,
            },
            Size {
                width: 640,
                height: 260,
            },
        ] {
            let src = scene(from);
            for (threads, rows) in [(2usize, STRIP_ROWS), (3, 2 * MCU_ROWS)] {
                let mut scaler = Scaler::default();
                let mut scaled = Vec::new();
                let count = to.height.div_ceil(rows) as usize;
                let mut strips: Vec<Strip> = (0..count).map(|_| Strip::default()).collect();
                scaler.force_threads(threads);
                let used = scaler
                    .scale_strips(
                        &src,
                        from,
                        to,
                        &mut scaled,
                        rows,
                        &mut strips,
                        |_| true,
                        |s, rows, px| s.encode(px, to.width, rows, Layout4::BGRX, 80),
                    )
                    .unwrap();
                assert_eq!(used, count, "{to:?}: strips scaled");
                let mut joined = Vec::new();
                join(&strips[..used], to.height, rows, to.width, &mut joined).unwrap();
                let mut single = crate::capture::encode::Encoder::default();
                let whole = single
                    .encode(
                        &scaled,
                        to,
                        Layout4::BGRX,
                        crate::capture::encode::ImageFormat::Jpeg,
                        80,
                    )
                    .unwrap()
                    .to_vec();
                let (a, b) = (decode(&joined), decode(&whole));
                assert_eq!((a.width, a.height), (to.width as usize, to.height as usize));
                assert!(
                    a.pixels == b.pixels,
                    "{to:?} in {used} strips decodes differently from one encode"
                );
            }
        }
    }

    #[test]
    fn restart_interval_needs_whole_mcu_rows_that_fit() {
        assert_eq!(restart_interval(1456, 416), Some(26 * 91));
        assert_eq!(restart_interval(1456, 410), None);
        assert_eq!(restart_interval(16384, 4096), None);
    }
}
