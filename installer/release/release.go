// Package release builds what a deskhand release publishes for the
// installer: one reproducible .tar.gz per platform holding the capture
// helper, and the signed manifest that pins them (installer/manifest). The
// deskhand-release command is a thin wrapper around it.
package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/deskhand/deskhand/bridge"
	"github.com/deskhand/deskhand/installer/manifest"
	sha256 "github.com/minio/sha256-simd"
)

// HelperName is the helper's file name inside every archive; Windows'
// has the .exe Windows runs programs by (HelperFile).
const HelperName = "deskhand-helper"

// HelperFile is the helper's file name inside the archive for goos.
func HelperFile(goos string) string {
	if goos == "windows" {
		return HelperName + ".exe"
	}
	return HelperName
}

// Input is one platform's helper binary.
type Input struct {
	OS, Arch string
	// HelperPath is the built helper executable.
	HelperPath string
	// HelperVersion and ProtocolVersions are what the helper reports in
	// its handshake; Probe finds them when the helper runs here.
	HelperVersion    string
	ProtocolVersions []int
}

// Options describe a release.
type Options struct {
	Version string
	Inputs  []Input
	// BaseURLs are where the archives will be served, primary first;
	// each archive's URLs are BaseURL + "/" + its file name.
	BaseURLs []string
	// Issued is the manifest's issue time (default now); it expires
	// Validity later (default 30 days). Installers refuse expired
	// manifests, so a release must be re-signed before then.
	Issued   time.Time
	Validity time.Duration
	// ModTime is stamped on archive entries (default the Unix epoch), so
	// the same binary always makes the same archive.
	ModTime time.Time
	// Keys sign the manifest.
	Keys []ed25519.PrivateKey
}

// Output is a built release.
type Output struct {
	Manifest *manifest.Manifest
	// Signed is the manifest document to publish as manifest.json.
	Signed []byte
	// Archives maps file names to contents.
	Archives map[string][]byte
}

// ArchiveName is the file name of a platform's archive.
func ArchiveName(version, goos, goarch string) string {
	return fmt.Sprintf("deskhand-helper-%s-%s-%s.tar.gz", version, goos, goarch)
}

// Build makes the archives and the signed manifest.
func Build(opts Options) (*Output, error) {
	if err := manifest.ValidVersion(opts.Version); err != nil {
		return nil, err
	}
	if len(opts.Inputs) == 0 {
		return nil, errors.New("no helper binaries given")
	}
	if len(opts.BaseURLs) == 0 {
		return nil, errors.New("no base URL given: say where the archives will be served")
	}
	if len(opts.Keys) == 0 {
		return nil, errors.New("no signing key given")
	}
	if opts.Issued.IsZero() {
		opts.Issued = time.Now()
	}
	if opts.Validity <= 0 {
		opts.Validity = 30 * 24 * time.Hour
	}
	if opts.ModTime.IsZero() {
		opts.ModTime = time.Unix(0, 0)
	}
	m := &manifest.Manifest{
		Schema:  manifest.SchemaVersion,
		Version: opts.Version,
		Issued:  opts.Issued.UTC().Truncate(time.Second),
		Expires: opts.Issued.UTC().Truncate(time.Second).Add(opts.Validity),
	}
	out := &Output{Manifest: m, Archives: map[string][]byte{}}
	for _, in := range opts.Inputs {
		bin, err := os.ReadFile(in.HelperPath)
		if err != nil {
			return nil, fmt.Errorf("reading the %s/%s helper: %w", in.OS, in.Arch, err)
		}
		data, files, err := BuildArchive([]ArchiveFile{{Path: HelperFile(in.OS), Data: bin, Mode: 0o755}}, opts.ModTime)
		if err != nil {
			return nil, err
		}
		name := ArchiveName(opts.Version, in.OS, in.Arch)
		var urls []string
		for _, base := range opts.BaseURLs {
			u, err := url.JoinPath(base, name)
			if err != nil {
				return nil, fmt.Errorf("joining %s and %s: %w", base, name, err)
			}
			urls = append(urls, u)
		}
		sum := sha256.Sum256(data)
		m.Artifacts = append(m.Artifacts, manifest.Artifact{
			OS: in.OS, Arch: in.Arch, URLs: urls,
			Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:]),
			Helper: HelperFile(in.OS), HelperVersion: in.HelperVersion, ProtocolVersions: in.ProtocolVersions,
			Files: files,
		})
		out.Archives[name] = data
	}
	payload, err := m.Encode()
	if err != nil {
		return nil, err
	}
	if out.Signed, err = manifest.Sign(payload, opts.Keys...); err != nil {
		return nil, err
	}
	return out, nil
}

// Write puts the manifest (manifest.json) and archives into dir.
func (o *Output) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range o.Archives {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(dir, "manifest.json"), o.Signed, 0o644)
}

// ArchiveFile is one file to put in an archive.
type ArchiveFile struct {
	Path string
	Data []byte
	Mode fs.FileMode
}

// BuildArchive makes a reproducible .tar.gz of files (owner root, the
// given mtime, no gzip name or time) and returns it with the manifest
// entries that describe its files.
func BuildArchive(files []ArchiveFile, mtime time.Time) ([]byte, []manifest.File, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, nil, err
	}
	tw := tar.NewWriter(zw)
	var entries []manifest.File
	for _, f := range files {
		if err := manifest.CheckPath(f.Path); err != nil {
			return nil, nil, err
		}
		mode := "0644"
		if f.Mode&0o111 != 0 {
			mode = "0755"
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg, Name: f.Path, Size: int64(len(f.Data)),
			Mode: map[string]int64{"0644": 0o644, "0755": 0o755}[mode], ModTime: mtime, Format: tar.FormatPAX,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, nil, err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, nil, err
		}
		sum := sha256.Sum256(f.Data)
		entries = append(entries, manifest.File{Path: f.Path, Size: int64(len(f.Data)), SHA256: hex.EncodeToString(sum[:]), Mode: mode})
	}
	if err := tw.Close(); err != nil {
		return nil, nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, nil, err
	}
	return buf.Bytes(), entries, nil
}

// Probe starts a helper and returns what its handshake reports: its
// version and the protocol version it chose from those deskhand offers.
func Probe(ctx context.Context, helperPath string) (helperVersion string, protocols []int, err error) {
	c := bridge.New(bridge.Options{Path: helperPath, MaxRestarts: 1, ClientName: "deskhand-release"})
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		return "", nil, fmt.Errorf("probing %s: %w", helperPath, err)
	}
	info := c.HandshakeInfo()
	return info.HelperVersion, []int{info.ProtocolVersion}, nil
}

// GenerateKey makes a new Ed25519 key pair and writes NAME.key (the
// secret, mode 0600, refusing to overwrite) and NAME.pub into dir.
func GenerateKey(dir, name string) (pubPath, secretPath string, err error) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	secretPath = filepath.Join(dir, name+".key")
	pubPath = filepath.Join(dir, name+".pub")
	f, err := os.OpenFile(secretPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", "", fmt.Errorf("writing the secret key: %w (keygen never overwrites a key)", err)
	}
	_, err = fmt.Fprintf(f, "# deskhand release signing key %s (id %s). Keep it secret and offline; see manifests/README.md.\n%s\n",
		name, manifest.KeyID(pub), manifest.FormatPrivateKey(priv))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", "", err
	}
	pubText := fmt.Sprintf("# deskhand release public key %s (id %s)\n%s\n", name, manifest.KeyID(pub), manifest.FormatPublicKey(pub))
	if err := os.WriteFile(pubPath, []byte(pubText), 0o644); err != nil {
		return "", "", err
	}
	return pubPath, secretPath, nil
}

// LoadKey reads a secret key from a file, or, when path is "env:NAME",
// from the environment variable NAME. A key file readable by others is
// refused.
func LoadKey(path string) (ed25519.PrivateKey, error) {
	if name, ok := strings.CutPrefix(path, "env:"); ok {
		v := os.Getenv(name)
		if v == "" {
			return nil, fmt.Errorf("environment variable %s is empty: put the secret key line in it", name)
		}
		return manifest.ParsePrivateKey(v)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("secret key %s is readable by others (mode %v): chmod 600 it", path, fi.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return manifest.ParsePrivateKey(string(raw))
}
