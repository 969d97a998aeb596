// Package releasetest builds real signed releases and serves them from a
// loopback HTTP server, for the installer's tests. Keys are throwaway test
// keys derived from fixed seeds; the installer under test is told to trust
// them through its options, never through the embedded list.
package releasetest

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/deskhand/deskhand/installer/manifest"
	"github.com/deskhand/deskhand/installer/release"
)

// Epoch is the test clock's "now": releases are issued an hour before it
// and expire thirty days after it.
var Epoch = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

func key(seed byte) ed25519.PrivateKey {
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = seed
	}
	return ed25519.NewKeyFromSeed(s)
}

// Test keys: Current and Next are trusted (as the embedded list holds a
// current and a next key); Unknown is not.
var (
	Current = key(1)
	Next    = key(2)
	Unknown = key(3)
)

// Trusted returns the public halves of Current and Next.
func Trusted() []manifest.PublicKey {
	var out []manifest.PublicKey
	for _, k := range []ed25519.PrivateKey{Current, Next} {
		pub := k.Public().(ed25519.PublicKey)
		out = append(out, manifest.PublicKey{ID: manifest.KeyID(pub), Key: pub})
	}
	return out
}

// Release is a built release: the signed manifest and one archive.
type Release struct {
	Manifest *manifest.Manifest
	Signed   []byte
	Archive  []byte
	Name     string // archive file name
}

// Artifact returns the release's only artifact.
func (r *Release) Artifact() *manifest.Artifact { return &r.Manifest.Artifacts[0] }

var (
	realOnce    sync.Once
	realArchive []byte
	realFiles   []manifest.File
	realVersion string
	realProtos  []int
	realErr     error
)

// RealHelper returns an archive of the real helper at helperPath, its
// manifest entries and what its handshake reports. It is built once per
// test binary.
func RealHelper(t testing.TB, helperPath string) (archive []byte, files []manifest.File, helperVersion string, protocols []int) {
	t.Helper()
	realOnce.Do(func() {
		bin, err := readFile(helperPath)
		if err != nil {
			realErr = err
			return
		}
		realArchive, realFiles, realErr = release.BuildArchive([]release.ArchiveFile{{Path: release.HelperName, Data: bin, Mode: 0o755}}, time.Unix(0, 0))
		if realErr != nil {
			return
		}
		realVersion, realProtos, realErr = release.Probe(context.Background(), helperPath)
	})
	if realErr != nil {
		t.Fatalf("building the real helper's archive from %s: %v", helperPath, realErr)
	}
	return realArchive, realFiles, realVersion, realProtos
}

// Spec describes a release to sign.
type Spec struct {
	Version string
	// Archive and Files are the archive's bytes and the file list the
	// manifest declares for it.
	Archive []byte
	Files   []manifest.File
	// HelperVersion and Protocols are what the manifest says the helper
	// reports.
	HelperVersion string
	Protocols     []int
	// URLs of the archive; default the server's /<name>.
	URLs []string
	// Issued defaults to Epoch minus an hour, Expires to Epoch plus 30 days.
	Issued, Expires time.Time
	// Size and SHA256 override the archive's true ones when set.
	Size   int64
	SHA256 string
	// Keys sign it; default Current.
	Keys []ed25519.PrivateKey
	// OS and Arch default to linux/amd64.
	OS, Arch string
}

// Sign builds the signed manifest for spec.
func Sign(t testing.TB, spec Spec) *Release {
	t.Helper()
	if spec.Issued.IsZero() {
		spec.Issued = Epoch.Add(-time.Hour)
	}
	if spec.Expires.IsZero() {
		spec.Expires = Epoch.Add(30 * 24 * time.Hour)
	}
	if len(spec.Keys) == 0 {
		spec.Keys = []ed25519.PrivateKey{Current}
	}
	if spec.OS == "" {
		spec.OS, spec.Arch = "linux", "amd64"
	}
	name := fmt.Sprintf("helper-%s.tar.gz", spec.Version)
	sum := sha256.Sum256(spec.Archive)
	art := manifest.Artifact{
		OS: spec.OS, Arch: spec.Arch, URLs: spec.URLs,
		Size: int64(len(spec.Archive)), SHA256: hex.EncodeToString(sum[:]),
		Helper: release.HelperName, HelperVersion: spec.HelperVersion, ProtocolVersions: spec.Protocols,
		Files: spec.Files,
	}
	if spec.Size != 0 {
		art.Size = spec.Size
	}
	if spec.SHA256 != "" {
		art.SHA256 = spec.SHA256
	}
	m := &manifest.Manifest{Schema: manifest.SchemaVersion, Version: spec.Version, Issued: spec.Issued, Expires: spec.Expires, Artifacts: []manifest.Artifact{art}}
	payload, err := m.Encode()
	if err != nil {
		t.Fatalf("encoding manifest %s: %v", spec.Version, err)
	}
	signed, err := manifest.Sign(payload, spec.Keys...)
	if err != nil {
		t.Fatal(err)
	}
	return &Release{Manifest: m, Signed: signed, Archive: spec.Archive, Name: name}
}

// Server is a loopback HTTP server of named files, each served with
// Range support and a strong ETag, unless a path has its own handler.
type Server struct {
	*httptest.Server
	mu       sync.Mutex
	files    map[string][]byte
	handlers map[string]http.HandlerFunc
	hits     map[string]int
	asked    []string
}

// NewServer starts a Server, closed when the test ends.
func NewServer(t testing.TB) *Server {
	s := &Server{files: map[string][]byte{}, handlers: map[string]http.HandlerFunc{}, hits: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Put serves data at path.
func (s *Server) Put(path string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = data
}

// Handle gives path its own handler.
func (s *Server) Handle(path string, h http.HandlerFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[path] = h
}

// Hits returns how many requests path got.
func (s *Server) Hits(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// Asked returns the paths requested so far, in order.
func (s *Server) Asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.asked...)
}

// At returns the URL of path.
func (s *Server) At(path string) string { return s.URL + path }

// Publish serves r's manifest at manifestPath and its archive at
// /<name>, and returns the manifest's URL. r must have been signed with
// URLs pointing here (see Sign's URLs).
func (s *Server) Publish(manifestPath string, r *Release) string {
	s.Put(manifestPath, r.Signed)
	s.Put("/"+r.Name, r.Archive)
	return s.At(manifestPath)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.asked = append(s.asked, r.URL.Path)
	h := s.handlers[r.URL.Path]
	data, ok := s.files[r.URL.Path]
	s.mu.Unlock()
	if h != nil {
		h(w, r)
		return
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	ServeBytes(w, r, data)
}

// ServeBytes serves data with a strong ETag (its hash) and Range support.
func ServeBytes(w http.ResponseWriter, r *http.Request, data []byte) {
	sum := sha256.Sum256(data)
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
	http.ServeContent(w, r, "", time.Time{}, strings.NewReader(string(data)))
}

func readFile(path string) ([]byte, error) { return os.ReadFile(path) }
