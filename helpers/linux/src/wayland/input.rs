//! Input through zwlr_virtual_pointer_v1 and zwp_virtual_keyboard_v1.
//!
//! The keyboard carries no layout of its own: before each burst of keys it
//! uploads an XKB keymap that holds exactly the keysyms to be sent, one per
//! keycode, so text arrives exactly as given whatever layout the user has,
//! and a character no layout has (€ on a US layout, 世) types as itself.
//!
//! KWin offers neither protocol; there each method goes through its fake
//! input instead (see kde_input.rs), which can type only what KWin's
//! active layout has.

use std::io::Write;
use std::os::fd::{AsFd, FromRawFd, OwnedFd};
use std::time::Instant;

use wayland_client::protocol::wl_pointer;

use super::kde_input;
use super::state::Wl;
use crate::error::{Code, Error, Result};

/// Linux input event codes for the buttons.
pub const BTN_LEFT: u32 = 0x110;
pub const BTN_RIGHT: u32 = 0x111;
pub const BTN_MIDDLE: u32 = 0x112;

/// The first keycode the keymap uses (XKB keycodes are evdev + 8).
const FIRST_KEY: u32 = 1;
/// Keys one keymap may hold (XKB keycodes stop at 255).
const MAX_KEYS: usize = 240;

/// Modifier masks, in the order the keymap's modifier_map gives them.
const SHIFT: u32 = 1;
const CONTROL: u32 = 4;
const MOD1: u32 = 8;
const MOD4: u32 = 64;

fn unsupported(wl: &Wl, what: &str) -> Error {
    if super::kde::is_kwin(wl) {
        return kde_input::not_authorized();
    }
    Error::new(
        Code::Unsupported,
        format!("this compositor offers no {what}, so deskhand cannot send input here"),
        "Use a wlroots compositor (sway, Hyprland, river, labwc) or run deskhand with --virtual-display.",
    )
}

/// Milliseconds since the helper started, the events' timestamps.
fn now_ms(epoch: Instant) -> u32 {
    epoch.elapsed().as_millis() as u32
}

/// The keysym of a character: Latin-1 maps to itself, everything else to
/// the Unicode keysym range; newline and tab are the keys that make them.
pub fn keysym_of(c: char) -> u32 {
    match c {
        '\n' | '\r' => 0xff0d,
        '\t' => 0xff09,
        '\u{8}' => 0xff08,
        '\u{1b}' => 0xff1b,
        c if (' '..='~').contains(&c) || ('\u{a0}'..='\u{ff}').contains(&c) => c as u32,
        c => 0x0100_0000 + c as u32,
    }
}

/// The keysym and modifier mask key_combo presses for the keysym `sym`
/// the client sent: a modifier as its left key (Meta as Alt), keypad
/// Enter as Return, F1..F24, the editing and arrow keys, or a character.
pub fn combo_key(sym: u32) -> Option<(u32, u32)> {
    Some(match sym {
        0xffe1 | 0xffe2 => (0xffe1, SHIFT),
        0xffe3 | 0xffe4 => (0xffe3, CONTROL),
        0xffe7..=0xffea => (0xffe9, MOD1),
        0xffeb | 0xffec => (0xffeb, MOD4),
        0xff0d | 0xff8d => (0xff0d, 0),
        0xff08 | 0xff09 | 0xff1b | 0xffff | 0xff63 | 0xff67 => (sym, 0),
        0xff50..=0xff57 => (sym, 0),
        0xffbe..=0xffd5 => (sym, 0),
        0x20..=0x7e | 0xa0..=0xff | 0x0100_0100..=0x0110_ffff => (sym, 0),
        _ => return None,
    })
}

/// key_combo's `"keys"`: 1 to 8 keysyms, each as [`combo_key`] presses it.
pub(crate) fn combo_keys(p: &crate::server::Params<'_>) -> Result<Vec<(u32, u32)>> {
    let Some(serde_json::Value::Array(syms)) = p.get("keys") else {
        return Err(p.bad(
            "\"keys\" is required: an array of keysyms such as [65507, 65505, 116] (ctrl+shift+t)"
                .into(),
        ));
    };
    if syms.is_empty() || syms.len() > 8 {
        return Err(p.bad("\"keys\" must hold 1 to 8 keysyms".into()));
    }
    syms.iter()
        .map(|v| {
            v.as_u64()
                .and_then(|s| u32::try_from(s).ok())
                .and_then(combo_key)
                .ok_or_else(|| {
                    p.bad(format!(
                        "keysym {v} cannot be pressed here; send a character's keysym, F1..F24, a modifier, or an editing or arrow key"
                    ))
                })
        })
        .collect()
}

/// An XKB keymap whose keycode FIRST_KEY + i + 8 types `syms[i]`, with the
/// modifier keys mapped so combos carry their modifiers.
pub fn keymap(syms: &[(u32, u32)]) -> String {
    let mut codes = String::new();
    let mut symbols = String::new();
    let mut modmap = String::new();
    for (i, (sym, mask)) in syms.iter().enumerate() {
        let code = FIRST_KEY + i as u32 + 8;
        codes.push_str(&format!("    <K{code}> = {code};\n"));
        symbols.push_str(&format!("    key <K{code}> {{ [ 0x{sym:x} ] }};\n"));
        let modifier = match *mask {
            SHIFT => Some("Shift"),
            CONTROL => Some("Control"),
            MOD1 => Some("Mod1"),
            MOD4 => Some("Mod4"),
            _ => None,
        };
        if let Some(m) = modifier {
            modmap.push_str(&format!("    modifier_map {m} {{ <K{code}> }};\n"));
        }
    }
    format!(
        "xkb_keymap {{\n\
xkb_keycodes \"deskhand\" {{\n    minimum = 8;\n    maximum = 255;\n{codes}}};\n\
xkb_types \"deskhand\" {{\n    type \"ONE_LEVEL\" {{ modifiers = none; level_name[Level1] = \"Any\"; }};\n}};\n\
xkb_compatibility \"deskhand\" {{\n    interpret Any + AnyOf(all) {{ action = SetMods(modifiers=modMapMods,clearLocks); }};\n}};\n\
xkb_symbols \"deskhand\" {{\n{symbols}{modmap}}};\n\
}};\n"
    )
}

/// Sends `text` as XKB keymap bytes (NUL-terminated) through a memfd.
fn upload(wl: &mut Wl, text: &str) -> Result<()> {
    let keyboard = wl
        .globals
        .keyboard
        .clone()
        .ok_or_else(|| unsupported(wl, "virtual keyboard (zwp_virtual_keyboard_v1)"))?;
    // SAFETY: memfd_create takes a NUL-terminated name and flags.
    let raw = unsafe { libc::memfd_create(c"deskhand-keymap".as_ptr(), libc::MFD_CLOEXEC) };
    if raw < 0 {
        return Err(Error::internal(format!(
            "memfd_create for the keymap: {}",
            std::io::Error::last_os_error()
        )));
    }
    // SAFETY: raw is a new fd nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(raw) };
    let mut file = std::fs::File::from(fd);
    let mut bytes = text.as_bytes().to_vec();
    bytes.push(0);
    file.write_all(&bytes)
        .map_err(|e| Error::internal(format!("writing the keymap: {e}")))?;
    keyboard.keymap(1, file.as_fd(), bytes.len() as u32);
    Ok(())
}

pub struct Input {
    epoch: Instant,
    /// The keysyms of the keymap uploaded last, to skip uploading it again.
    loaded: Vec<(u32, u32)>,
    /// The buttons the virtual pointer holds, released at exit.
    buttons: Vec<u32>,
    /// What KWin's fake input holds.
    kde: kde_input::Held,
}

impl Default for Input {
    fn default() -> Self {
        Input {
            epoch: Instant::now(),
            loaded: Vec::new(),
            buttons: Vec::new(),
            kde: kde_input::Held::default(),
        }
    }
}

impl Input {
    /// Releases every button and key still held (the helper is exiting).
    pub fn release_all(&mut self, wl: &mut Wl) {
        if let Some(fake) = kde_input::device(wl) {
            self.kde.release_all(wl, &fake);
        }
        for b in std::mem::take(&mut self.buttons) {
            let _ = self.button(wl, b, false);
        }
    }

    /// The pointer moves to (x, y) of the compositor's layout.
    pub fn move_to(&mut self, wl: &mut Wl, x: i32, y: i32, extent: (u32, u32)) -> Result<()> {
        if let Some(fake) = kde_input::device(wl) {
            return self.kde.move_to(wl, &fake, x, y);
        }
        let p = wl
            .globals
            .pointer
            .clone()
            .ok_or_else(|| unsupported(wl, "virtual pointer (zwlr_virtual_pointer_v1)"))?;
        let (w, h) = extent;
        p.motion_absolute(
            now_ms(self.epoch),
            x.clamp(0, w as i32 - 1) as u32,
            y.clamp(0, h as i32 - 1) as u32,
            w,
            h,
        );
        p.frame();
        wl.roundtrip()
    }

    pub fn button(&mut self, wl: &mut Wl, button: u32, press: bool) -> Result<()> {
        if let Some(fake) = kde_input::device(wl) {
            return self.kde.button(wl, &fake, button, press);
        }
        let p = wl
            .globals
            .pointer
            .clone()
            .ok_or_else(|| unsupported(wl, "virtual pointer (zwlr_virtual_pointer_v1)"))?;
        let state = if press {
            wl_pointer::ButtonState::Pressed
        } else {
            wl_pointer::ButtonState::Released
        };
        p.button(now_ms(self.epoch), button, state);
        self.buttons.retain(|b| *b != button);
        if press {
            self.buttons.push(button);
        }
        p.frame();
        wl.roundtrip()
    }

    /// Scrolls by whole wheel clicks: positive dy is down, positive dx right.
    pub fn scroll(&mut self, wl: &mut Wl, dx: i32, dy: i32) -> Result<()> {
        if let Some(fake) = kde_input::device(wl) {
            return self.kde.scroll(wl, &fake, dx, dy);
        }
        let p = wl
            .globals
            .pointer
            .clone()
            .ok_or_else(|| unsupported(wl, "virtual pointer (zwlr_virtual_pointer_v1)"))?;
        for (axis, clicks) in [
            (wl_pointer::Axis::VerticalScroll, dy),
            (wl_pointer::Axis::HorizontalScroll, dx),
        ] {
            for _ in 0..clicks.unsigned_abs() {
                let t = now_ms(self.epoch);
                let sign = clicks.signum();
                p.axis_source(wl_pointer::AxisSource::Wheel);
                p.axis_discrete(t, axis, 15.0 * sign as f64, sign);
                p.frame();
            }
        }
        wl.roundtrip()
    }

    /// Makes sure the keymap holds `syms`, uploading a new one if not.
    fn load(&mut self, wl: &mut Wl, syms: &[(u32, u32)]) -> Result<()> {
        if self.loaded == syms {
            return Ok(());
        }
        upload(wl, &keymap(syms))?;
        self.loaded = syms.to_vec();
        Ok(())
    }

    fn key(&mut self, wl: &mut Wl, index: usize, press: bool) -> Result<()> {
        let keyboard = wl
            .globals
            .keyboard
            .clone()
            .ok_or_else(|| unsupported(wl, "virtual keyboard (zwp_virtual_keyboard_v1)"))?;
        keyboard.key(now_ms(self.epoch), FIRST_KEY + index as u32, press as u32);
        Ok(())
    }

    fn modifiers(&mut self, wl: &mut Wl, depressed: u32) -> Result<()> {
        let keyboard = wl
            .globals
            .keyboard
            .clone()
            .ok_or_else(|| unsupported(wl, "virtual keyboard (zwp_virtual_keyboard_v1)"))?;
        keyboard.modifiers(depressed, 0, 0, 0);
        Ok(())
    }

    /// Types `text` exactly: each character is pressed and released on a key
    /// the keymap maps to that character's keysym alone.
    pub fn type_text(&mut self, wl: &mut Wl, text: &str) -> Result<()> {
        if let Some(fake) = kde_input::device(wl) {
            return self.kde.type_text(wl, &fake, text);
        }
        let chars: Vec<char> = text.chars().collect();
        let mut start = 0;
        while start < chars.len() {
            // The longest run whose distinct characters fit one keymap.
            let mut syms: Vec<(u32, u32)> = Vec::new();
            let mut end = start;
            while end < chars.len() {
                let s = (keysym_of(chars[end]), 0);
                if !syms.contains(&s) {
                    if syms.len() == MAX_KEYS {
                        break;
                    }
                    syms.push(s);
                }
                end += 1;
            }
            syms.sort_unstable();
            self.load(wl, &syms)?;
            self.modifiers(wl, 0)?;
            for c in &chars[start..end] {
                let s = (keysym_of(*c), 0);
                let i = syms.binary_search(&s).expect("in the keymap");
                self.key(wl, i, true)?;
                self.key(wl, i, false)?;
            }
            // The compositor must have taken this burst before the next
            // keymap replaces the one it refers to.
            wl.roundtrip()?;
            start = end;
        }
        Ok(())
    }

    /// Presses `keys` in order (modifiers first, as given), then releases
    /// them in reverse.
    pub fn combo(&mut self, wl: &mut Wl, keys: &[(u32, u32)]) -> Result<()> {
        if let Some(fake) = kde_input::device(wl) {
            return self.kde.combo(wl, &fake, keys);
        }
        let mut syms: Vec<(u32, u32)> = keys.to_vec();
        syms.sort_unstable();
        syms.dedup();
        self.load(wl, &syms)?;
        let index = |k: &(u32, u32)| syms.binary_search(k).expect("in the keymap");
        let mut mods = 0;
        self.modifiers(wl, 0)?;
        for k in keys {
            self.key(wl, index(k), true)?;
            if k.1 != 0 {
                mods |= k.1;
                self.modifiers(wl, mods)?;
            }
        }
        for k in keys.iter().rev() {
            self.key(wl, index(k), false)?;
            if k.1 != 0 {
                mods &= !k.1;
                self.modifiers(wl, mods)?;
            }
        }
        wl.roundtrip()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keysyms() {
        assert_eq!(keysym_of('a'), 0x61);
        assert_eq!(keysym_of('ü'), 0xfc);
        assert_eq!(keysym_of('€'), 0x0100_20ac);
        assert_eq!(keysym_of('世'), 0x0100_4e16);
        assert_eq!(keysym_of('\n'), 0xff0d);
        assert_eq!(combo_key(0xffe4), Some((0xffe3, CONTROL)));
        assert_eq!(combo_key(0xffe7), Some((0xffe9, MOD1)));
        assert_eq!(combo_key(0xffc2), Some((0xffc2, 0)));
        assert_eq!(combo_key(0x74), Some((0x74, 0)));
        assert_eq!(combo_key(0xff7f), None, "Num_Lock");
        assert_eq!(combo_key(0xff58), None, "Begin");
    }

    #[test]
    fn keymap_holds_each_keysym_once() {
        let km = keymap(&[(0x61, 0), (0xffe3, CONTROL)]);
        assert!(km.contains("key <K9> { [ 0x61 ] };"));
        assert!(km.contains("key <K10> { [ 0xffe3 ] };"));
        assert!(km.contains("modifier_map Control { <K10> };"));
    }
}
