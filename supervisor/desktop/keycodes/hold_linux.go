package keycodes

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

// holdSlack is the input thread's timer slack: the kernel may end a
// preciseSleep this much late. Its default, 50 µs, is most of what a
// click costs above its press time once the X round trips are cut.
const holdSlack = time.Microsecond

// tightenTimerSlack sets the calling thread's timer slack to holdSlack and
// returns the function that puts the old one back; the caller holds the
// thread (runtime.LockOSThread) in between.
func tightenTimerSlack() (restore func()) {
	old, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_GET_TIMERSLACK, 0, 0)
	if errno != 0 {
		return func() {}
	}
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_TIMERSLACK, uintptr(holdSlack), 0); errno != 0 {
		return func() {}
	}
	return func() { syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_TIMERSLACK, old, 0) }
}
