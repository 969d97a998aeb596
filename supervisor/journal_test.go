package supervisor

import (
	"context"
	"slices"
	"testing"

	"github.com/deskhand/deskhand/bridge"
)

// fakeWindows lists windows and restores any listed id, failing a
// restore with an unknown one as the helper does.
type fakeWindows struct {
	ids      []uint32
	restored []uint32
}

func (f *fakeWindows) Windows(ctx context.Context, includeHidden bool) (*bridge.WindowList, error) {
	if !includeHidden {
		return &bridge.WindowList{}, nil
	}
	var l bridge.WindowList
	for _, id := range f.ids {
		l.Windows = append(l.Windows, bridge.Window{ID: id, Minimized: true})
	}
	return &l, nil
}

func (f *fakeWindows) Restore(ctx context.Context, ids []uint32) ([]uint32, error) {
	for _, id := range ids {
		if !slices.Contains(f.ids, id) {
			return nil, &bridge.Error{Name: "no_such_window"}
		}
	}
	f.restored = append(f.restored, ids...)
	return ids, nil
}

// TestRestoreExisting: windows closed since they were hidden (or since
// a crash) do not keep the others hidden.
func TestRestoreExisting(t *testing.T) {
	f := &fakeWindows{ids: []uint32{1, 3}}
	got, err := restoreExisting(f)(context.Background(), []uint32{1, 2, 3})
	if err != nil || !slices.Equal(got, []uint32{1, 3}) || !slices.Equal(f.restored, []uint32{1, 3}) {
		t.Errorf("restoreExisting([1 2 3]) = %v, %v (restored %v); want [1 3]", got, err, f.restored)
	}
	f.restored = nil
	if got, err := restoreExisting(f)(context.Background(), []uint32{2}); err != nil || got != nil || f.restored != nil {
		t.Errorf("restoreExisting([2]) = %v, %v (restored %v); want nothing", got, err, f.restored)
	}
}
