package platform

import (
	"fmt"
	"strings"
)

// BundleID is a macOS bundle identifier ("com.apple.Safari"), the identity
// the safety layer keys a macOS app on: allowlists, tiers, the catalog and
// denials. Launch Services compares bundle ids without regard to case, and
// so does the catalog.
type BundleID string

// ParseBundleID checks s against Apple's rules for CFBundleIdentifier:
// ASCII letters, digits, hyphens and periods, no empty component, at most
// 255 bytes.
func ParseBundleID(s string) (BundleID, error) {
	if s == "" {
		return "", fmt.Errorf("bundle id is empty")
	}
	if len(s) > 255 {
		return "", fmt.Errorf("bundle id %.40q... is %d bytes, over 255", s, len(s))
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.'
		if !ok {
			return "", fmt.Errorf("bundle id %q has %q at byte %d; only letters, digits, '-' and '.' are allowed", s, c, i)
		}
	}
	for _, part := range strings.Split(s, ".") {
		if part == "" {
			return "", fmt.Errorf("bundle id %q has an empty component (a leading, trailing or doubled '.')", s)
		}
	}
	return BundleID(s), nil
}
