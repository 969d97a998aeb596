package keycodes

import (
	"context"
	"time"
)

// A mouse move is one request and one round trip to the X server, but
// through the worker it also costs the hop to the worker's thread and
// back, two thread wake-ups that took about as long as the round trip.
// Xlib keeps that hop (see Input.loop); a connection of the backend's own
// that is safe to use from any thread (XCB) does not need it. So Move
// sends the warp from the caller's goroutine when nothing can come
// between it and the other input: only while no operation runs (the
// caller holds the Input's turn, which the worker holds for a whole
// operation), with nothing pending on the worker's connections, and when
// the worker would not run the keyboard guard around the move (a key is
// held, or the last check did not finish). Everywhere else, and for every
// other operation, the worker sends it as before.
//
// The caller waits for the server to have processed the warp, as the
// worker's sync does, up to the stall timeout. A warp the server does not
// answer in that time marks the Input stalled like a worker stuck in
// Xlib (deadline.go); the worker then waits for that warp's answer
// before it sends anything else, so nothing overtakes it, and once the
// display answers it releases what the Input holds and clears the mark
// (recoverWarp, settleWarp, recoverStall).

// warper is a backend that can move the pointer from any goroutine.
// Every method is called with the Input's turn held.
type warper interface {
	// ready reports whether a warp may go out now: nothing the worker
	// sent is still pending, no earlier warp waits for its answer, and
	// the connections work.
	ready() bool
	// warp moves the pointer to (x, y) and waits up to wait for the
	// server to have processed it. done is false when it did not answer
	// in time; the warp then stays pending until settle.
	warp(x, y int, wait time.Duration) (done bool, err error)
	// pending reports a warp that warp gave up waiting for.
	pending() bool
	// settle waits, without a bound, for the pending warp's answer.
	settle() error
}

// warpNow moves the pointer from the calling goroutine when nothing else
// is in flight; ok is false when the caller must send the move through
// the worker instead.
func (in *Input) warpNow(ctx context.Context, x, y int) (ok bool, err error) {
	if in.warp == nil || !in.turn.TryLock() {
		return false, nil
	}
	defer in.turn.Unlock()
	select {
	case <-in.quit:
		return false, nil
	default:
	}
	// The conditions under which run would check the keyboard guard.
	if in.guard.unsettled || in.holdsKey() || in.watch.isStalled() || !in.warp.ready() {
		return false, nil
	}
	if err := ctx.Err(); err != nil {
		return true, err
	}
	in.watch.enter()
	done, err := in.warp.warp(x, y, in.watch.timeout)
	if !done {
		err = in.watch.giveUp(in.display)
	}
	in.watch.leave()
	if in.watch.isStalled() {
		// Marked by this warp, or by a caller that saw it waiting past
		// the timeout just before its answer came.
		go in.recoverWarp()
	}
	return true, err
}

// recoverWarp hands the worker an empty operation after a warp the
// display stalled on: run waits for that warp's answer first
// (settleWarp), and recoverStall then does what it does after any
// stall.
func (in *Input) recoverWarp() {
	c := call{
		ctx:         context.Background(),
		fn:          func(context.Context, *op) error { return nil },
		result:      make(chan error, 1),
		pointerOnly: true,
	}
	select {
	case in.calls <- c:
	case <-in.quit:
	}
}

// settleWarp waits for a warp warpNow gave up on, so that nothing the
// worker sends overtakes it. The wait is watched like any backend call:
// Close abandons it on a display that still does not answer.
func (in *Input) settleWarp() error {
	if in.warp == nil || !in.warp.pending() {
		return nil
	}
	in.watch.enter()
	defer in.watch.leave()
	return in.warp.settle()
}
