//go:build unix

package x11

import (
	"slices"
	"time"

	"github.com/deskhand/deskhand/supervisor/geometry"
)

// The display gate's connection also follows DAMAGE on the root window, so
// that the staleness gate can tell that no drawing reached a click's target
// since the helper last read the screen, without asking the helper (whose
// answer, after an idle spell such as a click's press, comes a wake-up
// later). It is a shortcut only: where drawing may have reached the target,
// or where the record is not sure, the helper compares the pixels as
// before.
//
// The record is a set of accumulations, each the union of every rectangle
// DAMAGE reported since it began. The DeltaRectangles level reports a
// rectangle only where it adds to the damage region the server keeps, so
// every ping also empties that region (DamageSubtract, sent just before
// the ping's GetInputFocus). A drawing the server processed after a
// subtract is then always reported, and its report is read after the
// subtract was sent. An accumulation begun before a ping's subtract was
// sent therefore holds every drawing processed after that subtract; the
// ping's reply says the server processed it, and from then on the
// accumulation is a mark: anything the helper reads after it, it can vouch
// for.
//
// A read of the reference (a capture, a settling read) takes the newest
// mark before it starts and commits it once the helper answered; the
// committed accumulation is the one the staleness gate asks. An older
// accumulation holds everything a newer one does, so where it is unclear
// which read the helper kept (two reads at once, a read the gates did not
// mark, a failed read), keeping the older one is always safe.

// maxDrawnRects is how many rectangles an accumulation keeps before it
// folds them into their bounding box.
const maxDrawnRects = 64

// drawnSince is one accumulation.
type drawnSince struct {
	id uint64
	// all: everything may have been drawn (the connection broke, DAMAGE
	// reported an error).
	all   bool
	rects []geometry.Rect
}

func (s *drawnSince) add(r geometry.Rect) {
	if s.all || r.Width <= 0 || r.Height <= 0 {
		return
	}
	for _, have := range s.rects {
		if holds(have, r) {
			return
		}
	}
	if len(s.rects) == maxDrawnRects {
		box := r
		for _, have := range s.rects {
			box = bounds(box, have)
		}
		s.rects = append(s.rects[:0], box)
		return
	}
	s.rects = append(s.rects, r)
}

func (s *drawnSince) reaches(r geometry.Rect) bool {
	if s.all {
		return true
	}
	for _, have := range s.rects {
		if overlap(have, r) {
			return true
		}
	}
	return false
}

// drawnLog is the record; the DisplayCheck's mutex guards it.
type drawnLog struct {
	lastID uint64
	// next began before the subtract of the ping in flight; latest is the
	// newest mark; ref is the committed one.
	next, latest, ref *drawnSince
	// nextFrom is the sequence number of next's subtract, once sent.
	nextFrom    uint32
	nextFromSet bool
	// reading holds the marks handed to reads in flight, by id.
	reading map[uint64]*drawnSince
	// overlapped: two reads were in flight at once since reading was
	// last empty, so which one the helper kept is unknown.
	overlapped bool
	// syncedAt is when the request of the newest answered ping was sent:
	// every drawing the server processed before then has been reported.
	syncedAt time.Time
}

// beginPing starts the accumulation the ping about to be sent makes a
// mark.
func (l *drawnLog) beginPing() {
	l.lastID++
	l.next = &drawnSince{id: l.lastID}
	l.nextFrom, l.nextFromSet = 0, false
}

// subtracted gives the sequence number of the ping's subtract: reports
// sent before the server processed it (of a lower number) are of drawing
// the server's region still held then, which the mark need not hold.
func (l *drawnLog) subtracted(seq uint32) {
	l.nextFrom, l.nextFromSet = seq, true
}

// pinged makes the accumulation begun before the ping sent at sent a mark.
func (l *drawnLog) pinged(sent time.Time) {
	if l.next == nil {
		return
	}
	l.latest, l.next = l.next, nil
	l.syncedAt = sent
}

// pingFailed forgets the accumulation of a ping that got no answer.
func (l *drawnLog) pingFailed() { l.next = nil }

// lost says that reports may have been missed (the connection broke, or
// DAMAGE reported an error): every accumulation covers everything, and
// only marks made afterwards, on a new connection, can vouch again.
func (l *drawnLog) lost() {
	for _, s := range l.live() {
		s.all = true
	}
	l.next, l.latest = nil, nil
	l.syncedAt = time.Time{}
}

// add records a rectangle DAMAGE reported when the server had processed
// our requests up to sequence number seq.
func (l *drawnLog) add(r geometry.Rect, seq uint32) {
	early := l.next != nil && l.nextFromSet && int32(seq-l.nextFrom) < 0
	for _, s := range l.live() {
		if s == l.next && early {
			continue
		}
		s.add(r)
	}
}

// live lists every accumulation something may still ask of, once each.
func (l *drawnLog) live() []*drawnSince {
	out := make([]*drawnSince, 0, 3+len(l.reading))
	seen := func(s *drawnSince) bool {
		for _, o := range out {
			if o == s {
				return true
			}
		}
		return false
	}
	for _, s := range []*drawnSince{l.ref, l.latest, l.next} {
		if s != nil && !seen(s) {
			out = append(out, s)
		}
	}
	for _, s := range l.reading {
		if !seen(s) {
			out = append(out, s)
		}
	}
	return out
}

// mark hands the newest mark to a read about to start; ok false when
// there is none.
func (l *drawnLog) mark() (uint64, bool) {
	if l.latest == nil {
		return 0, false
	}
	if l.reading == nil {
		l.reading = map[uint64]*drawnSince{}
	}
	if len(l.reading) > 0 {
		l.overlapped = true
	}
	l.reading[l.latest.id] = l.latest
	return l.latest.id, true
}

// commit says the read that took mark id is now the helper's reference.
func (l *drawnLog) commit(id uint64) {
	s := l.reading[id]
	l.end(id)
	if s != nil && !l.overlapped {
		l.ref = s
	}
	if len(l.reading) == 0 {
		l.overlapped = false
	}
}

// abort says the read that took mark id failed; the reference stays.
func (l *drawnLog) abort(id uint64) {
	l.end(id)
	if len(l.reading) == 0 {
		l.overlapped = false
	}
}

func (l *drawnLog) end(id uint64) {
	delete(l.reading, id)
}

// undrawn reports whether no drawing reached any of rects since the
// committed mark, as of a ping sent at or after since.
func (l *drawnLog) undrawn(rects []geometry.Rect, since time.Time) bool {
	if l.ref == nil || l.syncedAt.IsZero() || l.syncedAt.Before(since) {
		return false
	}
	for _, r := range rects {
		if l.ref.reaches(r) {
			return false
		}
	}
	return true
}

// drawnRects lists where drawing reached since the committed mark, as of
// the newest answered ping; ok false when that is not certain.
func (l *drawnLog) drawnRects() (rects []geometry.Rect, ok bool) {
	if l.ref == nil || l.ref.all || l.syncedAt.IsZero() {
		return nil, false
	}
	return slices.Clone(l.ref.rects), true
}

// holds reports whether a covers b.
func holds(a, b geometry.Rect) bool {
	return b.X >= a.X && b.Y >= a.Y && b.X+b.Width <= a.X+a.Width && b.Y+b.Height <= a.Y+a.Height
}

// overlap reports whether a and b share a pixel.
func overlap(a, b geometry.Rect) bool {
	return a.X < b.X+b.Width && b.X < a.X+a.Width && a.Y < b.Y+b.Height && b.Y < a.Y+a.Height
}

// bounds is the smallest rectangle that covers a and b.
func bounds(a, b geometry.Rect) geometry.Rect {
	x0, y0 := min(a.X, b.X), min(a.Y, b.Y)
	x1, y1 := max(a.X+a.Width, b.X+b.Width), max(a.Y+a.Height, b.Y+b.Height)
	return geometry.Rect{X: x0, Y: y0, Width: x1 - x0, Height: y1 - y0}
}
