//! The helper against real X servers: pixel-exact captures through MIT-SHM
//! and GetImage, JPEG colours, scaling, masking with stacking order,
//! patch_check, a 16-bit server, RandR monitors, and reconnecting to a
//! display that comes and goes.
//!
//! Tests on `$DISPLAY` draw their own windows, so they do not depend on
//! what else is on the screen. Tests that need a private server start their
//! own Xvfb.

mod common;

use std::mem::ManuallyDrop;
use std::process::Command;
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::xvfb::{ReservedDisplay, Xvfb};
use common::{have_display, Helper};
use serde_json::{json, Value};
use x11rb::connection::Connection;
use x11rb::properties::{WmSizeHints, WmSizeHintsSpecification};
use x11rb::protocol::xproto::{
    AtomEnum, ChangeGCAux, ConnectionExt as _, CreateGCAux, CreateWindowAux, EventMask, PropMode,
    Rectangle, Visualtype, WindowClass,
};
use x11rb::protocol::Event;
use x11rb::rust_connection::RustConnection;
use x11rb::wrapper::ConnectionExt as _;

/// The tests share one screen; they take turns.
static SCREEN: Mutex<()> = Mutex::new(());

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SCREEN.lock().unwrap_or_else(|p| p.into_inner())
}

#[derive(Clone, Copy, Debug)]
struct Area {
    x: i32,
    y: i32,
    w: u32,
    h: u32,
}

impl Area {
    fn json(self) -> Value {
        json!({"x": self.x, "y": self.y, "width": self.w, "height": self.h})
    }

    fn contains(self, x: i32, y: i32) -> bool {
        x >= self.x && y >= self.y && x < self.x + self.w as i32 && y < self.y + self.h as i32
    }

    fn from_json(v: &Value) -> Area {
        Area {
            x: v["x"].as_i64().unwrap() as i32,
            y: v["y"].as_i64().unwrap() as i32,
            w: v["width"].as_u64().unwrap() as u32,
            h: v["height"].as_u64().unwrap() as u32,
        }
    }
}

/// A test's own X connection, for drawing.
struct X {
    /// Never closed (see Drop).
    conn: ManuallyDrop<RustConnection>,
    root: u32,
    visual: Visualtype,
    windows: Vec<u32>,
}

impl X {
    fn open(display: Option<&str>) -> X {
        let (conn, screen) = x11rb::connect(display).expect("connecting to the X server");
        let s = &conn.setup().roots[screen];
        let root = s.root;
        let visual = *s
            .allowed_depths
            .iter()
            .flat_map(|d| &d.visuals)
            .find(|v| v.visual_id == s.root_visual)
            .unwrap();
        X {
            conn: ManuallyDrop::new(conn),
            root,
            visual,
            windows: Vec::new(),
        }
    }

    /// The pixel value of a colour on this TrueColor visual.
    fn pixel(&self, rgb: [u8; 3]) -> u32 {
        let put = |c: u8, mask: u32| {
            let bits = mask.count_ones();
            ((c as u32 >> (8 - bits.min(8))) << mask.trailing_zeros()) & mask
        };
        put(rgb[0], self.visual.red_mask)
            | put(rgb[1], self.visual.green_mask)
            | put(rgb[2], self.visual.blue_mask)
    }

    /// What a colour reads back as after the server's quantisation, scaled
    /// to 8 bits the way the helper documents it: v * 255 / max, rounded.
    fn quantised(&self, rgb: [u8; 3]) -> [u8; 3] {
        let q = |c: u8, mask: u32| {
            let bits = mask.count_ones().min(8);
            let max = (1u32 << bits) - 1;
            let v = c as u32 >> (8 - bits);
            ((v * 255 + max / 2) / max) as u8
        };
        [
            q(rgb[0], self.visual.red_mask),
            q(rgb[1], self.visual.green_mask),
            q(rgb[2], self.visual.blue_mask),
        ]
    }

    /// Maps a window filled with `rgb` and waits until it is exposed.
    /// Override-redirect windows sit above everything and bypass the window
    /// manager; managed ones get a title and a user-specified position.
    fn window(&mut self, area: Area, rgb: [u8; 3], managed: Option<&str>) -> u32 {
        let id = self.conn.generate_id().unwrap();
        let aux = CreateWindowAux::new()
            .background_pixel(self.pixel(rgb))
            .override_redirect(u32::from(managed.is_none()))
            .event_mask(EventMask::EXPOSURE | EventMask::STRUCTURE_NOTIFY);
        self.conn
            .create_window(
                0,
                id,
                self.root,
                area.x as i16,
                area.y as i16,
                area.w as u16,
                area.h as u16,
                0,
                WindowClass::INPUT_OUTPUT,
                0,
                &aux,
            )
            .unwrap();
        if let Some(title) = managed {
            self.conn
                .change_property8(
                    PropMode::REPLACE,
                    id,
                    AtomEnum::WM_NAME,
                    AtomEnum::STRING,
                    title.as_bytes(),
                )
                .unwrap();
            self.conn
                .change_property8(
                    PropMode::REPLACE,
                    id,
                    AtomEnum::WM_CLASS,
                    AtomEnum::STRING,
                    b"deskhand-test\0DeskhandTest\0",
                )
                .unwrap();
            let hints = WmSizeHints {
                position: Some((WmSizeHintsSpecification::UserSpecified, area.x, area.y)),
                size: Some((
                    WmSizeHintsSpecification::UserSpecified,
                    area.w as i32,
                    area.h as i32,
                )),
                ..WmSizeHints::default()
            };
            hints.set_normal_hints(&*self.conn, id).unwrap();
        }
        self.conn.map_window(id).unwrap();
        self.conn.flush().unwrap();
        self.windows.push(id);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match self.conn.poll_for_event().unwrap() {
                Some(Event::Expose(e)) if e.window == id => break,
                Some(_) => continue,
                None if Instant::now() > deadline => panic!("window 0x{id:x} was never exposed"),
                None => thread::sleep(Duration::from_millis(5)),
            }
        }
        self.sync();
        id
    }

    /// Fills `area` (window coordinates) of `window` with `rgb`.
    fn fill(&self, window: u32, area: Area, rgb: [u8; 3]) {
        let gc = self.conn.generate_id().unwrap();
        self.conn
            .create_gc(gc, window, &CreateGCAux::new().foreground(self.pixel(rgb)))
            .unwrap();
        self.conn
            .poly_fill_rectangle(
                window,
                gc,
                &[Rectangle {
                    x: area.x as i16,
                    y: area.y as i16,
                    width: area.w as u16,
                    height: area.h as u16,
                }],
            )
            .unwrap();
        self.conn.free_gc(gc).unwrap();
        self.sync();
    }

    /// Draws 8×8 blocks of distinct colours over a whole window.
    fn pattern(&self, window: u32, area: Area) {
        let gc = self.conn.generate_id().unwrap();
        self.conn
            .create_gc(gc, window, &CreateGCAux::new())
            .unwrap();
        for by in 0..area.h / 8 {
            for bx in 0..area.w / 8 {
                let pixel = self.pixel(block_colour(bx, by));
                self.conn
                    .change_gc(gc, &ChangeGCAux::new().foreground(pixel))
                    .unwrap();
                self.conn
                    .poly_fill_rectangle(
                        window,
                        gc,
                        &[Rectangle {
                            x: (bx * 8) as i16,
                            y: (by * 8) as i16,
                            width: 8,
                            height: 8,
                        }],
                    )
                    .unwrap();
            }
        }
        self.conn.free_gc(gc).unwrap();
        self.sync();
    }

    fn sync(&self) {
        self.conn.get_input_focus().unwrap().reply().unwrap();
    }
}

impl Drop for X {
    /// Destroys the test's windows but leaves the connection open until the
    /// process exits. A closed client's XID range goes to the next client
    /// that connects, so the next test's first window would get the id of
    /// this test's first window, and the window manager, still catching up
    /// on this test's managed windows, would move and unmap that new window
    /// by the reused id.
    fn drop(&mut self) {
        for &id in &self.windows {
            let _ = self.conn.destroy_window(id);
        }
        let _ = self.conn.flush();
        let _ = self.conn.get_input_focus().map(|c| c.reply());
    }
}

fn block_colour(bx: u32, by: u32) -> [u8; 3] {
    [
        (bx * 8 + 3) as u8,
        (by * 16 + 5) as u8,
        ((bx * 37 + by * 11) % 256) as u8,
    ]
}

fn decode_png(result: &Value) -> (u32, u32, Vec<u8>) {
    assert_eq!(result["format"], "png");
    let data = base64::engine::general_purpose::STANDARD
        .decode(result["data"].as_str().unwrap())
        .unwrap();
    let mut reader = png::Decoder::new(&data[..]).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!(
        info.color_type,
        png::ColorType::Rgb,
        "PNG output must be RGB without alpha"
    );
    buf.truncate(info.buffer_size());
    assert_eq!(
        (info.width, info.height),
        (
            result["width"].as_u64().unwrap() as u32,
            result["height"].as_u64().unwrap() as u32
        )
    );
    (info.width, info.height, buf)
}

fn decode_jpeg(result: &Value) -> (u32, u32, Vec<u8>) {
    assert_eq!(result["format"], "jpeg");
    let data = base64::engine::general_purpose::STANDARD
        .decode(result["data"].as_str().unwrap())
        .unwrap();
    let img = turbojpeg::decompress(&data, turbojpeg::PixelFormat::RGB).unwrap();
    (img.width as u32, img.height as u32, img.pixels)
}

fn rgb_at(buf: &[u8], width: u32, x: u32, y: u32) -> [u8; 3] {
    let i = (y * width + x) as usize * 3;
    [buf[i], buf[i + 1], buf[i + 2]]
}

fn close(a: [u8; 3], b: [u8; 3], tolerance: u8) -> bool {
    (0..3).all(|i| a[i].abs_diff(b[i]) <= tolerance)
}

#[test]
fn capture_is_pixel_exact_with_shm_and_with_get_image() {
    if !have_display("capture_is_pixel_exact_with_shm_and_with_get_image") {
        return;
    }
    let _turn = lock();
    let mut x = X::open(None);
    let area = Area {
        x: 40,
        y: 50,
        w: 256,
        h: 128,
    };
    let id = x.window(area, [0, 0, 0], None);
    x.pattern(id, Area { x: 0, y: 0, ..area });
    for (env, method, shm) in [
        (vec![], "shm", true),
        (vec![("DESKHAND_HELPER_NO_SHM", "1")], "get_image", false),
    ] {
        let mut helper = Helper::spawn(&env);
        let hs = helper.handshake();
        assert_eq!(hs["extensions"]["shm"], shm, "{hs}");
        let r = helper.result("capture", json!({"rect": area.json(), "format": "png"}));
        assert_eq!(r["method"], method);
        assert_eq!(r["display"], Value::Null);
        assert_eq!(Area::from_json(&r["source"]).json(), area.json());
        let (w, h, rgb) = decode_png(&r);
        assert_eq!((w, h), (area.w, area.h));
        for y in 0..h {
            for px in 0..w {
                let want = x.quantised(block_colour(px / 8, y / 8));
                assert_eq!(rgb_at(&rgb, w, px, y), want, "{method}: pixel ({px}, {y})");
            }
        }
        // Scaling by 2 keeps each block's colour in the middle of the block.
        let r = helper.result(
            "capture",
            json!({"rect": area.json(), "format": "png", "width": 128, "height": 64}),
        );
        let (w, _, rgb) = decode_png(&r);
        for by in 0..16 {
            for bx in 0..32 {
                let got = rgb_at(&rgb, w, bx * 4 + 1, by * 4 + 1);
                let want = x.quantised(block_colour(bx, by));
                assert!(
                    close(got, want, 1),
                    "{method}: scaled block ({bx}, {by}) is {got:?}, want {want:?}"
                );
            }
        }
    }
}

#[test]
fn jpeg_and_scaled_output_keep_colours_on_a_depth_24_screen() {
    if !have_display("jpeg_and_scaled_output_keep_colours_on_a_depth_24_screen") {
        return;
    }
    let _turn = lock();
    let mut x = X::open(None);
    let colour = [200, 120, 40];
    let area = Area {
        x: 320,
        y: 50,
        w: 240,
        h: 160,
    };
    x.window(area, colour, None);
    let want = x.quantised(colour);
    let mut helper = Helper::spawn(&[]);
    helper.handshake();
    for params in [
        json!({"rect": area.json(), "quality": 90}),
        json!({"rect": area.json(), "quality": 90, "width": 100, "height": 67}),
        json!({"rect": area.json(), "format": "png", "width": 37, "height": 211}),
    ] {
        let r = helper.result("capture", params.clone());
        let (w, h, rgb) = if r["format"] == "png" {
            decode_png(&r)
        } else {
            decode_jpeg(&r)
        };
        assert_eq!(
            (w as u64, h as u64),
            (r["width"].as_u64().unwrap(), r["height"].as_u64().unwrap())
        );
        let tolerance = if r["format"] == "png" { 1 } else { 4 };
        for y in 0..h {
            for px in 0..w {
                let got = rgb_at(&rgb, w, px, y);
                assert!(
                    close(got, want, tolerance),
                    "{params}: pixel ({px}, {y}) is {got:?}, want {want:?}"
                );
            }
        }
    }
}

#[test]
fn patch_check_sees_changes_since_the_last_capture() {
    if !have_display("patch_check_sees_changes_since_the_last_capture") {
        return;
    }
    let _turn = lock();
    let mut x = X::open(None);
    let area = Area {
        x: 600,
        y: 50,
        w: 200,
        h: 120,
    };
    let id = x.window(area, [90, 90, 90], None);
    x.pattern(id, Area { x: 0, y: 0, ..area });
    let mut helper = Helper::spawn(&[]);
    helper.handshake();
    let cap = helper.result(
        "capture",
        json!({"rect": area.json(), "width": 100, "height": 60}),
    );
    let capture_id = cap["capture_id"].clone();
    let check = |helper: &mut Helper, x: i32, y: i32, tolerance: u32| {
        helper.result(
            "patch_check",
            json!({"x": x, "y": y, "size": 9, "tolerance": tolerance}),
        )
    };
    let (cx, cy) = (area.x + 115, area.y + 55);
    let r = check(&mut helper, cx, cy, 0);
    assert_eq!(
        r,
        json!({"changed": false, "differing_pixels": 0, "max_delta": 0, "capture_id": capture_id})
    );
    // Paint a 30×30 square over the checked point.
    x.fill(
        id,
        Area {
            x: 100,
            y: 40,
            w: 30,
            h: 30,
        },
        [255, 255, 255],
    );
    let r = check(&mut helper, cx, cy, 0);
    assert_eq!(r["changed"], true, "{r}");
    assert_eq!(r["differing_pixels"], 81, "{r}");
    assert!(r["max_delta"].as_u64().unwrap() > 100, "{r}");
    let r = check(&mut helper, cx, cy, 255);
    assert_eq!(r["changed"], false, "{r}");
    // Elsewhere nothing changed.
    let r = check(&mut helper, area.x + 20, area.y + 20, 0);
    assert_eq!(r["changed"], false, "{r}");
    // The baseline is the capture, unmasked and native, not the scaled image:
    // a new capture moves it.
    let cap2 = helper.result("capture", json!({"rect": area.json(), "format": "png"}));
    assert!(cap2["capture_id"].as_u64() > capture_id.as_u64());
    let r = check(&mut helper, cx, cy, 0);
    assert_eq!(r["changed"], false, "{r}");
    assert_eq!(r["capture_id"], cap2["capture_id"]);
}

#[test]
fn masking_paints_visible_parts_of_masked_windows() {
    if !have_display("masking_paints_visible_parts_of_masked_windows") {
        return;
    }
    let _turn = lock();
    let mut x = X::open(None);
    let a = x.window(
        Area {
            x: 300,
            y: 300,
            w: 300,
            h: 200,
        },
        [10, 200, 10],
        Some("deskhand mask A"),
    );
    let b = x.window(
        Area {
            x: 500,
            y: 350,
            w: 200,
            h: 200,
        },
        [200, 10, 10],
        Some("deskhand mask B"),
    );
    let mut helper = Helper::spawn(&[]);
    helper.handshake();
    // Wait until the window manager lists both.
    let deadline = Instant::now() + Duration::from_secs(10);
    let list = loop {
        let list = helper.result("windows", json!({}));
        let ids: Vec<u64> = list["windows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["id"].as_u64().unwrap())
            .collect();
        if ids.contains(&(a as u64)) && ids.contains(&(b as u64)) {
            break list;
        }
        assert!(
            Instant::now() < deadline,
            "windows never listed both test windows: {list}"
        );
        thread::sleep(Duration::from_millis(50));
    };
    let windows = list["windows"].as_array().unwrap();
    let find = |id: u32| windows.iter().position(|w| w["id"] == id).unwrap();
    let bounds_a = Area::from_json(&windows[find(a)]["bounds"]);
    let bounds_b = Area::from_json(&windows[find(b)]["bounds"]);
    let b_above_a = find(b) < find(a);
    let magenta = [255, 0, 255];

    let r = helper.result(
        "capture",
        json!({"rect": bounds_a.json(), "format": "png", "mask": [a], "mask_color": magenta}),
    );
    assert_eq!(r["masked"], json!([a]));
    let (w, h, rgb) = decode_png(&r);
    let mut painted = 0;
    for y in 0..h {
        for px in 0..w {
            let (gx, gy) = (bounds_a.x + px as i32, bounds_a.y + y as i32);
            let covered = b_above_a && bounds_b.contains(gx, gy);
            let got = rgb_at(&rgb, w, px, y);
            if covered {
                assert_ne!(
                    got, magenta,
                    "({gx}, {gy}) is under window B, which is not masked"
                );
            } else {
                assert_eq!(got, magenta, "({gx}, {gy}) belongs to masked window A");
                painted += 1;
            }
        }
    }
    assert!(painted > 0);

    // Both masked: all of A's frame is painted; the request order is kept.
    let r = helper.result("capture", json!({"rect": bounds_a.json(), "format": "png", "mask": [b, a, 4294967294u32], "mask_color": magenta}));
    assert_eq!(r["masked"], json!([b, a]));
    let (w, h, rgb) = decode_png(&r);
    for y in 0..h {
        for px in 0..w {
            assert_eq!(rgb_at(&rgb, w, px, y), magenta);
        }
    }

    // A scaled full-screen capture is painted too, and the mask never
    // reaches patch_check's baseline: the unmasked pixels are kept.
    let r = helper.result(
        "capture",
        json!({"mask": [a], "mask_color": magenta, "width": 960, "height": 540, "format": "png"}),
    );
    let source = Area::from_json(&r["source"]);
    let (w, _, rgb) = decode_png(&r);
    let sx = w as f64 / source.w as f64;
    let (cx, cy) = (bounds_a.x + 20, bounds_a.y + 20);
    let got = rgb_at(
        &rgb,
        w,
        ((cx - source.x) as f64 * sx) as u32,
        ((cy - source.y) as f64 * sx) as u32,
    );
    assert!(close(got, magenta, 1), "scaled masked pixel is {got:?}");
    let r = helper.result("patch_check", json!({"x": cx, "y": cy}));
    assert_eq!(r["changed"], false, "{r}");
}

#[test]
fn mask_others_paints_unlisted_popups_and_where_they_just_were() {
    if !have_display("mask_others_paints_unlisted_popups_and_where_they_just_were") {
        return;
    }
    let _turn = lock();
    let mut x = X::open(None);
    let kept_area = Area {
        x: 300,
        y: 300,
        w: 300,
        h: 200,
    };
    let kept = x.window(kept_area, [10, 200, 10], Some("deskhand kept"));
    let popup_area = Area {
        x: 350,
        y: 340,
        w: 80,
        h: 60,
    };
    let mut helper = Helper::spawn(&[]);
    helper.handshake();
    let deadline = Instant::now() + Duration::from_secs(10);
    let bounds = loop {
        let list = helper.result("windows", json!({}));
        if let Some(w) = list["windows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["id"] == kept)
        {
            break Area::from_json(&w["bounds"]);
        }
        assert!(Instant::now() < deadline, "the kept window never listed");
        thread::sleep(Duration::from_millis(50));
    };
    // The popup opens after the helper's last listing: mask_others paints
    // it although nobody named it.
    let popup = x.window(popup_area, [200, 10, 200], None);
    let magenta = [255, 0, 255];
    let capture = |helper: &mut Helper| {
        let r = helper.result(
            "capture",
            json!({"rect": bounds.json(), "format": "png", "mask_others": true, "keep": [kept], "mask_color": magenta}),
        );
        assert_eq!(r["mask_others"], true);
        let (w, h, rgb) = decode_png(&r);
        let mut painted = 0;
        for y in 0..h {
            for px in 0..w {
                let (gx, gy) = (bounds.x + px as i32, bounds.y + y as i32);
                let got = rgb_at(&rgb, w, px, y);
                if popup_area.contains(gx, gy) {
                    painted += usize::from(got == magenta);
                } else {
                    assert_ne!(got, magenta, "({gx}, {gy}) belongs to the kept window");
                }
            }
        }
        (r, painted)
    };
    let (r, painted) = capture(&mut helper);
    assert!(
        r["masked"].as_array().unwrap().contains(&json!(popup)),
        "{}",
        r["masked"]
    );
    assert_eq!(painted, (popup_area.w * popup_area.h) as usize);
    // Gone, its place over the kept window is painted for a moment, in
    // case the kept app has not repainted it yet.
    x.conn.unmap_window(popup).unwrap();
    x.sync();
    let (r, painted) = capture(&mut helper);
    assert!(!r["masked"].as_array().unwrap().contains(&json!(popup)));
    assert_eq!(
        painted,
        (popup_area.w * popup_area.h) as usize,
        "the ghost is painted"
    );
    // And then no longer.
    let deadline = Instant::now() + Duration::from_secs(10);
    while capture(&mut helper).1 > 0 {
        assert!(Instant::now() < deadline, "the ghost never went");
        thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn sixteen_bit_server_is_converted_exactly() {
    let Some(server) = Xvfb::start("320x240x16") else {
        return;
    };
    let mut x = X::open(Some(&server.display));
    assert_eq!(
        (x.visual.red_mask, x.visual.green_mask, x.visual.blue_mask),
        (0xf800, 0x07e0, 0x001f)
    );
    let area = Area {
        x: 16,
        y: 24,
        w: 160,
        h: 96,
    };
    let id = x.window(area, [0, 0, 0], None);
    x.pattern(id, Area { x: 0, y: 0, ..area });
    for env in [
        vec![("DISPLAY", server.display.as_str())],
        vec![
            ("DISPLAY", server.display.as_str()),
            ("DESKHAND_HELPER_NO_SHM", "1"),
        ],
    ] {
        let mut helper = Helper::spawn(&env);
        helper.handshake();
        let r = helper.result("capture", json!({"rect": area.json(), "format": "png"}));
        let (w, h, rgb) = decode_png(&r);
        for y in 0..h {
            for px in 0..w {
                let want = x.quantised(block_colour(px / 8, y / 8));
                assert_eq!(
                    rgb_at(&rgb, w, px, y),
                    want,
                    "{}: pixel ({px}, {y})",
                    r["method"]
                );
            }
        }
        // JPEG of a 16-bit screen is not black or transparent either.
        let r = helper.result("capture", json!({"rect": area.json(), "quality": 95}));
        let (w, _, rgb) = decode_jpeg(&r);
        let want = x.quantised(block_colour(3, 3));
        assert!(close(rgb_at(&rgb, w, 3 * 8 + 4, 3 * 8 + 4), want, 24));
    }
}

#[test]
fn displays_are_the_randr_monitors() {
    let Some(server) = Xvfb::start("1600x600x24") else {
        return;
    };
    if Command::new("xrandr").arg("--version").output().is_err() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but xrandr is missing"
        );
        eprintln!("skipping displays_are_the_randr_monitors: xrandr is missing");
        return;
    }
    server.run(
        "xrandr",
        &["--setmonitor", "*RIGHT", "800/212x600/159+800+0", "screen"],
    );
    server.run(
        "xrandr",
        &["--setmonitor", "LEFT", "800/212x600/159+0+0", "none"],
    );
    let mut helper = Helper::spawn(&[("DISPLAY", &server.display)]);
    helper.handshake();
    let fnv = |s: &str| {
        s.bytes().fold(0x811c_9dc5u32, |h, b| {
            (h ^ b as u32).wrapping_mul(0x0100_0193)
        })
    };
    let list = helper.result("displays", json!({}));
    let displays = list["displays"].as_array().unwrap();
    let by_name = |n: &str| {
        displays
            .iter()
            .find(|d| d["name"] == n)
            .unwrap_or_else(|| panic!("no {n} in {list}"))
    };
    let right = by_name("RIGHT");
    assert_eq!(right["id"], fnv("RIGHT"));
    assert_eq!(right["primary"], true);
    assert_eq!(right["origin"], json!({"x": 800, "y": 0}));
    assert_eq!(right["logical"], json!({"width": 800, "height": 600}));
    assert_eq!(right["physical"], right["logical"]);
    assert_eq!(right["mm"], json!({"width": 212, "height": 159}));
    assert_eq!(right["scale"], 1.0);
    let left = by_name("LEFT");
    assert_eq!(left["id"], fnv("LEFT"));
    assert_eq!(left["primary"], false);
    assert_eq!(displays.iter().filter(|d| d["primary"] == true).count(), 1);
    // The default capture is the primary display; another is chosen by id.
    let r = helper.result("capture", json!({"width": 80, "height": 60}));
    assert_eq!(r["display"], fnv("RIGHT"));
    assert_eq!(
        r["source"],
        json!({"x": 800, "y": 0, "width": 800, "height": 600})
    );
    let r = helper.result("capture", json!({"display": fnv("LEFT")}));
    assert_eq!(
        r["source"],
        json!({"x": 0, "y": 0, "width": 800, "height": 600})
    );
    assert_eq!(
        (r["width"].as_u64(), r["height"].as_u64()),
        (Some(800), Some(600))
    );
}

#[test]
fn reconnects_when_the_display_comes_back() {
    // A number that stays ours while no server runs on it.
    let reserved = ReservedDisplay::new();
    let display = reserved.name();
    let mut helper = Helper::spawn(&[("DISPLAY", &display)]);
    let hs = helper.handshake();
    // Only `apps` (desktop entries) works without a display.
    assert_eq!(hs["capabilities"], json!(["apps"]), "{hs}");
    assert!(
        hs["display_error"].as_str().unwrap().contains(&display),
        "{hs}"
    );
    let down = |helper: &mut Helper| {
        let r = helper.call("displays", json!({}));
        assert_eq!(r["error"]["data"]["code"], "display_unavailable", "{r}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&display),
            "the message names the display: {message}"
        );
        assert!(!r["error"]["data"]["hint"].as_str().unwrap().is_empty());
    };
    down(&mut helper);

    let server = Xvfb::start_on(&reserved, "640x480x24");
    let list = helper.result("displays", json!({}));
    assert_eq!(
        list["displays"][0]["logical"],
        json!({"width": 640, "height": 480})
    );
    let hs = helper.handshake();
    assert!(
        hs["capabilities"]
            .as_array()
            .unwrap()
            .contains(&json!("capture")),
        "{hs}"
    );
    assert!(hs.get("display_error").is_none(), "{hs}");
    helper.result("capture", json!({"format": "png"}));

    // The server goes away: calls fail with display_unavailable, and keep
    // failing (each one retrying) until it is back.
    server.stop();
    down(&mut helper);
    down(&mut helper);
    let server = Xvfb::start_on(&reserved, "800x600x24");
    let r = helper.result("capture", json!({"format": "png"}));
    assert_eq!(
        r["source"],
        json!({"x": 0, "y": 0, "width": 800, "height": 600})
    );
    assert_eq!(r["method"], "shm");
    drop(server);
}

#[test]
fn no_display_says_what_to_do() {
    let mut helper = Helper::spawn(&[("DISPLAY", "")]);
    let hs = helper.handshake();
    // Only `apps` (desktop entries) works without a display.
    assert_eq!(hs["capabilities"], json!(["apps"]));
    assert!(
        hs["display_error"]
            .as_str()
            .unwrap()
            .contains("DISPLAY is not set"),
        "{hs}"
    );
    let r = helper.call("capture", json!({}));
    assert_eq!(r["error"]["code"], -32001);
    assert!(
        r["error"]["data"]["hint"]
            .as_str()
            .unwrap()
            .contains("DISPLAY"),
        "{r}"
    );
}

#[test]
fn exits_promptly_when_stdin_closes() {
    let mut helper = Helper::spawn(&[]);
    helper.handshake();
    if std::env::var_os("DISPLAY").is_some() {
        helper.result("clipboard_write", json!({"text": "held until exit"}));
    }
    let started = Instant::now();
    helper.close_stdin();
    let status = helper
        .wait(Duration::from_secs(5))
        .expect("helper exits after stdin closes");
    assert!(status.success(), "{status}");
    let took = started.elapsed();
    // The protocol promises 100 ms; allow for a loaded test machine.
    assert!(took < Duration::from_millis(500), "exit took {took:?}");
    eprintln!("helper exited {took:?} after stdin closed");
}

/// How many pixels of a decoded RGB image are within 12 of `rgb`.
fn count_colour(buf: &[u8], rgb: [u8; 3]) -> usize {
    buf.chunks_exact(3)
        .filter(|p| close([p[0], p[1], p[2]], rgb, 12))
        .count()
}

#[test]
fn unchanged_screen_is_served_again_and_a_drawn_one_never() {
    if !have_display("unchanged_screen_is_served_again_and_a_drawn_one_never") {
        return;
    }
    let _turn = lock();
    let mut x = X::open(None);
    let area = Area {
        x: 300,
        y: 200,
        w: 240,
        h: 160,
    };
    let (first, second) = ([20, 140, 230], [230, 60, 170]);
    let id = x.window(area, first, None);
    let mut helper = Helper::spawn(&[]);
    helper.handshake();
    let params = json!({"rect": area.json(), "width": 120, "height": 80, "quality": 80});
    let shot = |helper: &mut Helper, params: &Value| {
        let r = helper.result("capture", params.clone());
        let (w, h, pixels) = decode_jpeg(&r);
        assert_eq!((w, h), (120, 80));
        (r, pixels)
    };
    let (a, pixels) = shot(&mut helper, &params);
    assert_eq!(a["reused"], false, "the first capture reads");
    assert_eq!(count_colour(&pixels, first), 120 * 80);

    // Nothing drawn: the same image, under a new id that patch_check and
    // patch_baseline answer with.
    let (b, _) = shot(&mut helper, &params);
    assert_eq!(
        b["reused"], true,
        "nothing was drawn, so the image is served again"
    );
    assert_eq!(b["data"], a["data"]);
    assert_eq!(b["capture_id"], a["capture_id"].as_u64().unwrap() + 1);
    let (cx, cy) = (area.x + 100, area.y + 60);
    let r = helper.result("patch_check", json!({"x": cx, "y": cy}));
    assert_eq!(r["changed"], false, "{r}");
    assert_eq!(r["capture_id"], b["capture_id"], "{r}");

    // Drawn over: read again, and the image shows the new colour. Half the
    // window, so the unchanged half proves the rest of the image too.
    x.fill(
        id,
        Area {
            x: 0,
            y: 0,
            w: area.w,
            h: area.h / 2,
        },
        second,
    );
    let r = helper.result("patch_check", json!({"x": cx, "y": area.y + 20}));
    assert_eq!(
        r["changed"], true,
        "patch_check against the reused capture's pixels: {r}"
    );
    let (c, pixels) = shot(&mut helper, &params);
    assert_eq!(c["reused"], false, "the window was drawn over");
    assert_ne!(c["data"], b["data"]);
    let top = count_colour(&pixels[..120 * 40 * 3], second);
    let bottom = count_colour(&pixels[120 * 40 * 3..], first);
    assert!(
        top >= 120 * 38,
        "top half is the new colour in {top} pixels"
    );
    assert!(
        bottom >= 120 * 38,
        "bottom half is the old colour in {bottom} pixels"
    );
    let r = helper.result("patch_baseline", json!({}));
    assert_eq!(r["capture_id"], c["capture_id"], "{r}");
    assert_eq!(r["differing_pixels"], 0, "{r}");

    // patch_baseline found the screen quiet: the image still is it.
    let (d, _) = shot(&mut helper, &params);
    assert_eq!(d["reused"], true, "{}", helper.stderr());
    assert_eq!(d["data"], c["data"]);

    // Anything else that shapes the image is read and encoded again.
    for changed in [
        json!({"quality": 60}),
        json!({"width": 60, "height": 40}),
        json!({"format": "png", "width": null, "height": null}),
        json!({"mask": [id]}),
        json!({"mask": [id], "mask_color": [0, 255, 0]}),
        json!({"rect": Area { x: area.x + 8, ..area }.json()}),
    ] {
        let mut p = params.clone();
        for (k, v) in changed.as_object().unwrap() {
            p[k] = v.clone();
        }
        let r = helper.result("capture", p.clone());
        assert_eq!(r["reused"], false, "{changed} after the plain capture");
        // And asked twice, it is served again.
        let again = helper.result("capture", p);
        assert_eq!(again["reused"], true, "{changed} asked twice");
        assert_eq!(again["data"], r["data"], "{changed} asked twice");
        // Back to the plain capture: read again, not the other image.
        let (back, _) = shot(&mut helper, &params);
        assert_eq!(back["reused"], false, "{changed} then the plain capture");
    }
}

#[test]
fn a_window_mapped_over_a_masked_capture_is_never_served_from_the_old_image() {
    if !have_display("a_window_mapped_over_a_masked_capture_is_never_served_from_the_old_image") {
        return;
    }
    let _turn = lock();
    let mut x = X::open(None);
    let area = Area {
        x: 200,
        y: 420,
        w: 240,
        h: 160,
    };
    let base = [40, 200, 90];
    let secret = [250, 210, 20];
    let _below = x.window(area, base, None);
    let mut helper = Helper::spawn(&[]);
    helper.handshake();
    // Everything but the window below is masked: a window that opens on top
    // of it must come out painted over, not as the old unmasked image.
    let params =
        json!({"rect": area.json(), "format": "png", "mask_others": true, "keep": [_below]});
    let r = helper.result("capture", params.clone());
    let again = helper.result("capture", params.clone());
    assert_eq!(again["reused"], true, "{}", helper.stderr());
    assert_eq!(r["masked"], json!([]));
    let popup = x.window(
        Area {
            x: area.x + 40,
            y: area.y + 40,
            w: 80,
            h: 60,
        },
        secret,
        None,
    );
    let r = helper.result("capture", params);
    assert_eq!(r["reused"], false);
    assert_eq!(r["masked"], json!([popup]));
    let (_, _, pixels) = decode_png(&r);
    assert_eq!(count_colour(&pixels, secret), 0, "the popup leaked");
    assert_eq!(count_colour(&pixels, [24, 24, 24]), 80 * 60);
}

/// How many pixels of a decoded `width`-wide RGB image inside `inside`
/// (output coordinates) and outside it are close to `rgb`.
fn count_colour_in(buf: &[u8], width: u32, inside: Area, rgb: [u8; 3]) -> (usize, usize) {
    let (mut i, mut o) = (0, 0);
    for (n, p) in buf.chunks_exact(3).enumerate() {
        if close([p[0], p[1], p[2]], rgb, 12) {
            let (x, y) = ((n as u32 % width) as i32, (n as u32 / width) as i32);
            if inside.contains(x, y) {
                i += 1;
            } else {
                o += 1;
            }
        }
    }
    (i, o)
}

#[test]
fn a_drawn_screen_updates_the_strips_it_reaches_and_comes_out_as_a_full_capture() {
    if !have_display("a_drawn_screen_updates_the_strips_it_reaches_and_comes_out_as_a_full_capture")
    {
        return;
    }
    let _turn = lock();
    let mut x = X::open(None);
    // Scaled by 3/4: output strip boundaries (every 64 rows) fall on
    // source rows 85.3, 170.7, 256, 341.3 and 426.7.
    let area = Area {
        x: 60,
        y: 40,
        w: 640,
        h: 480,
    };
    let (ow, oh) = (480, 360);
    let base = x.window(area, [40, 40, 40], None);
    // Dark bars, far from every colour drawn below.
    let bars = |x: &X| {
        for k in 0..16 {
            let bar = Area {
                x: k * 40,
                y: (k % 3) * 20,
                w: 40,
                h: 480,
            };
            x.fill(base, bar, [k as u8 * 6, 60 - k as u8 * 3, 30 + k as u8 * 4]);
        }
    };
    bars(&x);
    let secret_at = Area {
        x: area.x + 440,
        y: area.y + 300,
        w: 160,
        h: 120,
    };
    let secret = x.window(secret_at, [250, 210, 20], None);
    let plain = json!({"rect": area.json(), "width": ow, "height": oh, "quality": 85});
    let mut masked = plain.clone();
    masked["mask"] = json!([secret]);
    masked["mask_color"] = json!([0, 0, 255]);
    // Output coordinates of window-relative source rows and columns.
    let out = |a: Area| Area {
        x: a.x * 3 / 4,
        y: a.y * 3 / 4,
        w: a.w * 3 / 4,
        h: a.h * 3 / 4,
    };
    for env in [&[][..], &[("DESKHAND_HELPER_NO_SHM", "1")][..]] {
        let mut helper = Helper::spawn(env);
        helper.handshake();
        for params in [&plain, &masked] {
            let first = helper.result("capture", params.clone());
            assert_eq!(first["reused"], false);
            assert!(
                first.get("incremental").is_none(),
                "{first:?}: nothing to update yet"
            );
            // A block in the middle, rows across a strip boundary, and
            // rows beside the masked window, each in a colour of its own.
            let drawn = [
                (
                    Area {
                        x: 40,
                        y: 200,
                        w: 200,
                        h: 60,
                    },
                    [255, 0, 255],
                ),
                (
                    Area {
                        x: 300,
                        y: 78,
                        w: 120,
                        h: 16,
                    },
                    [0, 255, 255],
                ),
                (
                    Area {
                        x: 200,
                        y: 320,
                        w: 200,
                        h: 40,
                    },
                    [255, 255, 255],
                ),
            ];
            for (i, (at, rgb)) in drawn.into_iter().enumerate() {
                x.fill(base, at, rgb);
                // The masked window drawn in too: it must stay painted over.
                x.fill(
                    secret,
                    Area {
                        x: 0,
                        y: 0,
                        w: 160,
                        h: 120,
                    },
                    [250, 210, 20 + i as u8 * 10],
                );
                let shot = helper.result("capture", params.clone());
                assert_eq!(shot["reused"], false, "{env:?} {at:?}");
                let part = &shot["incremental"];
                let (strips, of) = (part["strips"].as_u64(), part["of"].as_u64());
                assert!(
                    strips.is_some() && strips < of,
                    "{env:?} {at:?}: {part} (incremental expected)\n{}",
                    helper.stderr()
                );
                // Byte for byte what a helper with no image to update reads.
                let mut fresh = Helper::spawn(env);
                fresh.handshake();
                let full = fresh.result("capture", params.clone());
                assert!(full.get("incremental").is_none());
                let (w, h, pixels) = decode_jpeg(&shot);
                assert_eq!((w, h), (ow, oh));
                let (_, _, full_pixels) = decode_jpeg(&full);
                assert!(
                    shot["data"] == full["data"],
                    "{env:?} {at:?}: the updated image is not the full capture's ({} of {} pixels differ)",
                    pixels.chunks_exact(3).zip(full_pixels.chunks_exact(3)).filter(|(a, b)| a != b).count(),
                    pixels.len() / 3
                );
                // The drawing is where it was drawn, whole, and nowhere else
                // (its edge rows and columns blend with the pattern).
                let expect = out(at);
                let inner = Area {
                    x: expect.x + 2,
                    y: expect.y + 2,
                    w: expect.w - 4,
                    h: expect.h - 4,
                };
                let (inside, _) = count_colour_in(&pixels, w, inner, rgb);
                let (_, outside) = count_colour_in(&pixels, w, expect, rgb);
                let want = (inner.w * inner.h) as usize;
                assert!(
                    inside * 4 >= want * 3,
                    "{env:?} {at:?}: {inside} of {want} pixels"
                );
                assert!(outside <= 20, "{env:?} {at:?}: {outside} pixels outside");
                // The stored pixels are the image's: the drawing is no change.
                let r = helper.result(
                    "patch_check",
                    json!({"x": area.x + at.x + 8, "y": area.y + at.y + 8}),
                );
                assert_eq!(r["changed"], false, "{env:?} {at:?}: {r}");
                assert_eq!(r["capture_id"], shot["capture_id"]);
                if params.get("mask").is_some() {
                    let m = out(Area {
                        x: secret_at.x - area.x,
                        y: secret_at.y - area.y,
                        w: secret_at.w,
                        h: secret_at.h,
                    });
                    let inner = Area {
                        x: m.x + 2,
                        y: m.y + 2,
                        w: m.w - 4,
                        h: m.h - 4,
                    };
                    let (blue, _) = count_colour_in(&pixels, w, inner, [0, 0, 255]);
                    let want = (inner.w * inner.h) as usize;
                    assert!(
                        blue * 10 >= want * 9,
                        "{env:?}: the mask in {blue} of {want}"
                    );
                    let (leak_in, leak_out) =
                        count_colour_in(&pixels, w, m, [250, 210, 20 + i as u8 * 10]);
                    assert_eq!(leak_in + leak_out, 0, "{env:?}: the masked window shows");
                }
            }
            // Drawn over without a capture: patch_check sees it.
            x.fill(
                base,
                Area {
                    x: 8,
                    y: 8,
                    w: 32,
                    h: 32,
                },
                [10, 250, 10],
            );
            let r = helper.result("patch_check", json!({"x": area.x + 24, "y": area.y + 24}));
            assert_eq!(r["changed"], true, "{env:?}: {r}");
            // patch_baseline read the screen again since: read it all.
            let r = helper.result("patch_baseline", json!({}));
            assert_ne!(r["differing_pixels"], 0, "{env:?}: {r}");
            let shot = helper.result("capture", params.clone());
            assert!(
                shot.get("incremental").is_none(),
                "{env:?}: after patch_baseline"
            );
            // Most rows drawn in: read it all.
            bars(&x);
            let shot = helper.result("capture", params.clone());
            assert_eq!(shot["reused"], false);
            assert!(
                shot.get("incremental").is_none(),
                "{env:?}: most rows drawn"
            );
            // And the same request again after a small change updates it.
            x.fill(
                base,
                Area {
                    x: 0,
                    y: 0,
                    w: 8,
                    h: 8,
                },
                [255, 0, 255],
            );
            let shot = helper.result("capture", params.clone());
            assert!(shot["incremental"].is_object(), "{env:?}: a small change");
        }
    }
}
