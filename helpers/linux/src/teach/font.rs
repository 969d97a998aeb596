//! The tooltip's text: a system font found through fontconfig or the
//! usual install paths, words wrapped to a width, and glyphs rasterized by
//! ab_glyph into an RGB canvas.

use std::path::PathBuf;
use std::process::Command;

use ab_glyph::{point, Font, FontVec, PxScale, ScaleFont};

use crate::error::{Code, Error, Result};

/// Where Debian (fonts-dejavu-core), Fedora, Arch and Alpine put a sans
/// font, tried when fontconfig is absent or names nothing readable.
const KNOWN_FONTS: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf",
    "/usr/share/fonts/noto/NotoSans-Regular.ttf",
];

/// Loads the tooltip font: `$DESKHAND_TEACH_FONT`, else fontconfig's
/// match for "sans", else the first known path that parses.
pub fn load() -> Result<FontVec> {
    let mut tried = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("DESKHAND_TEACH_FONT").filter(|p| !p.is_empty()) {
        candidates.push(p.into());
    }
    if let Some(p) = fontconfig_match() {
        candidates.push(p);
    }
    candidates.extend(KNOWN_FONTS.iter().map(PathBuf::from));
    for path in candidates {
        match std::fs::read(&path) {
            Ok(bytes) => match FontVec::try_from_vec(bytes) {
                Ok(font) => return Ok(font),
                Err(e) => tried.push(format!("{} ({e})", path.display())),
            },
            Err(e) => tried.push(format!("{} ({e})", path.display())),
        }
    }
    Err(Error::new(
        Code::Unsupported,
        format!(
            "teach_show: no usable font for the tooltip; tried {}",
            tried.join(", ")
        ),
        "Install a TrueType sans font (Debian: apt-get install fonts-dejavu-core), or set DESKHAND_TEACH_FONT to a .ttf file.",
    ))
}

/// fontconfig's file for "sans", when `fc-match` is installed.
fn fontconfig_match() -> Option<PathBuf> {
    let out = Command::new("fc-match")
        .args(["--format=%{file}", "sans:style=Book"])
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?;
    let path = path.trim();
    // fontconfig may answer with a Type 1 or bitmap font ab_glyph cannot read.
    let lower = path.to_ascii_lowercase();
    (out.status.success() && (lower.ends_with(".ttf") || lower.ends_with(".otf")))
        .then(|| PathBuf::from(path))
}

/// An RGB canvas the tooltip is painted on, row-major.
pub struct Canvas {
    pub width: u32,
    pub height: u32,
    pub pixels: Vec<[u8; 3]>,
}

impl Canvas {
    pub fn new(width: u32, height: u32, fill: [u8; 3]) -> Canvas {
        Canvas {
            width,
            height,
            pixels: vec![fill; width as usize * height as usize],
        }
    }

    pub fn fill_rect(&mut self, x: i32, y: i32, w: u32, h: u32, color: [u8; 3]) {
        let x0 = x.max(0) as u32;
        let y0 = y.max(0) as u32;
        let x1 = ((x as i64 + w as i64).min(self.width as i64)).max(0) as u32;
        let y1 = ((y as i64 + h as i64).min(self.height as i64)).max(0) as u32;
        for yy in y0..y1 {
            let row = (yy * self.width) as usize;
            self.pixels[row + x0 as usize..row + x1 as usize].fill(color);
        }
    }

    /// A one-pixel outline of the rectangle.
    pub fn stroke_rect(&mut self, x: i32, y: i32, w: u32, h: u32, color: [u8; 3]) {
        self.fill_rect(x, y, w, 1, color);
        self.fill_rect(x, y + h as i32 - 1, w, 1, color);
        self.fill_rect(x, y, 1, h, color);
        self.fill_rect(x + w as i32 - 1, y, 1, h, color);
    }

    fn blend(&mut self, x: i32, y: i32, color: [u8; 3], coverage: f32) {
        if x < 0 || y < 0 || x as u32 >= self.width || y as u32 >= self.height {
            return;
        }
        let px = &mut self.pixels[(y as u32 * self.width + x as u32) as usize];
        let a = coverage.clamp(0.0, 1.0);
        for (dst, src) in px.iter_mut().zip(color) {
            *dst = (*dst as f32 * (1.0 - a) + src as f32 * a).round() as u8;
        }
    }
}

/// Text laid out at one size.
pub struct Typeset<'f> {
    font: &'f FontVec,
    scale: PxScale,
}

impl<'f> Typeset<'f> {
    pub fn new(font: &'f FontVec, px: f32) -> Typeset<'f> {
        Typeset {
            font,
            scale: PxScale::from(px),
        }
    }

    /// Height of one line, gap included.
    pub fn line_height(&self) -> u32 {
        let s = self.font.as_scaled(self.scale);
        (s.ascent() - s.descent() + s.line_gap()).ceil() as u32
    }

    pub fn width(&self, text: &str) -> u32 {
        let s = self.font.as_scaled(self.scale);
        let mut w = 0.0;
        let mut prev = None;
        for c in text.chars() {
            let id = s.glyph_id(c);
            if let Some(p) = prev {
                w += s.kern(p, id);
            }
            w += s.h_advance(id);
            prev = Some(id);
        }
        w.ceil() as u32
    }

    /// Breaks `text` into lines no wider than `max` pixels: at newlines,
    /// between words, and inside a word that is wider than a line alone.
    pub fn wrap(&self, text: &str, max: u32) -> Vec<String> {
        let mut lines = Vec::new();
        for paragraph in text.split('\n') {
            let mut line = String::new();
            for word in paragraph.split_whitespace() {
                let candidate = if line.is_empty() {
                    word.to_owned()
                } else {
                    format!("{line} {word}")
                };
                if self.width(&candidate) <= max {
                    line = candidate;
                    continue;
                }
                if !line.is_empty() {
                    lines.push(std::mem::take(&mut line));
                }
                for c in word.chars() {
                    line.push(c);
                    if self.width(&line) > max && line.chars().count() > 1 {
                        line.pop();
                        lines.push(std::mem::replace(&mut line, c.to_string()));
                    }
                }
            }
            lines.push(line);
        }
        lines
    }

    /// Draws one line with its top-left corner at (x, y).
    pub fn draw(&self, canvas: &mut Canvas, x: i32, y: i32, text: &str, color: [u8; 3]) {
        let s = self.font.as_scaled(self.scale);
        let baseline = y as f32 + s.ascent();
        let mut caret = x as f32;
        let mut prev = None;
        for c in text.chars() {
            let id = s.glyph_id(c);
            if let Some(p) = prev {
                caret += s.kern(p, id);
            }
            let glyph = id.with_scale_and_position(self.scale, point(caret, baseline));
            caret += s.h_advance(id);
            prev = Some(id);
            if let Some(outline) = self.font.outline_glyph(glyph) {
                let b = outline.px_bounds();
                outline.draw(|gx, gy, coverage| {
                    canvas.blend(
                        b.min.x as i32 + gx as i32,
                        b.min.y as i32 + gy as i32,
                        color,
                        coverage,
                    );
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrap_keeps_every_word_and_fits_the_width() {
        let Ok(font) = load() else {
            if std::env::var("CI").is_ok_and(|v| v == "true") {
                panic!("no system font; install fonts-dejavu-core");
            }
            eprintln!("skipping: no system font");
            return;
        };
        let t = Typeset::new(&font, 15.0);
        let text = "Click the Save button in the toolbar, then type a name\nfor the file and press Enter. Supercalifragilisticexpialidocious!";
        let lines = t.wrap(text, 120);
        assert!(
            lines.len() > 3,
            "wrap({text:?}, 120) = {lines:?}, want several lines"
        );
        for line in &lines {
            assert!(
                t.width(line) <= 120,
                "line {line:?} is {} px wide, want <= 120",
                t.width(line)
            );
        }
        let rejoined: String = lines.concat().split_whitespace().collect();
        let original: String = text.split_whitespace().collect();
        assert_eq!(rejoined, original);
    }
}
