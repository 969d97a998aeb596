package supervisor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/supervisor/cleanup"
	"github.com/deskhand/deskhand/supervisor/lock"
)

// RepairTimeout bounds giving back what a crashed deskhand left: a
// restore waits up to a second per call, a keeper start a little.
const RepairTimeout = 15 * time.Second

// windowRestorer is what restoreExisting needs of the helper.
type windowRestorer interface {
	Windows(ctx context.Context, includeHidden bool) (*bridge.WindowList, error)
	Restore(ctx context.Context, ids []uint32) ([]uint32, error)
}

// restoreExisting shows again those of the windows that still exist: the
// helper refuses a whole restore for one unknown id, and a window hidden
// during a turn (or before a crash) may have been closed since.
func restoreExisting(h windowRestorer) func(ctx context.Context, ids []uint32) ([]uint32, error) {
	return func(ctx context.Context, ids []uint32) ([]uint32, error) {
		list, err := h.Windows(ctx, true)
		if err != nil {
			return nil, fmt.Errorf("listing the windows to restore: %w", err)
		}
		var live []uint32
		for _, w := range list.Windows {
			if slices.Contains(ids, w.ID) {
				live = append(live, w.ID)
			}
		}
		if len(live) == 0 {
			return nil, nil
		}
		return h.Restore(ctx, live)
	}
}

// RepairOptions are the turn-end functions cleanup.RepairLeftovers uses
// on display xdisplay: restoring windows through helper, and keeping the
// restored clipboard in a keeper process, as a turn's end does when
// deskhand exits (serve at start, and doctor --repair).
func RepairOptions(helper *bridge.Client, xdisplay string, logger *slog.Logger) cleanup.Options {
	return cleanup.Options{
		Restore:       restoreExisting(helper),
		Selections:    helper,
		KeepClipboard: clipboardKeeper(helper, xdisplay),
		Logger:        logger,
	}
}

// repairLeftovers gives back what crashed deskhands on the display left
// (see cleanup.RepairLeftovers), at start before serving. It takes the
// computer-use lock for that: while another live deskhand uses the
// display, putting the user's clipboard back would hand it to that
// deskhand's turn, so the repair waits for this deskhand's first turn
// (repairAtTurn).
func (s *safety) repairLeftovers(ctx context.Context) {
	if s.journal == nil {
		return
	}
	recs, _ := cleanup.ReadJournals(s.journal.Dir(), s.journal.Display())
	if !slices.ContainsFunc(recs, (*cleanup.Record).Dead) {
		return
	}
	session := "repair-" + lock.NewSessionID()
	if _, err := s.lock.Acquire(session); err != nil {
		var held *lock.HeldError
		if errors.As(err, &held) {
			s.log.Info("a deskhand that is gone left windows hidden or the clipboard stashed; another deskhand uses the display now, so they are given back when this one's first turn begins",
				"holder_pid", held.Owner.PID)
			return
		}
		s.log.Warn("taking the computer-use lock to give back what a crashed deskhand left", "err", err)
		return
	}
	defer func() {
		if err := s.lock.Release(session); err != nil {
			s.log.Warn("releasing the computer-use lock", "err", err)
		}
	}()
	s.repair(ctx)
}

// repairAtTurn is repairLeftovers when a turn begins: the lock is the
// turn's by then.
func (s *safety) repairAtTurn() {
	s.repair(context.Background())
}

func (s *safety) repair(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, RepairTimeout)
	defer cancel()
	repaired, err := cleanup.RepairLeftovers(ctx, s.repairOpts, s.journal.Dir(), s.journal.Display())
	for _, rec := range repaired {
		s.log.Info("gave back what a deskhand that is gone left: "+rec.Describe(), "pid", rec.Owner.PID, "journal", rec.Path)
	}
	if err != nil {
		s.log.Warn("giving back what a crashed deskhand left", "err", err)
	}
}
