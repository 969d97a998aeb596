package supervisor

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// HelperName is the file name of the capture helper binary.
const HelperName = "deskhand-helper"

// HelperSource says where a helper binary was found.
type HelperSource string

// Where LocateHelper can find a helper, in the order it looks.
const (
	FromFlag   HelperSource = "--helper flag"
	FromEnv    HelperSource = "DESKHAND_HELPER"
	FromBeside HelperSource = "beside the deskhand executable"
)

// LocateHelper finds the capture helper: an explicit path first, then the
// DESKHAND_HELPER environment variable, then a helper beside the running
// executable. (The installer adds verified bundles, installed versions and
// downloads to this order.)
func LocateHelper(explicit string) (string, HelperSource, error) {
	if explicit != "" {
		p, err := checkExecutable(explicit)
		if err != nil {
			return "", "", fmt.Errorf("using --helper: %w", err)
		}
		return p, FromFlag, nil
	}
	if env := os.Getenv("DESKHAND_HELPER"); env != "" {
		p, err := checkExecutable(env)
		if err != nil {
			return "", "", fmt.Errorf("using DESKHAND_HELPER: %w", err)
		}
		return p, FromEnv, nil
	}
	var looked []string
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		candidate := filepath.Join(filepath.Dir(exe), HelperName)
		looked = append(looked, candidate)
		if p, err := checkExecutable(candidate); err == nil {
			return p, FromBeside, nil
		}
	}
	return "", "", fmt.Errorf("finding the capture helper: no %s found (looked in %s); build it with `make build`, or pass --helper PATH or set DESKHAND_HELPER",
		HelperName, strings.Join(looked, ", "))
}

func checkExecutable(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s does not exist", abs)
		}
		return "", err
	}
	if fi.IsDir() {
		return "", fmt.Errorf("%s is a directory, not the helper binary", abs)
	}
	if fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not executable (chmod +x it)", abs)
	}
	return abs, nil
}
