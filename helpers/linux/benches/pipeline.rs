//! Timing of the capture pipeline: `cargo bench -p deskhand-helper`.
//!
//! Always measured: each resize filter, JPEG q80 and PNG on a synthetic
//! 1920×1080 screen (smooth gradients plus dense text-like detail). With
//! DISPLAY set, also the whole capture (SHM or GetImage, scale to 1456×819,
//! JPEG q80, base64) against that X server. Prints `BENCH name value unit`
//! lines, the format `make bench` collects. Median of the runs.

use std::time::{Duration, Instant};

use deskhand_helper::capture::encode::{Encoder, ImageFormat};
use deskhand_helper::capture::pixfmt::Layout4;
use deskhand_helper::capture::resize::Scaler;
use deskhand_helper::capture::{Capturer, Request};
use deskhand_helper::types::{Rect, Size};
use deskhand_helper::xconn::XConn;
use fast_image_resize::FilterType;

const NATIVE: Size = Size {
    width: 1920,
    height: 1080,
};
const OUT: Size = Size {
    width: 1456,
    height: 819,
};

fn main() {
    let runs = std::env::var("DESKHAND_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    synthetic(runs);
    if std::env::var_os("DISPLAY").is_some() {
        live(runs);
    } else {
        println!("skipping the live capture: DISPLAY is not set");
    }
}

fn synthetic(runs: usize) {
    println!(
        "resizer CPU extensions: {:?}, {} threads",
        fast_image_resize::Resizer::new().cpu_extensions(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let src = synthetic_screen();
    let mut dst = Vec::new();
    for (name, filter) in [
        ("box", FilterType::Box),
        ("bilinear", FilterType::Bilinear),
        ("catmullrom", FilterType::CatmullRom),
        ("lanczos3", FilterType::Lanczos3),
    ] {
        let mut scaler = Scaler::with_filter(filter);
        let t = median(runs, || scaler.scale(&src, NATIVE, OUT, &mut dst).unwrap());
        report(&format!("scale_1080p_to_1456_{name}_ms"), t);
    }
    let mut scaler = Scaler::default();
    scaler.scale(&src, NATIVE, OUT, &mut dst).unwrap();
    let mut encoder = Encoder::default();
    let mut len = 0;
    let t = median(runs, || {
        len = encoder
            .encode(&dst, OUT, Layout4::BGRX, ImageFormat::Jpeg, 80)
            .unwrap()
            .len();
    });
    report("jpeg_q80_1456_ms", t);
    println!("BENCH jpeg_q80_1456_bytes {len} bytes");
    let t = median(runs.min(15), || {
        len = encoder
            .encode(&dst, OUT, Layout4::BGRX, ImageFormat::Png, 0)
            .unwrap()
            .len();
    });
    report("png_1456_ms", t);
    println!("BENCH png_1456_bytes {len} bytes");
}

fn live(runs: usize) {
    let x = match XConn::connect(None, std::env::var_os("DESKHAND_HELPER_NO_SHM").is_none()) {
        Ok(x) => x,
        Err(e) => {
            println!("skipping the live capture: {e}");
            return;
        }
    };
    let screen = x.root_size().unwrap();
    let mut capturer = Capturer::new(x.extensions.shm);
    let source = Rect {
        x: 0,
        y: 0,
        width: screen.width,
        height: screen.height,
    };
    let mut stages = Vec::new();
    for (name, output, format) in [
        ("live_capture_scaled_jpeg", OUT, ImageFormat::Jpeg),
        ("live_capture_native_jpeg", source.size(), ImageFormat::Jpeg),
        ("live_capture_scaled_png", OUT, ImageFormat::Png),
    ] {
        let mut id = 0;
        let n = if format == ImageFormat::Png {
            runs.min(15)
        } else {
            runs
        };
        let t = median(n, || {
            id += 1;
            let req = Request {
                source,
                output,
                format,
                quality: 80,
                mask: &[],
                mask_color: [0; 3],
                capture_id: id,
                // Every run reads, scales and encodes: this is the pipeline's cost.
                drawn: None,
                updatable: false,
            };
            let out = capturer
                .capture(&x.conn, x.root, &x.format, screen, &req, &mut || {})
                .unwrap();
            if format == ImageFormat::Jpeg && output == OUT {
                stages.push(out.timings);
            }
        });
        report(&format!("{name}_ms"), t);
    }
    // CPU time per capture (all threads), which a busy machine distorts
    // less than wall time.
    let n = runs.max(1);
    let before = cpu_ticks();
    for i in 0..n {
        let req = Request {
            source,
            output: OUT,
            format: ImageFormat::Jpeg,
            quality: 80,
            mask: &[],
            mask_color: [0; 3],
            capture_id: 1_000_000 + i as u64,
            drawn: None,
            updatable: false,
        };
        capturer
            .capture(&x.conn, x.root, &x.format, screen, &req, &mut || {})
            .unwrap();
    }
    let ticks = cpu_ticks() - before;
    println!(
        "BENCH live_capture_scaled_jpeg_cpu_ms {:.2} ms",
        ticks as f64 * 1000.0 / clock_ticks_per_second() / n as f64
    );
    let stage = |f: fn(&deskhand_helper::capture::Timings) -> Duration| {
        let mut v: Vec<Duration> = stages.iter().map(f).collect();
        v.sort();
        v[v.len() / 2]
    };
    report("live_stage_grab_ms", stage(|t| t.grab));
    report("live_stage_scale_ms", stage(|t| t.scale));
    report("live_stage_encode_ms", stage(|t| t.encode));
    report("live_stage_base64_ms", stage(|t| t.base64));
}

fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    f(); // warm up: buffers, SHM segments, encoder state
    let mut times: Vec<Duration> = (0..runs.max(1))
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// This process's user + system CPU time, in clock ticks.
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    // Fields after the parenthesised command name; utime and stime are the
    // 14th and 15th fields of the whole line.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = rest.split(' ').collect();
    fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
}

fn clock_ticks_per_second() -> f64 {
    // USER_HZ is 100 on every Linux architecture deskhand builds for.
    100.0
}

fn report(name: &str, d: Duration) {
    println!("BENCH {name} {:.2} ms", d.as_secs_f64() * 1e3);
}

/// A screen-like image: a smooth diagonal gradient (hard for JPEG to get
/// wrong, easy to compress) under rows of small high-contrast "glyphs".
fn synthetic_screen() -> Vec<u8> {
    let (w, h) = (NATIVE.width as usize, NATIVE.height as usize);
    let mut v = Vec::with_capacity(w * h * 4);
    let mut seed: u32 = 0x1234_5678;
    let mut glyph = [0u8; 16];
    for y in 0..h {
        if y % 16 == 0 {
            for g in glyph.iter_mut() {
                seed ^= seed << 13;
                seed ^= seed >> 17;
                seed ^= seed << 5;
                *g = seed as u8;
            }
        }
        for x in 0..w {
            let text_area = (x / 600) % 2 == 0 && (y / 16) % 3 != 2;
            let ink = text_area && (glyph[(x / 8) % 16] >> ((x + y) % 8)) & 1 == 1 && y % 16 < 12;
            if ink {
                v.extend_from_slice(&[230, 230, 230, 0]);
            } else {
                v.extend_from_slice(&[
                    (x * 255 / w) as u8,
                    (y * 255 / h) as u8,
                    ((x + y) % 256) as u8,
                    0,
                ]);
            }
        }
    }
    v
}
