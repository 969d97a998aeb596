package input

import (
	"syscall"
	"time"
)

// preciseSleep blocks the calling thread for d in the kernel, which ends
// it within the thread's timer slack; the runtime's own timers end up to a
// millisecond late here. Callers keep d short: the thread does nothing
// else meanwhile.
func preciseSleep(d time.Duration) {
	if d <= 0 {
		return
	}
	ts := syscall.NsecToTimespec(int64(d))
	for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
	}
}
