//! Screen capture: read pixels (MIT-SHM, else GetImage), mask, scale,
//! encode (a scaled JPEG in strips, one per core), base64. Every buffer
//! is kept and reused, so a long session's memory stays flat.
//!
//! The native pixels of the last capture are kept, unmasked, for
//! `patch_check`. With SHM they stay in the segment they were captured into:
//! captures alternate between two segments, so keeping them costs no copy.
//!
//! When DAMAGE says nothing was drawn inside the source since those pixels
//! were read, and the request shapes the image exactly as the last one did
//! (mask rectangles included, placed afresh), the last image is served
//! again under the new id: the pixels it was made from are the screen.

pub mod damage;
pub mod encode;
pub mod ghosts;
pub mod mask;
pub mod masklist;
pub mod pixfmt;
pub mod resize;
pub mod shm;
pub mod strips;

use std::time::{Duration, Instant};

use base64::Engine as _;
use x11rb::connection::Connection;
use x11rb::errors::ReplyError;
use x11rb::protocol::xproto::{ConnectionExt as _, ImageFormat as XImageFormat};

use crate::error::{Error, Result};
use crate::types::{Rect, Size};
use encode::{Encoder, ImageFormat};
use pixfmt::{Layout4, PixelFormat};
use resize::Scaler;
use shm::ShmBuffers;

/// What to capture and how to deliver it.
pub struct Request<'a> {
    /// The screen area, in root coordinates; must lie inside the root.
    pub source: Rect,
    /// Output size; equal to the source size for no scaling.
    pub output: Size,
    pub format: ImageFormat,
    /// JPEG quality, 1..=100.
    pub quality: u8,
    /// Areas to paint over, in root coordinates.
    pub mask: &'a [Rect],
    pub mask_color: [u8; 3],
    /// The id this capture is stored under.
    pub capture_id: u64,
    /// Nothing was drawn inside the last capture's source since its pixels
    /// were read (see `Capturer::quiet_since_read`); with a request that
    /// shapes the image the same way, its image is served again.
    pub quiet: bool,
}

/// Everything in a request that shapes the image, to tell whether the
/// last one can be served again.
#[derive(Clone, PartialEq, Eq)]
struct Shape {
    source: Rect,
    output: Size,
    format: ImageFormat,
    quality: u8,
    mask: Vec<Rect>,
    mask_color: [u8; 3],
}

impl Shape {
    fn of(req: &Request<'_>) -> Shape {
        Shape {
            source: req.source,
            output: req.output,
            format: req.format,
            quality: req.quality,
            mask: req.mask.to_vec(),
            mask_color: req.mask_color,
        }
    }

    fn matches(&self, req: &Request<'_>) -> bool {
        self.source == req.source
            && self.output == req.output
            && self.format == req.format
            && self.quality == req.quality
            && self.mask == req.mask
            && self.mask_color == req.mask_color
    }
}

/// How the pixels were read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Shm,
    GetImage,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Shm => "shm",
            Method::GetImage => "get_image",
        }
    }
}

/// Where each stage's time went, for logs and benchmarks. A scaled JPEG
/// is scaled and encoded band by band on several threads (see `strips`):
/// `scale` is then the time of both, and `encode` that of joining them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timings {
    pub grab: Duration,
    pub mask: Duration,
    pub scale: Duration,
    pub encode: Duration,
    pub base64: Duration,
}

/// A finished capture; `data` is borrowed from the capturer.
pub struct Output<'a> {
    pub data: &'a str,
    pub method: Method,
    pub timings: Timings,
    /// The last capture's image, served again: nothing was read or encoded.
    pub reused: bool,
}

/// The unmasked native pixels of the last capture.
pub struct Snapshot<'a> {
    pub id: u64,
    pub source: Rect,
    pub layout: Layout4,
    /// Tightly packed 4-byte pixels, `source.width` per row.
    pub pixels: &'a [u8],
}

enum Store {
    Shm(usize),
    Owned(Vec<u8>),
}

struct Stored {
    id: u64,
    source: Rect,
    layout: Layout4,
    pixels: Store,
}

pub struct Capturer {
    shm: Option<ShmBuffers>,
    last: Option<Stored>,
    /// A buffer for converted pixels, swapped with the last capture's.
    spare: Vec<u8>,
    /// The masked copy of the native pixels.
    work: Vec<u8>,
    scaled: Vec<u8>,
    scaler: Scaler,
    encoder: Encoder,
    /// One JPEG strip per scaling band, and the JPEG they are joined into.
    strips: Vec<strips::Strip>,
    joined: Vec<u8>,
    base64: String,
    /// What was drawn since the last read, when DAMAGE is there.
    damage: Option<damage::Damage>,
    /// What `base64` is the image of, made from the stored pixels of
    /// `last` and how they were read; None when it is not (no capture
    /// yet, a failed one, or pixels read again by `rebaseline`).
    served: Option<(Shape, Method)>,
}

impl Capturer {
    /// A capturer that tries MIT-SHM first when `use_shm` is set.
    pub fn new(use_shm: bool) -> Capturer {
        Capturer {
            shm: use_shm.then(ShmBuffers::default),
            last: None,
            spare: Vec::new(),
            work: Vec::new(),
            scaled: Vec::new(),
            scaler: Scaler::default(),
            encoder: Encoder::default(),
            strips: (0..std::thread::available_parallelism().map_or(1, |n| n.get().min(4)))
                .map(|_| strips::Strip::default())
                .collect(),
            joined: Vec::new(),
            base64: String::new(),
            damage: None,
            served: None,
        }
    }

    /// Follows what the X server draws on `display`, so that
    /// `rebaseline` can skip reading an area nothing was drawn in.
    pub fn watch_damage(&mut self, display: &str) {
        match damage::Damage::open(display) {
            Ok(d) => self.damage = Some(d),
            Err(e) => crate::log_warn!(
                "no screen damage tracking, so patch_baseline always re-reads the capture's area: {e}"
            ),
        }
    }

    /// Forgets the screen damage so far, right before a capture: from here
    /// on it is what the capture's pixels may lack. Call it before any
    /// server grab, which would hold the tracker's own connection.
    fn reset_damage(&mut self) {
        self.with_damage(|d| d.reset());
    }

    /// Runs `f` on the damage tracker; on an error the tracker is dropped
    /// (every later rebaseline reads) and None returned.
    fn with_damage<T>(
        &mut self,
        f: impl FnOnce(&mut damage::Damage) -> std::result::Result<T, String>,
    ) -> Option<T> {
        let result = f(self.damage.as_mut()?);
        match result {
            Ok(v) => Some(v),
            Err(e) => {
                crate::log_warn!("stopped tracking screen damage: {e}");
                self.damage = None;
                None
            }
        }
    }

    /// Whether the next capture will try MIT-SHM.
    pub fn uses_shm(&self) -> bool {
        self.shm.is_some()
    }

    /// Captures `req.source` of `root` (whose size is `screen` and whose
    /// pixels are in `format`). `grabbed` runs as soon as the pixels are
    /// read, before masking and encoding.
    pub fn capture<C: Connection>(
        &mut self,
        conn: &C,
        root: u32,
        format: &PixelFormat,
        screen: Size,
        req: &Request<'_>,
        grabbed: &mut dyn FnMut(),
    ) -> Result<Output<'_>> {
        if let Some(method) = self.reusable(req) {
            grabbed();
            if let Some(last) = &mut self.last {
                last.id = req.capture_id;
            }
            return Ok(Output {
                data: &self.base64,
                method,
                timings: Timings::default(),
                reused: true,
            });
        }
        // From here until deliver succeeds, base64 holds no finished image.
        self.served = None;
        let mut timings = Timings::default();
        let started = Instant::now();
        let grab = self.grab(conn, root, format, screen, req.source);
        grabbed();
        let (store, layout, method) = grab?;
        timings.grab = started.elapsed();

        let result = self.deliver(&store, layout, req, &mut timings);
        if let Err(e) = result {
            if let Store::Owned(v) = store {
                self.spare = v;
            }
            return Err(e);
        }
        let previous = self.last.replace(Stored {
            id: req.capture_id,
            source: req.source,
            layout,
            pixels: store,
        });
        if let Some(Stored {
            pixels: Store::Owned(v),
            ..
        }) = previous
        {
            self.spare = v;
        }
        self.served = Some((Shape::of(req), method));
        Ok(Output {
            data: &self.base64,
            method,
            timings,
            reused: false,
        })
    }

    /// How the last capture was read, when its image is what `req` would
    /// make now: the screen was quiet in its source since the read, and
    /// the request shapes the image the same way.
    fn reusable(&self, req: &Request<'_>) -> Option<Method> {
        if !req.quiet {
            return None;
        }
        let last = self.last.as_ref()?;
        let (shape, method) = self.served.as_ref()?;
        (last.source == req.source && shape.matches(req)).then_some(*method)
    }

    /// Masks, scales, encodes and base64-encodes the grabbed pixels into
    /// `self.base64`, leaving the native pixels in `store` untouched.
    fn deliver(
        &mut self,
        store: &Store,
        layout: Layout4,
        req: &Request<'_>,
        timings: &mut Timings,
    ) -> Result<()> {
        let Capturer {
            shm,
            work,
            scaled,
            scaler,
            encoder,
            strips,
            joined,
            base64: text,
            ..
        } = self;
        let native_size = req.source.size();
        let native_len = native_size.width as usize * native_size.height as usize * 4;
        let native: &[u8] = match store {
            Store::Shm(slot) => shm
                .as_ref()
                .expect("an SHM capture has SHM buffers")
                .bytes(*slot, native_len),
            Store::Owned(v) => &v[..native_len],
        };
        let mut frame = native;
        if !req.mask.is_empty() {
            // Masking works on a copy: the native pixels stay unmasked for
            // patch_check.
            let t = Instant::now();
            work.clear();
            work.extend_from_slice(native);
            mask::paint(
                work,
                native_size.width,
                req.source,
                req.mask,
                layout,
                req.mask_color,
            );
            frame = work;
            timings.mask = t.elapsed();
        }
        let encoded: &[u8] = if req.output != native_size
            && req.format == ImageFormat::Jpeg
            && strips.len() > 1
            && strips::restart_interval(req.output.width, strips::MCU_ROWS).is_some()
        {
            // Each band's thread encodes its strip as soon as it is scaled,
            // so both cores scale and then encode: scale times the whole of
            // it, encode the joining.
            let t = Instant::now();
            let (width, quality) = (req.output.width, req.quality);
            let (bands, rows) = scaler.scale_then(
                frame,
                native_size,
                req.output,
                scaled,
                resize::Bands {
                    align: strips::MCU_ROWS,
                    states: strips,
                },
                |strip, rows, pixels| strip.encode(pixels, width, rows, layout, quality),
            )?;
            timings.scale = t.elapsed();
            let t = Instant::now();
            let encoded = if bands == 1 {
                strips[0].jpeg()
            } else if strips::restart_interval(width, rows).is_some() {
                strips::join(&strips[..bands], req.output.height, rows, width, joined)?;
                joined
            } else {
                // Too many MCUs per strip for a restart interval: one
                // encode of the whole image.
                encoder.encode(scaled, req.output, layout, req.format, req.quality)?
            };
            timings.encode = t.elapsed();
            encoded
        } else {
            if req.output != native_size {
                let t = Instant::now();
                scaler.scale(frame, native_size, req.output, scaled)?;
                frame = scaled;
                timings.scale = t.elapsed();
            }
            let t = Instant::now();
            let encoded = encoder.encode(frame, req.output, layout, req.format, req.quality)?;
            timings.encode = t.elapsed();
            encoded
        };
        let t = Instant::now();
        text.clear();
        base64::engine::general_purpose::STANDARD.encode_string(encoded, text);
        timings.base64 = t.elapsed();
        Ok(())
    }

    /// The last capture's id when nothing was drawn inside its area since
    /// its pixels were read, so that `rebaseline` may be skipped or its
    /// image served again; either way the damage so far is forgotten, as
    /// `reset_damage` does. Ask it before any server grab, which would hold
    /// the tracker's connection.
    pub fn quiet_since_read(&mut self) -> Option<u64> {
        let Some((id, source)) = self.last.as_ref().map(|s| (s.id, s.source)) else {
            self.reset_damage();
            return None;
        };
        match self.with_damage(|d| d.drawn_within(source)) {
            Some(false) => Some(id),
            _ => None,
        }
    }

    /// Reads the last capture's source rectangle from the screen again
    /// and makes those pixels the ones `patch_check` compares against,
    /// keeping the capture id; no image is produced. Returns how many
    /// pixels differ from the previous ones by more than `tolerance` in
    /// some channel, or None before any capture.
    pub fn rebaseline<C: Connection>(
        &mut self,
        conn: &C,
        root: u32,
        format: &PixelFormat,
        screen: Size,
        tolerance: u8,
    ) -> Result<Option<(u64, u32)>> {
        let Some((id, source)) = self.last.as_ref().map(|s| (s.id, s.source)) else {
            return Ok(None);
        };
        // The stored pixels are about to be newer than the image.
        self.served = None;
        // grab fills the SHM slot the last capture does not use, so the old
        // pixels stay readable for the comparison.
        let (store, layout, _) = self.grab(conn, root, format, screen, source)?;
        let len = source.width as usize * source.height as usize * 4;
        let differing = {
            let old = self.last().expect("checked above");
            let new: &[u8] = match &store {
                Store::Shm(slot) => self
                    .shm
                    .as_ref()
                    .expect("an SHM capture has SHM buffers")
                    .bytes(*slot, len),
                Store::Owned(v) => &v[..len],
            };
            count_differing(old.pixels, old.layout, new, layout, tolerance)
        };
        let previous = self.last.replace(Stored {
            id,
            source,
            layout,
            pixels: store,
        });
        if let Some(Stored {
            pixels: Store::Owned(v),
            ..
        }) = previous
        {
            self.spare = v;
        }
        Ok(Some((id, differing)))
    }

    /// The last capture's native pixels, unmasked.
    pub fn last(&self) -> Option<Snapshot<'_>> {
        let stored = self.last.as_ref()?;
        let len = stored.source.width as usize * stored.source.height as usize * 4;
        let pixels = match &stored.pixels {
            Store::Shm(slot) => self.shm.as_ref()?.bytes(*slot, len),
            Store::Owned(v) => &v[..len],
        };
        Some(Snapshot {
            id: stored.id,
            source: stored.source,
            layout: stored.layout,
            pixels,
        })
    }

    /// Detaches the SHM segments from the server.
    pub fn release<C: Connection>(&mut self, conn: &C) {
        self.keep_last_without_shm();
        if let Some(shm) = &mut self.shm {
            shm.release(conn);
        }
        self.shm = None;
    }

    /// Reads the pixels of `rect` into a store, as 4-byte pixels.
    fn grab<C: Connection>(
        &mut self,
        conn: &C,
        root: u32,
        format: &PixelFormat,
        screen: Size,
        rect: Rect,
    ) -> Result<(Store, Layout4, Method)> {
        let raw_len = format.stride(rect.width) * rect.height as usize;
        let fast = format.layout4();
        let mut shm_failure = None;
        if let Some(shm) = &mut self.shm {
            let slot = match &self.last {
                Some(Stored {
                    pixels: Store::Shm(s),
                    ..
                }) => 1 - s,
                _ => 0,
            };
            // Size segments for the whole screen so they are made once.
            let full = format.stride(screen.width) * screen.height as usize;
            match shm.grab(conn, slot, root, rect, raw_len, full) {
                Ok(()) => {
                    return Ok(match fast {
                        Some(layout) => (Store::Shm(slot), layout, Method::Shm),
                        None => {
                            let mut buf = std::mem::take(&mut self.spare);
                            pixfmt::convert_to_bgrx(
                                format,
                                shm.bytes(slot, raw_len),
                                rect.width,
                                rect.height,
                                &mut buf,
                            );
                            (Store::Owned(buf), Layout4::BGRX, Method::Shm)
                        }
                    });
                }
                Err(e) => shm_failure = Some(e),
            }
        }
        let reply = get_image(conn, root, rect, "")?;
        if reply.data.len() < raw_len {
            return Err(Error::capture_failed(format!(
                "GetImage of {rect} returned {} bytes, expected {raw_len}",
                reply.data.len()
            )));
        }
        if let Some(e) = shm_failure {
            // GetImage worked where SHM did not, so SHM itself is at fault
            // (a remote server, a SysV shm limit): stop trying it.
            crate::log_warn!(
                "MIT-SHM capture failed ({e}); reading pixels with GetImage from now on"
            );
            self.release(conn);
        }
        Ok(match fast {
            Some(layout) => (Store::Owned(reply.data), layout, Method::GetImage),
            None => {
                let mut buf = std::mem::take(&mut self.spare);
                pixfmt::convert_to_bgrx(format, &reply.data, rect.width, rect.height, &mut buf);
                (Store::Owned(buf), Layout4::BGRX, Method::GetImage)
            }
        })
    }

    /// Before the SHM segments go, copies the last capture out of them.
    fn keep_last_without_shm(&mut self) {
        let copy = match (&self.last, &self.shm) {
            (
                Some(Stored {
                    pixels: Store::Shm(slot),
                    source,
                    ..
                }),
                Some(shm),
            ) => shm
                .bytes(*slot, source.width as usize * source.height as usize * 4)
                .to_vec(),
            _ => return,
        };
        if let Some(last) = &mut self.last {
            last.pixels = Store::Owned(copy);
        }
    }
}

/// Holds the X server (GrabServer) from creation until `release` or drop,
/// so that nothing another client does falls between the requests sent
/// meanwhile.
pub struct ServerGrab<'c, C: Connection> {
    conn: &'c C,
    held: bool,
}

impl<'c, C: Connection> ServerGrab<'c, C> {
    /// Grabs the server when `wanted`; otherwise `release` does nothing.
    pub fn new(conn: &'c C, wanted: bool) -> Result<ServerGrab<'c, C>> {
        if wanted {
            conn.grab_server()
                .map_err(|e| Error::x11("grabbing the X server", e))?;
        }
        Ok(ServerGrab { conn, held: wanted })
    }

    pub fn release(&mut self) {
        if std::mem::take(&mut self.held) {
            // A lost connection releases the grab by itself.
            let _ = self.conn.ungrab_server();
            let _ = self.conn.flush();
        }
    }
}

impl<C: Connection> Drop for ServerGrab<'_, C> {
    fn drop(&mut self) {
        self.release();
    }
}

/// Reads `rect` of the root window with a plain GetImage (ZPixmap, all
/// planes). `note` is appended to the refusal message, to say what a
/// refusal most likely means for the caller.
pub(crate) fn get_image<C: Connection>(
    conn: &C,
    root: u32,
    rect: Rect,
    note: &str,
) -> Result<x11rb::protocol::xproto::GetImageReply> {
    conn.get_image(
        XImageFormat::Z_PIXMAP,
        root,
        rect.x as i16,
        rect.y as i16,
        rect.width as u16,
        rect.height as u16,
        !0,
    )
    .map_err(|e| Error::x11("sending GetImage", e))?
    .reply()
    .map_err(|e| match e {
        ReplyError::X11Error(x) => Error::capture_failed(format!(
            "the X server refused GetImage of {rect}: {:?}{note}",
            x.error_kind
        )),
        other => Error::x11("reading the GetImage reply", other),
    })
}

/// Counts the pixels of two equally sized 4-byte images whose largest
/// channel difference exceeds `tolerance`.
fn count_differing(a: &[u8], la: Layout4, b: &[u8], lb: Layout4, tolerance: u8) -> u32 {
    let mut n = 0;
    for (p, q) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        let (x, y) = (la.rgb(p), lb.rgb(q));
        if (0..3).any(|i| x[i].abs_diff(y[i]) > tolerance) {
            n += 1;
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_differing_compares_colours_across_layouts() {
        // Two pixels: the same red in BGRX and RGBX; then black against
        // grey 30.
        let bgrx = [0, 0, 200, 0, 0, 0, 0, 0];
        let rgbx = [200, 0, 0, 0, 30, 30, 30, 0];
        assert_eq!(
            count_differing(&bgrx, Layout4::BGRX, &rgbx, Layout4::RGBX, 24),
            1
        );
        assert_eq!(
            count_differing(&bgrx, Layout4::BGRX, &rgbx, Layout4::RGBX, 30),
            0
        );
    }
}
