//! Wire types shared by the methods (helpers/PROTOCOL.md, "Types").

use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Point {
    pub x: i32,
    pub y: i32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rect {
    pub x: i32,
    pub y: i32,
    pub width: u32,
    pub height: u32,
}

impl Rect {
    pub fn contains(&self, p: Point) -> bool {
        p.x >= self.x
            && p.y >= self.y
            && (p.x as i64) < self.x as i64 + self.width as i64
            && (p.y as i64) < self.y as i64 + self.height as i64
    }

    /// The overlap of two rectangles, or None when they do not overlap.
    pub fn intersect(&self, other: &Rect) -> Option<Rect> {
        let x0 = self.x.max(other.x) as i64;
        let y0 = self.y.max(other.y) as i64;
        let x1 = (self.x as i64 + self.width as i64).min(other.x as i64 + other.width as i64);
        let y1 = (self.y as i64 + self.height as i64).min(other.y as i64 + other.height as i64);
        if x1 <= x0 || y1 <= y0 {
            return None;
        }
        Some(Rect {
            x: x0 as i32,
            y: y0 as i32,
            width: (x1 - x0) as u32,
            height: (y1 - y0) as u32,
        })
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Size {
    pub width: u32,
    pub height: u32,
}

/// An application's identity (PROTOCOL.md "App").
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct App {
    pub pid: Option<u32>,
    pub name: String,
    pub instance: Option<String>,
    pub class: Option<String>,
    pub exe: Option<String>,
    pub desktop_id: Option<String>,
    pub bundle_id: Option<String>,
}

/// One top-level window (PROTOCOL.md "windows").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    pub id: u32,
    pub title: String,
    pub app: App,
    pub bounds: Rect,
    pub client: Rect,
    /// Iconified and really off screen (a window that only claims
    /// `_NET_WM_STATE_HIDDEN` while mapped is not minimized).
    pub minimized: bool,
    /// Not viewable: unmapped, iconified or on another desktop.
    pub hidden: bool,
    pub focused: bool,
    pub desktop: Option<u32>,
    /// Not managed by the window manager: a menu, tooltip, popup or
    /// notification that the client placed on the root itself.
    pub override_redirect: bool,
    /// Where the window shows pixels, in root coordinates, when that is
    /// not all of `bounds`: a window shaped by the X Shape extension (an
    /// empty list for one that shows none, as an input-only window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<Vec<Rect>>,
    /// Where a pointer event lands in the window (its input shape within
    /// its visible one), when that is not all of `bounds`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<Vec<Rect>>,
}

impl Window {
    /// Where the window shows pixels.
    pub fn visible_region(&self) -> &[Rect] {
        match &self.shape {
            Some(rects) => rects,
            None => std::slice::from_ref(&self.bounds),
        }
    }

    /// Whether a pointer event at `p` would land in this window.
    pub fn takes_input_at(&self, p: Point) -> bool {
        match &self.input {
            Some(rects) => rects.iter().any(|r| r.contains(p)),
            None => self.bounds.contains(p),
        }
    }
}

impl std::fmt::Display for Rect {
    /// `x,y WxH`, the form error messages use.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{},{} {}x{}", self.x, self.y, self.width, self.height)
    }
}

impl Rect {
    /// Whether `inner` lies entirely inside this rectangle.
    pub fn contains_rect(&self, inner: &Rect) -> bool {
        inner.x >= self.x
            && inner.y >= self.y
            && inner.x as i64 + inner.width as i64 <= self.x as i64 + self.width as i64
            && inner.y as i64 + inner.height as i64 <= self.y as i64 + self.height as i64
    }

    pub fn size(&self) -> Size {
        Size {
            width: self.width,
            height: self.height,
        }
    }
}
