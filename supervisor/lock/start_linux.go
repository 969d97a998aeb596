package lock

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"strconv"
)

// startTime reads a process's start time, in clock ticks after boot, from
// field 22 of /proc/PID/stat. A zombie (killed, not yet reaped by its
// parent) has exited: it is reported as gone (fs.ErrNotExist).
func startTime(pid int) (uint64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	state, st, err := parseStat(data)
	if err != nil {
		return 0, err
	}
	if state == 'Z' || state == 'X' {
		return 0, fs.ErrNotExist
	}
	return st, nil
}

// parseStat returns the state (field 3) and the start time (field 22) of
// a /proc/PID/stat line. The command name (field 2) is in parentheses and
// may itself hold spaces and parentheses, so fields are counted after the
// last ')'.
func parseStat(data []byte) (byte, uint64, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("no command name in /proc stat line %q", data)
	}
	fields := bytes.Fields(data[i+1:])
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 || len(fields[0]) != 1 {
		return 0, 0, fmt.Errorf("short /proc stat line %q", data)
	}
	st, err := strconv.ParseUint(string(fields[19]), 10, 64)
	return fields[0][0], st, err
}
