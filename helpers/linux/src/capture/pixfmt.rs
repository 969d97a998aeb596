//! The server's pixel format and conversion to 4-byte pixels.
//!
//! Everything about a ZPixmap image (bits per pixel, scanline padding, byte
//! order, the visual's channel masks) is read from the server, never
//! assumed. The common case, 32 bits per pixel with each channel in its own
//! byte, is used as it is: turbojpeg and the resizer take it directly. Any
//! other format is converted once to BGRX.

use x11rb::protocol::xproto::{ImageOrder, Setup, VisualClass};

use crate::error::{Code, Error, Result};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    LsbFirst,
    MsbFirst,
}

/// How the server lays out the pixels of a ZPixmap image of the root window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PixelFormat {
    pub depth: u8,
    pub bits_per_pixel: u8,
    pub scanline_pad: u8,
    pub byte_order: ByteOrder,
    pub red_mask: u32,
    pub green_mask: u32,
    pub blue_mask: u32,
}

/// Byte positions of red, green and blue inside a 4-byte pixel whose
/// remaining byte is ignored (it is 0 on depth-24 visuals, so it must never
/// be read as alpha).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout4 {
    pub r: usize,
    pub g: usize,
    pub b: usize,
}

impl Layout4 {
    pub const BGRX: Layout4 = Layout4 { r: 2, g: 1, b: 0 };
    pub const RGBX: Layout4 = Layout4 { r: 0, g: 1, b: 2 };
    pub const XBGR: Layout4 = Layout4 { r: 3, g: 2, b: 1 };
    pub const XRGB: Layout4 = Layout4 { r: 1, g: 2, b: 3 };

    /// The turbojpeg input format with this layout, if it has one.
    pub fn turbojpeg_format(self) -> Option<turbojpeg::PixelFormat> {
        match self {
            Layout4::BGRX => Some(turbojpeg::PixelFormat::BGRX),
            Layout4::RGBX => Some(turbojpeg::PixelFormat::RGBX),
            Layout4::XBGR => Some(turbojpeg::PixelFormat::XBGR),
            Layout4::XRGB => Some(turbojpeg::PixelFormat::XRGB),
            _ => None,
        }
    }

    #[inline]
    pub fn rgb(self, pixel: &[u8]) -> [u8; 3] {
        [pixel[self.r], pixel[self.g], pixel[self.b]]
    }

    /// Writes a colour into a 4-byte pixel, padding byte set to 0xff.
    #[inline]
    pub fn pixel(self, [r, g, b]: [u8; 3]) -> [u8; 4] {
        let mut px = [0xff; 4];
        px[self.r] = r;
        px[self.g] = g;
        px[self.b] = b;
        px
    }
}

impl PixelFormat {
    /// The root window's format on screen `screen_num`.
    pub fn of_root(setup: &Setup, screen_num: usize) -> Result<PixelFormat> {
        let screen = setup
            .roots
            .get(screen_num)
            .ok_or_else(|| Error::internal(format!("the X server has no screen {screen_num}")))?;
        let visual = screen
            .allowed_depths
            .iter()
            .flat_map(|d| d.visuals.iter())
            .find(|v| v.visual_id == screen.root_visual)
            .ok_or_else(|| {
                Error::internal(format!(
                    "the root visual 0x{:x} is not among the screen's visuals",
                    screen.root_visual
                ))
            })?;
        if visual.class != VisualClass::TRUE_COLOR && visual.class != VisualClass::DIRECT_COLOR {
            return Err(unsupported(format!(
                "the root visual is of class {}, not TrueColor",
                u8::from(visual.class)
            )));
        }
        let pixmap = setup
            .pixmap_formats
            .iter()
            .find(|f| f.depth == screen.root_depth)
            .ok_or_else(|| {
                Error::internal(format!(
                    "the X server lists no pixmap format for the root depth {}",
                    screen.root_depth
                ))
            })?;
        let format = PixelFormat {
            depth: screen.root_depth,
            bits_per_pixel: pixmap.bits_per_pixel,
            scanline_pad: pixmap.scanline_pad,
            byte_order: if setup.image_byte_order == ImageOrder::MSB_FIRST {
                ByteOrder::MsbFirst
            } else {
                ByteOrder::LsbFirst
            },
            red_mask: visual.red_mask,
            green_mask: visual.green_mask,
            blue_mask: visual.blue_mask,
        };
        format.check().map_err(unsupported)?;
        Ok(format)
    }

    /// Checks that the converter can read this format.
    pub fn check(&self) -> std::result::Result<(), String> {
        if ![8, 16, 24, 32].contains(&self.bits_per_pixel) {
            return Err(format!("{} bits per pixel", self.bits_per_pixel));
        }
        if !matches!(self.scanline_pad, 8 | 16 | 32) {
            return Err(format!("a scanline pad of {} bits", self.scanline_pad));
        }
        let limit = if self.bits_per_pixel == 32 {
            u32::MAX
        } else {
            (1u32 << self.bits_per_pixel) - 1
        };
        for (name, mask) in [
            ("red", self.red_mask),
            ("green", self.green_mask),
            ("blue", self.blue_mask),
        ] {
            if mask == 0 || mask & !limit != 0 {
                return Err(format!(
                    "{name} mask 0x{mask:x} at {} bpp",
                    self.bits_per_pixel
                ));
            }
            let shifted = mask >> mask.trailing_zeros();
            if shifted & (shifted + 1) != 0 {
                return Err(format!("a non-contiguous {name} mask 0x{mask:x}"));
            }
        }
        Ok(())
    }

    /// Bytes per row of a ZPixmap image `width` pixels wide.
    pub fn stride(&self, width: u32) -> usize {
        let pad = self.scanline_pad as usize;
        let bits = width as usize * self.bits_per_pixel as usize;
        bits.div_ceil(pad) * pad / 8
    }

    /// The layout of this format's pixels when they can be used as they
    /// are: 32 bits per pixel, each channel a whole byte, in an order
    /// turbojpeg reads.
    pub fn layout4(&self) -> Option<Layout4> {
        if self.bits_per_pixel != 32 {
            return None;
        }
        let byte_of = |mask: u32| -> Option<usize> {
            let shift = mask.trailing_zeros();
            if mask.count_ones() != 8 || shift % 8 != 0 {
                return None;
            }
            let lsb_index = (shift / 8) as usize;
            Some(match self.byte_order {
                ByteOrder::LsbFirst => lsb_index,
                ByteOrder::MsbFirst => 3 - lsb_index,
            })
        };
        let layout = Layout4 {
            r: byte_of(self.red_mask)?,
            g: byte_of(self.green_mask)?,
            b: byte_of(self.blue_mask)?,
        };
        layout.turbojpeg_format().map(|_| layout)
    }
}

fn unsupported(what: String) -> Error {
    Error::new(
        Code::Unsupported,
        format!("the X server's pixel format is not supported: {what}"),
        "Run the X server at depth 16, 24 or 30 with a TrueColor visual (Xvfb: -screen 0 WxHx24).",
    )
}

/// Extracts one channel and scales it to 8 bits.
#[derive(Clone)]
struct Channel {
    mask: u32,
    shift: u32,
    /// For channels of 8 bits or fewer: value → 8-bit value.
    table: Option<Vec<u8>>,
    /// For wider channels: right shift down to 8 bits.
    narrow: u32,
}

impl Channel {
    fn new(mask: u32) -> Channel {
        let shift = mask.trailing_zeros();
        let bits = mask.count_ones();
        if bits <= 8 {
            let max = (1u32 << bits) - 1;
            let table = (0..=max)
                .map(|v| ((v * 255 + max / 2) / max) as u8)
                .collect();
            Channel {
                mask,
                shift,
                table: Some(table),
                narrow: 0,
            }
        } else {
            Channel {
                mask,
                shift,
                table: None,
                narrow: bits - 8,
            }
        }
    }

    #[inline]
    fn get(&self, value: u32) -> u8 {
        let v = (value & self.mask) >> self.shift;
        match &self.table {
            Some(table) => table[v as usize],
            None => (v >> self.narrow) as u8,
        }
    }
}

/// Converts a ZPixmap image in `format` to tightly packed BGRX in `dst`
/// (replacing its contents; its allocation is reused).
pub fn convert_to_bgrx(
    format: &PixelFormat,
    src: &[u8],
    width: u32,
    height: u32,
    dst: &mut Vec<u8>,
) {
    let stride = format.stride(width);
    let (w, h) = (width as usize, height as usize);
    assert!(src.len() >= stride * h, "image data shorter than its rows");
    let channels = [
        Channel::new(format.red_mask),
        Channel::new(format.green_mask),
        Channel::new(format.blue_mask),
    ];
    let bytes = format.bits_per_pixel as usize / 8;
    let msb = format.byte_order == ByteOrder::MsbFirst;
    dst.clear();
    dst.reserve(w * h * 4);
    for row in src.chunks(stride).take(h) {
        for px in row[..w * bytes].chunks_exact(bytes) {
            let value = read_value(px, msb);
            dst.extend_from_slice(&[
                channels[2].get(value),
                channels[1].get(value),
                channels[0].get(value),
                0xff,
            ]);
        }
    }
}

#[inline]
fn read_value(px: &[u8], msb: bool) -> u32 {
    let mut v = 0u32;
    if msb {
        for &b in px {
            v = (v << 8) | b as u32;
        }
    } else {
        for &b in px.iter().rev() {
            v = (v << 8) | b as u32;
        }
    }
    v
}

/// Copies 4-byte pixels in `layout` into packed RGB (for PNG).
pub fn to_rgb(layout: Layout4, src: &[u8], dst: &mut Vec<u8>) {
    dst.clear();
    dst.reserve(src.len() / 4 * 3);
    if layout == Layout4::BGRX {
        for px in src.chunks_exact(4) {
            dst.extend_from_slice(&[px[2], px[1], px[0]]);
        }
    } else {
        for px in src.chunks_exact(4) {
            dst.extend_from_slice(&layout.rgb(px));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn format(bpp: u8, depth: u8, order: ByteOrder, masks: (u32, u32, u32)) -> PixelFormat {
        PixelFormat {
            depth,
            bits_per_pixel: bpp,
            scanline_pad: 32,
            byte_order: order,
            red_mask: masks.0,
            green_mask: masks.1,
            blue_mask: masks.2,
        }
    }

    const RGB888: (u32, u32, u32) = (0xff0000, 0x00ff00, 0x0000ff);

    #[test]
    fn depth24_in_32bpp_lsb_is_bgrx_fast_path() {
        let f = format(32, 24, ByteOrder::LsbFirst, RGB888);
        assert_eq!(f.layout4(), Some(Layout4::BGRX));
        assert_eq!(f.stride(3), 12);
    }

    #[test]
    fn depth24_in_32bpp_msb_is_xrgb() {
        let f = format(32, 24, ByteOrder::MsbFirst, RGB888);
        assert_eq!(f.layout4(), Some(Layout4::XRGB));
        // The padding byte is 0 on a depth-24 visual; the converted output
        // must still be opaque and in the right channels.
        let src = [0x00, 0x11, 0x22, 0x33, 0x00, 0xaa, 0xbb, 0xcc];
        let mut out = Vec::new();
        convert_to_bgrx(&f, &src, 2, 1, &mut out);
        assert_eq!(out, vec![0x33, 0x22, 0x11, 0xff, 0xcc, 0xbb, 0xaa, 0xff]);
    }

    #[test]
    fn bgr_masks_give_rgbx() {
        let f = format(32, 24, ByteOrder::LsbFirst, (0x0000ff, 0x00ff00, 0xff0000));
        assert_eq!(f.layout4(), Some(Layout4::RGBX));
    }

    #[test]
    fn converts_depth24_lsb_ignoring_padding_byte() {
        let f = format(32, 24, ByteOrder::LsbFirst, RGB888);
        // B G R X with X = 0, as Xvfb sends it.
        let src = [0x01, 0x02, 0x03, 0x00, 0xff, 0x80, 0x00, 0x00];
        let mut out = Vec::new();
        convert_to_bgrx(&f, &src, 2, 1, &mut out);
        assert_eq!(out, vec![0x01, 0x02, 0x03, 0xff, 0xff, 0x80, 0x00, 0xff]);
        let mut rgb = Vec::new();
        to_rgb(Layout4::BGRX, &src, &mut rgb);
        assert_eq!(rgb, vec![0x03, 0x02, 0x01, 0x00, 0x80, 0xff]);
    }

    #[test]
    fn converts_packed_24bpp_with_row_padding() {
        let f = format(24, 24, ByteOrder::LsbFirst, RGB888);
        assert_eq!(f.layout4(), None);
        // 1 pixel per row: 3 bytes, padded to 4.
        assert_eq!(f.stride(1), 4);
        let src = [0x10, 0x20, 0x30, 0xee, 0x40, 0x50, 0x60, 0xee];
        let mut out = Vec::new();
        convert_to_bgrx(&f, &src, 1, 2, &mut out);
        assert_eq!(out, vec![0x10, 0x20, 0x30, 0xff, 0x40, 0x50, 0x60, 0xff]);
    }

    #[test]
    fn converts_rgb565_both_byte_orders() {
        let masks = (0xf800, 0x07e0, 0x001f);
        // Pure red, pure green, pure blue, white, and a mid grey-ish value.
        let values: [u16; 5] = [0xf800, 0x07e0, 0x001f, 0xffff, (16 << 11) | (32 << 5) | 16];
        let want: [[u8; 3]; 5] = [
            [255, 0, 0],
            [0, 255, 0],
            [0, 0, 255],
            [255, 255, 255],
            [132, 130, 132],
        ];
        for order in [ByteOrder::LsbFirst, ByteOrder::MsbFirst] {
            let f = format(16, 16, order, masks);
            assert_eq!(f.layout4(), None);
            // 5 pixels = 10 bytes, padded to 12.
            assert_eq!(f.stride(5), 12);
            let mut src = Vec::new();
            for v in values {
                src.extend(match order {
                    ByteOrder::LsbFirst => v.to_le_bytes(),
                    ByteOrder::MsbFirst => v.to_be_bytes(),
                });
            }
            src.extend([0, 0]);
            let mut out = Vec::new();
            convert_to_bgrx(&f, &src, 5, 1, &mut out);
            for (i, rgb) in want.iter().enumerate() {
                let px = &out[i * 4..i * 4 + 4];
                assert_eq!(Layout4::BGRX.rgb(px), *rgb, "pixel {i} with {order:?}");
                assert_eq!(px[3], 0xff, "pixel {i} alpha with {order:?}");
            }
        }
    }

    #[test]
    fn converts_depth30() {
        let f = format(
            32,
            30,
            ByteOrder::LsbFirst,
            (0x3ff00000, 0x000ffc00, 0x000003ff),
        );
        assert_eq!(f.layout4(), None);
        let v: u32 = (0x3ff << 20) | (0x200 << 10) | 0x004;
        let mut out = Vec::new();
        convert_to_bgrx(&f, &v.to_le_bytes(), 1, 1, &mut out);
        assert_eq!(out, vec![0x01, 0x80, 0xff, 0xff]);
    }

    #[test]
    fn rejects_unreadable_formats() {
        assert!(format(4, 4, ByteOrder::LsbFirst, (0x8, 0x4, 0x3))
            .check()
            .is_err());
        assert!(format(16, 16, ByteOrder::LsbFirst, (0x1f0000, 0x7e0, 0x1f))
            .check()
            .is_err());
        assert!(
            format(32, 24, ByteOrder::LsbFirst, (0xff00ff, 0xff00, 0xff))
                .check()
                .is_err()
        );
        assert!(format(32, 24, ByteOrder::LsbFirst, RGB888).check().is_ok());
    }

    #[test]
    fn layout_pixel_round_trips() {
        for layout in [Layout4::BGRX, Layout4::RGBX, Layout4::XBGR, Layout4::XRGB] {
            let px = layout.pixel([1, 2, 3]);
            assert_eq!(layout.rgb(&px), [1, 2, 3]);
            assert!(layout.turbojpeg_format().is_some());
        }
    }
}
