//! Screen capture: read pixels (MIT-SHM, else GetImage), mask, scale,
//! encode (a scaled JPEG in strips of `strips::STRIP_ROWS` rows, shared out
//! among the cores), base64. Every buffer is kept and reused, so a long
//! session's memory stays flat.
//!
//! The native pixels of the last capture are kept, unmasked, for
//! `patch_check`. With SHM they stay in the segment they were captured into:
//! captures alternate between two segments, so keeping them costs no copy.
//!
//! When DAMAGE says nothing was drawn inside the source since those pixels
//! were read, and the request shapes the image exactly as the last one did
//! (mask rectangles included, placed afresh), the last image is served
//! again under the new id: the pixels it was made from are the screen.
//!
//! When DAMAGE says what was drawn, the last image was made in strips and
//! the request shapes it the same way, and the drawn rows are few, only
//! those rows are read, into the stored pixels (and the masked copy), and
//! only the strips whose source rows meet them are scaled and encoded
//! again; the others keep their JPEG bytes. Each strip is made from its
//! own crop of the source whatever else is made with it, so the image is
//! byte for byte the one a full capture of the same screen gives, and the
//! stored pixels stay exactly those the served image shows. Anything else
//! (no damage known, a different shape, a failed read) takes the full path.

pub mod damage;
pub mod encode;
pub mod ghosts;
pub mod mask;
pub mod masklist;
pub mod pixfmt;
pub mod pool;
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
    /// What was drawn inside the last capture's source since its pixels
    /// were read, clipped to it (see `Capturer::drawn_since_read`); None
    /// when that is not known. With a request that shapes the image the
    /// same way, nothing drawn serves the last image again, and a little
    /// drawn updates it.
    pub drawn: Option<Vec<Rect>>,
    /// Whether the last image may be updated from the drawn rows alone;
    /// false while something of the helper's own is moved out of the
    /// capture (the teaching tooltip), which every capture reads in full.
    pub updatable: bool,
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
/// is scaled and encoded strip by strip on several threads (see `strips`):
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
    /// The last capture's image updated: only these rows were read and
    /// these strips encoded.
    pub updated: Option<Updated>,
}

/// How much of an updated image was made again (the capture result's
/// `incremental`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Updated {
    /// Source rows read.
    pub rows: u32,
    /// JPEG strips scaled and encoded, of `of`.
    pub strips: u32,
    pub of: u32,
}

/// Rows of a capture's source, counted from its top.
type Rows = std::ops::Range<u32>;

/// At most this share of the source's rows drawn in, in eighths, is read
/// and encoded in part; more is read whole, where the threads share the
/// work evenly.
const MAX_UPDATED_EIGHTHS: u32 = 4;

/// Drawn row ranges closer than this are read as one.
const ROW_GAP: u32 = 32;

/// At most this many reads (round trips) for an update.
const MAX_ROW_READS: usize = 4;

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
    pipeline: Pipeline,
    /// What was drawn since the last read, when DAMAGE is there.
    damage: Option<damage::Damage>,
    /// What the pipeline's image is, made from the stored pixels of `last`;
    /// None when it is not (no capture yet, a failed one, or pixels read
    /// again by `rebaseline`).
    served: Option<Served>,
}

/// What the served image is the image of.
struct Served {
    shape: Shape,
    /// How its pixels were read.
    method: Method,
    /// It was made in strips, which the pipeline still holds (and, with a
    /// mask, the masked copy of the stored pixels), so it can be updated.
    in_strips: bool,
}

/// Masking, scaling and encoding, with every buffer kept for the next
/// capture: an update builds on what the last one left.
#[derive(Default)]
struct Pipeline {
    /// The masked copy of the native pixels.
    work: Vec<u8>,
    scaled: Vec<u8>,
    scaler: Scaler,
    encoder: Encoder,
    /// The JPEG strips of the last image made in strips, and the JPEG
    /// they are joined into.
    strips: Vec<strips::Strip>,
    joined: Vec<u8>,
    base64: String,
}

impl Capturer {
    /// A capturer that tries MIT-SHM first when `use_shm` is set.
    pub fn new(use_shm: bool) -> Capturer {
        Capturer {
            shm: use_shm.then(ShmBuffers::default),
            last: None,
            spare: Vec::new(),
            pipeline: Pipeline::default(),
            damage: None,
            served: None,
        }
    }

    /// Follows what the X server draws on `display`, so that
    /// `rebaseline` can skip reading an area nothing was drawn in.
    pub fn watch_damage(&mut self, display: &str) {
        if !crate::speedup_on("damage") {
            return;
        }
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
                data: &self.pipeline.base64,
                method,
                timings: Timings::default(),
                reused: true,
                updated: None,
            });
        }
        let mut timings = Timings::default();
        if let Some(rows) = self.updatable(req, format) {
            // From here until the update succeeds, the stored pixels may be
            // newer than the image, which is no longer the screen's.
            self.served = None;
            let started = Instant::now();
            match self.read_rows(conn, root, req.source, &rows) {
                Ok(method) => {
                    grabbed();
                    timings.grab = started.elapsed();
                    return self.update(req, &rows, method, timings);
                }
                Err(e) => {
                    // Nothing was let go of yet (the mask's grab is held):
                    // read it all, as if there had been no image to update.
                    crate::log_warn!(
                        "reading the drawn rows failed ({e}); reading the whole capture"
                    );
                    self.forget_last();
                }
            }
        }
        // From here until deliver succeeds, base64 holds no finished image.
        self.served = None;
        let started = Instant::now();
        let grab = self.grab(conn, root, format, screen, req.source);
        grabbed();
        let (store, layout, method) = grab?;
        timings.grab = started.elapsed();

        let native = stored_bytes(&self.shm, &store, req.source.size());
        let result = self
            .pipeline
            .deliver(native, layout, req, None, &mut timings);
        let in_strips = match result {
            Ok(made) => made.is_some(),
            Err(e) => {
                if let Store::Owned(v) = store {
                    self.spare = v;
                }
                return Err(e);
            }
        };
        self.replace_last(Stored {
            id: req.capture_id,
            source: req.source,
            layout,
            pixels: store,
        });
        self.served = Some(Served {
            shape: Shape::of(req),
            method,
            in_strips,
        });
        Ok(Output {
            data: &self.pipeline.base64,
            method,
            timings,
            reused: false,
            updated: None,
        })
    }

    /// How the last capture was read, when its image is what `req` would
    /// make now: the screen was quiet in its source since the read, and
    /// the request shapes the image the same way.
    fn reusable(&self, req: &Request<'_>) -> Option<Method> {
        if !req.drawn.as_ref().is_some_and(|d| d.is_empty()) {
            return None;
        }
        let last = self.last.as_ref()?;
        let served = self.served.as_ref()?;
        (last.source == req.source && served.shape.matches(req)).then_some(served.method)
    }

    /// The source rows to read again when the last image can be updated
    /// into what `req` would make now: it was made in strips from the
    /// stored pixels, the request shapes it the same way, the pixels
    /// are stored as the server sends them, and what was drawn since they
    /// were read is known and a small part of the source.
    fn updatable(&self, req: &Request<'_>, format: &PixelFormat) -> Option<Vec<Rows>> {
        let drawn = req
            .drawn
            .as_ref()
            .filter(|d| !d.is_empty() && req.updatable)?;
        let last = self.last.as_ref()?;
        let served = self.served.as_ref()?;
        if !served.in_strips
            || last.source != req.source
            || !served.shape.matches(req)
            || format.layout4() != Some(last.layout)
            || format.bits_per_pixel != 32
        {
            return None;
        }
        if matches!(last.pixels, Store::Shm(_)) && self.shm.is_none() {
            return None;
        }
        let rows = drawn_rows(drawn, req.source)?;
        let read: u32 = rows.iter().map(|r| r.len() as u32).sum();
        (read * 8 <= req.source.height * MAX_UPDATED_EIGHTHS).then_some(rows)
    }

    /// Reads `rows` of `source` into the stored pixels, where they are,
    /// and returns how. On an error the stored pixels may be part read.
    fn read_rows<C: Connection>(
        &mut self,
        conn: &C,
        root: u32,
        source: Rect,
        rows: &[Rows],
    ) -> Result<Method> {
        let stride = source.width as usize * 4;
        let last = self.last.as_mut().expect("updatable checked it");
        for r in rows {
            let rect = Rect {
                x: source.x,
                y: source.y + r.start as i32,
                width: source.width,
                height: r.len() as u32,
            };
            let (offset, len) = (r.start as usize * stride, r.len() * stride);
            match &mut last.pixels {
                Store::Shm(slot) => self
                    .shm
                    .as_mut()
                    .expect("updatable checked it")
                    .grab_at(conn, *slot, root, rect, offset, len)
                    .map_err(Error::capture_failed)?,
                Store::Owned(v) => {
                    let reply = get_image(conn, root, rect, "")?;
                    let got = reply.data.get(..len).ok_or_else(|| {
                        Error::capture_failed(format!(
                            "GetImage of {rect} returned {} bytes, expected {len}",
                            reply.data.len()
                        ))
                    })?;
                    v[offset..offset + len].copy_from_slice(got);
                }
            }
        }
        Ok(match last.pixels {
            Store::Shm(_) => Method::Shm,
            Store::Owned(_) => Method::GetImage,
        })
    }

    /// Makes the image of the stored pixels, `rows` of which were just read
    /// again, from the last one.
    fn update(
        &mut self,
        req: &Request<'_>,
        rows: &[Rows],
        method: Method,
        mut timings: Timings,
    ) -> Result<Output<'_>> {
        let last = self.last.as_ref().expect("updatable checked it");
        let (layout, size) = (last.layout, last.source.size());
        let native = stored_bytes(&self.shm, &last.pixels, size);
        let made = self
            .pipeline
            .deliver(native, layout, req, Some(rows), &mut timings);
        let strips = match made {
            Ok(Some(n)) => n,
            other => {
                // The stored pixels are newer than any image served: keep
                // none, so patch_check cannot pass against them.
                self.forget_last();
                return Err(other.err().unwrap_or_else(|| {
                    Error::internal("an image made in strips was updated whole")
                }));
            }
        };
        if let Some(last) = &mut self.last {
            last.id = req.capture_id;
        }
        self.served = Some(Served {
            shape: Shape::of(req),
            method,
            in_strips: true,
        });
        Ok(Output {
            data: &self.pipeline.base64,
            method,
            timings,
            reused: false,
            updated: Some(Updated {
                rows: rows.iter().map(|r| r.len() as u32).sum(),
                strips: strips.0,
                of: strips.1,
            }),
        })
    }

    /// Drops the stored pixels: nothing is compared against them again.
    fn forget_last(&mut self) {
        self.served = None;
        let last = self.last.take();
        self.keep_spare(last);
    }

    /// Makes `stored` the last capture's pixels.
    fn replace_last(&mut self, stored: Stored) {
        let previous = self.last.replace(stored);
        self.keep_spare(previous);
    }

    /// Keeps the buffer of pixels no longer stored for the next capture.
    fn keep_spare(&mut self, old: Option<Stored>) {
        if let Some(Stored {
            pixels: Store::Owned(v),
            ..
        }) = old
        {
            self.spare = v;
        }
    }

    /// What was drawn inside the last capture's source since its pixels
    /// were read, clipped to it (empty when nothing was); None before any
    /// capture or without a working damage tracker. Either way the damage
    /// so far is forgotten, as `reset_damage` does. Ask it before any
    /// server grab, which would hold the tracker's connection.
    pub fn drawn_since_read(&mut self) -> Option<Vec<Rect>> {
        let Some(source) = self.last.as_ref().map(|s| s.source) else {
            self.reset_damage();
            return None;
        };
        self.with_damage(|d| d.drawn_within(source))
    }

    /// The last capture's id when nothing was drawn inside its area since
    /// its pixels were read, so that `rebaseline` may be skipped; like
    /// `drawn_since_read`, it forgets the damage so far.
    pub fn quiet_since_read(&mut self) -> Option<u64> {
        let drawn = self.drawn_since_read()?;
        let id = self.last.as_ref()?.id;
        drawn.is_empty().then_some(id)
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
        let differing = {
            let old = self.last().expect("checked above");
            let new = stored_bytes(&self.shm, &store, source.size());
            count_differing(old.pixels, old.layout, new, layout, tolerance)
        };
        self.replace_last(Stored {
            id,
            source,
            layout,
            pixels: store,
        });
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

/// The native pixels in `store`, of a capture of `size`.
/// Copies the source rows from `top` that `src` holds into `dst`, with
/// the request's mask painted over them.
fn copy_masked_rows(dst: &mut [u8], src: &[u8], top: usize, req: &Request<'_>, layout: Layout4) {
    let width = req.source.width;
    let origin = Rect {
        y: req.source.y + top as i32,
        height: (src.len() / (width as usize * 4)) as u32,
        ..req.source
    };
    mask::copy_painted(dst, src, width, origin, req.mask, layout, req.mask_color);
}

fn stored_bytes<'a>(shm: &'a Option<ShmBuffers>, store: &'a Store, size: Size) -> &'a [u8] {
    let len = size.width as usize * size.height as usize * 4;
    match store {
        Store::Shm(slot) => shm
            .as_ref()
            .expect("an SHM capture has SHM buffers")
            .bytes(*slot, len),
        Store::Owned(v) => &v[..len],
    }
}

/// The rows of `source` that `drawn` (clipped to it) covers, as few
/// ranges (top first) as `ROW_GAP` and `MAX_ROW_READS` allow; None when
/// nothing in it was drawn.
fn drawn_rows(drawn: &[Rect], source: Rect) -> Option<Vec<Rows>> {
    let mut rows: Vec<Rows> = drawn
        .iter()
        .filter_map(|r| r.intersect(&source))
        .map(|r| {
            let top = (r.y - source.y) as u32;
            top..top + r.height
        })
        .collect();
    rows.sort_by_key(|r| r.start);
    let mut merged: Vec<Rows> = Vec::with_capacity(rows.len());
    for r in rows {
        match merged.last_mut() {
            Some(m) if r.start <= m.end + ROW_GAP => m.end = m.end.max(r.end),
            _ => merged.push(r),
        }
    }
    // Too many reads: join the ranges across the narrowest gaps.
    while merged.len() > MAX_ROW_READS {
        let i = (1..merged.len())
            .min_by_key(|&i| merged[i].start - merged[i - 1].end)
            .expect("more than one range");
        let end = merged.remove(i).end;
        merged[i - 1].end = end;
    }
    (!merged.is_empty()).then_some(merged)
}

impl Pipeline {
    /// Masks, scales, encodes and base64-encodes `native`, the source
    /// pixels of `req`, into `self.base64`, leaving `native` untouched.
    /// With `update`, the pipeline holds the image `req` made of pixels
    /// that differ from `native` only in those rows, in strips, and only
    /// what those rows reach is made again. Returns, for an image made in
    /// strips, how many were encoded and of how many.
    fn deliver(
        &mut self,
        native: &[u8],
        layout: Layout4,
        req: &Request<'_>,
        update: Option<&[Rows]>,
        timings: &mut Timings,
    ) -> Result<Option<(u32, u32)>> {
        let Pipeline {
            work,
            scaled,
            scaler,
            encoder,
            strips,
            joined,
            base64: text,
        } = self;
        let native_size = req.source.size();
        let width = native_size.width as usize * 4;
        let mut frame = native;
        if !req.mask.is_empty() {
            // Masking works on a copy: the native pixels stay unmasked for
            // patch_check.
            let t = Instant::now();
            match update {
                // The copy holds the last image's masked pixels: only the
                // rows read again are copied and masked again.
                Some(rows) if work.len() == native.len() => {
                    for r in rows {
                        let bytes = r.start as usize * width..r.end as usize * width;
                        copy_masked_rows(
                            &mut work[bytes.clone()],
                            &native[bytes],
                            r.start as usize,
                            req,
                            layout,
                        );
                    }
                }
                Some(_) => return Err(Error::internal("updating a masked image without its copy")),
                None => {
                    // Only the first capture at a size pays for this fill.
                    work.resize(native.len(), 0);
                    // Shared out among the scaler's threads: a whole
                    // screen is megabytes to copy.
                    scaler.in_bands(work, width, &|top, band| {
                        let bytes = top * width..top * width + band.len();
                        copy_masked_rows(band, &native[bytes], top, req, layout);
                    });
                }
            }
            frame = work;
            timings.mask = t.elapsed();
        }
        let in_strips = req.output != native_size
            && req.format == ImageFormat::Jpeg
            && strips::restart_interval(req.output.width, strips::STRIP_ROWS).is_some();
        let (encoded, made): (&[u8], _) = if in_strips {
            // Each thread encodes its strips as soon as it has scaled
            // them, so scale times both, and encode the joining.
            let t = Instant::now();
            let (to, quality) = (req.output, req.quality);
            let rows = strips::STRIP_ROWS;
            let count = to.height.div_ceil(rows) as usize;
            if strips.len() < count {
                strips.resize_with(count, strips::Strip::default);
            }
            let wanted = |i: usize| match update {
                None => true,
                Some(drawn) => {
                    let out = i as u32 * rows..((i as u32 + 1) * rows).min(to.height);
                    let reads = resize::source_rows(native_size.height, to.height, out);
                    drawn
                        .iter()
                        .any(|d| d.start < reads.end && reads.start < d.end)
                }
            };
            let encoded = scaler.scale_strips(
                frame,
                native_size,
                to,
                scaled,
                rows,
                &mut strips[..count],
                wanted,
                |strip, rows, pixels| strip.encode(pixels, to.width, rows, layout, quality),
            )?;
            timings.scale = t.elapsed();
            let t = Instant::now();
            let jpeg = if count == 1 {
                strips[0].jpeg()
            } else {
                strips::join(&strips[..count], to.height, rows, to.width, joined)?;
                joined
            };
            timings.encode = t.elapsed();
            (jpeg, Some((encoded as u32, count as u32)))
        } else {
            if update.is_some() {
                return Err(Error::internal("updating an image not made in strips"));
            }
            if req.output != native_size {
                let t = Instant::now();
                scaler.scale(frame, native_size, req.output, scaled)?;
                frame = scaled;
                timings.scale = t.elapsed();
            }
            let t = Instant::now();
            let encoded = encoder.encode(frame, req.output, layout, req.format, req.quality)?;
            timings.encode = t.elapsed();
            (encoded, None)
        };
        let t = Instant::now();
        text.clear();
        base64::engine::general_purpose::STANDARD.encode_string(encoded, text);
        timings.base64 = t.elapsed();
        Ok(made)
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

    /// Smooth colour under dense text-like detail.
    fn scene(size: Size, seed: u32) -> Vec<u8> {
        let mut v = Vec::with_capacity(size.width as usize * size.height as usize * 4);
        for y in 0..size.height {
            for x in 0..size.width {
                let ink = (x / 3 + y / 5 + seed) % 7 == 0;
                let (b, g, r) = if ink {
                    (20, 20, 20)
                } else {
                    ((x / 4) as u8, (y / 3) as u8, ((x + y + seed) / 6) as u8)
                };
                v.extend([b, g, r, 0]);
            }
        }
        v
    }

    /// Paints `rect` of a `width`-wide image with a colour pattern of its own.
    fn repaint(pixels: &mut [u8], width: u32, rect: Rect) {
        for y in rect.y..rect.y + rect.height as i32 {
            for x in rect.x..rect.x + rect.width as i32 {
                let at = (y as usize * width as usize + x as usize) * 4;
                pixels[at..at + 4].copy_from_slice(&[(x * 5) as u8, 250, (y * 3) as u8, 0]);
            }
        }
    }

    fn rect(x: i32, y: i32, width: u32, height: u32) -> Rect {
        Rect {
            x,
            y,
            width,
            height,
        }
    }

    fn request(source: Rect, output: Size, mask: &[Rect]) -> Request<'_> {
        Request {
            source,
            output,
            format: ImageFormat::Jpeg,
            quality: 80,
            mask,
            mask_color: [255, 0, 255],
            capture_id: 1,
            drawn: None,
            updatable: true,
        }
    }

    /// An image updated in the strips some rows reach is byte for byte
    /// the image a fresh pipeline makes of the new pixels, mask or not:
    /// a drawn strip left as it was would differ.
    #[test]
    fn updated_strips_make_the_image_a_full_capture_makes() {
        let from = Size {
            width: 1000,
            height: 700,
        };
        let source = rect(0, 0, from.width, from.height);
        let to = Size {
            width: 731,
            height: 509,
        };
        // A block in the middle; rows across the first strip boundary
        // (output row 64 is source row 88); the last source row.
        let drawn = [
            rect(100, 300, 300, 40),
            rect(500, 80, 200, 16),
            rect(0, 699, 1000, 1),
        ];
        for mask in [vec![], vec![rect(350, 310, 200, 100), rect(0, 0, 50, 700)]] {
            let req = request(source, to, &mask);
            let before = scene(from, 0);
            let mut after = before.clone();
            for r in &drawn {
                repaint(&mut after, from.width, *r);
            }
            let rows = drawn_rows(&drawn, source).unwrap();
            let mut updated = Pipeline::default();
            let mut t = Timings::default();
            let all = updated.deliver(&before, Layout4::BGRX, &req, None, &mut t);
            assert_eq!(all.unwrap(), Some((16, 16)), "a whole image is every strip");
            let old = updated.base64.clone();
            let made = updated
                .deliver(&after, Layout4::BGRX, &req, Some(&rows), &mut t)
                .unwrap()
                .unwrap();
            assert!(made.0 < made.1, "{made:?}: only the strips drawn in");
            assert!(
                made.0 >= 3,
                "{made:?}: three places drawn in, one straddling"
            );
            let mut fresh = Pipeline::default();
            fresh
                .deliver(&after, Layout4::BGRX, &req, None, &mut t)
                .unwrap();
            assert_ne!(updated.base64, old, "the drawing shows");
            assert!(
                updated.base64 == fresh.base64,
                "mask {mask:?}: the updated image differs from a full capture of the same pixels"
            );
        }
    }

    /// Leaving out any one strip the drawn rows reach is seen.
    #[test]
    fn every_strip_the_drawn_rows_reach_is_made_again() {
        let from = Size {
            width: 640,
            height: 480,
        };
        let source = rect(0, 0, from.width, from.height);
        let to = Size {
            width: 480,
            height: 360,
        };
        let req = request(source, to, &[]);
        let before = scene(from, 0);
        let mut t = Timings::default();
        let mut fresh_pipeline = Pipeline::default();
        // Rows just either side of where strips meet: output row 64 is
        // source row 85.33.
        for drawn in [rect(0, 83, 640, 1), rect(0, 87, 640, 1), rect(0, 0, 640, 1)] {
            let mut after = before.clone();
            repaint(&mut after, from.width, drawn);
            let rows = drawn_rows(&[drawn], source).unwrap();
            let mut updated = Pipeline::default();
            updated
                .deliver(&before, Layout4::BGRX, &req, None, &mut t)
                .unwrap();
            updated
                .deliver(&after, Layout4::BGRX, &req, Some(&rows), &mut t)
                .unwrap();
            fresh_pipeline
                .deliver(&after, Layout4::BGRX, &req, None, &mut t)
                .unwrap();
            assert!(
                updated.base64 == fresh_pipeline.base64,
                "{drawn}: differs from a full capture"
            );
        }
    }

    #[test]
    #[allow(clippy::single_range_in_vec_init)]
    fn drawn_rows_merge_close_ranges_and_cap_the_reads() {
        let source = rect(0, 100, 500, 1000);
        // Outside the source, and clipped at its top.
        assert_eq!(drawn_rows(&[rect(0, 0, 10, 50)], source), None);
        assert_eq!(
            drawn_rows(&[rect(0, 90, 10, 20)], source),
            Some(vec![0..10])
        );
        // Within ROW_GAP of each other: one read.
        assert_eq!(
            drawn_rows(&[rect(0, 200, 10, 10), rect(300, 230, 10, 10)], source),
            Some(vec![100..140])
        );
        // Six far apart: four reads, joined across the narrowest gaps.
        let six: Vec<Rect> = [0, 100, 200, 500, 800, 850]
            .iter()
            .map(|&y| rect(0, 100 + y, 10, 5))
            .collect();
        let rows = drawn_rows(&six, source).unwrap();
        assert_eq!(rows.len(), MAX_ROW_READS);
        for r in &six {
            let top = (r.y - 100) as u32;
            assert!(
                rows.iter().any(|m| m.start <= top && top + 5 <= m.end),
                "{r}"
            );
        }
    }
}
