// Package manifest defines deskhand's signed release manifest: what a
// release contains for each platform, where to fetch it, and the hashes
// that pin it. It verifies the signature before anything in the payload is
// read (Verify, then Parse; Open does both), and checks a parsed manifest
// for freshness and for the running platform.
//
// The document is a DSSE envelope whose payload is the manifest's JSON; the
// version, sizes and hashes all live inside the signed payload. See
// manifests/README.md for the schema, examples and key custody.
package manifest

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"slices"
	"strings"
	"time"
)

// Errors returned by Verify, Open, Parse and the checks. They are wrapped
// with the detail; test for them with errors.Is.
var (
	// ErrMalformed means the document or its payload is not a valid
	// manifest (truncated, not JSON, a missing or out-of-range field).
	ErrMalformed = errors.New("malformed release manifest")
	// ErrUnsigned means the envelope carries no signature.
	ErrUnsigned = errors.New("release manifest is not signed")
	// ErrUnknownKey means no signature is by a trusted key.
	ErrUnknownKey = errors.New("release manifest is signed by an unknown key")
	// ErrBadSignature means a trusted key's signature does not match the
	// payload: the manifest was changed after it was signed.
	ErrBadSignature = errors.New("release manifest signature is invalid")
	// ErrExpired means the manifest's expiry time has passed: it may be a
	// stale copy replayed to keep this machine from seeing newer releases.
	ErrExpired = errors.New("release manifest has expired")
	// ErrNotYetValid means the manifest was issued in the future by more
	// than the allowed clock skew.
	ErrNotYetValid = errors.New("release manifest is not valid yet")
	// ErrNoArtifact means the release has nothing for this platform.
	ErrNoArtifact = errors.New("release has no helper for this platform")
)

// SchemaVersion is the payload schema this package reads.
const SchemaVersion = 1

// Limits on what a manifest may declare.
const (
	MaxArchiveSize = 1 << 30 // bytes of one archive
	MaxFileSize    = 1 << 30 // bytes of one file in it
	maxArtifacts   = 32
	maxURLs        = 8
	maxFiles       = 64
	maxPathLen     = 255
	maxURLLen      = 2048
)

// Manifest is one release.
type Manifest struct {
	// Schema is SchemaVersion.
	Schema int `json:"schema"`
	// Version is the release version (Semantic Versioning).
	Version string `json:"version"`
	// Issued and Expires bound the manifest's validity. Installers
	// refuse it after Expires, so a mirror cannot freeze a machine on an
	// old release by replaying an old manifest forever.
	Issued  time.Time `json:"issued"`
	Expires time.Time `json:"expires"`
	// Artifacts are the helper archives, one per OS and architecture.
	Artifacts []Artifact `json:"artifacts"`
}

// Artifact is the helper archive for one platform.
type Artifact struct {
	OS   string `json:"os"`   // GOOS: "linux", "darwin"
	Arch string `json:"arch"` // GOARCH: "amd64", "arm64"
	// URLs of the archive, primary first, then mirrors.
	URLs []string `json:"urls"`
	// Size and SHA256 (lower-case hex) of the .tar.gz archive.
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Helper is the path, inside the archive, of the helper executable.
	Helper string `json:"helper"`
	// HelperVersion is what the helper reports in its handshake.
	HelperVersion string `json:"helper_version"`
	// ProtocolVersions are the helper protocol versions it speaks.
	ProtocolVersions []int `json:"protocol_versions"`
	// Files are every file the archive holds, and nothing else may be in it.
	Files []File `json:"files"`
}

// File is one regular file of an archive.
type File struct {
	Path   string `json:"path"` // slash-separated, relative
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Mode   string `json:"mode"` // "0755" or "0644"
}

// FileMode returns f's permission bits.
func (f File) FileMode() fs.FileMode {
	if f.Mode == "0755" {
		return 0o755
	}
	return 0o644
}

// Open verifies doc's signature against trusted and then parses its
// payload.
func Open(doc []byte, trusted []PublicKey) (*Manifest, error) {
	payload, err := Verify(doc, trusted)
	if err != nil {
		return nil, err
	}
	return Parse(payload)
}

// Parse decodes and validates a payload that Verify has accepted. Unknown
// fields are errors: a field this version cannot honour must not be
// silently dropped.
func Parse(payload []byte) (*Manifest, error) {
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the manifest object", ErrMalformed)
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return &m, nil
}

func (m *Manifest) validate() error {
	if m.Schema != SchemaVersion {
		return fmt.Errorf("schema %d; this deskhand reads schema %d, so upgrade deskhand", m.Schema, SchemaVersion)
	}
	if err := ValidVersion(m.Version); err != nil {
		return err
	}
	if m.Issued.IsZero() || m.Expires.IsZero() {
		return errors.New("issued and expires are required")
	}
	if !m.Expires.After(m.Issued) {
		return fmt.Errorf("expires %s is not after issued %s", m.Expires.Format(time.RFC3339), m.Issued.Format(time.RFC3339))
	}
	if len(m.Artifacts) == 0 || len(m.Artifacts) > maxArtifacts {
		return fmt.Errorf("%d artifacts; want 1 to %d", len(m.Artifacts), maxArtifacts)
	}
	seen := map[string]bool{}
	for i := range m.Artifacts {
		a := &m.Artifacts[i]
		if err := a.validate(); err != nil {
			return fmt.Errorf("artifact %d (%s/%s): %v", i, truncate(a.OS, 20), truncate(a.Arch, 20), err)
		}
		if seen[a.OS+"/"+a.Arch] {
			return fmt.Errorf("two artifacts for %s/%s", a.OS, a.Arch)
		}
		seen[a.OS+"/"+a.Arch] = true
	}
	return nil
}

func (a *Artifact) validate() error {
	if !isIdent(a.OS) || !isIdent(a.Arch) {
		return errors.New("os and arch must be lower-case GOOS/GOARCH names")
	}
	if len(a.URLs) == 0 || len(a.URLs) > maxURLs {
		return fmt.Errorf("%d urls; want 1 to %d", len(a.URLs), maxURLs)
	}
	for _, u := range a.URLs {
		if err := checkURL(u); err != nil {
			return err
		}
	}
	if a.Size <= 0 || a.Size > MaxArchiveSize {
		return fmt.Errorf("size %d; want 1 to %d", a.Size, MaxArchiveSize)
	}
	if !isSHA256(a.SHA256) {
		return errors.New("sha256 must be 64 lower-case hex digits")
	}
	if a.HelperVersion == "" || len(a.HelperVersion) > 64 {
		return errors.New("helper_version is required (at most 64 characters)")
	}
	if len(a.ProtocolVersions) == 0 || len(a.ProtocolVersions) > 16 {
		return errors.New("protocol_versions must list 1 to 16 versions")
	}
	for _, v := range a.ProtocolVersions {
		if v <= 0 {
			return fmt.Errorf("protocol version %d is not positive", v)
		}
	}
	if len(a.Files) == 0 || len(a.Files) > maxFiles {
		return fmt.Errorf("%d files; want 1 to %d", len(a.Files), maxFiles)
	}
	paths := map[string]bool{}
	for _, f := range a.Files {
		if err := CheckPath(f.Path); err != nil {
			return err
		}
		if paths[f.Path] {
			return fmt.Errorf("file %q listed twice", f.Path)
		}
		paths[f.Path] = true
		if f.Size < 0 || f.Size > MaxFileSize {
			return fmt.Errorf("file %q: size %d out of range", f.Path, f.Size)
		}
		if !isSHA256(f.SHA256) {
			return fmt.Errorf("file %q: sha256 must be 64 lower-case hex digits", f.Path)
		}
		if f.Mode != "0755" && f.Mode != "0644" {
			return fmt.Errorf("file %q: mode %q; want \"0755\" or \"0644\"", f.Path, truncate(f.Mode, 10))
		}
	}
	// A file may not sit inside another file's path.
	for p := range paths {
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if paths[dir] {
				return fmt.Errorf("file %q is inside file %q", p, dir)
			}
		}
	}
	i := slices.IndexFunc(a.Files, func(f File) bool { return f.Path == a.Helper })
	if i < 0 {
		return fmt.Errorf("helper %q is not among the files", truncate(a.Helper, 80))
	}
	if a.Files[i].Mode != "0755" {
		return fmt.Errorf("helper %q must have mode 0755", a.Helper)
	}
	return nil
}

// CheckPath reports whether p is a safe relative path for a file in an
// archive: slash-separated, clean, not absolute, no "." or ".." element, no
// backslash, control character or empty element.
func CheckPath(p string) error {
	if p == "" || len(p) > maxPathLen {
		return fmt.Errorf("path %q: want 1 to %d bytes", truncate(p, 80), maxPathLen)
	}
	if strings.ContainsAny(p, "\\") || strings.IndexFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return fmt.Errorf("path %q contains a backslash or control character", truncate(p, 80))
	}
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("path %q is absolute", truncate(p, 80))
	}
	for _, el := range strings.Split(p, "/") {
		if el == "" || el == "." || el == ".." {
			return fmt.Errorf("path %q has an empty, \".\" or \"..\" element", truncate(p, 80))
		}
	}
	return nil
}

func checkURL(s string) error {
	if len(s) > maxURLLen {
		return fmt.Errorf("url longer than %d bytes", maxURLLen)
	}
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("url %q: %v", truncate(s, 80), err)
	}
	if u.Scheme != "https" && u.Scheme != "http" {
		return fmt.Errorf("url %q: scheme must be https or http", truncate(s, 80))
	}
	if u.Host == "" || u.User != nil {
		return fmt.Errorf("url %q: want a host and no user info", truncate(s, 80))
	}
	return nil
}

func isIdent(s string) bool {
	if s == "" || len(s) > 16 {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789") == ""
}

func isSHA256(s string) bool {
	if len(s) != 64 || strings.ToLower(s) != s {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// CheckTime reports ErrExpired when now is at or past the expiry time, and
// ErrNotYetValid when the manifest was issued more than skew after now.
func (m *Manifest) CheckTime(now time.Time, skew time.Duration) error {
	if !now.Before(m.Expires) {
		return fmt.Errorf("%w: release %s expired at %s (now %s); the server is serving a stale manifest: try a mirror, or check this machine's clock",
			ErrExpired, m.Version, m.Expires.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if m.Issued.After(now.Add(skew)) {
		return fmt.Errorf("%w: release %s was issued at %s, after now (%s); check this machine's clock",
			ErrNotYetValid, m.Version, m.Issued.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}

// Artifact returns the artifact for goos/goarch.
func (m *Manifest) Artifact(goos, goarch string) (*Artifact, error) {
	for i := range m.Artifacts {
		if m.Artifacts[i].OS == goos && m.Artifacts[i].Arch == goarch {
			return &m.Artifacts[i], nil
		}
	}
	var have []string
	for _, a := range m.Artifacts {
		have = append(have, a.OS+"/"+a.Arch)
	}
	return nil, fmt.Errorf("%w: release %s has %s, not %s/%s; build the helper from source (`make build`) and pass --helper",
		ErrNoArtifact, m.Version, strings.Join(have, ", "), goos, goarch)
}

// Encode returns the canonical payload bytes of m: its JSON with the
// fields in schema order and times in UTC, as the release tool signs it.
func (m *Manifest) Encode() ([]byte, error) {
	c := *m
	c.Issued, c.Expires = m.Issued.UTC(), m.Expires.UTC()
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	out, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}
