package manifest

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the fuzz seed corpora under testdata/fuzz")

func testKey(seed byte) ed25519.PrivateKey {
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
}

func pubOf(k ed25519.PrivateKey) PublicKey {
	pub := k.Public().(ed25519.PublicKey)
	return PublicKey{ID: KeyID(pub), Key: pub}
}

var (
	current, next, stranger = testKey(1), testKey(2), testKey(3)
	trusted                 = []PublicKey{pubOf(current), pubOf(next)}
	now                     = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
)

func sampleManifest() *Manifest {
	h := strings.Repeat("ab", 32)
	return &Manifest{
		Schema: 1, Version: "1.2.3", Issued: now.Add(-time.Hour), Expires: now.Add(24 * time.Hour),
		Artifacts: []Artifact{{
			OS: "linux", Arch: "amd64",
			URLs: []string{"https://releases.example/deskhand-helper-1.2.3-linux-amd64.tar.gz", "https://mirror.example/d.tar.gz"},
			Size: 1234, SHA256: h, Helper: "deskhand-helper", HelperVersion: "1.2.3", ProtocolVersions: []int{1},
			Files: []File{{Path: "deskhand-helper", Size: 4000, SHA256: h, Mode: "0755"}},
		}},
	}
}

func signed(t testing.TB, m *Manifest, keys ...ed25519.PrivateKey) []byte {
	payload, err := m.Encode()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := Sign(payload, keys...)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func editEnvelope(t *testing.T, doc []byte, edit func(*Envelope)) []byte {
	var env Envelope
	if err := json.Unmarshal(doc, &env); err != nil {
		t.Fatal(err)
	}
	edit(&env)
	out, _ := json.Marshal(env)
	return out
}

func TestOpen(t *testing.T) {
	good := signed(t, sampleManifest(), current)
	payload := func(doc []byte) []byte {
		var env Envelope
		json.Unmarshal(doc, &env)
		p, _ := base64.StdEncoding.DecodeString(env.Payload)
		return p
	}
	for _, tc := range []struct {
		name string
		doc  []byte
		want error
	}{
		{"signed by current", good, nil},
		{"signed by next only (rotation)", signed(t, sampleManifest(), next), nil},
		{"signed by a stranger and current", signed(t, sampleManifest(), stranger, current), nil},
		{"unsigned", editEnvelope(t, good, func(e *Envelope) { e.Signatures = nil }), ErrUnsigned},
		{"unknown key", signed(t, sampleManifest(), stranger), ErrUnknownKey},
		{"truncated", good[:len(good)/2], ErrMalformed},
		{"empty", nil, ErrMalformed},
		{"not JSON", []byte("deskhand"), ErrMalformed},
		{"trailing data", append(bytes.Clone(good), []byte(`{}`)...), ErrMalformed},
		{"unknown envelope field", bytes.Replace(good, []byte(`"payloadType"`), []byte(`"extra": 1, "payloadType"`), 1), ErrMalformed},
		{"wrong payload type", editEnvelope(t, good, func(e *Envelope) { e.PayloadType = "application/json" }), ErrMalformed},
		{"payload byte flipped", editEnvelope(t, good, func(e *Envelope) {
			p := payload(good)
			p[len(p)/2] ^= 1
			e.Payload = base64.StdEncoding.EncodeToString(p)
		}), ErrBadSignature},
		{"version relabelled", editEnvelope(t, good, func(e *Envelope) {
			e.Payload = base64.StdEncoding.EncodeToString(bytes.Replace(payload(good), []byte(`"1.2.3"`), []byte(`"9.2.3"`), 1))
		}), ErrBadSignature},
		{"signature byte flipped", editEnvelope(t, good, func(e *Envelope) {
			s, _ := base64.StdEncoding.DecodeString(e.Signatures[0].Sig)
			s[0] ^= 1
			e.Signatures[0].Sig = base64.StdEncoding.EncodeToString(s)
		}), ErrBadSignature},
		{"signature not base64", editEnvelope(t, good, func(e *Envelope) { e.Signatures[0].Sig = "!!" }), ErrBadSignature},
		{"stranger's signature under a trusted key id", editEnvelope(t, signed(t, sampleManifest(), stranger), func(e *Envelope) {
			e.Signatures[0].KeyID = trusted[0].ID
		}), ErrBadSignature},
		{"too large", append(bytes.Repeat([]byte(" "), MaxEnvelopeBytes), good...), ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := Open(tc.doc, trusted)
			if !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
				t.Fatalf("Open(%s) = %v, want %v", tc.name, err, tc.want)
			}
			if err == nil && m.Version != "1.2.3" {
				t.Errorf("Open(%s).Version = %q, want 1.2.3", tc.name, m.Version)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(m *Manifest)
	}{
		{"schema 2", func(m *Manifest) { m.Schema = 2 }},
		{"bad version", func(m *Manifest) { m.Version = "v1" }},
		{"expires before issued", func(m *Manifest) { m.Expires = m.Issued.Add(-time.Second) }},
		{"no artifacts", func(m *Manifest) { m.Artifacts = nil }},
		{"ftp url", func(m *Manifest) { m.Artifacts[0].URLs[0] = "ftp://x/y" }},
		{"url with user info", func(m *Manifest) { m.Artifacts[0].URLs[0] = "https://u:p@x/y" }},
		{"zero size", func(m *Manifest) { m.Artifacts[0].Size = 0 }},
		{"upper-case hash", func(m *Manifest) { m.Artifacts[0].SHA256 = strings.Repeat("AB", 32) }},
		{"no protocol", func(m *Manifest) { m.Artifacts[0].ProtocolVersions = nil }},
		{"absolute file", func(m *Manifest) { m.Artifacts[0].Files[0].Path = "/etc/x" }},
		{"dotdot file", func(m *Manifest) { m.Artifacts[0].Files[0].Path = "a/../x" }},
		{"setuid mode", func(m *Manifest) { m.Artifacts[0].Files[0].Mode = "4755" }},
		{"helper not listed", func(m *Manifest) { m.Artifacts[0].Helper = "other" }},
		{"helper not executable", func(m *Manifest) { m.Artifacts[0].Files[0].Mode = "0644" }},
		{"duplicate platform", func(m *Manifest) { m.Artifacts = append(m.Artifacts, m.Artifacts[0]) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := sampleManifest()
			tc.edit(m)
			raw, _ := json.Marshal(m)
			if _, err := Parse(raw); !errors.Is(err, ErrMalformed) {
				t.Errorf("Parse(%s) = %v, want ErrMalformed", tc.name, err)
			}
		})
	}
	raw, _ := json.Marshal(sampleManifest())
	raw = bytes.Replace(raw, []byte(`"schema":1`), []byte(`"schema":1,"unknown":true`), 1)
	if _, err := Parse(raw); !errors.Is(err, ErrMalformed) {
		t.Errorf("Parse(unknown field) = %v, want ErrMalformed", err)
	}
}

func TestCheckTime(t *testing.T) {
	m := sampleManifest()
	for _, tc := range []struct {
		at   time.Time
		want error
	}{
		{now, nil},
		{m.Expires.Add(-time.Nanosecond), nil},
		{m.Expires, ErrExpired},
		{m.Expires.Add(time.Hour), ErrExpired},
		{m.Issued.Add(-30 * time.Minute), nil},
		{m.Issued.Add(-2 * time.Hour), ErrNotYetValid},
	} {
		if err := m.CheckTime(tc.at, time.Hour); !errors.Is(err, tc.want) || (tc.want == nil) != (err == nil) {
			t.Errorf("CheckTime(%v) = %v, want %v", tc.at, err, tc.want)
		}
	}
}

func TestArtifact(t *testing.T) {
	m := sampleManifest()
	if a, err := m.Artifact("linux", "amd64"); err != nil || a.OS != "linux" {
		t.Errorf("Artifact(linux, amd64) = %v, %v", a, err)
	}
	if _, err := m.Artifact("darwin", "arm64"); !errors.Is(err, ErrNoArtifact) {
		t.Errorf("Artifact(darwin, arm64) = %v, want ErrNoArtifact", err)
	}
}

func TestCompareVersions(t *testing.T) {
	order := []string{"0.0.1", "0.1.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.2.0", "1.10.0", "2.0.0"}
	for i := range order {
		for j := range order {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := CompareVersions(order[i], order[j]); got != want {
				t.Errorf("CompareVersions(%q, %q) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
	for _, bad := range []string{"", "1", "1.2", "v1.2.3", "01.2.3", "1.2.3-", "1.2.3-a..b", "1.2.3+build", "1.2.3-01"} {
		if ValidVersion(bad) == nil {
			t.Errorf("ValidVersion(%q) = nil, want an error", bad)
		}
		if CompareVersions(bad, "0.0.1") != -1 {
			t.Errorf("CompareVersions(%q, 0.0.1) != -1: an invalid version must never win", bad)
		}
	}
}

func TestKeyFormats(t *testing.T) {
	k := testKey(9)
	got, err := ParsePrivateKey("# comment\n" + FormatPrivateKey(k) + "\n")
	if err != nil || !got.Equal(k) {
		t.Fatalf("ParsePrivateKey(FormatPrivateKey(k)) = %v, %v", got, err)
	}
	pub, err := ParsePublicKey(FormatPublicKey(k.Public().(ed25519.PublicKey)))
	if err != nil || pub.ID != KeyID(k.Public().(ed25519.PublicKey)) {
		t.Fatalf("ParsePublicKey = %v, %v", pub, err)
	}
	if _, err := ParsePrivateKey(FormatPublicKey(k.Public().(ed25519.PublicKey))); err == nil {
		t.Errorf("ParsePrivateKey accepted a public key")
	}
}

func TestEmbeddedKeys(t *testing.T) {
	keys := TrustedKeys()
	if len(keys) < 2 {
		t.Fatalf("TrustedKeys() has %d keys, want at least 2 (current and next)", len(keys))
	}
	if keys[0].ID == keys[1].ID {
		t.Errorf("the current and next keys are the same")
	}
	for _, k := range keys {
		for _, test := range trusted {
			if k.ID == test.ID {
				t.Errorf("embedded key %s is a test key", k.ID)
			}
		}
	}
	// The example manifest is signed by a test key, never a trusted one.
	doc, err := os.ReadFile(filepath.Join("..", "..", "manifests", "examples", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(doc, keys); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("Open(example, embedded keys) = %v, want ErrUnknownKey", err)
	}
	if _, err := Open(doc, trusted); err != nil {
		t.Errorf("Open(example, test keys) = %v; regenerate it with go test ./installer/manifest -run TestExamples -update-corpus", err)
	}
}

// TestExamples keeps manifests/examples in step with the schema; with
// -update-corpus it rewrites them and the fuzz seed corpora.
func TestExamples(t *testing.T) {
	m := sampleManifest()
	payload, _ := m.Encode()
	doc := signed(t, m, current)
	if *updateCorpus {
		dir := filepath.Join("..", "..", "manifests", "examples")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "manifest.json"), doc, 0o644)
		os.WriteFile(filepath.Join(dir, "payload.json"), payload, 0o644)
		writeCorpus(t, "FuzzOpen", seedsOpen(t))
		writeCorpus(t, "FuzzParse", seedsParse(t))
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "manifests", "examples", "payload.json"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(got); err != nil {
		t.Errorf("manifests/examples/payload.json does not parse: %v", err)
	}
}

func seedsOpen(t *testing.T) [][]byte {
	good := signed(t, sampleManifest(), current)
	return [][]byte{
		good,
		signed(t, sampleManifest(), next, stranger),
		signed(t, sampleManifest(), stranger),
		good[:len(good)/2],
		editEnvelope(t, good, func(e *Envelope) { e.Signatures = nil }),
		[]byte(`{"payloadType":"` + PayloadType + `","payload":"e30=","signatures":[{"keyid":"","sig":""}]}`),
		[]byte(`[]`),
		[]byte(``),
	}
}

func seedsParse(t *testing.T) [][]byte {
	payload, _ := sampleManifest().Encode()
	return [][]byte{
		payload,
		[]byte(`{"schema":1}`),
		[]byte(`{"schema":1,"version":"1.0.0","issued":"2030-01-01T00:00:00Z","expires":"2031-01-01T00:00:00Z","artifacts":[{}]}`),
		bytes.Replace(payload, []byte(`"deskhand-helper"`), []byte(`"../x"`), -1),
		[]byte(`null`),
	}
}

func writeCorpus(t *testing.T, name string, seeds [][]byte) {
	dir := filepath.Join("testdata", "fuzz", name)
	os.RemoveAll(dir)
	os.MkdirAll(dir, 0o755)
	for i, s := range seeds {
		content := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%02d", i)), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzOpen: whatever the bytes, Open never panics, and anything it
// accepts carries a valid signature by a trusted key and a payload that
// validates.
func FuzzOpen(f *testing.F) {
	f.Fuzz(func(t *testing.T, doc []byte) {
		m, err := Open(doc, trusted)
		if err != nil {
			return
		}
		payload, err := Verify(doc, trusted)
		if err != nil {
			t.Fatalf("Open accepted what Verify rejects: %v", err)
		}
		if err := m.validate(); err != nil {
			t.Fatalf("Open returned an invalid manifest: %v", err)
		}
		if _, err := Parse(payload); err != nil {
			t.Fatalf("payload no longer parses: %v", err)
		}
	})
}

// FuzzParse: the payload parser, which runs only on signed bytes, still
// never panics and never returns a manifest with unsafe paths.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, payload []byte) {
		m, err := Parse(payload)
		if err != nil {
			return
		}
		for _, a := range m.Artifacts {
			for _, file := range a.Files {
				if CheckPath(file.Path) != nil {
					t.Fatalf("Parse accepted unsafe path %q", file.Path)
				}
			}
		}
		if _, err := m.Encode(); err != nil {
			t.Fatalf("a parsed manifest does not encode: %v", err)
		}
	})
}
