//! MIT-SHM segments: the X server writes a capture straight into memory the
//! helper shares with it, which saves copying ~8 MB through the socket.
//!
//! This is the only place in the helper with `unsafe` besides `prctl` in
//! main: System V shared memory has no safe wrapper in std or x11rb.

use std::ptr::NonNull;

use x11rb::connection::Connection;
use x11rb::errors::ReplyError;
use x11rb::protocol::shm::ConnectionExt as _;
use x11rb::protocol::xproto::ImageFormat;

use crate::types::Rect;

/// One System V shared-memory segment attached to both the helper and the
/// X server.
pub struct Segment {
    xid: u32,
    addr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is process-wide memory; nothing in it is tied to a thread.
unsafe impl Send for Segment {}

impl Segment {
    /// Creates a segment of at least `len` bytes and attaches the X server.
    fn create<C: Connection>(conn: &C, len: usize) -> Result<Segment, String> {
        // SAFETY: plain libc calls with checked results. The segment is
        // private (IPC_PRIVATE), so no other process can be mapping it.
        let shmid = unsafe { libc::shmget(libc::IPC_PRIVATE, len, libc::IPC_CREAT | 0o600) };
        if shmid < 0 {
            return Err(format!(
                "shmget of {len} bytes: {}",
                std::io::Error::last_os_error()
            ));
        }
        // SAFETY: shmid was just created; a null address lets the kernel
        // choose where to map it. The result is checked against (void*)-1.
        let raw = unsafe { libc::shmat(shmid, std::ptr::null(), 0) };
        if raw as isize == -1 {
            let err = std::io::Error::last_os_error();
            // SAFETY: removes the segment we created; nothing maps it.
            unsafe { libc::shmctl(shmid, libc::IPC_RMID, std::ptr::null_mut()) };
            return Err(format!("shmat: {err}"));
        }
        let addr = NonNull::new(raw as *mut u8).expect("shmat returned a non-error address");
        let segment = |xid| Segment { xid, addr, len };
        let attached = conn
            .generate_id()
            .map_err(|e| format!("allocating an X id: {e}"))
            .and_then(|xid| {
                conn.shm_attach(xid, shmid as u32, false)
                    .map_err(|e| e.to_string())?
                    .check()
                    .map_err(|e| match e {
                        ReplyError::X11Error(x) => format!(
                            "the X server refused to attach the segment ({:?} error; a remote or sandboxed server cannot share memory)",
                            x.error_kind
                        ),
                        other => format!("attaching the segment: {other}"),
                    })?;
                Ok(xid)
            });
        // Mark the segment for removal now that both sides hold it (or the
        // server failed to): the kernel frees it when the last one detaches,
        // so a crash cannot leak it.
        // SAFETY: shmid is ours; IPC_RMID takes no buffer.
        unsafe { libc::shmctl(shmid, libc::IPC_RMID, std::ptr::null_mut()) };
        match attached {
            Ok(xid) => Ok(segment(xid)),
            Err(e) => {
                drop(segment(0));
                Err(e)
            }
        }
    }

    fn bytes(&self, len: usize) -> &[u8] {
        assert!(len <= self.len);
        // SAFETY: the mapping is `self.len` bytes long and lives until
        // `self` is dropped. The X server writes into it only while it
        // handles a ShmGetImage, which is issued through `&mut self` of the
        // owning `ShmBuffers`, so no write can happen while this borrow
        // lives.
        unsafe { std::slice::from_raw_parts(self.addr.as_ptr(), len) }
    }

    fn detach<C: Connection>(self, conn: &C) {
        // Best effort: if the connection is gone, the server has already
        // detached it.
        if let Ok(cookie) = conn.shm_detach(self.xid) {
            cookie.ignore_error();
        }
    }
}

impl Drop for Segment {
    fn drop(&mut self) {
        // SAFETY: addr came from shmat and is detached exactly once, here.
        unsafe { libc::shmdt(self.addr.as_ptr() as *const libc::c_void) };
    }
}

/// Two segments used in turn, so the previous capture stays intact for
/// `patch_check` while the next one is written.
#[derive(Default)]
pub struct ShmBuffers {
    slots: [Option<Segment>; 2],
}

impl ShmBuffers {
    /// Captures `rect` of `drawable` as a ZPixmap into `slot`, growing the
    /// slot's segment to at least `min_len` (but never less than `len`, the
    /// image's size in bytes).
    pub fn grab<C: Connection>(
        &mut self,
        conn: &C,
        slot: usize,
        drawable: u32,
        rect: Rect,
        len: usize,
        min_len: usize,
    ) -> Result<(), String> {
        let want = len.max(min_len);
        if self.slots[slot].as_ref().map_or(true, |s| s.len < len) {
            if let Some(old) = self.slots[slot].take() {
                old.detach(conn);
            }
            self.slots[slot] = Some(Segment::create(conn, want)?);
        }
        let segment = self.slots[slot].as_ref().expect("slot filled above");
        get_image(conn, segment, drawable, rect, 0, len)
    }

    /// Captures `rect` of `drawable` as a ZPixmap into `slot` at byte
    /// `offset`, where the slot already holds an image of its full width
    /// (`len` is the part's size in bytes): a few rows of the last capture
    /// read again in place.
    pub fn grab_at<C: Connection>(
        &mut self,
        conn: &C,
        slot: usize,
        drawable: u32,
        rect: Rect,
        offset: usize,
        len: usize,
    ) -> Result<(), String> {
        let segment = self.slots[slot]
            .as_ref()
            .filter(|s| offset + len <= s.len)
            .ok_or("ShmGetImage: the rows do not fit the segment")?;
        get_image(conn, segment, drawable, rect, offset, len)
    }

    /// The first `len` bytes of `slot` as last written by `grab`.
    pub fn bytes(&self, slot: usize, len: usize) -> &[u8] {
        self.slots[slot]
            .as_ref()
            .expect("bytes() of a slot grab() filled")
            .bytes(len)
    }

    /// Detaches every segment from the server.
    pub fn release<C: Connection>(&mut self, conn: &C) {
        for slot in &mut self.slots {
            if let Some(segment) = slot.take() {
                segment.detach(conn);
            }
        }
    }
}

/// One ShmGetImage of `rect` into `segment` at `offset`, which must then
/// hold `len` bytes written.
fn get_image<C: Connection>(
    conn: &C,
    segment: &Segment,
    drawable: u32,
    rect: Rect,
    offset: usize,
    len: usize,
) -> Result<(), String> {
    let reply = conn
        .shm_get_image(
            drawable,
            rect.x as i16,
            rect.y as i16,
            rect.width as u16,
            rect.height as u16,
            !0,
            ImageFormat::Z_PIXMAP.into(),
            segment.xid,
            offset as u32,
        )
        .map_err(|e| e.to_string())?
        .reply()
        .map_err(|e| match e {
            ReplyError::X11Error(x) => format!("ShmGetImage: {:?} error", x.error_kind),
            other => format!("ShmGetImage: {other}"),
        })?;
    if (reply.size as usize) < len {
        return Err(format!(
            "ShmGetImage wrote {} bytes, expected {len}",
            reply.size
        ));
    }
    Ok(())
}
