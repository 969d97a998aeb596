//! Frames of one ScreenCast stream, read over PipeWire on a thread of its
//! own (PipeWire's loop objects are not Send).
//!
//! Mutter sends a frame when the monitor's content changes (and one when
//! the stream starts), so the newest frame received is the screen as it
//! is: a capture copies it rather than asking for a new one.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use pipewire as pw;
use pw::spa;
use pw::spa::param::video::{VideoFormat, VideoInfoRaw};
use pw::spa::pod::Pod;

use crate::capture::pixfmt::Layout4;
use crate::error::{Error, Result};

/// One frame, rows `stride` bytes apart.
pub struct Frame {
    pub width: u32,
    pub height: u32,
    pub stride: usize,
    pub layout: Layout4,
    pub pixels: Vec<u8>,
    /// Counts frames received, so a caller can wait for a newer one.
    pub seq: u64,
}

#[derive(Default)]
struct Latest {
    frame: Option<Frame>,
    error: Option<String>,
}

type Shared = Arc<(Mutex<Latest>, Condvar)>;

/// A running PipeWire consumer of one stream node.
pub struct Frames {
    shared: Shared,
}

/// The 4-byte layout of the raw video formats deskhand accepts.
fn layout_of(f: VideoFormat) -> Option<Layout4> {
    match f {
        VideoFormat::BGRx | VideoFormat::BGRA => Some(Layout4::BGRX),
        VideoFormat::RGBx | VideoFormat::RGBA => Some(Layout4::RGBX),
        VideoFormat::xRGB | VideoFormat::ARGB => Some(Layout4::XRGB),
        VideoFormat::xBGR | VideoFormat::ABGR => Some(Layout4::XBGR),
        _ => None,
    }
}

impl Frames {
    /// Starts reading node `node` on a new thread.
    pub fn start(node: u32) -> Frames {
        let shared: Shared = Arc::default();
        let theirs = shared.clone();
        std::thread::Builder::new()
            .name(format!("pipewire-{node}"))
            .spawn(move || {
                if let Err(e) = run(node, &theirs) {
                    let (lock, cv) = &*theirs;
                    lock.lock().expect("frames lock").error = Some(e);
                    cv.notify_all();
                }
            })
            .expect("spawning the PipeWire thread");
        Frames { shared }
    }

    /// Calls `f` with the newest frame with a sequence number above
    /// `after`, waiting up to `timeout` for one.
    pub fn with_frame<T>(
        &self,
        after: u64,
        timeout: Duration,
        f: impl FnOnce(&Frame) -> Result<T>,
    ) -> Result<T> {
        let (lock, cv) = &*self.shared;
        let deadline = Instant::now() + timeout;
        let mut latest = lock.lock().expect("frames lock");
        loop {
            if let Some(frame) = latest.frame.as_ref().filter(|fr| fr.seq > after) {
                return f(frame);
            }
            if let Some(e) = &latest.error {
                return Err(Error::capture_failed(format!(
                    "the ScreenCast stream over PipeWire failed: {e}"
                )));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::capture_failed(format!(
                    "mutter sent no frame over PipeWire within {} s (is a PipeWire session manager such as wireplumber running?)",
                    timeout.as_secs()
                )));
            }
            latest = cv
                .wait_timeout(latest, deadline - now)
                .expect("frames lock")
                .0;
        }
    }
}

/// The EnumFormat this consumer offers: raw 32-bit RGB video of any size.
/// No modifiers are offered, so mutter sends memfd (mappable) buffers, not
/// DMA-BUFs.
fn enum_format() -> std::result::Result<Vec<u8>, String> {
    let obj = spa::pod::object!(
        spa::utils::SpaTypes::ObjectParamFormat,
        spa::param::ParamType::EnumFormat,
        spa::pod::property!(
            spa::param::format::FormatProperties::MediaType,
            Id,
            spa::param::format::MediaType::Video
        ),
        spa::pod::property!(
            spa::param::format::FormatProperties::MediaSubtype,
            Id,
            spa::param::format::MediaSubtype::Raw
        ),
        spa::pod::property!(
            spa::param::format::FormatProperties::VideoFormat,
            Choice,
            Enum,
            Id,
            VideoFormat::BGRx,
            VideoFormat::BGRx,
            VideoFormat::BGRA,
            VideoFormat::RGBx,
            VideoFormat::RGBA,
            VideoFormat::xRGB,
            VideoFormat::ARGB,
            VideoFormat::xBGR,
            VideoFormat::ABGR
        ),
        spa::pod::property!(
            spa::param::format::FormatProperties::VideoSize,
            Choice,
            Range,
            Rectangle,
            spa::utils::Rectangle {
                width: 1280,
                height: 720
            },
            spa::utils::Rectangle {
                width: 1,
                height: 1
            },
            spa::utils::Rectangle {
                width: 16384,
                height: 16384
            }
        ),
        spa::pod::property!(
            spa::param::format::FormatProperties::VideoFramerate,
            Choice,
            Range,
            Fraction,
            spa::utils::Fraction { num: 30, denom: 1 },
            spa::utils::Fraction { num: 0, denom: 1 },
            spa::utils::Fraction {
                num: 1000,
                denom: 1
            }
        ),
    );
    spa::pod::serialize::PodSerializer::serialize(
        std::io::Cursor::new(Vec::new()),
        &spa::pod::Value::Object(obj),
    )
    .map(|(c, _)| c.into_inner())
    .map_err(|e| format!("serializing the stream format: {e:?}"))
}

fn run(node: u32, shared: &Shared) -> std::result::Result<(), String> {
    pw::init();
    let mainloop = pw::main_loop::MainLoop::new(None)
        .map_err(|e| format!("creating the PipeWire loop: {e}"))?;
    let context = pw::context::Context::new(&mainloop)
        .map_err(|e| format!("creating the PipeWire context: {e}"))?;
    let core = context.connect(None).map_err(|e| {
        format!("connecting to the PipeWire daemon (is pipewire running in XDG_RUNTIME_DIR?): {e}")
    })?;
    let stream = pw::stream::Stream::new(
        &core,
        "deskhand-capture",
        pw::properties::properties! {
            *pw::keys::MEDIA_TYPE => "Video",
            *pw::keys::MEDIA_CATEGORY => "Capture",
            *pw::keys::MEDIA_ROLE => "Screen",
        },
    )
    .map_err(|e| format!("creating the PipeWire stream: {e}"))?;
    let on_state = shared.clone();
    let on_frame = shared.clone();
    let _listener = stream
        .add_local_listener_with_user_data(VideoInfoRaw::default())
        .state_changed(move |_, _, _, new| {
            if let pw::stream::StreamState::Error(e) = new {
                let (lock, cv) = &*on_state;
                lock.lock().expect("frames lock").error = Some(e);
                cv.notify_all();
            }
        })
        .param_changed(|_, format, id, param| {
            let Some(param) = param else { return };
            if id != spa::param::ParamType::Format.as_raw() {
                return;
            }
            if let Err(e) = format.parse(param) {
                log_warn!("mutter's stream format did not parse: {e:?}");
            }
        })
        .process(move |stream, format| {
            let Some(mut buffer) = stream.dequeue_buffer() else {
                return;
            };
            let Some(layout) = layout_of(format.format()) else {
                log_warn!(
                    "mutter sent frames in {:?}, which deskhand does not read",
                    format.format()
                );
                return;
            };
            let size = format.size();
            let datas = buffer.datas_mut();
            let Some(data) = datas.first_mut() else {
                return;
            };
            let (offset, len, stride) = {
                let c = data.chunk();
                (c.offset() as usize, c.size() as usize, c.stride())
            };
            let stride = if stride > 0 {
                stride as usize
            } else {
                size.width as usize * 4
            };
            let need = stride * size.height as usize;
            // An empty chunk is a frame without new pixels (a cursor move).
            if len == 0 || len < need {
                return;
            }
            let Some(bytes) = data.data() else { return };
            let Some(bytes) = bytes.get(offset..offset + need) else {
                return;
            };
            let (lock, cv) = &*on_frame;
            let mut latest = lock.lock().expect("frames lock");
            let seq = latest.frame.as_ref().map_or(0, |f| f.seq) + 1;
            let mut pixels = latest.frame.take().map(|f| f.pixels).unwrap_or_default();
            pixels.clear();
            pixels.extend_from_slice(bytes);
            latest.frame = Some(Frame {
                width: size.width,
                height: size.height,
                stride,
                layout,
                pixels,
                seq,
            });
            cv.notify_all();
        })
        .register()
        .map_err(|e| format!("listening to the PipeWire stream: {e}"))?;
    let values = enum_format()?;
    let mut params = [Pod::from_bytes(&values).ok_or("the stream format is not a pod")?];
    stream
        .connect(
            spa::utils::Direction::Input,
            Some(node),
            pw::stream::StreamFlags::AUTOCONNECT | pw::stream::StreamFlags::MAP_BUFFERS,
            &mut params,
        )
        .map_err(|e| format!("connecting to mutter's node {node}: {e}"))?;
    mainloop.run();
    Err("the PipeWire loop stopped".into())
}
