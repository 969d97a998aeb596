//! Input on KWin through `org_kde_kwin_fake_input` (v4), which KWin offers
//! instead of the wlroots virtual pointer and keyboard, and only to a
//! client its desktop entry authorizes (see kde.rs, `AUTHORIZATION`).
//!
//! Fake input carries no keymap: `keyboard_key` sends an evdev code that
//! KWin runs through ITS active layout. So a character is typed by finding,
//! in the compositor's keymap (wl_keyboard.keymap), the key and the
//! modifier keys (Shift, AltGr, ...) whose press makes that keysym, the
//! way KWin's own XKB state will read them. A character the active layout
//! cannot make is refused before anything is typed: sending some other key
//! would type a wrong character. Caps Lock and Num Lock, which change what a
//! key makes, come from `org_kde_kwin_keystate` when KWin grants it.
//!
//! Pointer motion is absolute in the compositor's layout coordinates;
//! KWin turns each `axis` request into one scroll event of that many
//! units, and a wheel click is 15 of them (libinput's degrees).

use std::os::fd::{AsRawFd, OwnedFd};

use wayland_client::protocol::wl_keyboard;
use wayland_client::{Connection, Dispatch, Proxy, QueueHandle, WEnum};
use wayland_protocols_plasma::fake_input::client::org_kde_kwin_fake_input::OrgKdeKwinFakeInput;
use wayland_protocols_plasma::keystate::client::org_kde_kwin_keystate::{self, OrgKdeKwinKeystate};
use xkbcommon::xkb;

use super::state::{State, Wl};
use crate::error::{Code, Error, Result};

/// Units of one `axis` request KWin makes of a wheel click.
const WHEEL_CLICK: f64 = 15.0;
/// wl_pointer's axis numbers, which fake_input's `axis` takes.
const AXIS_VERTICAL: u32 = 0;
const AXIS_HORIZONTAL: u32 = 1;
/// XKB keycodes are evdev codes + 8.
const EVDEV_OFFSET: u32 = 8;
/// Keystrokes sent before waiting for KWin to take them.
const STROKES_PER_BURST: usize = 128;
/// The largest keymap text read from the compositor.
const MAX_KEYMAP_BYTES: u32 = 4 << 20;

/// Keysyms of the keys that pick a level, tried alone and together.
const LEVEL_KEYS: &[u32] = &[
    0xffe1, // Shift_L
    0xfe03, // ISO_Level3_Shift (AltGr)
    0xfe11, // ISO_Level5_Shift
];

/// Why input is missing on a KWin, for the handshake's `missing`: fake
/// input not granted, or (with it) no keyboard seat to read the keymap of.
pub fn missing(keyboard: bool, fake: bool) -> &'static str {
    if fake {
        "wl_keyboard (keyboard input): this KWin session has no keyboard seat, so deskhand cannot read the keymap typing needs"
    } else if keyboard {
        "org_kde_kwin_fake_input (keyboard input): KWin offers it only to a program a desktop entry authorizes; add ~/.local/share/applications/deskhand-helper.desktop with Exec=<the helper's full path> and X-KDE-Wayland-Interfaces=org_kde_kwin_fake_input,org_kde_kwin_keystate,org_kde_plasma_window_management,zkde_screencast_unstable_v1"
    } else {
        "org_kde_kwin_fake_input (mouse input): KWin offers it only to a program a desktop entry authorizes (see keyboard input)"
    }
}

pub fn not_authorized() -> Error {
    Error::new(
        Code::Unsupported,
        "KWin has not granted deskhand its fake input, so deskhand cannot send input here",
        format!("Authorize the helper with a desktop entry: ~/.local/share/applications/deskhand-helper.desktop with Exec=<the helper's full path> and {}; then restart deskhand (deskhand doctor prints the entry).", super::kde::AUTHORIZATION),
    )
}

/// The KWin globals input uses.
#[derive(Default)]
pub struct Bound {
    pub fake: Option<OrgKdeKwinFakeInput>,
    /// For the compositor's keymap only: deskhand has no surface, so it
    /// never has focus and gets no keys through it.
    pub keyboard: Option<wl_keyboard::WlKeyboard>,
    /// Caps Lock and Num Lock, when the desktop entry also grants
    /// org_kde_kwin_keystate.
    pub keystate: Option<OrgKdeKwinKeystate>,
}

/// What KWin told deskhand about its keyboard.
#[derive(Default)]
pub struct Seen {
    /// The XKB keymap text KWin sent last.
    pub keymap: Option<String>,
    pub caps_locked: bool,
    pub num_locked: bool,
}

/// The fake-input device, when KWin gave it to this client.
pub fn device(wl: &Wl) -> Option<OrgKdeKwinFakeInput> {
    wl.globals.kde_input.fake.clone()
}

/// Binds fake_input and, with it, a wl_keyboard for the compositor's
/// keymap and the lock keys' state. KWin ignores every fake-input request
/// before `authenticate`.
pub fn bind(
    globals: &wayland_client::globals::GlobalList,
    qh: &QueueHandle<State>,
    seat: Option<&wayland_client::protocol::wl_seat::WlSeat>,
) -> Bound {
    let Ok(fake) = globals.bind::<OrgKdeKwinFakeInput, _, _>(qh, 1..=4, ()) else {
        return Bound::default();
    };
    fake.authenticate(
        "deskhand".to_owned(),
        "a computer-use agent moves the pointer and types for the user".to_owned(),
    );
    let keystate: Option<OrgKdeKwinKeystate> = globals.bind(qh, 1..=1, ()).ok();
    if let Some(k) = &keystate {
        k.fetchStates();
    }
    Bound {
        fake: Some(fake),
        keyboard: seat.map(|s| s.get_keyboard(qh, ())),
        keystate,
    }
}

fn too_old(what: &str, since: u32, fake: &OrgKdeKwinFakeInput) -> Error {
    Error::new(
        Code::Unsupported,
        format!(
            "this KWin's org_kde_kwin_fake_input is version {}; {what} needs version {since}",
            fake.version()
        ),
        "Update KDE Plasma (5.27 is tested).",
    )
}

/// What fake input holds down now, so an error or the helper's exit
/// releases it.
#[derive(Default)]
pub struct Held {
    buttons: Vec<u32>,
    /// evdev codes, in press order.
    keys: Vec<u32>,
}

impl Held {
    pub fn move_to(
        &mut self,
        wl: &mut Wl,
        fake: &OrgKdeKwinFakeInput,
        x: i32,
        y: i32,
    ) -> Result<()> {
        if fake.version() < 3 {
            return Err(too_old("absolute pointer motion", 3, fake));
        }
        fake.pointer_motion_absolute(x as f64, y as f64);
        wl.roundtrip()
    }

    pub fn button(
        &mut self,
        wl: &mut Wl,
        fake: &OrgKdeKwinFakeInput,
        button: u32,
        press: bool,
    ) -> Result<()> {
        fake.button(button, press as u32);
        if press {
            if !self.buttons.contains(&button) {
                self.buttons.push(button);
            }
        } else {
            self.buttons.retain(|b| *b != button);
        }
        wl.roundtrip()
    }

    /// One scroll click per wheel click: positive dy is down, dx right.
    pub fn scroll(
        &mut self,
        wl: &mut Wl,
        fake: &OrgKdeKwinFakeInput,
        dx: i32,
        dy: i32,
    ) -> Result<()> {
        for (axis, clicks) in [(AXIS_VERTICAL, dy), (AXIS_HORIZONTAL, dx)] {
            for _ in 0..clicks.unsigned_abs() {
                fake.axis(axis, WHEEL_CLICK * clicks.signum() as f64);
            }
        }
        wl.roundtrip()
    }

    fn key(&mut self, fake: &OrgKdeKwinFakeInput, code: u32, press: bool) {
        fake.keyboard_key(code, press as u32);
        if press {
            self.keys.push(code);
        } else if let Some(i) = self.keys.iter().rposition(|k| *k == code) {
            self.keys.remove(i);
        }
    }

    /// Types `text` exactly on KWin's active layout, or types nothing and
    /// names the characters that layout cannot make.
    pub fn type_text(&mut self, wl: &mut Wl, fake: &OrgKdeKwinFakeInput, text: &str) -> Result<()> {
        if fake.version() < 4 {
            return Err(too_old("typing", 4, fake));
        }
        let layout = Layout::of(wl)?;
        let strokes = layout.plan(text)?;
        // A long text goes in bursts, each taken by KWin before the next, so
        // the requests never pile up in the socket.
        for burst in strokes.chunks(STROKES_PER_BURST) {
            for s in burst {
                for m in &s.mods {
                    self.key(fake, *m, true);
                }
                self.key(fake, s.key, true);
                self.key(fake, s.key, false);
                for m in s.mods.iter().rev() {
                    self.key(fake, *m, false);
                }
            }
            self.finish(wl, fake)?;
        }
        Ok(())
    }

    /// Presses `keys` (keysym, modifier mask) in order, then releases them
    /// in reverse. A key its layout makes only on a higher level brings
    /// that level's modifiers along (ctrl + "@" is ctrl + AltGr + q on de).
    pub fn combo(
        &mut self,
        wl: &mut Wl,
        fake: &OrgKdeKwinFakeInput,
        keys: &[(u32, u32)],
    ) -> Result<()> {
        if fake.version() < 4 {
            return Err(too_old("key combos", 4, fake));
        }
        let mut layout = Layout::of(wl)?;
        // Shortcuts go by the key, not by what a lock makes of it: ctrl+a
        // under Caps Lock stays ctrl+a, never ctrl+shift+a.
        layout.locks = (false, false);
        let mut codes = Vec::new();
        let mut missing = Vec::new();
        for (sym, _) in keys {
            match layout.stroke(*sym) {
                Some(s) => {
                    for m in s.mods {
                        if !codes.contains(&m) {
                            codes.push(m);
                        }
                    }
                    codes.push(s.key);
                }
                None => missing.push(xkb::keysym_get_name((*sym).into())),
            }
        }
        if !missing.is_empty() {
            return Err(Error::new(
                Code::Unsupported,
                format!(
                    "KWin's active keyboard layout ({}) has no key for {}; deskhand pressed nothing",
                    layout.name,
                    missing.join(", ")
                ),
                "Use keys the layout has, or add a layout that has them in the system settings.",
            ));
        }
        for c in &codes {
            self.key(fake, *c, true);
        }
        for c in codes.iter().rev() {
            self.key(fake, *c, false);
        }
        self.finish(wl, fake)
    }

    /// Waits until KWin took the keys; on a failure releases what is held.
    fn finish(&mut self, wl: &mut Wl, fake: &OrgKdeKwinFakeInput) -> Result<()> {
        let done = wl.roundtrip();
        if done.is_err() {
            self.release_all(wl, fake);
        }
        done
    }

    /// Releases every key and button still down (after an error, and when
    /// the helper exits), so nothing stays held in the user's session.
    pub fn release_all(&mut self, wl: &mut Wl, fake: &OrgKdeKwinFakeInput) {
        if self.keys.is_empty() && self.buttons.is_empty() {
            return;
        }
        for k in std::mem::take(&mut self.keys).into_iter().rev() {
            fake.keyboard_key(k, 0);
        }
        for b in std::mem::take(&mut self.buttons) {
            fake.button(b, 0);
        }
        let _ = wl.roundtrip();
    }
}

/// One character's keystroke: the modifier keys held around one key, as
/// evdev codes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stroke {
    pub mods: Vec<u32>,
    pub key: u32,
}

/// The compositor's keymap, asked which keys make which keysyms.
pub struct Layout {
    keymap: xkb::Keymap,
    /// The active layout's name, for errors ("German", "English (US)").
    pub name: String,
    /// The layout (XKB group) typed on.
    group: u32,
    /// Whether Caps Lock and Num Lock are locked in KWin: they change the
    /// level a key types (Caps Lock makes "a" type "A").
    locks: (bool, bool),
    /// Modifier-key sets to try, fewest keys first (XKB keycodes).
    level_sets: Vec<Vec<xkb::Keycode>>,
}

impl Layout {
    /// The layout of the keymap KWin sent this client last.
    pub fn of(wl: &mut Wl) -> Result<Layout> {
        // A roundtrip first: a keymap KWin sent since (the user changed
        // layouts) is then the one used.
        wl.roundtrip()?;
        let seen = &wl.state.kde_input;
        let locks = (seen.caps_locked, seen.num_locked);
        let text = seen.keymap.clone().ok_or_else(|| {
            Error::new(
                Code::Unsupported,
                "KWin has not sent deskhand its keymap, so deskhand cannot tell which keys type which characters",
                "Check that the session has a keyboard seat; restart the helper.",
            )
        })?;
        let mut layout = Layout::from_text(&text)?;
        layout.locks = locks;
        if layout.keymap.num_layouts() > 1 {
            layout.set_group(active_layout()?);
        }
        Ok(layout)
    }

    pub fn from_text(text: &str) -> Result<Layout> {
        let context = xkb::Context::new(xkb::CONTEXT_NO_FLAGS);
        let keymap = xkb::Keymap::new_from_string(
            &context,
            text.to_owned(),
            xkb::KEYMAP_FORMAT_TEXT_V1,
            xkb::KEYMAP_COMPILE_NO_FLAGS,
        )
        .ok_or_else(|| Error::internal("the compositor's keymap does not compile"))?;
        Ok(Layout::new(keymap))
    }

    fn new(keymap: xkb::Keymap) -> Layout {
        let mut layout = Layout {
            keymap,
            name: String::new(),
            group: 0,
            locks: (false, false),
            level_sets: Vec::new(),
        };
        layout.set_group(0);
        layout
    }

    /// Makes `group` (a layout of the keymap, 0 the first) the one typed
    /// on: the one KWin's keyboard is switched to.
    fn set_group(&mut self, group: u32) {
        let keymap = &self.keymap;
        let name = keymap.layout_get_name(group).to_owned();
        let level_keys: Vec<xkb::Keycode> = LEVEL_KEYS
            .iter()
            .filter_map(|sym| level_zero_key(keymap, group, *sym))
            .collect();
        let mut level_sets: Vec<Vec<xkb::Keycode>> = (0..1u32 << level_keys.len())
            .map(|bits| {
                level_keys
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| bits & (1 << i) != 0)
                    .map(|(_, k)| *k)
                    .collect()
            })
            .collect();
        level_sets.sort_by_key(|s: &Vec<xkb::Keycode>| s.len());
        self.name = name;
        self.group = group;
        self.level_sets = level_sets;
    }

    /// The XKB modifier mask of the locked lock keys.
    fn locked_mods(&self) -> u32 {
        let mut mask = 0;
        for (locked, name) in [
            (self.locks.0, xkb::MOD_NAME_CAPS),
            (self.locks.1, xkb::MOD_NAME_NUM),
        ] {
            let i = self.keymap.mod_get_index(name);
            if locked && i != xkb::MOD_INVALID {
                mask |= 1 << i;
            }
        }
        mask
    }

    /// The keystroke that makes `sym`: the fewest modifier keys, then the
    /// lowest keycode. Each candidate is checked the way KWin's XKB state
    /// will see it, by pressing the modifiers in a fresh state.
    pub fn stroke(&self, sym: u32) -> Option<Stroke> {
        let unicode = xkb::keysym_to_utf32(xkb::Keysym::new(sym));
        let legacy = match char::from_u32(unicode) {
            Some(c) if unicode != 0 => xkb::utf32_to_keysym(c as u32).raw(),
            _ => sym,
        };
        self.stroke_of(&[sym, legacy])
    }

    /// The keystroke of a character: its keysym may be the legacy one
    /// (EuroSign 0x20ac) or the Unicode one (0x10020ac), and layouts use
    /// either.
    pub fn char_stroke(&self, c: char) -> Option<Stroke> {
        let legacy = xkb::utf32_to_keysym(c as u32).raw();
        self.stroke_of(&[super::input::keysym_of(c), legacy])
    }

    fn stroke_of(&self, syms: &[u32]) -> Option<Stroke> {
        let (min, max) = (
            self.keymap.min_keycode().raw(),
            self.keymap.max_keycode().raw(),
        );
        for set in &self.level_sets {
            let mut state = xkb::State::new(&self.keymap);
            state.update_mask(0, 0, self.locked_mods(), 0, 0, self.group);
            for k in set {
                state.update_key(*k, xkb::KeyDirection::Down);
            }
            for raw in min.max(EVDEV_OFFSET)..=max {
                let key = xkb::Keycode::new(raw);
                if set.contains(&key) {
                    continue;
                }
                if let [got] = state.key_get_syms(key) {
                    if !syms.contains(&got.raw()) {
                        continue;
                    }
                    return Some(Stroke {
                        mods: set.iter().map(|k| k.raw() - EVDEV_OFFSET).collect(),
                        key: raw - EVDEV_OFFSET,
                    });
                }
            }
        }
        None
    }

    /// The keystrokes of `text`, or an error naming every character this
    /// layout cannot make.
    pub fn plan(&self, text: &str) -> Result<Vec<Stroke>> {
        let mut strokes = Vec::new();
        let mut missing: Vec<char> = Vec::new();
        for c in text.chars() {
            match self.char_stroke(c) {
                Some(s) => strokes.push(s),
                None if !missing.contains(&c) => missing.push(c),
                None => {}
            }
        }
        if missing.is_empty() {
            return Ok(strokes);
        }
        let named: Vec<String> = missing
            .iter()
            .map(|c| format!("{c:?} (U+{:04X})", *c as u32))
            .collect();
        Err(Error::new(
            Code::Unsupported,
            format!(
                "KWin's active keyboard layout ({}) has no key for {}; fake input can only press the layout's keys, so deskhand typed nothing",
                self.name,
                named.join(", ")
            ),
            "Type the text without those characters, or paste it: clipboard_write the text, then key_combo ctrl+v. Adding a layout that has them (System Settings, Keyboard) also works.",
        ))
    }
}

/// The key whose first level in `group` is `sym`, lowest keycode first.
fn level_zero_key(keymap: &xkb::Keymap, group: u32, sym: u32) -> Option<xkb::Keycode> {
    let (min, max) = (keymap.min_keycode().raw(), keymap.max_keycode().raw());
    (min..=max).map(xkb::Keycode::new).find(|k| {
        // A key with fewer layouts than the keymap repeats its first one.
        let layouts = keymap.num_layouts_for_key(*k);
        layouts > 0
            && keymap.key_get_syms_by_level(*k, group.min(layouts - 1), 0)
                == [xkb::Keysym::new(sym)]
    })
}

/// How long KWin gets to say which layout is active.
const LAYOUT_CALL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The index of KWin's active layout, from its keyboard service on the
/// session bus (org.kde.keyboard, which KWin runs when it has more than one
/// layout): the keymap lists every layout, and wl_keyboard.modifiers, which
/// names the active one, comes only to a client with keyboard focus, which
/// deskhand never has.
fn active_layout() -> Result<u32> {
    let asked = async_io::block_on(crate::a11y::bus::with_timeout(LAYOUT_CALL_TIMEOUT, async {
        let conn = zbus::connection::Builder::session()?.build().await?;
        let reply = conn
            .call_method(
                Some("org.kde.keyboard"),
                "/Layouts",
                Some("org.kde.KeyboardLayouts"),
                "getLayout",
                &(),
            )
            .await?;
        reply.body().deserialize::<u32>()
    }));
    asked.map_err(|e| {
        Error::new(
            Code::Unsupported,
            format!("KWin has several keyboard layouts and deskhand cannot ask which one is active ({e}), so it cannot tell which keys type which characters"),
            "Run deskhand in the Plasma session (its DBUS_SESSION_BUS_ADDRESS), or keep one keyboard layout.",
        )
    })
}

/// Reads a keymap fd (XKB text, NUL-terminated) as the protocol hands it.
fn read_keymap(fd: &OwnedFd, size: u32) -> Option<String> {
    if size == 0 || size > MAX_KEYMAP_BYTES {
        return None;
    }
    // SAFETY: a private read-only map of `size` bytes of an fd we hold;
    // wl_keyboard requires MAP_PRIVATE, and the map is unmapped below.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            size as usize,
            libc::PROT_READ,
            libc::MAP_PRIVATE,
            fd.as_raw_fd(),
            0,
        )
    };
    if ptr == libc::MAP_FAILED {
        return None;
    }
    // SAFETY: the map is `size` bytes long and stays mapped while read.
    let bytes = unsafe { std::slice::from_raw_parts(ptr as *const u8, size as usize) };
    let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
    let text = String::from_utf8_lossy(&bytes[..end]).into_owned();
    // SAFETY: ptr and size are those mmap returned.
    unsafe { libc::munmap(ptr, size as usize) };
    Some(text)
}

impl Dispatch<wl_keyboard::WlKeyboard, ()> for State {
    fn event(
        state: &mut Self,
        _: &wl_keyboard::WlKeyboard,
        event: wl_keyboard::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        // KWin sends a new keymap when the layouts change; the last one is
        // the one typing must use.
        if let wl_keyboard::Event::Keymap {
            format: WEnum::Value(wl_keyboard::KeymapFormat::XkbV1),
            fd,
            size,
        } = event
        {
            match read_keymap(&fd, size) {
                Some(text) => state.kde_input.keymap = Some(text),
                None => log_warn!("could not read the compositor's keymap ({size} bytes)"),
            }
        }
    }
}

impl Dispatch<OrgKdeKwinKeystate, ()> for State {
    fn event(
        state: &mut Self,
        _: &OrgKdeKwinKeystate,
        event: org_kde_kwin_keystate::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
        use org_kde_kwin_keystate::{Key, State as Lock};
        // The protocol types key and state as plain uints.
        if let org_kde_kwin_keystate::Event::StateChanged { key, state: lock } = event {
            let locked = lock == Lock::Locked as u32;
            if key == Key::Capslock as u32 {
                state.kde_input.caps_locked = locked;
            } else if key == Key::Numlock as u32 {
                state.kde_input.num_locked = locked;
            }
        }
    }
}

impl Dispatch<OrgKdeKwinFakeInput, ()> for State {
    fn event(
        _: &mut Self,
        _: &OrgKdeKwinFakeInput,
        _: <OrgKdeKwinFakeInput as Proxy>::Event,
        _: &(),
        _: &Connection,
        _: &QueueHandle<Self>,
    ) {
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(name: &str) -> Layout {
        let context = xkb::Context::new(xkb::CONTEXT_NO_FLAGS);
        let keymap = xkb::Keymap::new_from_names(
            &context,
            "evdev",
            "pc105",
            name,
            "",
            None,
            xkb::KEYMAP_COMPILE_NO_FLAGS,
        )
        .expect("xkeyboard-config has the layout");
        Layout::new(keymap)
    }

    // evdev codes: KEY_Q 16, KEY_Y 21, KEY_Z 44, KEY_2 3, KEY_9 10,
    // KEY_LEFTSHIFT 42, KEY_LEFTCTRL 29, KEY_ENTER 28; AltGr may be
    // KEY_RIGHTALT (100) or the keymap's own level-3 key (84, <LVL3>), both
    // ISO_Level3_Shift.
    #[test]
    fn de_keys_are_found_with_their_level_keys() {
        let de = layout("de");
        let s = |c| de.char_stroke(c);
        assert_eq!(
            s('z'),
            Some(Stroke {
                mods: vec![],
                key: 21
            })
        );
        assert_eq!(
            s('y'),
            Some(Stroke {
                mods: vec![],
                key: 44
            })
        );
        assert_eq!(
            s('Z'),
            Some(Stroke {
                mods: vec![42],
                key: 21
            })
        );
        let at = s('@').expect("de has @");
        assert!(
            at.key == 16 && (at.mods == [84] || at.mods == [100]),
            "@ is {at:?}"
        );
        for c in ['ü', 'ß', '\\', '|', '~', '€'] {
            assert!(s(c).is_some(), "de has no key for {c:?}");
        }
    }

    #[test]
    fn us_keys() {
        let us = layout("us");
        let s = |c| us.char_stroke(c);
        assert_eq!(
            s('@'),
            Some(Stroke {
                mods: vec![42],
                key: 3
            })
        );
        assert_eq!(
            s('z'),
            Some(Stroke {
                mods: vec![],
                key: 44
            })
        );
        assert_eq!(
            s('\n'),
            Some(Stroke {
                mods: vec![],
                key: 28
            })
        );
        // Not a keypad key, which some apps read as a command.
        assert_eq!(
            s('*'),
            Some(Stroke {
                mods: vec![42],
                key: 9
            })
        );
        assert_eq!(
            us.stroke(0xffe3),
            Some(Stroke {
                mods: vec![],
                key: 29
            })
        );
    }

    #[test]
    fn the_active_layout_of_several_is_typed_on() {
        let mut both = layout("us,de");
        assert_eq!(
            both.char_stroke('z'),
            Some(Stroke {
                mods: vec![],
                key: 44
            })
        );
        assert!(both.char_stroke('ü').is_none());
        both.set_group(1);
        assert_eq!(both.name, "German");
        assert_eq!(
            both.char_stroke('z'),
            Some(Stroke {
                mods: vec![],
                key: 21
            })
        );
        assert!(both.char_stroke('ü').is_some());
    }

    #[test]
    fn a_locked_caps_lock_is_typed_around() {
        let mut us = layout("us");
        us.locks = (true, false);
        assert_eq!(
            us.char_stroke('a'),
            Some(Stroke {
                mods: vec![42],
                key: 30
            })
        );
        assert_eq!(
            us.char_stroke('A'),
            Some(Stroke {
                mods: vec![],
                key: 30
            })
        );
        assert_eq!(
            us.char_stroke('1'),
            Some(Stroke {
                mods: vec![],
                key: 2
            })
        );
    }

    #[test]
    fn a_layout_refuses_what_it_cannot_type_and_names_it() {
        let err = layout("us").plan("Grüße, 世界!").unwrap_err();
        for c in ["'ü'", "'ß'", "'世'", "'界'"] {
            assert!(err.message.contains(c), "{} lacks {c}", err.message);
        }
        assert!(
            !err.message.contains("'G'") && !err.message.contains("'!'"),
            "{}",
            err.message
        );
        let err = layout("de").plan("Grüße, 世界! yz ~|\\ @€").unwrap_err();
        assert!(
            err.message.contains("'世'") && err.message.contains("'界'"),
            "{}",
            err.message
        );
        assert!(
            !err.message.contains("'ü'") && !err.message.contains("'~'"),
            "{}",
            err.message
        );
        let typable = "Grüße, yz ~|\\ @€";
        assert_eq!(
            layout("de").plan(typable).map(|p| p.len()).ok(),
            Some(typable.chars().count())
        );
    }
}
