//! The CLIPBOARD and PRIMARY selections (PROTOCOL.md `clipboard_read`,
//! `clipboard_write`). X11 has two clipboards that matter: CLIPBOARD, which
//! ctrl+c and ctrl+v use, and PRIMARY, the text selected last, which a
//! middle click (and shift+Insert in many apps) pastes. The supervisor's
//! clipboard guard stashes and clears both, so both are served here the
//! same way. A third, legacy store is the cut buffer CUT_BUFFER0, a
//! property of the first root window: xterm and other Xt programs copy
//! every selection there and paste from it when PRIMARY yields nothing, so
//! the guard clears it too.
//!
//! On X11 a clipboard write is a promise: the writer owns the selection and
//! must answer every paste until someone else copies. So the helper keeps a
//! second X connection with its own window and a thread that answers
//! selection requests for as long as the [`Clipboard`] lives. Reads use a
//! third connection, so a read never competes with the serving thread for
//! events, and time out when the owner does not answer.

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use x11rb::connection::{Connection, RequestConnection};
use x11rb::errors::ConnectionError;
use x11rb::protocol::xproto::{
    AtomEnum, ChangeWindowAttributesAux, ClientMessageEvent, ConnectionExt as _, CreateWindowAux,
    EventMask, PropMode, Property, PropertyNotifyEvent, SelectionNotifyEvent,
    SelectionRequestEvent, WindowClass, SELECTION_NOTIFY_EVENT,
};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;
use x11rb::CURRENT_TIME;

use crate::error::{Code, Error, Result};

x11rb::atom_manager! {
    Atoms: AtomsCookie {
        CLIPBOARD,
        TARGETS,
        TIMESTAMP,
        INCR,
        TEXT,
        UTF8_STRING,
        TEXT_PLAIN_UTF8: b"text/plain;charset=utf-8",
        TEXT_PLAIN: b"text/plain",
        DESKHAND_CLIPBOARD,
        DESKHAND_TIMESTAMP,
        DESKHAND_QUIT,
    }
}

/// How long a read waits for the owner, and a write for the server.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(2);
/// An INCR transfer the requestor stops reading is dropped after this.
const TRANSFER_IDLE_LIMIT: Duration = Duration::from_secs(10);
/// Largest property written in one piece; bigger text goes out with INCR.
const MAX_CHUNK: usize = 256 * 1024;

/// Which selection a read or write is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Selection {
    /// CLIPBOARD: what copy and paste (ctrl+c, ctrl+v) use.
    Clipboard,
    /// PRIMARY: the text selected last, pasted with the middle button.
    Primary,
    /// CUT_BUFFER0: a root window property, not a selection; it outlives
    /// the client that wrote it.
    CutBuffer,
}

impl Selection {
    /// The protocol's name for it (`"clipboard"`, `"primary"`).
    pub fn parse(name: &str) -> Option<Selection> {
        match name {
            "clipboard" => Some(Selection::Clipboard),
            "primary" => Some(Selection::Primary),
            "cut_buffer" => Some(Selection::CutBuffer),
            _ => None,
        }
    }

    fn index(self) -> usize {
        match self {
            Selection::Clipboard => 0,
            Selection::Primary => 1,
            Selection::CutBuffer => 2,
        }
    }

    fn atom(self, atoms: &Atoms) -> u32 {
        match self {
            Selection::Clipboard => atoms.CLIPBOARD,
            Selection::Primary => u32::from(AtomEnum::PRIMARY),
            Selection::CutBuffer => u32::from(AtomEnum::CUT_BUFFE_R0),
        }
    }

    fn of_atom(atoms: &Atoms, atom: u32) -> Option<Selection> {
        [Selection::Clipboard, Selection::Primary]
            .into_iter()
            .find(|s| s.atom(atoms) == atom)
    }

    /// How messages name it.
    fn noun(self) -> &'static str {
        match self {
            Selection::Clipboard => "the clipboard",
            Selection::Primary => "the PRIMARY selection",
            Selection::CutBuffer => "the cut buffer",
        }
    }

    fn fill_hint(self) -> &'static str {
        match self {
            Selection::Clipboard => "Copy some text first, or put text there with clipboard_write.",
            Selection::Primary => {
                "Select some text first, or put text there with clipboard_write and \"selection\": \"primary\"."
            }
            Selection::CutBuffer => {
                "Select some text in xterm first, or put text there with clipboard_write and \"selection\": \"cut_buffer\"."
            }
        }
    }
}

/// The system clipboard and PRIMARY selection: reads any client's text, and
/// serves the text it wrote until another client takes the selection or
/// this is dropped.
pub struct Clipboard {
    server: Arc<RustConnection>,
    /// The window that owns the selection when we do.
    owner_window: u32,
    reader: RustConnection,
    reader_window: u32,
    atoms: Atoms,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// The text we serve, per selection (`Selection::index`), while we own
    /// it.
    owned: [Option<Owned>; 3],
    /// A write waiting for the server timestamp that lets it take the
    /// selection: (sequence number, selection, UTF-8 text).
    pending: Option<(u64, Selection, Arc<Vec<u8>>)>,
    /// The outcome of the write with this sequence number.
    outcome: Option<(u64, std::result::Result<(), String>)>,
    sequence: u64,
    /// Set when the serving connection broke.
    broken: Option<String>,
}

struct Owned {
    text: Arc<Vec<u8>>,
    /// When we took the selection; requests from before then are refused.
    since: u32,
}

/// One INCR transfer in progress to a requestor.
struct Transfer {
    kind: u32,
    data: Arc<Vec<u8>>,
    offset: usize,
    last_activity: Instant,
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared
        .state
        .lock()
        .unwrap_or_else(|poison| poison.into_inner())
}

fn x11(context: &str, err: impl std::fmt::Display) -> Error {
    Error::x11(context, err)
}

fn no_answer(selection: Selection) -> Error {
    Error::new(
        Code::ClipboardUnavailable,
        format!(
            "the owner of {} did not answer within 2 s",
            selection.noun()
        ),
        "The application that copied may be frozen; copy the text again, then retry.",
    )
}

fn no_text(selection: Selection) -> Error {
    Error::new(
        Code::ClipboardUnavailable,
        format!(
            "{} holds no text (it may hold an image or files)",
            selection.noun()
        ),
        selection.fill_hint(),
    )
}

fn empty(selection: Selection) -> Error {
    Error::new(
        Code::ClipboardUnavailable,
        format!("{} is empty: no application owns it", selection.noun()),
        selection.fill_hint(),
    )
}

fn latin1(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

/// ICCCM STRING is Latin-1; characters outside it become '?'.
fn to_latin1(text: &[u8]) -> Vec<u8> {
    String::from_utf8_lossy(text)
        .chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

/// Decodes selection data of the given type; trailing NULs some owners add
/// are dropped.
fn decode(kind: u32, bytes: &[u8]) -> String {
    let end = bytes.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    let bytes = &bytes[..end];
    if kind == u32::from(AtomEnum::STRING) {
        latin1(bytes)
    } else {
        String::from_utf8_lossy(bytes).into_owned()
    }
}

fn create_window(conn: &RustConnection, screen: usize, events: EventMask) -> Result<u32> {
    let root = conn.setup().roots[screen].root;
    let window = conn
        .generate_id()
        .map_err(|e| x11("allocating a clipboard window id", e))?;
    conn.create_window(
        0,
        window,
        root,
        -10,
        -10,
        1,
        1,
        0,
        WindowClass::INPUT_ONLY,
        0,
        &CreateWindowAux::new().event_mask(events),
    )
    .map_err(|e| x11("creating the clipboard window", e))?
    .check()
    .map_err(|e| x11("creating the clipboard window", e))?;
    Ok(window)
}

impl Clipboard {
    /// Connects to the X server named by DISPLAY and starts serving.
    pub fn new() -> Result<Clipboard> {
        Clipboard::with_chunk_limit(MAX_CHUNK)
    }

    fn with_chunk_limit(chunk_limit: usize) -> Result<Clipboard> {
        let (server, screen) = x11rb::connect(None)
            .map_err(|e| x11("connecting to the X server for the clipboard", e))?;
        let (reader, reader_screen) = x11rb::connect(None)
            .map_err(|e| x11("connecting to the X server for the clipboard", e))?;
        let atoms = Atoms::new(&server)
            .map_err(|e| x11("interning clipboard atoms", e))?
            .reply()
            .map_err(|e| x11("interning clipboard atoms", e))?;
        let owner_window = create_window(&server, screen, EventMask::PROPERTY_CHANGE)?;
        let reader_window = create_window(&reader, reader_screen, EventMask::PROPERTY_CHANGE)?;
        // Leave room for the request header in every chunk.
        let chunk = chunk_limit
            .min(server.maximum_request_bytes().saturating_sub(1024))
            .max(1);
        let server = Arc::new(server);
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let server_for_thread = Arc::clone(&server);
        let shared_for_thread = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("clipboard".into())
            .spawn(move || {
                let result = Server {
                    conn: &server_for_thread,
                    window: owner_window,
                    atoms,
                    shared: &shared_for_thread,
                    chunk,
                    transfers: HashMap::new(),
                }
                .run();
                if let Err(err) = result {
                    lock(&shared_for_thread).broken = Some(err.to_string());
                    shared_for_thread.changed.notify_all();
                }
            })
            .map_err(|e| Error::internal(format!("starting the clipboard thread: {e}")))?;
        Ok(Clipboard {
            server,
            owner_window,
            reader,
            reader_window,
            atoms,
            shared,
            thread: Some(thread),
        })
    }

    fn check_alive(&self) -> Result<()> {
        match &lock(&self.shared).broken {
            Some(reason) => Err(Error::new(
                Code::DisplayUnavailable,
                format!("the clipboard's X connection is broken: {reason}"),
                "Check that the X server is still running; restart the helper.",
            )),
            None => Ok(()),
        }
    }

    /// The selection's text, whoever owns it.
    pub fn read(&mut self, selection: Selection) -> Result<String> {
        self.check_alive()?;
        if selection == Selection::CutBuffer {
            return self.read_cut_buffer();
        }
        let owner = self
            .reader
            .get_selection_owner(selection.atom(&self.atoms))
            .map_err(|e| x11("asking who owns the selection", e))?
            .reply()
            .map_err(|e| x11("asking who owns the selection", e))?
            .owner;
        if owner == x11rb::NONE {
            return Err(empty(selection));
        }
        if owner == self.owner_window {
            if let Some(owned) = &lock(&self.shared).owned[selection.index()] {
                return Ok(decode(self.atoms.UTF8_STRING, &owned.text));
            }
        }
        // Events left over from an earlier read that timed out.
        while self
            .reader
            .poll_for_event()
            .map_err(|e| x11("reading clipboard events", e))?
            .is_some()
        {}
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        for target in [
            self.atoms.UTF8_STRING,
            self.atoms.TEXT_PLAIN_UTF8,
            u32::from(AtomEnum::STRING),
        ] {
            if let Some(text) = self.convert(selection, target, deadline)? {
                return Ok(text);
            }
        }
        Err(no_text(selection))
    }

    /// CUT_BUFFER0's text. ICCCM types it STRING (Latin-1), but programs
    /// store UTF-8 there too; reading the bytes as Latin-1 keeps them all,
    /// so writing the text back restores them exactly.
    fn read_cut_buffer(&self) -> Result<String> {
        let selection = Selection::CutBuffer;
        let root = self.reader.setup().roots[0].root;
        let reply = self
            .reader
            .get_property(
                false,
                root,
                selection.atom(&self.atoms),
                AtomEnum::ANY,
                0,
                u32::MAX / 4,
            )
            .map_err(|e| x11("reading the cut buffer", e))?
            .reply()
            .map_err(|e| x11("reading the cut buffer", e))?;
        if reply.type_ == x11rb::NONE || reply.value.is_empty() {
            return Err(empty(selection));
        }
        if reply.format != 8 {
            return Err(no_text(selection));
        }
        if reply.type_ == self.atoms.UTF8_STRING {
            return Ok(String::from_utf8_lossy(&reply.value).into_owned());
        }
        Ok(latin1(&reply.value))
    }

    /// Sets CUT_BUFFER0 to `text`: STRING when it is Latin-1, UTF8_STRING
    /// otherwise; "" deletes it, so that nothing is pasted from it.
    fn write_cut_buffer(&self, text: &str) -> Result<()> {
        let conn = &self.reader;
        let root = conn.setup().roots[0].root;
        let property = Selection::CutBuffer.atom(&self.atoms);
        let cookie = if text.is_empty() {
            conn.delete_property(root, property)
        } else {
            let (kind, data) = match text
                .chars()
                .map(|c| u8::try_from(u32::from(c)))
                .collect::<std::result::Result<Vec<u8>, _>>()
            {
                Ok(bytes) => (u32::from(AtomEnum::STRING), bytes),
                Err(_) => (self.atoms.UTF8_STRING, text.as_bytes().to_vec()),
            };
            if data.len() + 1024 > conn.maximum_request_bytes() {
                return Err(Error::new(
                    Code::ClipboardUnavailable,
                    format!(
                        "{} bytes do not fit in the cut buffer, which one X request sets",
                        data.len()
                    ),
                    "Put less text there.",
                ));
            }
            conn.change_property8(PropMode::REPLACE, root, property, kind, &data)
        };
        cookie
            .map_err(|e| x11("setting the cut buffer", e))?
            .check()
            .map_err(|e| x11("setting the cut buffer", e))
    }

    /// Asks the owner for the selection as `target`. None when the owner
    /// refuses that target.
    fn convert(
        &self,
        selection: Selection,
        target: u32,
        deadline: Instant,
    ) -> Result<Option<String>> {
        let conn = &self.reader;
        let property = self.atoms.DESKHAND_CLIPBOARD;
        let selection_atom = selection.atom(&self.atoms);
        conn.convert_selection(
            self.reader_window,
            selection_atom,
            target,
            property,
            CURRENT_TIME,
        )
        .map_err(|e| x11("requesting the clipboard", e))?;
        conn.flush()
            .map_err(|e| x11("requesting the clipboard", e))?;
        let notify = loop {
            match self.next_event(deadline)? {
                None => return Err(no_answer(selection)),
                Some(Event::SelectionNotify(e))
                    if e.requestor == self.reader_window && e.selection == selection_atom =>
                {
                    break e;
                }
                Some(_) => {}
            }
        };
        if notify.property == x11rb::NONE {
            return Ok(None);
        }
        let reply = self.take_property(notify.property)?;
        if reply.type_ == u32::from(AtomEnum::NONE) {
            return Ok(None);
        }
        if reply.type_ != self.atoms.INCR {
            if !self.is_text(reply.type_) {
                return Ok(None);
            }
            return Ok(Some(decode(reply.type_, &reply.value)));
        }
        // INCR: deleting the property (done by take_property) asks for the
        // first chunk; an empty chunk ends the transfer. The deadline
        // restarts with each chunk so large texts are not cut off.
        let mut data = Vec::new();
        let mut kind = self.atoms.UTF8_STRING;
        let mut chunk_deadline = Instant::now() + ANSWER_TIMEOUT;
        loop {
            match self.next_event(chunk_deadline)? {
                None => return Err(no_answer(selection)),
                Some(Event::PropertyNotify(e))
                    if e.window == self.reader_window
                        && e.atom == notify.property
                        && e.state == Property::NEW_VALUE =>
                {
                    let chunk = self.take_property(notify.property)?;
                    if chunk.value.is_empty() {
                        if !self.is_text(kind) {
                            return Ok(None);
                        }
                        return Ok(Some(decode(kind, &data)));
                    }
                    kind = chunk.type_;
                    data.extend_from_slice(&chunk.value);
                    chunk_deadline = Instant::now() + ANSWER_TIMEOUT;
                }
                Some(_) => {}
            }
        }
    }

    /// Some owners (xclip) answer any target with whatever they hold, so
    /// the type of the data decides whether it is text.
    fn is_text(&self, kind: u32) -> bool {
        let a = &self.atoms;
        [
            a.UTF8_STRING,
            a.TEXT_PLAIN_UTF8,
            a.TEXT_PLAIN,
            a.TEXT,
            u32::from(AtomEnum::STRING),
        ]
        .contains(&kind)
    }

    fn take_property(&self, property: u32) -> Result<x11rb::protocol::xproto::GetPropertyReply> {
        self.reader
            .get_property(
                true,
                self.reader_window,
                property,
                AtomEnum::ANY,
                0,
                u32::MAX / 4,
            )
            .map_err(|e| x11("reading the clipboard", e))?
            .reply()
            .map_err(|e| x11("reading the clipboard", e))
    }

    /// The reader connection's next event, or None at the deadline.
    fn next_event(&self, deadline: Instant) -> Result<Option<Event>> {
        loop {
            if let Some(event) = self
                .reader
                .poll_for_event()
                .map_err(|e| x11("reading clipboard events", e))?
            {
                return Ok(Some(event));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let mut fd = libc::pollfd {
                fd: self.reader.stream().as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let millis = left.as_millis().clamp(1, i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd, and the count says one.
            let rc = unsafe { libc::poll(&mut fd, 1, millis) };
            if rc < 0 {
                let err = std::io::Error::last_os_error();
                if err.kind() != std::io::ErrorKind::Interrupted {
                    return Err(x11("waiting for the clipboard owner", err));
                }
            }
        }
    }

    /// Takes the selection and serves `text` until another client copies
    /// (or, for PRIMARY, selects) something or this Clipboard is dropped.
    pub fn write(&mut self, selection: Selection, text: &str) -> Result<()> {
        self.check_alive()?;
        if selection == Selection::CutBuffer {
            return self.write_cut_buffer(text);
        }
        let sequence = {
            let mut state = lock(&self.shared);
            state.sequence += 1;
            state.pending = Some((
                state.sequence,
                selection,
                Arc::new(text.as_bytes().to_vec()),
            ));
            state.sequence
        };
        // ICCCM wants a real timestamp for SetSelectionOwner; a zero-length
        // append makes the server send one in a PropertyNotify, and the
        // serving thread takes the selection when it sees it.
        self.server
            .change_property32(
                PropMode::APPEND,
                self.owner_window,
                self.atoms.DESKHAND_TIMESTAMP,
                AtomEnum::INTEGER,
                &[],
            )
            .map_err(|e| x11("taking the clipboard", e))?;
        self.server
            .flush()
            .map_err(|e| x11("taking the clipboard", e))?;
        let deadline = Instant::now() + ANSWER_TIMEOUT;
        let mut state = lock(&self.shared);
        loop {
            if let Some((done, outcome)) = state.outcome.take() {
                if done == sequence {
                    return outcome.map_err(|reason| {
                        Error::new(
                            Code::ClipboardUnavailable,
                            format!("could not take {}: {reason}", selection.noun()),
                            "Another application is copying at the same moment; retry.",
                        )
                    });
                }
            }
            if let Some(reason) = &state.broken {
                return Err(x11("taking the clipboard", reason));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                state.pending = None;
                return Err(Error::new(
                    Code::ClipboardUnavailable,
                    format!(
                        "the X server did not confirm ownership of {} within 2 s",
                        selection.noun()
                    ),
                    "Retry; if it keeps failing, restart the helper.",
                ));
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(|poison| poison.into_inner())
                .0;
        }
    }
}

impl Clipboard {
    /// Blocks until other clients have taken every selection this
    /// Clipboard serves (the cut buffer needs no owner), or its X
    /// connection breaks (the server went away); the keep mode's life.
    pub fn wait_until_taken(&self) {
        let mut state = lock(&self.shared);
        while state.broken.is_none() && state.owned[..2].iter().any(Option::is_some) {
            state = self
                .shared
                .changed
                .wait(state)
                .unwrap_or_else(|poison| poison.into_inner());
        }
    }
}

impl Drop for Clipboard {
    fn drop(&mut self) {
        let quit =
            ClientMessageEvent::new(32, self.owner_window, self.atoms.DESKHAND_QUIT, [0u32; 5]);
        let sent = self
            .server
            .send_event(false, self.owner_window, EventMask::NO_EVENT, quit)
            .and_then(|_| self.server.flush());
        if let Some(thread) = self.thread.take() {
            if sent.is_ok() || thread.is_finished() {
                let _ = thread.join();
            }
        }
        let _ = self.server.destroy_window(self.owner_window);
        let _ = self.server.flush();
        let _ = self.reader.destroy_window(self.reader_window);
        let _ = self.reader.flush();
    }
}

/// The serving thread's state: answers SelectionRequest, tracks ownership
/// and runs INCR transfers.
struct Server<'a> {
    conn: &'a RustConnection,
    window: u32,
    atoms: Atoms,
    shared: &'a Shared,
    chunk: usize,
    transfers: HashMap<(u32, u32), Transfer>,
}

impl Server<'_> {
    fn run(mut self) -> std::result::Result<(), ConnectionError> {
        loop {
            let event = self.conn.wait_for_event()?;
            match event {
                Event::ClientMessage(e)
                    if e.window == self.window && e.type_ == self.atoms.DESKHAND_QUIT =>
                {
                    return Ok(());
                }
                Event::PropertyNotify(e)
                    if e.window == self.window
                        && e.atom == self.atoms.DESKHAND_TIMESTAMP
                        && e.state == Property::NEW_VALUE =>
                {
                    self.take_ownership(e.time)?;
                }
                Event::SelectionRequest(e) => self.answer(&e)?,
                Event::SelectionClear(e) if e.owner == self.window => {
                    if let Some(selection) = Selection::of_atom(&self.atoms, e.selection) {
                        let mut state = lock(self.shared);
                        let owned = &mut state.owned[selection.index()];
                        if owned
                            .as_ref()
                            .is_some_and(|o| e.time >= o.since || e.time == CURRENT_TIME)
                        {
                            *owned = None;
                            // A keeper waits for this (wait_until_taken).
                            self.shared.changed.notify_all();
                        }
                    }
                }
                Event::PropertyNotify(e) if e.state == Property::DELETE => {
                    self.continue_transfer(&e)?
                }
                // Errors come from requestor windows that vanished mid-transfer.
                _ => {}
            }
            let now = Instant::now();
            self.transfers
                .retain(|_, t| now.duration_since(t.last_activity) < TRANSFER_IDLE_LIMIT);
        }
    }

    fn take_ownership(&mut self, time: u32) -> std::result::Result<(), ConnectionError> {
        let Some((sequence, selection, text)) = lock(self.shared).pending.take() else {
            return Ok(());
        };
        let atom = selection.atom(&self.atoms);
        self.conn.set_selection_owner(self.window, atom, time)?;
        let owner = match self.conn.get_selection_owner(atom)?.reply() {
            Ok(reply) => reply.owner,
            Err(x11rb::errors::ReplyError::ConnectionError(e)) => return Err(e),
            Err(x11rb::errors::ReplyError::X11Error(e)) => {
                let mut state = lock(self.shared);
                state.outcome = Some((sequence, Err(format!("the server refused: {e:?}"))));
                self.shared.changed.notify_all();
                return Ok(());
            }
        };
        let mut state = lock(self.shared);
        let outcome = if owner == self.window {
            state.owned[selection.index()] = Some(Owned { text, since: time });
            Ok(())
        } else {
            Err("another application took it at the same moment".to_string())
        };
        state.outcome = Some((sequence, outcome));
        self.shared.changed.notify_all();
        Ok(())
    }

    fn answer(
        &mut self,
        request: &SelectionRequestEvent,
    ) -> std::result::Result<(), ConnectionError> {
        // Obsolete clients pass no property; ICCCM says use the target.
        let property = if request.property == x11rb::NONE {
            request.target
        } else {
            request.property
        };
        let owned = Selection::of_atom(&self.atoms, request.selection).and_then(|selection| {
            let state = lock(self.shared);
            state.owned[selection.index()].as_ref().and_then(|o| {
                let current = request.owner == self.window
                    && (request.time == CURRENT_TIME || request.time >= o.since);
                current.then(|| (Arc::clone(&o.text), o.since))
            })
        });
        let a = &self.atoms;
        let stored = match owned {
            None => false,
            Some((_, since)) if request.target == a.TIMESTAMP => {
                self.conn.change_property32(
                    PropMode::REPLACE,
                    request.requestor,
                    property,
                    AtomEnum::INTEGER,
                    &[since],
                )?;
                true
            }
            Some(_) if request.target == a.TARGETS => {
                let targets = [
                    a.TARGETS,
                    a.TIMESTAMP,
                    a.UTF8_STRING,
                    a.TEXT_PLAIN_UTF8,
                    a.TEXT_PLAIN,
                    a.TEXT,
                    u32::from(AtomEnum::STRING),
                ];
                self.conn.change_property32(
                    PropMode::REPLACE,
                    request.requestor,
                    property,
                    AtomEnum::ATOM,
                    &targets,
                )?;
                true
            }
            Some((text, _)) => {
                let utf8_targets = [a.UTF8_STRING, a.TEXT_PLAIN_UTF8, a.TEXT_PLAIN];
                if utf8_targets.contains(&request.target) {
                    self.send(request.requestor, property, request.target, text)?;
                    true
                } else if request.target == a.TEXT {
                    self.send(request.requestor, property, a.UTF8_STRING, text)?;
                    true
                } else if request.target == u32::from(AtomEnum::STRING) {
                    self.send(
                        request.requestor,
                        property,
                        request.target,
                        Arc::new(to_latin1(&text)),
                    )?;
                    true
                } else {
                    false
                }
            }
        };
        let notify = SelectionNotifyEvent {
            response_type: SELECTION_NOTIFY_EVENT,
            sequence: 0,
            time: request.time,
            requestor: request.requestor,
            selection: request.selection,
            target: request.target,
            property: if stored { property } else { x11rb::NONE },
        };
        self.conn
            .send_event(false, request.requestor, EventMask::NO_EVENT, notify)?;
        self.conn.flush()
    }

    /// Stores the data on the requestor, in one piece or, when it is
    /// larger than a chunk, as an INCR transfer.
    fn send(
        &mut self,
        requestor: u32,
        property: u32,
        kind: u32,
        data: Arc<Vec<u8>>,
    ) -> std::result::Result<(), ConnectionError> {
        if data.len() <= self.chunk {
            self.conn
                .change_property8(PropMode::REPLACE, requestor, property, kind, &data)?;
            return Ok(());
        }
        // Watch the requestor's property deletions, which ask for the next
        // chunk; then announce the size.
        self.conn.change_window_attributes(
            requestor,
            &ChangeWindowAttributesAux::new().event_mask(EventMask::PROPERTY_CHANGE),
        )?;
        let size = u32::try_from(data.len()).unwrap_or(u32::MAX);
        self.conn.change_property32(
            PropMode::REPLACE,
            requestor,
            property,
            self.atoms.INCR,
            &[size],
        )?;
        self.transfers.insert(
            (requestor, property),
            Transfer {
                kind,
                data,
                offset: 0,
                last_activity: Instant::now(),
            },
        );
        Ok(())
    }

    fn continue_transfer(
        &mut self,
        deleted: &PropertyNotifyEvent,
    ) -> std::result::Result<(), ConnectionError> {
        let key = (deleted.window, deleted.atom);
        let Some(transfer) = self.transfers.get_mut(&key) else {
            return Ok(());
        };
        let end = (transfer.offset + self.chunk).min(transfer.data.len());
        let piece = &transfer.data[transfer.offset..end];
        self.conn.change_property8(
            PropMode::REPLACE,
            deleted.window,
            deleted.atom,
            transfer.kind,
            piece,
        )?;
        if piece.is_empty() {
            // The empty chunk ends the transfer.
            self.transfers.remove(&key);
            self.conn.change_window_attributes(
                deleted.window,
                &ChangeWindowAttributesAux::new().event_mask(EventMask::NO_EVENT),
            )?;
        } else {
            transfer.offset = end;
            transfer.last_activity = Instant::now();
        }
        self.conn.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latin1_round_trip_and_replacement() {
        assert_eq!(to_latin1("café".as_bytes()), b"caf\xe9".to_vec());
        assert_eq!(to_latin1("✓ ok".as_bytes()), b"? ok".to_vec());
        assert_eq!(decode(u32::from(AtomEnum::STRING), b"caf\xe9\0"), "café");
        assert_eq!(decode(300, "日本\0\0".as_bytes()), "日本");
        assert_eq!(decode(300, b""), "");
    }
}

#[cfg(test)]
mod x_tests {
    use super::*;
    use crate::windows::xtest::{display_available, eventually, lock as x_lock, output, Reaped};
    use std::io::Write as _;
    use std::process::{Command, Stdio};

    const UNICODE: &str = "héllo ✓ 日本";

    fn owner_of(name: &[u8]) -> u32 {
        let (conn, _) = x11rb::connect(None).unwrap();
        let atom = conn.intern_atom(false, name).unwrap().reply().unwrap().atom;
        conn.get_selection_owner(atom)
            .unwrap()
            .reply()
            .unwrap()
            .owner
    }

    fn clipboard_owner() -> u32 {
        owner_of(b"CLIPBOARD")
    }

    /// Runs `xclip -i` in the foreground serving `data` as `target`, and
    /// waits until it owns the clipboard.
    fn xclip_serving(data: &[u8], target: &str) -> Reaped {
        xclip_serving_in("clipboard", data, target)
    }

    /// The same for the selection xclip calls `selection`.
    fn xclip_serving_in(selection: &str, data: &[u8], target: &str) -> Reaped {
        let atom = selection.to_uppercase().into_bytes();
        let before = owner_of(&atom);
        let mut child = Command::new("xclip")
            .args(["-quiet", "-selection", selection, "-t", target, "-i"])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting xclip");
        child.stdin.take().unwrap().write_all(data).unwrap();
        let child = Reaped(child);
        eventually(5, "xclip to own the selection", || {
            let owner = owner_of(&atom);
            (owner != x11rb::NONE && owner != before).then_some(())
        });
        child
    }

    fn xclip_out() -> String {
        output("xclip", &["-selection", "clipboard", "-o"])
    }

    fn xclip_primary() -> String {
        output("xclip", &["-selection", "primary", "-o"])
    }

    #[test]
    fn primary_is_a_second_independent_selection() {
        if !display_available("primary_is_a_second_independent_selection") {
            return;
        }
        let _x = x_lock();
        let mut clipboard = Clipboard::new().unwrap();
        clipboard
            .write(Selection::Clipboard, "on the clipboard")
            .unwrap();
        clipboard.write(Selection::Primary, UNICODE).unwrap();
        assert_eq!(xclip_primary(), UNICODE);
        assert_eq!(xclip_out(), "on the clipboard");
        assert_eq!(clipboard.read(Selection::Primary).unwrap(), UNICODE);
        assert_eq!(
            clipboard.read(Selection::Clipboard).unwrap(),
            "on the clipboard"
        );
        // Clearing PRIMARY the way the supervisor's guard does.
        clipboard.write(Selection::Primary, "").unwrap();
        assert_eq!(xclip_primary(), "");
        assert_eq!(clipboard.read(Selection::Primary).unwrap(), "");

        // Another client selects text: PRIMARY is theirs, the clipboard
        // stays ours.
        let xclip = xclip_serving_in("primary", "selected ✓".as_bytes(), "UTF8_STRING");
        assert_eq!(clipboard.read(Selection::Primary).unwrap(), "selected ✓");
        assert!(lock(&clipboard.shared).owned[1].is_none());
        assert_eq!(xclip_out(), "on the clipboard");
        drop(xclip);
        eventually(2, "PRIMARY to be released", || {
            (owner_of(b"PRIMARY") == x11rb::NONE).then_some(())
        });
        let err = clipboard.read(Selection::Primary).unwrap_err();
        assert_eq!(err.code, Code::ClipboardUnavailable);
        assert!(err.message.contains("PRIMARY"), "{}", err.message);
        assert!(err.message.contains("empty"), "{}", err.message);
    }

    #[test]
    fn cut_buffer_keeps_its_bytes() {
        if !display_available("cut_buffer_keeps_its_bytes") {
            return;
        }
        let _x = x_lock();
        let mut clipboard = Clipboard::new().unwrap();
        clipboard.write(Selection::CutBuffer, "café").unwrap();
        let bytes = Command::new("xclip")
            .args(["-selection", "buffer-cut", "-o"])
            .output()
            .unwrap()
            .stdout;
        assert_eq!(bytes, b"caf\xe9");
        assert_eq!(clipboard.read(Selection::CutBuffer).unwrap(), "café");
        // xclip stores UTF-8 under STRING: read as Latin-1, written back
        // byte for byte.
        let mut xclip = Command::new("xclip")
            .args(["-selection", "buffer-cut", "-i"])
            .stdin(Stdio::piped())
            .spawn()
            .unwrap();
        xclip
            .stdin
            .take()
            .unwrap()
            .write_all(UNICODE.as_bytes())
            .unwrap();
        assert!(xclip.wait().unwrap().success());
        let read = clipboard.read(Selection::CutBuffer).unwrap();
        clipboard.write(Selection::CutBuffer, "").unwrap();
        let err = clipboard.read(Selection::CutBuffer).unwrap_err();
        assert!(err.message.contains("empty"), "{}", err.message);
        clipboard.write(Selection::CutBuffer, &read).unwrap();
        assert_eq!(
            output("xclip", &["-selection", "buffer-cut", "-o"]),
            UNICODE
        );
        // Text beyond Latin-1 goes in as UTF8_STRING.
        clipboard.write(Selection::CutBuffer, "✓ 日本").unwrap();
        assert_eq!(clipboard.read(Selection::CutBuffer).unwrap(), "✓ 日本");
        clipboard.write(Selection::CutBuffer, "").unwrap();
    }

    #[test]
    fn large_primary_goes_through_incr() {
        if !display_available("large_primary_goes_through_incr") {
            return;
        }
        let _x = x_lock();
        let mut writer = Clipboard::with_chunk_limit(4096).unwrap();
        let mut reader = Clipboard::new().unwrap();
        let big: String = (0..20_000).map(|i| format!("{i} ✓ ")).collect();
        assert!(big.len() > 20 * 4096);
        writer.write(Selection::Primary, &big).unwrap();
        assert_eq!(reader.read(Selection::Primary).unwrap(), big);
        assert_eq!(xclip_primary(), big);
    }

    #[test]
    fn write_is_served_to_xclip_until_taken() {
        if !display_available("write_is_served_to_xclip_until_taken") {
            return;
        }
        let _x = x_lock();
        let mut clipboard = Clipboard::new().unwrap();
        clipboard.write(Selection::Clipboard, UNICODE).unwrap();
        assert_eq!(xclip_out(), UNICODE);
        // Still served later: the thread keeps answering after write returns.
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(xclip_out(), UNICODE);
        assert_eq!(clipboard.read(Selection::Clipboard).unwrap(), UNICODE);
        let targets = output("xclip", &["-selection", "clipboard", "-o", "-t", "TARGETS"]);
        assert!(targets.lines().any(|t| t == "UTF8_STRING"), "{targets}");
        // STRING readers get Latin-1.
        clipboard.write(Selection::Clipboard, "café").unwrap();
        let latin = Command::new("xclip")
            .args(["-selection", "clipboard", "-o", "-t", "STRING"])
            .output()
            .unwrap()
            .stdout;
        assert_eq!(latin, b"caf\xe9");

        // Another client copies: we stop serving and read theirs.
        let _xclip = xclip_serving("from xclip ✓".as_bytes(), "UTF8_STRING");
        assert_eq!(
            clipboard.read(Selection::Clipboard).unwrap(),
            "from xclip ✓"
        );
        assert!(
            lock(&clipboard.shared).owned[0].is_none(),
            "selection clear seen"
        );

        // Writing again takes it back.
        clipboard.write(Selection::Clipboard, "mine again").unwrap();
        assert_eq!(xclip_out(), "mine again");
    }

    #[test]
    fn reads_text_set_by_xclip() {
        if !display_available("reads_text_set_by_xclip") {
            return;
        }
        let _x = x_lock();
        let mut clipboard = Clipboard::new().unwrap();
        let _xclip = xclip_serving(UNICODE.as_bytes(), "UTF8_STRING");
        assert_eq!(clipboard.read(Selection::Clipboard).unwrap(), UNICODE);
        drop(_xclip);

        // An owner that only offers STRING.
        let _xclip = xclip_serving(b"caf\xe9", "STRING");
        assert_eq!(clipboard.read(Selection::Clipboard).unwrap(), "café");
    }

    #[test]
    fn large_text_goes_through_incr() {
        if !display_available("large_text_goes_through_incr") {
            return;
        }
        let _x = x_lock();
        let mut writer = Clipboard::with_chunk_limit(4096).unwrap();
        let mut reader = Clipboard::new().unwrap();
        let big: String = (0..40_000).map(|i| format!("{i} ✓ ")).collect();
        assert!(big.len() > 50 * 4096);
        writer.write(Selection::Clipboard, &big).unwrap();
        assert_eq!(reader.read(Selection::Clipboard).unwrap(), big);
        assert_eq!(xclip_out(), big);
        assert!(writer.shared.state.lock().unwrap().owned[0].is_some());
    }

    #[test]
    fn empty_non_text_and_silent_owners_are_errors() {
        if !display_available("empty_non_text_and_silent_owners_are_errors") {
            return;
        }
        let _x = x_lock();
        let mut clipboard = Clipboard::new().unwrap();
        {
            let mut other = Clipboard::new().unwrap();
            other.write(Selection::Clipboard, "short-lived").unwrap();
            assert_eq!(clipboard.read(Selection::Clipboard).unwrap(), "short-lived");
        }
        // Dropping the owner's window released the selection.
        eventually(2, "the clipboard to be released", || {
            (clipboard_owner() == x11rb::NONE).then_some(())
        });
        let err = clipboard.read(Selection::Clipboard).unwrap_err();
        assert_eq!(err.code, Code::ClipboardUnavailable);
        assert!(err.message.contains("empty"), "{}", err.message);

        let png = [0x89u8, b'P', b'N', b'G', 0, 1, 2, 3];
        let xclip = xclip_serving(&png, "image/png");
        let err = clipboard.read(Selection::Clipboard).unwrap_err();
        assert_eq!(err.code, Code::ClipboardUnavailable);
        assert!(err.message.contains("no text"), "{}", err.message);
        drop(xclip);

        // An owner that never answers.
        let (conn, screen) = x11rb::connect(None).unwrap();
        let silent = create_window(&conn, screen, EventMask::NO_EVENT).unwrap();
        let clip = conn
            .intern_atom(false, b"CLIPBOARD")
            .unwrap()
            .reply()
            .unwrap()
            .atom;
        conn.set_selection_owner(silent, clip, CURRENT_TIME)
            .unwrap();
        conn.flush().unwrap();
        eventually(2, "the silent owner", || {
            (clipboard_owner() == silent).then_some(())
        });
        let started = Instant::now();
        let err = clipboard.read(Selection::Clipboard).unwrap_err();
        let waited = started.elapsed();
        assert_eq!(err.code, Code::ClipboardUnavailable);
        assert!(err.message.contains("did not answer"), "{}", err.message);
        assert!(
            waited >= Duration::from_millis(1900) && waited < Duration::from_secs(4),
            "{waited:?}"
        );
        drop(conn);

        // Reads still work after a timed-out one.
        clipboard
            .write(Selection::Clipboard, "after timeout")
            .unwrap();
        let mut reader = Clipboard::new().unwrap();
        assert_eq!(reader.read(Selection::Clipboard).unwrap(), "after timeout");
        assert_eq!(xclip_out(), "after timeout");
    }
}
