package mcpserver

import (
	"context"
	"fmt"

	"github.com/deskhand/deskhand/bridge"
)

func (f *fakeExecutor) SetWindowState(ctx context.Context, pid int, window uint32, state string) (*bridge.WindowStateResult, error) {
	if err := f.enter("SetWindowState", "%d %d %s", pid, window, state); err != nil {
		return nil, err
	}
	if pid != fakePID {
		return nil, fmt.Errorf("pid %d has no window %d", pid, window)
	}
	return &bridge.WindowStateResult{Window: window, State: state, Changed: true}, nil
}
