//! Captures through wlr-screencopy into shared memory, then the same mask,
//! scale and encode steps as X11 (capture::mask, resize, encode).

use std::os::fd::{AsFd, FromRawFd, OwnedFd};

use base64::Engine as _;
use wayland_client::protocol::{wl_buffer, wl_shm, wl_shm_pool};
use wayland_client::{Proxy, WEnum};

use super::state::{Frame, Wl};
use crate::capture::encode::{Encoder, ImageFormat};
use crate::capture::mask;
use crate::capture::pixfmt::Layout4;
use crate::capture::resize::Scaler;
use crate::error::{Code, Error, Result};
use crate::types::{Rect, Size};

/// A memfd mapped into the helper and shared with the compositor.
struct ShmFile {
    fd: OwnedFd,
    ptr: *mut u8,
    len: usize,
    pool: wl_shm_pool::WlShmPool,
    buffer: wl_buffer::WlBuffer,
    key: (u32, u32, u32, u32),
}

impl ShmFile {
    fn new(
        wl: &Wl,
        format: wl_shm::Format,
        width: u32,
        height: u32,
        stride: u32,
    ) -> Result<ShmFile> {
        let len = stride as usize * height as usize;
        // SAFETY: memfd_create takes a NUL-terminated name and flags.
        let raw = unsafe { libc::memfd_create(c"deskhand-capture".as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(Error::capture_failed(format!(
                "memfd_create: {}",
                std::io::Error::last_os_error()
            )));
        }
        // SAFETY: raw is a new fd that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: ftruncate and mmap on the fd we own, with its length.
        let ptr = unsafe {
            if libc::ftruncate(raw, len as libc::off_t) != 0 {
                return Err(Error::capture_failed(format!(
                    "sizing the capture buffer: {}",
                    std::io::Error::last_os_error()
                )));
            }
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                raw,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(Error::capture_failed(format!(
                "mapping the capture buffer: {}",
                std::io::Error::last_os_error()
            )));
        }
        let pool = wl
            .globals
            .shm
            .create_pool(fd.as_fd(), len as i32, &wl.qh, ());
        let buffer = pool.create_buffer(
            0,
            width as i32,
            height as i32,
            stride as i32,
            format,
            &wl.qh,
            (),
        );
        Ok(ShmFile {
            fd,
            ptr: ptr as *mut u8,
            len,
            pool,
            buffer,
            key: (format as u32, width, height, stride),
        })
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping lives as long as self and is len bytes long;
        // the compositor writes it only between copy and ready.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for ShmFile {
    fn drop(&mut self) {
        self.buffer.destroy();
        self.pool.destroy();
        // SAFETY: ptr/len is the mapping made in new.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
        let _ = &self.fd;
    }
}

/// What to capture: the output, the part of it (in its own pixels) and
/// how to deliver it.
pub struct Request<'a> {
    pub output: u32,
    /// In the output's buffer pixels.
    pub crop: Rect,
    pub size: Size,
    pub format: ImageFormat,
    pub quality: u8,
    /// Mask rectangles, in the output's buffer pixels.
    pub mask: &'a [Rect],
    pub mask_color: [u8; 3],
}

/// The last capture's pixels before masking, which patch_check compares
/// the live screen with.
pub struct Reference {
    pub id: u64,
    pub output: u32,
    /// The capture's source rectangle, in layout coordinates.
    pub source: Rect,
    /// The output's origin and scale, to turn layout into buffer pixels.
    pub origin: (i32, i32),
    pub scale: f64,
    /// The captured part of the output, in its buffer pixels.
    pub crop: Rect,
    pub layout: Layout4,
    pub pixels: Vec<u8>,
}

#[derive(Default)]
pub struct Capturer {
    /// The last capture, unmasked; `capture` sets it when given an id.
    pub last: Option<Reference>,
    shm: Option<ShmFile>,
    native: Vec<u8>,
    scaled: Vec<u8>,
    scaler: Scaler,
    encoder: Encoder,
    pub base64: String,
    /// KWin's ScreenShot2, where there is no wlr-screencopy (kde_capture.rs).
    kde: super::kde_capture::Shooter,
}

/// The 4-byte layout of a wl_shm format, for the formats screencopy gives.
fn layout_of(format: wl_shm::Format) -> Option<Layout4> {
    match format {
        // Little-endian 32-bit words: the bytes are B, G, R, X.
        wl_shm::Format::Xrgb8888 | wl_shm::Format::Argb8888 => Some(Layout4::BGRX),
        wl_shm::Format::Xbgr8888 | wl_shm::Format::Abgr8888 => Some(Layout4::RGBX),
        _ => None,
    }
}

impl Capturer {
    /// Copies the output into shared memory and returns its pixels, tightly
    /// packed, cropped to `req.crop`, with their layout.
    fn grab(&mut self, wl: &mut Wl, req: &Request<'_>) -> Result<Layout4> {
        if wl.globals.screencopy.is_none() && super::kde::is_kwin(wl) {
            return self.kde.grab(wl, req.output, req.crop, &mut self.native);
        }
        let manager = wl.globals.screencopy.clone().ok_or_else(|| {
            Error::new(
                Code::Unsupported,
                "this compositor offers no wlr-screencopy, so deskhand cannot read the screen",
                "Use a wlroots compositor (sway, Hyprland, river, labwc) or run deskhand with --virtual-display.",
            )
        })?;
        let output = wl
            .state
            .outputs
            .get(&req.output)
            .map(|(o, _)| o.clone())
            .ok_or_else(|| Error::internal("the capture's output is gone"))?;
        wl.state.frame = Frame::default();
        let frame = manager.capture_output(0, &output, &wl.qh, ());
        // Version 3 ends the buffer list with buffer_done; older ones send
        // one buffer event, answered by the roundtrip.
        while !(wl.state.frame.buffer_done
            || wl.state.frame.failed
            || (manager.version() < 3 && !wl.state.frame.shm_formats.is_empty()))
        {
            wl.blocking_dispatch()?;
        }
        let chosen = wl
            .state
            .frame
            .shm_formats
            .iter()
            .find_map(|(f, w, h, s)| match f {
                WEnum::Value(f) if layout_of(*f).is_some() => Some((*f, *w, *h, *s)),
                _ => None,
            });
        let Some((format, width, height, stride)) = chosen else {
            frame.destroy();
            return Err(Error::capture_failed(format!(
                "the compositor offers no 32-bit RGB shm buffer for screencopy (offered {:?})",
                wl.state.frame.shm_formats
            )));
        };
        let key = (format as u32, width, height, stride);
        if self.shm.as_ref().map(|s| s.key) != Some(key) {
            self.shm = None;
            self.shm = Some(ShmFile::new(wl, format, width, height, stride)?);
        }
        let shm = self.shm.as_ref().expect("set above");
        frame.copy(&shm.buffer);
        while !(wl.state.frame.ready || wl.state.frame.failed) {
            wl.blocking_dispatch()?;
        }
        frame.destroy();
        if wl.state.frame.failed {
            return Err(Error::capture_failed(
                "the compositor failed the screencopy frame",
            ));
        }
        let frame_size = Rect {
            x: 0,
            y: 0,
            width,
            height,
        };
        if !frame_size.contains_rect(&req.crop) {
            return Err(Error::out_of_bounds(
                format!(
                    "rectangle {} is outside the output ({}x{})",
                    req.crop, width, height
                ),
                "Use a rectangle inside the display; call displays for the geometry.",
            ));
        }
        let bytes = shm.bytes();
        let row = req.crop.width as usize * 4;
        self.native.clear();
        self.native.reserve(row * req.crop.height as usize);
        for y in 0..req.crop.height as usize {
            let sy = req.crop.y as usize + y;
            let sy = if wl.state.frame.y_invert {
                height as usize - 1 - sy
            } else {
                sy
            };
            let start = sy * stride as usize + req.crop.x as usize * 4;
            self.native.extend_from_slice(&bytes[start..start + row]);
        }
        Ok(layout_of(format).expect("chosen for its layout"))
    }

    /// Copies `crop` (buffer pixels) of `output` as it is now, tightly
    /// packed, with its layout: the live side of patch_check.
    pub fn grab_patch(&mut self, wl: &mut Wl, output: u32, crop: Rect) -> Result<(Layout4, &[u8])> {
        let req = Request {
            output,
            crop,
            size: crop.size(),
            format: ImageFormat::Png,
            quality: 0,
            mask: &[],
            mask_color: [0, 0, 0],
        };
        let layout = self.grab(wl, &req)?;
        Ok((layout, &self.native))
    }

    /// `patch_baseline`: reads the last capture's area from the screen
    /// again and stores it in the capture's place (same id), returning the
    /// id and how many pixels differ from the stored ones by more than
    /// `tolerance`; None before any capture. Wayland tells a client
    /// nothing of what was drawn, so every call reads the area.
    pub fn rebaseline(&mut self, wl: &mut Wl, tolerance: u8) -> Result<Option<(u64, u32)>> {
        let Some(mut last) = self.last.take() else {
            return Ok(None);
        };
        let layout = match self.grab_patch(wl, last.output, last.crop) {
            Ok((layout, _)) => layout,
            Err(e) => {
                self.last = Some(last);
                return Err(e);
            }
        };
        let live = to_bgrx(layout, &self.native);
        let stored = crate::capture::Snapshot {
            id: last.id,
            source: last.crop,
            layout: last.layout,
            pixels: &last.pixels,
        };
        let (differing, _) = crate::patch::compare(&stored, last.crop, &live, tolerance);
        last.layout = layout;
        last.pixels.clear();
        last.pixels.extend_from_slice(&self.native);
        let id = last.id;
        self.last = Some(last);
        Ok(Some((id, differing)))
    }

    /// Captures, masks, scales and encodes into `self.base64`; `reference`
    /// (the pixels not yet filled in) becomes `self.last` with the
    /// unmasked pixels.
    pub fn capture(
        &mut self,
        wl: &mut Wl,
        req: &Request<'_>,
        reference: Option<Reference>,
    ) -> Result<()> {
        let layout = self.grab(wl, req)?;
        if let Some(mut r) = reference {
            r.layout = layout;
            r.pixels.clear();
            r.pixels.extend_from_slice(&self.native);
            self.last = Some(r);
        }
        let native_size = req.crop.size();
        mask::paint(
            &mut self.native,
            native_size.width,
            req.crop,
            req.mask,
            layout,
            req.mask_color,
        );
        let frame: &[u8] = if req.size != native_size {
            self.scaler
                .scale(&self.native, native_size, req.size, &mut self.scaled)?;
            &self.scaled
        } else {
            &self.native
        };
        let encoded = self
            .encoder
            .encode(frame, req.size, layout, req.format, req.quality)?;
        self.base64.clear();
        base64::engine::general_purpose::STANDARD.encode_string(encoded, &mut self.base64);
        Ok(())
    }
}

/// Tightly packed pixels of `layout` as BGRX, which patch::compare reads.
pub fn to_bgrx(layout: Layout4, pixels: &[u8]) -> Vec<u8> {
    pixels
        .chunks_exact(4)
        .flat_map(|px| {
            let [r, g, b] = layout.rgb(px);
            [b, g, r, 0]
        })
        .collect()
}
