//! The Wayland connection's state: the globals deskhand binds, the outputs
//! and toplevels the compositor announces, and the event handlers that keep
//! them current.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use wayland_client::backend::ObjectId;
use wayland_client::globals::{registry_queue_init, GlobalList, GlobalListContents};
use wayland_client::protocol::{wl_buffer, wl_output, wl_registry, wl_seat, wl_shm, wl_shm_pool};
use wayland_client::{
    event_created_child, Connection, Dispatch, EventQueue, Proxy, QueueHandle, WEnum,
};
use wayland_protocols_misc::zwp_virtual_keyboard_v1::client::{
    zwp_virtual_keyboard_manager_v1::ZwpVirtualKeyboardManagerV1,
    zwp_virtual_keyboard_v1::ZwpVirtualKeyboardV1,
};
use wayland_protocols_wlr::data_control::v1::client::{
    zwlr_data_control_device_v1::{self, ZwlrDataControlDeviceV1},
    zwlr_data_control_manager_v1::ZwlrDataControlManagerV1,
    zwlr_data_control_offer_v1::{self, ZwlrDataControlOfferV1},
    zwlr_data_control_source_v1::{self, ZwlrDataControlSourceV1},
};
use wayland_protocols_wlr::foreign_toplevel::v1::client::{
    zwlr_foreign_toplevel_handle_v1::{self, ZwlrForeignToplevelHandleV1},
    zwlr_foreign_toplevel_manager_v1::{self, ZwlrForeignToplevelManagerV1},
};
use wayland_protocols_wlr::screencopy::v1::client::{
    zwlr_screencopy_frame_v1::{self, ZwlrScreencopyFrameV1},
    zwlr_screencopy_manager_v1::ZwlrScreencopyManagerV1,
};
use wayland_protocols_wlr::virtual_pointer::v1::client::{
    zwlr_virtual_pointer_manager_v1::ZwlrVirtualPointerManagerV1,
    zwlr_virtual_pointer_v1::ZwlrVirtualPointerV1,
};

use crate::error::{Code, Error, Result};

/// One wl_output as the compositor last described it.
#[derive(Clone, Debug, Default)]
pub struct Output {
    pub global: u32,
    pub name: Option<String>,
    pub x: i32,
    pub y: i32,
    pub mm_width: i32,
    pub mm_height: i32,
    pub mode_width: i32,
    pub mode_height: i32,
    pub scale: i32,
}

/// One foreign toplevel (wlr-foreign-toplevel-management).
#[derive(Clone, Debug)]
pub struct Toplevel {
    /// deskhand's id for it: a counter, stable for the toplevel's life.
    pub id: u32,
    pub handle: ZwlrForeignToplevelHandleV1,
    pub title: String,
    pub app_id: String,
    pub maximized: bool,
    pub minimized: bool,
    pub activated: bool,
    pub fullscreen: bool,
    /// Globals of the outputs it is on.
    pub outputs: Vec<u32>,
    pub closed: bool,
}

/// How a screencopy frame is going.
#[derive(Debug, Default)]
pub struct Frame {
    /// (format, width, height, stride) of each shm buffer offered.
    pub shm_formats: Vec<(WEnum<wl_shm::Format>, u32, u32, u32)>,
    pub buffer_done: bool,
    pub y_invert: bool,
    pub ready: bool,
    pub failed: bool,
}

/// A data-control offer and the MIME types it has.
#[derive(Debug, Default)]
pub struct Offer {
    pub mime_types: Vec<String>,
}

pub struct State {
    pub outputs: HashMap<u32, (wl_output::WlOutput, Output)>,
    pub toplevels: Vec<Toplevel>,
    next_toplevel: u32,
    pub frame: Frame,
    pub offers: HashMap<ObjectId, Offer>,
    /// The offer holding the clipboard now (None: the clipboard is empty).
    pub selection: Option<ZwlrDataControlOfferV1>,
    pub primary: Option<ZwlrDataControlOfferV1>,
    /// The text deskhand's own sources hand out, by source.
    pub sources: HashMap<ObjectId, String>,
    /// The writes of that text to readers still going, so a keeper that
    /// lost the selection finishes them before it exits.
    pub writers: Vec<JoinHandle<()>>,
    /// The windows epoch: every toplevel or output event moves it on
    /// (shared with sway's event follower, see epoch.rs).
    pub epoch: Arc<AtomicU64>,
    /// KWin's windows (plasma window management, see kde.rs).
    pub kde: super::kde::KdeState,
    /// KWin input: the keymap and lock keys KWin reports (see kde_input.rs).
    pub kde_input: super::kde_input::Seen,
}

impl State {
    pub(super) fn bump(&self) {
        self.epoch.fetch_add(1, Ordering::SeqCst);
    }
}

/// The globals deskhand uses; those the compositor lacks are None.
pub struct Globals {
    pub shm: wl_shm::WlShm,
    pub seat: Option<wl_seat::WlSeat>,
    pub screencopy: Option<ZwlrScreencopyManagerV1>,
    pub toplevels: Option<ZwlrForeignToplevelManagerV1>,
    pub data_control: Option<ZwlrDataControlManagerV1>,
    pub data_device: Option<ZwlrDataControlDeviceV1>,
    pub pointer: Option<ZwlrVirtualPointerV1>,
    pub keyboard_manager: Option<ZwpVirtualKeyboardManagerV1>,
    pub keyboard: Option<ZwpVirtualKeyboardV1>,
    /// KWin's window list, offered only to an authorized client (kde.rs).
    pub plasma: Option<
        wayland_protocols_plasma::plasma_window_management::client::org_kde_plasma_window_management::OrgKdePlasmaWindowManagement,
    >,
    /// The compositor offers org_kde_plasma_shell (to every client): KWin.
    pub kde_shell: bool,
    /// KWin input, bound only where the wlroots virtual pointer is absent.
    pub kde_input: super::kde_input::Bound,
}

/// A live Wayland connection.
pub struct Wl {
    pub conn: Connection,
    pub queue: EventQueue<State>,
    pub qh: QueueHandle<State>,
    pub state: State,
    pub globals: Globals,
    pub display_name: String,
}

/// The display_unavailable error for the Wayland socket.
pub fn unavailable(display: &str, why: impl std::fmt::Display) -> Error {
    Error::new(
        Code::DisplayUnavailable,
        format!("cannot reach Wayland display {display:?}: {why}"),
        "Run deskhand inside the Wayland session (WAYLAND_DISPLAY and XDG_RUNTIME_DIR set as the session sets them), or start the compositor first.",
    )
}

impl Wl {
    /// Connects to `$WAYLAND_DISPLAY` and binds every global deskhand uses.
    pub fn connect() -> Result<Wl> {
        Wl::connect_counting(Arc::default())
    }

    /// As [`Wl::connect`], moving `epoch` on at each event that may change
    /// the window list.
    pub fn connect_counting(epoch: Arc<AtomicU64>) -> Result<Wl> {
        let display_name =
            std::env::var("WAYLAND_DISPLAY").unwrap_or_else(|_| "wayland-0".to_owned());
        let conn = Connection::connect_to_env().map_err(|e| unavailable(&display_name, e))?;
        let (globals, mut queue) =
            registry_queue_init::<State>(&conn).map_err(|e| unavailable(&display_name, e))?;
        let qh = queue.handle();
        let mut state = State {
            outputs: HashMap::new(),
            toplevels: Vec::new(),
            next_toplevel: 1,
            frame: Frame::default(),
            offers: HashMap::new(),
            selection: None,
            primary: None,
            sources: HashMap::new(),
            writers: Vec::new(),
            epoch,
            kde: Default::default(),
            kde_input: Default::default(),
        };
        let shm = globals
            .bind::<wl_shm::WlShm, _, _>(&qh, 1..=1, ())
            .map_err(|e| {
                unavailable(&display_name, format!("the compositor has no wl_shm ({e})"))
            })?;
        bind_outputs(&globals, &qh, &mut state);
        let seat = globals.bind::<wl_seat::WlSeat, _, _>(&qh, 1..=1, ()).ok();
        let screencopy = globals.bind(&qh, 1..=3, ()).ok();
        let toplevels = globals.bind(&qh, 1..=3, ()).ok();
        let data_control: Option<ZwlrDataControlManagerV1> = globals.bind(&qh, 1..=2, ()).ok();
        let data_device = match (&data_control, &seat) {
            (Some(m), Some(seat)) => Some(m.get_data_device(seat, &qh, ())),
            _ => None,
        };
        let pointer_manager: Option<ZwlrVirtualPointerManagerV1> =
            globals.bind(&qh, 1..=2, ()).ok();
        let pointer = match (&pointer_manager, &seat) {
            (Some(m), Some(seat)) => Some(m.create_virtual_pointer(Some(seat), &qh, ())),
            _ => None,
        };
        let keyboard_manager: Option<ZwpVirtualKeyboardManagerV1> =
            globals.bind(&qh, 1..=1, ()).ok();
        let keyboard = match (&keyboard_manager, &seat) {
            (Some(m), Some(seat)) => Some(m.create_virtual_keyboard(seat, &qh, ())),
            _ => None,
        };
        let plasma = super::kde::bind(&globals, &qh);
        let kde_shell = globals
            .contents()
            .with_list(|l| l.iter().any(|g| g.interface == "org_kde_plasma_shell"));
        let kde_input = if pointer.is_none() {
            super::kde_input::bind(&globals, &qh, seat.as_ref())
        } else {
            Default::default()
        };
        let mut wl = Wl {
            conn,
            queue: {
                // Two roundtrips: the first binds, the second gets the
                // outputs' and toplevels' descriptions.
                queue
                    .roundtrip(&mut state)
                    .map_err(|e| unavailable(&display_name, e))?;
                queue
                    .roundtrip(&mut state)
                    .map_err(|e| unavailable(&display_name, e))?;
                queue
            },
            qh,
            state,
            globals: Globals {
                shm,
                seat,
                screencopy,
                toplevels,
                data_control,
                data_device,
                pointer,
                keyboard_manager,
                keyboard,
                plasma,
                kde_shell,
                kde_input,
            },
            display_name,
        };
        wl.roundtrip()?;
        Ok(wl)
    }

    /// Sends what is queued and waits until the compositor has answered it.
    pub fn roundtrip(&mut self) -> Result<()> {
        self.queue
            .roundtrip(&mut self.state)
            .map(|_| ())
            .map_err(|e| unavailable(&self.display_name, e))
    }

    /// Sends what is queued without waiting.
    pub fn flush(&mut self) -> Result<()> {
        self.queue
            .flush()
            .map_err(|e| unavailable(&self.display_name, e))
    }

    /// Waits for at least one event and handles it.
    pub fn blocking_dispatch(&mut self) -> Result<()> {
        self.queue
            .blocking_dispatch(&mut self.state)
            .map(|_| ())
            .map_err(|e| unavailable(&self.display_name, e))
    }

    /// Handles the events already read.
    pub fn dispatch_pending(&mut self) -> Result<()> {
        self.queue
            .dispatch_pending(&mut self.state)
            .map(|_| ())
            .map_err(|e| unavailable(&self.display_name, e))
    }

    /// Makes deskhand the owner of the clipboard (or the primary
    /// selection) with `text`, offered as every text type readers ask for;
    /// the source serves it while this connection is dispatched, until
    /// another client takes the selection.
    pub fn own_selection(&mut self, primary: bool, text: String) -> Result<()> {
        let device = self
            .globals
            .data_device
            .clone()
            .ok_or_else(no_data_control)?;
        let manager = self
            .globals
            .data_control
            .clone()
            .ok_or_else(no_data_control)?;
        if primary && manager.version() < 2 {
            return Err(Error::new(
                Code::Unsupported,
                "this compositor's wlr-data-control has no primary selection",
                "Use the clipboard selection.",
            ));
        }
        let source = manager.create_data_source(&self.qh, ());
        for m in TEXT_TYPES {
            source.offer((*m).to_owned());
        }
        self.state.sources.insert(source.id(), text);
        if primary {
            device.set_primary_selection(Some(&source));
        } else {
            device.set_selection(Some(&source));
        }
        self.roundtrip()
    }

    /// The live toplevels, oldest first.
    pub fn toplevels(&self) -> impl Iterator<Item = &Toplevel> {
        self.state.toplevels.iter().filter(|t| !t.closed)
    }
}

/// The text types deskhand's sources offer and its reads accept, in the
/// order a read prefers them.
pub const TEXT_TYPES: &[&str] = &[
    "text/plain;charset=utf-8",
    "UTF8_STRING",
    "text/plain",
    "TEXT",
    "STRING",
];

pub fn no_data_control() -> Error {
    Error::new(
        Code::ClipboardUnavailable,
        "this compositor offers no wlr-data-control, so deskhand cannot use the clipboard",
        "Use a wlroots compositor (sway, Hyprland, river, labwc).",
    )
}

fn bind_outputs(globals: &GlobalList, qh: &QueueHandle<State>, state: &mut State) {
    let found: Vec<(u32, u32)> = globals.contents().with_list(|list| {
        list.iter()
            .filter(|g| g.interface == wl_output::WlOutput::interface().name)
            .map(|g| (g.name, g.version))
            .collect()
    });
    for (name, version) in found {
        let output: wl_output::WlOutput = globals.registry().bind(name, version.min(4), qh, name);
        state.outputs.insert(
            name,
            (
                output,
                Output {
                    global: name,
                    scale: 1,
                    ..Output::default()
                },
            ),
        );
    }
}

impl Dispatch<wl_registry::WlRegistry, GlobalListContents> for State {
    fn event(
        _: &mut Self,
        _: &wl_registry::WlRegistry,
        _: wl_registry::Event,
        _: &GlobalListContents,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        // Outputs plugged in later are not followed: the helper is restarted
        // with the session, and displays says what it saw at start.
    }
}

impl Dispatch<wl_output::WlOutput, u32> for State {
    fn event(
        state: &mut Self,
        _: &wl_output::WlOutput,
        event: wl_output::Event,
        global: &u32,
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        state.bump();
        let Some((_, o)) = state.outputs.get_mut(global) else {
            return;
        };
        match event {
            wl_output::Event::Geometry {
                x,
                y,
                physical_width,
                physical_height,
                ..
            } => {
                o.x = x;
                o.y = y;
                o.mm_width = physical_width;
                o.mm_height = physical_height;
            }
            wl_output::Event::Mode {
                flags: WEnum::Value(f),
                width,
                height,
                ..
            } if f.contains(wl_output::Mode::Current) => {
                o.mode_width = width;
                o.mode_height = height;
            }
            wl_output::Event::Scale { factor } => o.scale = factor.max(1),
            wl_output::Event::Name { name } => o.name = Some(name),
            _ => {}
        }
    }
}

impl Dispatch<ZwlrForeignToplevelManagerV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &ZwlrForeignToplevelManagerV1,
        event: zwlr_foreign_toplevel_manager_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        state.bump();
        if let zwlr_foreign_toplevel_manager_v1::Event::Toplevel { toplevel } = event {
            let id = state.next_toplevel;
            state.next_toplevel += 1;
            state.toplevels.push(Toplevel {
                id,
                handle: toplevel,
                title: String::new(),
                app_id: String::new(),
                maximized: false,
                minimized: false,
                activated: false,
                fullscreen: false,
                outputs: Vec::new(),
                closed: false,
            });
        }
    }

    event_created_child!(State, ZwlrForeignToplevelManagerV1, [
        zwlr_foreign_toplevel_manager_v1::EVT_TOPLEVEL_OPCODE => (ZwlrForeignToplevelHandleV1, ()),
    ]);
}

impl Dispatch<ZwlrForeignToplevelHandleV1, ()> for State {
    fn event(
        state: &mut Self,
        handle: &ZwlrForeignToplevelHandleV1,
        event: zwlr_foreign_toplevel_handle_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zwlr_foreign_toplevel_handle_v1::Event;
        // Any change of a toplevel may change the list (fail closed).
        state.bump();
        let outputs: HashMap<ObjectId, u32> = state
            .outputs
            .iter()
            .map(|(g, (o, _))| (o.id(), *g))
            .collect();
        let Some(t) = state.toplevels.iter_mut().find(|t| &t.handle == handle) else {
            return;
        };
        match event {
            Event::Title { title } => t.title = title,
            Event::AppId { app_id } => t.app_id = app_id,
            Event::OutputEnter { output } => {
                if let Some(g) = outputs.get(&output.id()) {
                    if !t.outputs.contains(g) {
                        t.outputs.push(*g);
                    }
                }
            }
            Event::OutputLeave { output } => {
                if let Some(g) = outputs.get(&output.id()) {
                    t.outputs.retain(|o| o != g);
                }
            }
            Event::State { state: raw } => {
                let states: Vec<u32> = raw
                    .chunks_exact(4)
                    .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                use zwlr_foreign_toplevel_handle_v1::State as S;
                t.maximized = states.contains(&(S::Maximized as u32));
                t.minimized = states.contains(&(S::Minimized as u32));
                t.activated = states.contains(&(S::Activated as u32));
                t.fullscreen = states.contains(&(S::Fullscreen as u32));
            }
            Event::Closed => {
                t.closed = true;
                handle.destroy();
            }
            _ => {}
        }
        state.toplevels.retain(|t| !t.closed);
    }
}

impl Dispatch<ZwlrScreencopyFrameV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &ZwlrScreencopyFrameV1,
        event: zwlr_screencopy_frame_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zwlr_screencopy_frame_v1::Event;
        let f = &mut state.frame;
        match event {
            Event::Buffer {
                format,
                width,
                height,
                stride,
            } => f.shm_formats.push((format, width, height, stride)),
            Event::BufferDone => f.buffer_done = true,
            Event::Flags {
                flags: WEnum::Value(flags),
            } => f.y_invert = flags.contains(zwlr_screencopy_frame_v1::Flags::YInvert),
            Event::Ready { .. } => f.ready = true,
            Event::Failed => f.failed = true,
            _ => {}
        }
    }
}

impl Dispatch<ZwlrDataControlDeviceV1, ()> for State {
    fn event(
        state: &mut Self,
        _: &ZwlrDataControlDeviceV1,
        event: zwlr_data_control_device_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zwlr_data_control_device_v1::Event;
        match event {
            Event::DataOffer { id } => {
                state.offers.insert(id.id(), Offer::default());
            }
            Event::Selection { id } => {
                if let Some(old) = state.selection.take() {
                    if Some(&old) != id.as_ref() && Some(&old) != state.primary.as_ref() {
                        state.offers.remove(&old.id());
                        old.destroy();
                    }
                }
                state.selection = id;
            }
            Event::PrimarySelection { id } => {
                if let Some(old) = state.primary.take() {
                    if Some(&old) != id.as_ref() && Some(&old) != state.selection.as_ref() {
                        state.offers.remove(&old.id());
                        old.destroy();
                    }
                }
                state.primary = id;
            }
            Event::Finished => {
                state.selection = None;
                state.primary = None;
            }
            _ => {}
        }
    }

    event_created_child!(State, ZwlrDataControlDeviceV1, [
        zwlr_data_control_device_v1::EVT_DATA_OFFER_OPCODE => (ZwlrDataControlOfferV1, ()),
    ]);
}

impl Dispatch<ZwlrDataControlOfferV1, ()> for State {
    fn event(
        state: &mut Self,
        offer: &ZwlrDataControlOfferV1,
        event: zwlr_data_control_offer_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        if let zwlr_data_control_offer_v1::Event::Offer { mime_type } = event {
            state
                .offers
                .entry(offer.id())
                .or_default()
                .mime_types
                .push(mime_type);
        }
    }
}

impl Dispatch<ZwlrDataControlSourceV1, ()> for State {
    fn event(
        state: &mut Self,
        source: &ZwlrDataControlSourceV1,
        event: zwlr_data_control_source_v1::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use zwlr_data_control_source_v1::Event;
        match event {
            Event::Send { fd, .. } => {
                let Some(text) = state.sources.get(&source.id()) else {
                    return;
                };
                // A reader that stops reading must not hang the helper: the
                // write runs on its own thread and the fd closes with it.
                let bytes = text.clone().into_bytes();
                state.writers.retain(|w| !w.is_finished());
                state.writers.push(std::thread::spawn(move || {
                    use std::io::Write;
                    let mut file = std::fs::File::from(fd);
                    if let Err(e) = file.write_all(&bytes) {
                        log_debug!("clipboard reader went away: {e}");
                    }
                }));
            }
            Event::Cancelled => {
                state.sources.remove(&source.id());
                source.destroy();
            }
            _ => {}
        }
    }
}

/// Objects whose events deskhand ignores.
macro_rules! ignore_events {
    ($($iface:ty),* $(,)?) => {$(
        impl Dispatch<$iface, ()> for State {
            fn event(
                _: &mut Self,
                _: &$iface,
                _: <$iface as Proxy>::Event,
                _: &(),
                _: &Connection,
                _: &QueueHandle<Self>,
            ) {
            }
        }
    )*};
}

ignore_events!(
    wl_shm::WlShm,
    wl_shm_pool::WlShmPool,
    wl_buffer::WlBuffer,
    wl_seat::WlSeat,
    ZwlrScreencopyManagerV1,
    ZwlrDataControlManagerV1,
    ZwlrVirtualPointerManagerV1,
    ZwlrVirtualPointerV1,
    ZwpVirtualKeyboardManagerV1,
    ZwpVirtualKeyboardV1,
);
