//go:build unix && !linux

package sway

import "syscall"

// procAttr puts sway in its own process group; only Linux can also tie
// its life to deskhand's.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
