package lock

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// startTime reads a process's start time, in clock ticks after boot, from
// field 22 of /proc/PID/stat. The command name (field 2) is in
// parentheses and may itself hold spaces and parentheses, so fields are
// counted after the last ')'.
func startTime(pid int) (uint64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStat(data)
}

func parseStat(data []byte) (uint64, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("no command name in /proc stat line %q", data)
	}
	fields := bytes.Fields(data[i+1:])
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("short /proc stat line %q", data)
	}
	return strconv.ParseUint(string(fields[19]), 10, 64)
}
