//! Ghosts: where a window was until a moment ago. When a window is
//! unmapped, destroyed or moved, the X server repaints what it uncovers
//! only where that has a background (the bare root does); over an app's
//! window the old pixels stay on screen until that app repaints. A masked
//! window that has just closed or moved would leak through them, so its old
//! place is painted too for [`GHOST_TTL`].
//!
//! A window left its pixels only where it was itself visible: where a
//! window stacked above it covered it, that window's pixels were on
//! screen, and stay. So each ghost remembers the windows above it when it
//! left, and the capture leaves out what they still show there; an
//! approved window over a hidden one is never painted over.
//!
//! The helper follows the root's children, and their stacking order,
//! through SubstructureNotify events (the window manager's frames, and
//! override-redirect popups).

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use x11rb::protocol::xproto::Place;
use x11rb::protocol::Event;

use crate::types::Rect;

/// How long an uncovered area is painted after its window left: longer
/// than any responsive app takes to repaint what was uncovered.
pub const GHOST_TTL: Duration = Duration::from_secs(1);
/// At most this many ghosts are kept; the oldest go first.
const MAX_GHOSTS: usize = 256;

/// One area a window left.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ghost {
    /// The child of the root that was there.
    pub window: u32,
    pub rect: Rect,
    pub at: Instant,
    /// The mapped children of the root stacked above it then, and their
    /// rectangles.
    pub above: Vec<(u32, Rect)>,
}

/// The root's children as the events tell them, and their recent ghosts.
#[derive(Debug, Default)]
pub struct Ghosts {
    rects: HashMap<u32, Rect>,
    mapped: HashSet<u32>,
    /// The children, bottom first.
    order: Vec<u32>,
    recent: Vec<Ghost>,
}

/// A child's outer rectangle: `x, y` is the outer corner of its border.
fn outer(x: i16, y: i16, width: u16, height: u16, border: u16) -> Rect {
    Rect {
        x: i32::from(x),
        y: i32::from(y),
        width: u32::from(width) + 2 * u32::from(border),
        height: u32::from(height) + 2 * u32::from(border),
    }
}

impl Ghosts {
    /// Records a child of the root found by listing, before any event
    /// about it; listed bottom first.
    pub fn seen(&mut self, window: u32, rect: Rect, mapped: bool) {
        self.rects.entry(window).or_insert(rect);
        if mapped {
            self.mapped.insert(window);
        }
        if !self.order.contains(&window) {
            self.order.push(window);
        }
    }

    fn left(&mut self, window: u32, now: Instant) {
        if self.mapped.remove(&window) {
            if let Some(&rect) = self.rects.get(&window) {
                self.push_ghost(window, rect, now);
            }
        }
    }

    /// A ghost of `window` at `rect`, under the windows above it now.
    fn push_ghost(&mut self, window: u32, rect: Rect, now: Instant) {
        let above = match self.order.iter().position(|&w| w == window) {
            Some(at) => self.order[at + 1..]
                .iter()
                .filter(|w| self.mapped.contains(w))
                .filter_map(|w| Some((*w, *self.rects.get(w)?)))
                .collect(),
            None => Vec::new(),
        };
        self.push(Ghost {
            window,
            rect,
            at: now,
            above,
        });
    }

    /// Moves `window` to just above `sibling` (0: the bottom; one not
    /// known: the top).
    fn restack(&mut self, window: u32, sibling: u32) {
        self.order.retain(|&w| w != window);
        let at = match sibling {
            0 => 0,
            s => self
                .order
                .iter()
                .position(|&w| w == s)
                .map_or(self.order.len(), |i| i + 1),
        };
        self.order.insert(at, window);
    }

    fn push(&mut self, ghost: Ghost) {
        if self.recent.len() >= MAX_GHOSTS {
            self.recent.remove(0);
        }
        self.recent.push(ghost);
    }

    /// Follows one event about the children of `root`.
    pub fn event(&mut self, event: &Event, root: u32, now: Instant) {
        match event {
            Event::CreateNotify(e) if e.parent == root => {
                self.rects
                    .insert(e.window, outer(e.x, e.y, e.width, e.height, e.border_width));
                self.restack(e.window, u32::MAX);
            }
            Event::ConfigureNotify(e) if e.event == root => {
                let rect = outer(e.x, e.y, e.width, e.height, e.border_width);
                let old = self.rects.insert(e.window, rect);
                if let Some(old) = old.filter(|old| *old != rect) {
                    if self.mapped.contains(&e.window) {
                        self.push_ghost(e.window, old, now);
                    }
                }
                self.restack(e.window, e.above_sibling);
            }
            Event::CirculateNotify(e) if e.event == root => {
                if e.place == Place::ON_TOP {
                    self.restack(e.window, u32::MAX);
                } else {
                    self.restack(e.window, 0);
                }
            }
            Event::MapNotify(e) if e.event == root => {
                self.mapped.insert(e.window);
            }
            Event::UnmapNotify(e) if e.event == root => self.left(e.window, now),
            Event::DestroyNotify(e) if e.event == root => {
                self.left(e.window, now);
                self.rects.remove(&e.window);
                self.order.retain(|&w| w != e.window);
            }
            Event::ReparentNotify(e) if e.event == root => {
                if e.parent == root {
                    self.rects.entry(e.window).or_insert(Rect {
                        x: i32::from(e.x),
                        y: i32::from(e.y),
                        width: 0,
                        height: 0,
                    });
                    self.restack(e.window, u32::MAX);
                } else {
                    self.left(e.window, now);
                    self.rects.remove(&e.window);
                    self.order.retain(|&w| w != e.window);
                }
            }
            _ => {}
        }
    }

    /// The ghosts younger than [`GHOST_TTL`] at `now`.
    pub fn recent(&mut self, now: Instant) -> &[Ghost] {
        self.recent
            .retain(|g| now.saturating_duration_since(g.at) < GHOST_TTL);
        &self.recent
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use x11rb::protocol::xproto::{
        ConfigureNotifyEvent, CreateNotifyEvent, DestroyNotifyEvent, MapNotifyEvent,
        UnmapNotifyEvent,
    };

    const ROOT: u32 = 1;

    fn create(window: u32, x: i16, y: i16) -> Event {
        Event::CreateNotify(CreateNotifyEvent {
            response_type: 16,
            sequence: 0,
            parent: ROOT,
            window,
            x,
            y,
            width: 10,
            height: 20,
            border_width: 1,
            override_redirect: true,
        })
    }

    fn map(window: u32) -> Event {
        Event::MapNotify(MapNotifyEvent {
            response_type: 19,
            sequence: 0,
            event: ROOT,
            window,
            override_redirect: true,
        })
    }

    fn unmap(window: u32) -> Event {
        Event::UnmapNotify(UnmapNotifyEvent {
            response_type: 18,
            sequence: 0,
            event: ROOT,
            window,
            from_configure: false,
        })
    }

    fn configure(window: u32, x: i16, y: i16) -> Event {
        Event::ConfigureNotify(ConfigureNotifyEvent {
            response_type: 22,
            sequence: 0,
            event: ROOT,
            window,
            above_sibling: 0,
            x,
            y,
            width: 10,
            height: 20,
            border_width: 1,
            override_redirect: true,
        })
    }

    fn rect(x: i32, y: i32) -> Rect {
        Rect {
            x,
            y,
            width: 12,
            height: 22,
        }
    }

    #[test]
    fn unmapped_and_moved_windows_leave_ghosts_for_a_while() {
        let t0 = Instant::now();
        let mut g = Ghosts::default();
        g.event(&create(5, 100, 100), ROOT, t0);
        // Unmapped windows leave nothing when they move or go.
        g.event(&configure(5, 50, 50), ROOT, t0);
        assert!(g.recent(t0).is_empty());
        g.event(&map(5), ROOT, t0);
        g.event(&configure(5, 300, 300), ROOT, t0);
        // A stacking change alone (same rectangle) leaves nothing.
        g.event(&configure(5, 300, 300), ROOT, t0);
        g.event(&unmap(5), ROOT, t0);
        let rects: Vec<Rect> = g.recent(t0).iter().map(|g| g.rect).collect();
        assert_eq!(rects, vec![rect(50, 50), rect(300, 300)]);
        assert!(g.recent(t0 + GHOST_TTL).is_empty(), "they expire");

        // A window listed before any event, then destroyed.
        g.seen(7, rect(9, 9), true);
        g.event(
            &Event::DestroyNotify(DestroyNotifyEvent {
                response_type: 17,
                sequence: 0,
                event: ROOT,
                window: 7,
            }),
            ROOT,
            t0,
        );
        assert_eq!(g.recent(t0)[0].window, 7);
        // Events about grandchildren (event != root) are ignored.
        let mut other = create(8, 0, 0);
        if let Event::CreateNotify(e) = &mut other {
            e.parent = 99;
        }
        g.event(&other, ROOT, t0);
        g.event(&map(8), ROOT, t0);
        g.event(&unmap(8), ROOT, t0);
        assert_eq!(g.recent(t0).len(), 1);
    }

    #[test]
    fn ghosts_know_the_windows_above_them() {
        let t0 = Instant::now();
        let mut g = Ghosts::default();
        // Listed bottom first: 1 under 2; then 3 is created on top, and
        // 1 raised above 2 (just above 2).
        g.seen(1, rect(0, 0), true);
        g.seen(2, rect(5, 5), true);
        g.event(&create(3, 50, 50), ROOT, t0);
        g.event(&map(3), ROOT, t0);
        let mut raise = configure(1, 0, 0);
        if let Event::ConfigureNotify(e) = &mut raise {
            e.above_sibling = 2;
        }
        g.event(&raise, ROOT, t0);
        g.event(&unmap(2), ROOT, t0);
        g.event(&unmap(1), ROOT, t0);
        let recent = g.recent(t0);
        assert_eq!(recent[0].window, 2);
        assert_eq!(
            recent[0].above.iter().map(|a| a.0).collect::<Vec<_>>(),
            vec![1, 3]
        );
        assert_eq!(recent[1].above, vec![(3, rect(50, 50))]);
    }
}
