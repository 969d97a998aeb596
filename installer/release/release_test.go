package release

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/deskhand/deskhand/installer/manifest"
)

func TestBuildSignsReproducibly(t *testing.T) {
	dir := t.TempDir()
	helper := filepath.Join(dir, "deskhand-helper")
	os.WriteFile(helper, []byte("\x7fELF not really"), 0o755)
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	opts := Options{
		Version: "1.0.0", BaseURLs: []string{"https://a.example/r/", "https://b.example/m"}, Keys: []ed25519.PrivateKey{key},
		Inputs: []Input{{OS: "linux", Arch: "amd64", HelperPath: helper, HelperVersion: "0.1.0", ProtocolVersions: []int{1}}},
		Issued: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
	}
	a, err := Build(opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Build(opts)
	name := ArchiveName("1.0.0", "linux", "amd64")
	if !bytes.Equal(a.Archives[name], b.Archives[name]) || !bytes.Equal(a.Signed, b.Signed) {
		t.Errorf("two builds of the same input differ")
	}
	pub := key.Public().(ed25519.PublicKey)
	m, err := manifest.Open(a.Signed, []manifest.PublicKey{{ID: manifest.KeyID(pub), Key: pub}})
	if err != nil {
		t.Fatalf("Open(built manifest) = %v", err)
	}
	art := m.Artifacts[0]
	if art.URLs[0] != "https://a.example/r/"+name || art.URLs[1] != "https://b.example/m/"+name {
		t.Errorf("URLs = %v", art.URLs)
	}
	if len(art.Files) != 1 || art.Files[0].Path != HelperName || art.Files[0].Mode != "0755" {
		t.Errorf("Files = %+v", art.Files)
	}
	if !m.Expires.Equal(opts.Issued.Add(30 * 24 * time.Hour)) {
		t.Errorf("Expires = %v", m.Expires)
	}
}

func TestKeys(t *testing.T) {
	dir := t.TempDir()
	pubPath, secretPath, err := GenerateKey(dir, "current")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := GenerateKey(dir, "current"); err == nil {
		t.Errorf("GenerateKey overwrote an existing key")
	}
	key, err := LoadKey(secretPath)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(pubPath)
	pub, err := manifest.ParsePublicKey(string(raw))
	if err != nil || !pub.Key.Equal(key.Public()) {
		t.Fatalf("public key %v does not match the secret (%v)", pub, err)
	}
	os.Chmod(secretPath, 0o644)
	if _, err := LoadKey(secretPath); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("LoadKey(world-readable) = %v, want a refusal", err)
	}
	secret, _ := os.ReadFile(secretPath)
	t.Setenv("TEST_RELEASE_KEY", string(secret))
	if k, err := LoadKey("env:TEST_RELEASE_KEY"); err != nil || !k.Equal(key) {
		t.Errorf("LoadKey(env:) = %v", err)
	}
}

// TestBuildWindowsArtifact: the Windows helper's archive and manifest entry
// name it deskhand-helper.exe, the name Windows runs it by.
func TestBuildWindowsArtifact(t *testing.T) {
	dir := t.TempDir()
	helper := filepath.Join(dir, "deskhand-helper.exe")
	os.WriteFile(helper, []byte("MZ not really"), 0o755)
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	out, err := Build(Options{
		Version: "1.0.0", BaseURLs: []string{"https://a.example/r/"}, Keys: []ed25519.PrivateKey{key},
		Inputs: []Input{
			{OS: "linux", Arch: "amd64", HelperPath: helper, HelperVersion: "0.1.0", ProtocolVersions: []int{1}},
			{OS: "windows", Arch: "amd64", HelperPath: helper, HelperVersion: "0.1.0", ProtocolVersions: []int{1}},
		},
		Issued: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
	})
	if err != nil {
		t.Fatal(err)
	}
	pub := key.Public().(ed25519.PublicKey)
	m, err := manifest.Open(out.Signed, []manifest.PublicKey{{ID: manifest.KeyID(pub), Key: pub}})
	if err != nil {
		t.Fatalf("Open(built manifest) = %v", err)
	}
	for _, art := range m.Artifacts {
		want := map[string]string{"linux": "deskhand-helper", "windows": "deskhand-helper.exe"}[art.OS]
		if art.Helper != want || len(art.Files) != 1 || art.Files[0].Path != want {
			t.Errorf("%s/%s artifact: helper %q, files %+v; want %q", art.OS, art.Arch, art.Helper, art.Files, want)
		}
	}
	if _, ok := out.Archives[ArchiveName("1.0.0", "windows", "amd64")]; !ok {
		t.Errorf("no windows/amd64 archive among %v", len(out.Archives))
	}
}
