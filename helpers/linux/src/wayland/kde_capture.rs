//! Screenshots on KWin: `org.kde.KWin.ScreenShot2.CaptureScreen` over the
//! session bus, which writes the output's raw pixels into a pipe we pass
//! and answers with their width, height, stride and QImage format.
//!
//! Chosen over zkde_screencast_unstable_v1 + PipeWire because a screenshot
//! is one call: no stream to keep alive, no PipeWire daemon or session
//! manager in the session, and the pixels of the frame KWin renders next,
//! which is what a screenshot should show. KWin grants it only to a client
//! whose desktop entry lists it in X-KDE-DBUS-Restricted-Interfaces (see
//! kde.rs's AUTHORIZATION).

use std::collections::HashMap;
use std::io::Read;
use std::time::Duration;

use zbus::zvariant::{Fd, OwnedValue, Value};
use zbus::Connection;

use super::state::Wl;
use crate::a11y::bus::with_timeout;
use crate::capture::pixfmt::Layout4;
use crate::error::{Code, Error, Result};
use crate::types::Rect;

const SERVICE: &str = "org.kde.KWin.ScreenShot2";
const PATH: &str = "/org/kde/KWin/ScreenShot2";
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Largest image read from KWin's pipe: 2^25 pixels of 4 bytes.
const MAX_IMAGE_BYTES: u64 = 4 << 25;

/// The session bus connection screenshots go through, made on first use.
#[derive(Default)]
pub struct Shooter {
    conn: Option<Connection>,
}

/// The 4-byte layout of a QImage::Format KWin sends.
pub fn layout_of(format: u32) -> Option<Layout4> {
    match format {
        // RGB32, ARGB32, ARGB32_Premultiplied: 32-bit 0xAARRGGBB words,
        // little-endian bytes B, G, R, A.
        4..=6 => Some(Layout4::BGRX),
        // RGBX8888, RGBA8888, RGBA8888_Premultiplied: bytes R, G, B, A.
        16..=18 => Some(Layout4::RGBX),
        _ => None,
    }
}

fn failed(what: impl std::fmt::Display) -> Error {
    Error::capture_failed(format!("KWin's ScreenShot2 {what}"))
}

/// Maps a refusal of KWin's to what the user must do.
fn refused(e: &crate::a11y::bus::CallError) -> Error {
    let name = e.dbus_name().unwrap_or_default();
    if name.contains("NoAuthorized")
        || name.contains("AccessDenied")
        || name.contains("NotAuthorized")
    {
        return Error::new(
            Code::PermissionDenied,
            format!("KWin refused deskhand-helper a screenshot ({name}): KWin gives org.kde.KWin.ScreenShot2 only to programs a desktop entry authorizes"),
            format!("Add a desktop entry for this helper (e.g. ~/.local/share/applications/deskhand-helper.desktop) with Exec=<the helper's full path> and {}; `deskhand doctor` prints it.", super::kde::AUTHORIZATION),
        );
    }
    failed(format!("call failed: {e:?}"))
}

impl Shooter {
    fn conn(&mut self) -> Result<Connection> {
        if let Some(c) = &self.conn {
            return Ok(c.clone());
        }
        let c = async_io::block_on(with_timeout(CALL_TIMEOUT, async {
            zbus::connection::Builder::session()?.build().await
        }))
        .map_err(|e| {
            Error::new(
                Code::DisplayUnavailable,
                format!("cannot reach the session bus for KWin's screenshots: {e:?}"),
                "Run deskhand inside the Plasma session (its DBUS_SESSION_BUS_ADDRESS).",
            )
        })?;
        self.conn = Some(c.clone());
        Ok(c)
    }

    /// Reads output `name` (its buffer pixels, cursor left out), and
    /// stores `crop` of it tightly packed in `out`.
    pub fn grab(&mut self, wl: &Wl, output: u32, crop: Rect, out: &mut Vec<u8>) -> Result<Layout4> {
        let name = wl
            .state
            .outputs
            .get(&output)
            .and_then(|(_, o)| o.name.clone())
            .ok_or_else(|| Error::internal("the capture's output has no name"))?;
        let conn = self.conn()?;
        let (read_end, write_end) = super::pipe().map_err(|e| failed(format!("pipe: {e}")))?;
        // KWin writes after it answers: read on a thread until it closes.
        let reader = std::thread::spawn(move || {
            let mut f = std::fs::File::from(read_end);
            let mut buf = Vec::new();
            (&mut f)
                .take(MAX_IMAGE_BYTES + 1)
                .read_to_end(&mut buf)
                .map(|_| buf)
        });
        let mut options: HashMap<&str, Value<'_>> = HashMap::new();
        options.insert("native-resolution", Value::from(true));
        options.insert("include-cursor", Value::from(false));
        let reply = async_io::block_on(with_timeout(CALL_TIMEOUT, async {
            let m = conn
                .call_method(
                    Some(SERVICE),
                    PATH,
                    Some(SERVICE),
                    "CaptureScreen",
                    &(name.as_str(), options, Fd::from(&write_end)),
                )
                .await?;
            m.body().deserialize::<HashMap<String, OwnedValue>>()
        }));
        drop(write_end);
        let results = match reply {
            Ok(r) => r,
            Err(e) => {
                let _ = reader.join();
                return Err(refused(&e));
            }
        };
        let bytes = reader
            .join()
            .map_err(|_| failed("reader panicked"))?
            .map_err(|e| failed(format!("pipe read: {e}")))?;
        let get = |k: &str| -> Result<u32> {
            results
                .get(k)
                .and_then(|v| u32::try_from(v).ok())
                .ok_or_else(|| failed(format!("result has no {k:?} ({results:?})")))
        };
        let (width, height, stride, format) = (
            get("width")?,
            get("height")?,
            get("stride")?,
            get("format")?,
        );
        let layout = layout_of(format).ok_or_else(|| {
            failed(format!(
                "image is in QImage format {format}, not 32-bit RGB"
            ))
        })?;
        crop_into(&bytes, width, height, stride, crop, out)?;
        Ok(layout)
    }
}

/// Copies `crop` of a `width`x`height` image of rows `stride` bytes apart
/// into `out`, tightly packed.
pub fn crop_into(
    bytes: &[u8],
    width: u32,
    height: u32,
    stride: u32,
    crop: Rect,
    out: &mut Vec<u8>,
) -> Result<()> {
    let whole = Rect {
        x: 0,
        y: 0,
        width,
        height,
    };
    if !whole.contains_rect(&crop) {
        return Err(Error::out_of_bounds(
            format!("rectangle {crop} is outside the output ({width}x{height})"),
            "Use a rectangle inside the display; call displays for the geometry.",
        ));
    }
    if (stride as u64) < width as u64 * 4 || (bytes.len() as u64) < stride as u64 * height as u64 {
        return Err(failed(format!(
            "image is {} bytes, short of {height} rows of {stride}",
            bytes.len()
        )));
    }
    let row = crop.width as usize * 4;
    out.clear();
    out.reserve(row * crop.height as usize);
    for y in 0..crop.height as usize {
        let start = (crop.y as usize + y) * stride as usize + crop.x as usize * 4;
        out.extend_from_slice(&bytes[start..start + row]);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qimage_formats_map_to_their_byte_order() {
        assert_eq!(layout_of(4), Some(Layout4::BGRX));
        assert_eq!(layout_of(6), Some(Layout4::BGRX));
        assert_eq!(layout_of(17), Some(Layout4::RGBX));
        assert_eq!(layout_of(13), None); // RGB888: 3 bytes a pixel
    }

    #[test]
    fn a_crop_skips_the_row_padding() {
        // 3x2 image, stride 16 (4 bytes of padding a row).
        let mut img = vec![0u8; 32];
        for y in 0..2 {
            for x in 0..3 {
                img[y * 16 + x * 4] = (10 * y + x) as u8;
            }
        }
        let mut out = Vec::new();
        let crop = Rect {
            x: 1,
            y: 0,
            width: 2,
            height: 2,
        };
        crop_into(&img, 3, 2, 16, crop, &mut out).unwrap();
        let firsts: Vec<u8> = out.chunks(4).map(|p| p[0]).collect();
        assert_eq!(firsts, vec![1, 2, 11, 12]);
        let outside = Rect {
            x: 2,
            y: 0,
            width: 2,
            height: 1,
        };
        assert!(crop_into(&img, 3, 2, 16, outside, &mut out).is_err());
        assert!(crop_into(&img[..20], 3, 2, 16, crop, &mut out).is_err());
    }
}
