package manifest

import (
	"fmt"
	"strconv"
	"strings"
)

// CompareVersions compares two release versions under Semantic Versioning
// 2.0.0 precedence (build metadata after "+" is not allowed): it returns
// -1, 0 or +1. Both must be valid (see ValidVersion); an invalid one sorts
// below every valid one, so it can never win a comparison.
func CompareVersions(a, b string) int {
	va, errA := parseVersion(a)
	vb, errB := parseVersion(b)
	switch {
	case errA != nil && errB != nil:
		return 0
	case errA != nil:
		return -1
	case errB != nil:
		return 1
	}
	for i := range 3 {
		if va.core[i] != vb.core[i] {
			if va.core[i] < vb.core[i] {
				return -1
			}
			return 1
		}
	}
	return comparePre(va.pre, vb.pre)
}

// ValidVersion reports whether v is MAJOR.MINOR.PATCH with an optional
// "-prerelease" part, as Semantic Versioning 2.0.0 defines them.
func ValidVersion(v string) error {
	_, err := parseVersion(v)
	return err
}

type version struct {
	core [3]uint64
	pre  []string
}

func parseVersion(s string) (version, error) {
	var v version
	if len(s) == 0 || len(s) > 64 {
		return v, fmt.Errorf("version %q: want MAJOR.MINOR.PATCH[-PRERELEASE], at most 64 characters", s)
	}
	core, pre, hasPre := strings.Cut(s, "-")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return v, fmt.Errorf("version %q: want MAJOR.MINOR.PATCH[-PRERELEASE]", s)
	}
	for i, p := range parts {
		n, err := numericIdentifier(p)
		if err != nil {
			return v, fmt.Errorf("version %q: %w", s, err)
		}
		v.core[i] = n
	}
	if hasPre {
		v.pre = strings.Split(pre, ".")
		for _, id := range v.pre {
			if id == "" || strings.Trim(id, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-") != "" {
				return v, fmt.Errorf("version %q: pre-release identifiers are non-empty [0-9A-Za-z-]", s)
			}
			if isDigits(id) {
				if _, err := numericIdentifier(id); err != nil {
					return v, fmt.Errorf("version %q: %w", s, err)
				}
			}
		}
	}
	return v, nil
}

func numericIdentifier(p string) (uint64, error) {
	if p == "" || !isDigits(p) {
		return 0, fmt.Errorf("%q is not a number", p)
	}
	if len(p) > 1 && p[0] == '0' {
		return 0, fmt.Errorf("%q has a leading zero", p)
	}
	n, err := strconv.ParseUint(p, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range", p)
	}
	return n, nil
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// comparePre orders pre-release identifier lists: a version without one
// ranks above any with one; numeric identifiers rank below alphanumeric
// ones and compare as numbers.
func comparePre(a, b []string) int {
	switch {
	case len(a) == 0 && len(b) == 0:
		return 0
	case len(a) == 0:
		return 1
	case len(b) == 0:
		return -1
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		xn, yn := isDigits(x), isDigits(y)
		switch {
		case xn && yn:
			nx, _ := strconv.ParseUint(x, 10, 64)
			ny, _ := strconv.ParseUint(y, 10, 64)
			if nx < ny {
				return -1
			}
			return 1
		case xn:
			return -1
		case yn:
			return 1
		case x < y:
			return -1
		default:
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}
