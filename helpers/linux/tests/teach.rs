//! The teaching overlay on a live X server ($DISPLAY, as `make rust-test`
//! gives): the tooltip is on the screen, as an independent GetImage of the
//! root window shows, but in no capture the helper returns; it stays on
//! top; and only a trusted device's click or Escape makes a choice.
//!
//! Xvfb has no input hardware, so the "user" is a second master device
//! (`teach-user`, made with `xinput create-master`) driven through XTEST
//! from a connection whose client pointer is that master: the server then
//! reports its events with the master's own XTEST slave as their source,
//! and the helper is told to trust that slave by name
//! (DESKHAND_TEACH_TRUSTED_DEVICES, test-only). deskhand's input, like
//! xdotool's, comes from the core pointer's XTEST slave. So these tests
//! prove the helper decides by the XI2 source device, and ignores the one
//! deskhand injects through; they cannot prove a physical mouse works.

mod common;

use std::process::Command;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::{have_display, Helper};
use serde_json::{json, Value};
use x11rb::connection::Connection;
use x11rb::protocol::xinput::{self, ConnectionExt as _};
use x11rb::protocol::xproto::{
    ConnectionExt as _, CreateGCAux, CreateWindowAux, ImageFormat, Rectangle, WindowClass,
};
use x11rb::protocol::xtest::ConnectionExt as _;
use x11rb::rust_connection::RustConnection;

/// The tooltip's fill (teach::overlay::BACKGROUND).
const TOOLTIP: [u8; 3] = [0xFF, 0xF1, 0xB8];
/// A colour nothing else on the test desktop uses, for the window under
/// the tooltip.
const UNDER: [u8; 3] = [0x13, 0x8A, 0x3C];
const USER: &str = "teach-user";
const DEADLINE: Duration = Duration::from_secs(30);

static SCREEN: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SCREEN.lock().unwrap_or_else(|p| p.into_inner())
}

fn trusted_env() -> String {
    format!("{USER} XTEST pointer,{USER} XTEST keyboard")
}

fn rect(v: &Value) -> (i32, i32, u32, u32) {
    (
        v["x"].as_i64().unwrap() as i32,
        v["y"].as_i64().unwrap() as i32,
        v["width"].as_u64().unwrap() as u32,
        v["height"].as_u64().unwrap() as u32,
    )
}

fn connect() -> (RustConnection, u32) {
    let (conn, n) = x11rb::connect(None).expect("connecting to $DISPLAY");
    let root = conn.setup().roots[n].root;
    (conn, root)
}

/// Counts the pixels of exactly `rgb` in `area` of the root window, read
/// with a plain GetImage on a connection of our own.
fn count_on_screen(
    conn: &RustConnection,
    root: u32,
    area: (i32, i32, u32, u32),
    rgb: [u8; 3],
) -> usize {
    let img = conn
        .get_image(
            ImageFormat::Z_PIXMAP,
            root,
            area.0 as i16,
            area.1 as i16,
            area.2 as u16,
            area.3 as u16,
            !0,
        )
        .unwrap()
        .reply()
        .unwrap();
    // Depth 24, 32 bits per pixel, LSB first: BGRX.
    img.data
        .chunks_exact(4)
        .filter(|p| [p[2], p[1], p[0]] == rgb)
        .count()
}

/// Counts the pixels of exactly `rgb` in a PNG capture's `area` (in the
/// capture's own pixels).
fn count_in_png(result: &Value, area: (i32, i32, u32, u32), rgb: [u8; 3]) -> usize {
    let data = base64::engine::general_purpose::STANDARD
        .decode(result["data"].as_str().unwrap())
        .unwrap();
    let mut reader = png::Decoder::new(&data[..]).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    let (w, h) = (info.width as i32, info.height as i32);
    let mut n = 0;
    for y in area.1.max(0)..(area.1 + area.3 as i32).min(h) {
        for x in area.0.max(0)..(area.0 + area.2 as i32).min(w) {
            let i = ((y * w + x) * 3) as usize;
            if buf[i..i + 3] == rgb {
                n += 1;
            }
        }
    }
    n
}

/// An override-redirect window filled with `rgb` once, mapped and drawn.
/// It has no background and never repaints, like an app that cannot
/// answer Expose while a capture holds the server: whatever pixels of it
/// the server loses stay lost.
fn solid_window(conn: &RustConnection, root: u32, area: (i32, i32, u32, u32), rgb: [u8; 3]) -> u32 {
    let pixel = (rgb[0] as u32) << 16 | (rgb[1] as u32) << 8 | rgb[2] as u32;
    let w = conn.generate_id().unwrap();
    conn.create_window(
        x11rb::COPY_DEPTH_FROM_PARENT,
        w,
        root,
        area.0 as i16,
        area.1 as i16,
        area.2 as u16,
        area.3 as u16,
        0,
        WindowClass::INPUT_OUTPUT,
        x11rb::COPY_FROM_PARENT,
        &CreateWindowAux::new().override_redirect(1),
    )
    .unwrap();
    conn.map_window(w).unwrap();
    let gc = conn.generate_id().unwrap();
    conn.create_gc(gc, w, &CreateGCAux::new().foreground(pixel))
        .unwrap();
    conn.poly_fill_rectangle(
        w,
        gc,
        &[Rectangle {
            x: 0,
            y: 0,
            width: area.2 as u16,
            height: area.3 as u16,
        }],
    )
    .unwrap();
    conn.get_input_focus().unwrap().reply().unwrap();
    w
}

fn wait_until(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < DEADLINE,
            "timed out after {DEADLINE:?} waiting for {what}"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

fn show(h: &mut Helper, anchor: (i32, i32)) -> Value {
    h.result(
        "teach_show",
        json!({
            "explanation": "Click Save in the toolbar, then type a name for the file.",
            "next_preview": "types report.txt into the name field",
            "anchor": {"x": anchor.0, "y": anchor.1},
            "step": 1, "total": 3
        }),
    )
}

#[test]
fn the_tooltip_is_on_screen_but_in_no_capture() {
    if !have_display("the_tooltip_is_on_screen_but_in_no_capture") {
        return;
    }
    let _g = lock();
    let (conn, root) = connect();
    let under = (200, 150, 700, 500);
    let win = solid_window(&conn, root, under, UNDER);
    let mut h = Helper::spawn(&[]);
    h.handshake();
    let shown = show(&mut h, (300, 250));
    let bounds = rect(&shown["bounds"]);
    assert!(
        bounds.0 >= 300 && bounds.1 >= 250,
        "bounds {bounds:?} should lie below and right of the anchor (300, 250)"
    );
    assert!(
        bounds.0 + bounds.2 as i32 <= 900 && bounds.1 + bounds.3 as i32 <= 650,
        "bounds {bounds:?} should lie over the test window {under:?}"
    );
    let area = (bounds.2 * bounds.3) as usize;
    let on_screen = count_on_screen(&conn, root, bounds, TOOLTIP);
    assert!(on_screen * 2 > area, "GetImage of the root shows {on_screen} tooltip pixels in its {area}-pixel bounds, want most");

    let full = h.result("capture", json!({"format": "png"}));
    assert_eq!(
        count_in_png(&full, bounds, TOOLTIP),
        0,
        "the full capture holds tooltip pixels"
    );
    assert_eq!(
        count_in_png(&full, bounds, UNDER),
        area,
        "the full capture should show the window under the tooltip in all of its bounds"
    );
    let zoom = h.result(
        "capture",
        json!({"format": "png", "rect": {"x": bounds.0 - 20, "y": bounds.1 - 20, "width": bounds.2 + 40, "height": bounds.3 + 40}}),
    );
    assert_eq!(
        count_in_png(&zoom, (20, 20, bounds.2, bounds.3), UNDER),
        area,
        "the zoomed capture should show the window under the tooltip"
    );
    let scaled = h.result(
        "capture",
        json!({"format": "png", "width": 960, "height": 540}),
    );
    assert_eq!(
        count_in_png(&scaled, (0, 0, 960, 540), TOOLTIP),
        0,
        "the scaled capture holds tooltip pixels"
    );
    // The tooltip is no change on the screen: it was never in the capture.
    let patch = h.result(
        "patch_check",
        json!({"x": bounds.0 + 10, "y": bounds.1 + 10, "size": 15}),
    );
    assert_eq!(
        patch["differing_pixels"], 0,
        "patch_check inside the tooltip = {patch}, want no change"
    );

    assert!(
        count_on_screen(&conn, root, bounds, TOOLTIP) * 2 > area,
        "the tooltip did not come back after the captures"
    );
    // A window mapped later, over the tooltip, goes under it.
    let cover = solid_window(
        &conn,
        root,
        (bounds.0 - 10, bounds.1 - 10, bounds.2 + 20, bounds.3 + 20),
        [0x40, 0x10, 0x90],
    );
    wait_until("the tooltip to rise above a window mapped over it", || {
        count_on_screen(&conn, root, bounds, TOOLTIP) * 2 > area
    });

    h.result("teach_hide", json!({}));
    assert_eq!(
        h.result("teach_poll", json!({})),
        json!({"visible": false, "choice": null})
    );
    assert_eq!(
        count_on_screen(&conn, root, bounds, TOOLTIP),
        0,
        "the tooltip is still on screen after teach_hide"
    );
    conn.destroy_window(cover).unwrap();
    conn.destroy_window(win).unwrap();
    conn.flush().unwrap();
}

/// The test's user: XTEST input from a connection whose client pointer
/// is the `teach-user` master, so the server sends it through that
/// master's XTEST slave.
struct Hand {
    conn: RustConnection,
    root: u32,
}

impl Hand {
    fn new() -> Hand {
        let out = Command::new("xinput")
            .args(["create-master", USER])
            .output()
            .expect("running xinput");
        assert!(
            out.status.success(),
            "xinput create-master: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (conn, root) = connect();
        conn.xinput_xi_query_version(2, 2).unwrap().reply().unwrap();
        let devices = conn
            .xinput_xi_query_device(xinput::Device::ALL)
            .unwrap()
            .reply()
            .unwrap();
        let master = devices
            .infos
            .iter()
            .find(|d| d.name == format!("{USER} pointer").as_bytes())
            .expect("the teach-user master pointer");
        conn.xinput_xi_set_client_pointer(0u32, master.deviceid)
            .unwrap()
            .check()
            .unwrap();
        Hand { conn, root }
    }

    fn click(&self, x: i32, y: i32) {
        for (kind, detail) in [(6u8, 0u8), (4, 1), (5, 1)] {
            self.conn
                .xtest_fake_input(kind, detail, 0, self.root, x as i16, y as i16, 0)
                .unwrap();
        }
        self.conn.get_input_focus().unwrap().reply().unwrap();
    }

    fn key(&self, keycode: u8) {
        for kind in [2u8, 3] {
            self.conn
                .xtest_fake_input(kind, keycode, 0, self.root, 0, 0, 0)
                .unwrap();
        }
        self.conn.get_input_focus().unwrap().reply().unwrap();
    }
}

impl Drop for Hand {
    fn drop(&mut self) {
        let _ = Command::new("xinput")
            .args(["remove-master", &format!("{USER} pointer")])
            .status();
    }
}

/// XTEST input from the core pointer, the way deskhand and xdotool inject.
fn core_click(conn: &RustConnection, root: u32, x: i32, y: i32) {
    for (kind, detail) in [(6u8, 0u8), (4, 1), (5, 1)] {
        conn.xtest_fake_input(kind, detail, 0, root, x as i16, y as i16, 0)
            .unwrap();
    }
    conn.get_input_focus().unwrap().reply().unwrap();
}

fn core_key(conn: &RustConnection, root: u32, keycode: u8) {
    for kind in [2u8, 3] {
        conn.xtest_fake_input(kind, keycode, 0, root, 0, 0, 0)
            .unwrap();
    }
    conn.get_input_focus().unwrap().reply().unwrap();
}

fn escape_keycode(conn: &RustConnection) -> u8 {
    let (min, max) = (conn.setup().min_keycode, conn.setup().max_keycode);
    let map = conn
        .get_keyboard_mapping(min, max - min + 1)
        .unwrap()
        .reply()
        .unwrap();
    let per = map.keysyms_per_keycode as usize;
    let i = map
        .keysyms
        .chunks(per)
        .position(|s| s.contains(&0xff1b))
        .expect("a keycode for Escape");
    min + i as u8
}

fn poll(h: &mut Helper) -> Value {
    h.result("teach_poll", json!({}))
}

fn centre(v: &Value) -> (i32, i32) {
    let r = rect(v);
    (r.0 + r.2 as i32 / 2, r.1 + r.3 as i32 / 2)
}

/// Waits for the helper's log to say it ignored `n` events in all, or
/// for a choice (which the caller then reports as the failure).
fn wait_ignored(h: &mut Helper, n: usize) {
    wait_until(&format!("the helper to log {n} ignored events"), || {
        h.stderr().matches("teaching overlay: ignoring").count() >= n
            || !poll(h)["choice"].is_null()
    });
}

#[test]
fn only_a_trusted_device_makes_a_choice() {
    if !have_display("only_a_trusted_device_makes_a_choice") {
        return;
    }
    let _g = lock();
    let (conn, root) = connect();
    let hand = Hand::new();
    let escape = escape_keycode(&conn);
    let trusted = trusted_env();
    let mut h = Helper::spawn(&[("DESKHAND_TEACH_TRUSTED_DEVICES", &trusted)]);
    h.handshake();

    let shown = show(&mut h, (400, 300));
    let next = centre(&shown["next"]);
    // deskhand's kind of click on Next: the press and the release are
    // both seen and ignored.
    core_click(&conn, root, next.0, next.1);
    wait_ignored(&mut h, 2);
    assert_eq!(
        poll(&mut h),
        json!({"visible": true, "choice": null}),
        "an XTEST click on Next made a choice"
    );
    core_key(&conn, root, escape);
    wait_ignored(&mut h, 3);
    assert_eq!(
        poll(&mut h),
        json!({"visible": true, "choice": null}),
        "an XTEST Escape made a choice"
    );

    hand.click(next.0, next.1);
    wait_until("the user's click on Next", || {
        poll(&mut h)["choice"] == "next"
    });

    let shown = show(&mut h, (400, 300));
    assert_eq!(
        poll(&mut h),
        json!({"visible": true, "choice": null}),
        "teach_show must reset the choice"
    );
    // A click on the tooltip but off its buttons chooses nothing.
    let b = rect(&shown["bounds"]);
    hand.click(b.0 + 4, b.1 + 4);
    let exit = centre(&shown["exit"]);
    hand.click(exit.0, exit.1);
    wait_until("the user's click on Exit", || {
        poll(&mut h)["choice"] == "exit"
    });

    show(&mut h, (400, 300));
    hand.key(escape);
    wait_until("the user's Escape", || poll(&mut h)["choice"] == "exit");
    h.result("teach_hide", json!({}));
}

#[test]
fn clicks_beside_the_tooltip_reach_the_window_under_it() {
    if !have_display("clicks_beside_the_tooltip_reach_the_window_under_it") {
        return;
    }
    let _g = lock();
    let (conn, root) = connect();
    let mut h = Helper::spawn(&[]);
    h.handshake();
    let area = (100, 100, 800, 600);
    let win = solid_window(&conn, root, area, UNDER);
    conn.change_window_attributes(
        win,
        &x11rb::protocol::xproto::ChangeWindowAttributesAux::new()
            .event_mask(x11rb::protocol::xproto::EventMask::BUTTON_PRESS),
    )
    .unwrap();
    conn.flush().unwrap();
    let shown = show(&mut h, (200, 200));
    let b = rect(&shown["bounds"]);
    // Beside the tooltip: the window under it gets the press (no grab).
    core_click(&conn, root, b.0 + b.2 as i32 + 30, b.1 + 10);
    let start = Instant::now();
    loop {
        match conn.poll_for_event().unwrap() {
            Some(x11rb::protocol::Event::ButtonPress(e)) if e.event == win => break,
            Some(_) => {}
            None => {
                assert!(
                    start.elapsed() < DEADLINE,
                    "the window beside the tooltip never got the click"
                );
                thread::sleep(Duration::from_millis(20));
            }
        }
    }
    // On the tooltip: the window under it does not.
    core_click(&conn, root, b.0 + 5, b.1 + 5);
    core_click(&conn, root, b.0 + b.2 as i32 + 30, b.1 + 10);
    let mut presses = 0;
    let start = Instant::now();
    while presses == 0 {
        match conn.poll_for_event().unwrap() {
            Some(x11rb::protocol::Event::ButtonPress(e)) if e.event == win => {
                presses += 1;
                assert!(
                    e.event_x as i32 + area.0 > b.0 + b.2 as i32,
                    "the window under the tooltip got the press at ({}, {}) on the tooltip",
                    e.event_x,
                    e.event_y
                );
            }
            Some(_) => {}
            None => {
                assert!(
                    start.elapsed() < DEADLINE,
                    "the second click beside the tooltip never arrived"
                );
                thread::sleep(Duration::from_millis(20));
            }
        }
    }
    h.result("teach_hide", json!({}));
    conn.destroy_window(win).unwrap();
    conn.flush().unwrap();
}

#[test]
fn teach_methods_work_without_a_tooltip_and_refuse_an_off_screen_anchor() {
    if !have_display("teach_methods_work_without_a_tooltip_and_refuse_an_off_screen_anchor") {
        return;
    }
    let _g = lock();
    let mut h = Helper::spawn(&[]);
    h.handshake();
    assert_eq!(poll(&mut h), json!({"visible": false, "choice": null}));
    assert_eq!(h.result("teach_hide", json!({})), json!({}));
    let err = h.call(
        "teach_show",
        json!({"explanation": "a", "next_preview": "b", "anchor": {"x": 100000, "y": 5}}),
    );
    assert_eq!(
        err["error"]["data"]["code"], "out_of_bounds",
        "teach_show off screen = {err}"
    );
    assert_eq!(poll(&mut h), json!({"visible": false, "choice": null}));
}
