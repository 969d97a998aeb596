package manifest

import (
	_ "embed"
	"fmt"
	"strings"
)

// trustedKeys is the list of public keys this build trusts to sign
// release manifests, one per line: the current key first, then the next
// one, already shipped so that releases can move to it without breaking
// installs (see manifests/README.md, "Key custody").
//
//go:embed trusted_keys.txt
var trustedKeys string

// extraTrustedKeys adds keys at link time only (go build -ldflags
// "-X github.com/deskhand/deskhand/installer/manifest.extraTrustedKeys=...",
// lines separated by "|"). End-to-end tests use it to build a deskhand that
// trusts their throwaway key; it can do nothing that rebuilding the binary
// with another trusted_keys.txt could not, and release builds leave it
// empty.
var extraTrustedKeys string

// TrustedKeys returns the manifest-signing keys embedded in this build.
func TrustedKeys() []PublicKey {
	var keys []PublicKey
	for line := range strings.Lines(trustedKeys + "\n" + strings.ReplaceAll(extraTrustedKeys, "|", "\n")) {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, err := ParsePublicKey(line)
		if err != nil {
			panic(fmt.Sprintf("installer/manifest/trusted_keys.txt: %v", err))
		}
		keys = append(keys, k)
	}
	return keys
}
