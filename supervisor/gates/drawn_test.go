package gates

import (
	"context"
	"sync"

	"github.com/deskhand/deskhand/supervisor/geometry"
)

// fakeDrawn is a display's record of drawing, which records the marks it
// was told of.
type fakeDrawn struct {
	mu      sync.Mutex
	marks   uint64
	commits []uint64
	aborts  []uint64
	// drawn and located answer DrawnRects.
	drawn   []geometry.Rect
	located bool
}

func (d *fakeDrawn) Mark() (uint64, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.marks++
	return d.marks, true
}

func (d *fakeDrawn) Commit(m uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.commits = append(d.commits, m)
}

func (d *fakeDrawn) Abort(m uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.aborts = append(d.aborts, m)
}

func (d *fakeDrawn) DrawnRects(context.Context) ([]geometry.Rect, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.drawn, d.located
}
