package lock

import (
	"os"
	"path/filepath"
)

// Self returns this process as the lock records an owner (pid, start
// time, host and program name), for other records that must tell a live
// deskhand from a dead one or a reused pid the way the lock does (see
// Stale).
func Self() Owner {
	pid := os.Getpid()
	st, _ := startTime(pid)
	host, _ := os.Hostname()
	return Owner{PID: pid, StartTime: st, Host: host, Command: filepath.Base(os.Args[0])}
}
