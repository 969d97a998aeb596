//go:build !linux

package keycodes

import "time"

// preciseSleep is time.Sleep where the runtime's timers are not known to
// wake late.
func preciseSleep(d time.Duration) { time.Sleep(d) }

func tightenTimerSlack() (restore func()) { return func() {} }
