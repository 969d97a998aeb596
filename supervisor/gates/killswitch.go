package gates

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/deskhand/deskhand/supervisor/consent"
)

// DisabledEnv switches deskhand off when set to anything but "", "0",
// "false", "no" or "off".
const DisabledEnv = "DESKHAND_DISABLED"

// DisabledFile switches deskhand off while a file of this name exists in
// the user's config directory (consent.DefaultConfigDir) or beside the
// managed policy file (consent.SystemPolicyPath): the user's own switch,
// and the administrator's.
const DisabledFile = "disabled"

// DefaultKillSwitch checks the environment variable (getenv nil means
// os.Getenv) and the two files, on every call, so a running server stops
// the moment one appears.
func DefaultKillSwitch(getenv func(string) string) func() (bool, string) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var files []string
	if dir, err := consent.DefaultConfigDir(); err == nil {
		files = append(files, filepath.Join(dir, DisabledFile))
	}
	files = append(files, filepath.Join(filepath.Dir(consent.SystemPolicyPath), DisabledFile))
	return KillSwitch(getenv, files...)
}

// KillSwitch checks the environment variable through getenv and the files.
func KillSwitch(getenv func(string) string, files ...string) func() (bool, string) {
	return func() (bool, string) {
		switch v := strings.ToLower(strings.TrimSpace(getenv(DisabledEnv))); v {
		case "", "0", "false", "no", "off":
		default:
			return true, DisabledEnv + " is set in deskhand's environment; unset it and restart deskhand"
		}
		for _, f := range files {
			if _, err := os.Lstat(f); err == nil {
				return true, "the file " + f + " exists; remove it to switch deskhand on"
			}
		}
		return false, ""
	}
}
