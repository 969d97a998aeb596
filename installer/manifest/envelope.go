package manifest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// PayloadType names what the envelope carries; it is part of the signed
// bytes, so a signature over some other kind of document made with the
// same key can never pass for a manifest.
const PayloadType = "application/vnd.deskhand.manifest+json; version=1"

// MaxEnvelopeBytes caps a signed manifest document. Real ones are a few
// kilobytes; fetchers refuse bodies over this before they are parsed.
const MaxEnvelopeBytes = 1 << 20

// Envelope is the signed document as it travels: a DSSE envelope
// (github.com/secure-systems-lab/dsse). The signatures cover
// PAE(payloadType, payload), the payload being the manifest's JSON bytes
// exactly as released, so nothing has to be re-serialised to check them.
type Envelope struct {
	PayloadType string      `json:"payloadType"`
	Payload     string      `json:"payload"` // standard base64
	Signatures  []Signature `json:"signatures"`
}

// Signature is one signature in an Envelope.
type Signature struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig"` // standard base64 of the 64-byte Ed25519 signature
}

// PAE is DSSE's pre-authentication encoding of a payload: the exact bytes
// a signature covers.
func PAE(payloadType string, payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString("DSSEv1 ")
	b.WriteString(strconv.Itoa(len(payloadType)))
	b.WriteByte(' ')
	b.WriteString(payloadType)
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(len(payload)))
	b.WriteByte(' ')
	b.Write(payload)
	return b.Bytes()
}

// PublicKey is a trusted manifest-signing key.
type PublicKey struct {
	ID  string // KeyID of Key
	Key ed25519.PublicKey
}

// KeyID is the identifier of an Ed25519 public key in signatures: the
// first 8 bytes of its SHA-256, in hex.
func KeyID(pub ed25519.PublicKey) string {
	sum := sha256.Sum256(pub)
	return hex.EncodeToString(sum[:8])
}

// Key encodings used in key files, environment variables and the
// embedded trust list.
const (
	publicPrefix = "deskhand-ed25519-public:"
	secretPrefix = "deskhand-ed25519-secret:"
)

// ParsePublicKey reads a public key written by FormatPublicKey.
func ParsePublicKey(text string) (PublicKey, error) {
	line := firstKeyLine(text)
	enc, ok := strings.CutPrefix(line, publicPrefix)
	if !ok {
		return PublicKey{}, fmt.Errorf("public key: want a line starting %q", publicPrefix)
	}
	raw, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return PublicKey{}, fmt.Errorf("public key: want %d base64-encoded bytes after %q", ed25519.PublicKeySize, publicPrefix)
	}
	pub := ed25519.PublicKey(raw)
	return PublicKey{ID: KeyID(pub), Key: pub}, nil
}

// FormatPublicKey encodes pub as one line.
func FormatPublicKey(pub ed25519.PublicKey) string {
	return publicPrefix + base64.StdEncoding.EncodeToString(pub)
}

// ParsePrivateKey reads a secret key written by FormatPrivateKey.
func ParsePrivateKey(text string) (ed25519.PrivateKey, error) {
	line := firstKeyLine(text)
	enc, ok := strings.CutPrefix(line, secretPrefix)
	if !ok {
		return nil, fmt.Errorf("secret key: want a line starting %q (made by `deskhand-release keygen`)", secretPrefix)
	}
	seed, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, fmt.Errorf("secret key: want %d base64-encoded bytes after %q", ed25519.SeedSize, secretPrefix)
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// FormatPrivateKey encodes the seed of key as one line.
func FormatPrivateKey(key ed25519.PrivateKey) string {
	return secretPrefix + base64.StdEncoding.EncodeToString(key.Seed())
}

// firstKeyLine returns the first line that is neither blank nor a
// "#" comment.
func firstKeyLine(text string) string {
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	return ""
}

// Sign wraps payload in an Envelope signed by every key in keys and
// returns its JSON encoding.
func Sign(payload []byte, keys ...ed25519.PrivateKey) ([]byte, error) {
	if len(keys) == 0 {
		return nil, errors.New("signing the manifest: no signing key given")
	}
	env := Envelope{PayloadType: PayloadType, Payload: base64.StdEncoding.EncodeToString(payload)}
	msg := PAE(PayloadType, payload)
	for _, k := range keys {
		pub := k.Public().(ed25519.PublicKey)
		env.Signatures = append(env.Signatures, Signature{
			KeyID: KeyID(pub),
			Sig:   base64.StdEncoding.EncodeToString(ed25519.Sign(k, msg)),
		})
	}
	out, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// Verify checks that doc is an Envelope carrying a manifest payload signed
// by at least one key in trusted, and returns the payload bytes. It looks
// at nothing else: the payload is not parsed here, and no caller should
// parse it before Verify has passed.
func Verify(doc []byte, trusted []PublicKey) ([]byte, error) {
	if len(doc) > MaxEnvelopeBytes {
		return nil, fmt.Errorf("%w: %d bytes, over the %d-byte cap", ErrMalformed, len(doc), MaxEnvelopeBytes)
	}
	if len(trusted) == 0 {
		return nil, fmt.Errorf("%w: no trusted keys configured", ErrUnknownKey)
	}
	var env Envelope
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&env); err != nil {
		return nil, fmt.Errorf("%w: not a signed manifest envelope: %v", ErrMalformed, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the envelope", ErrMalformed)
	}
	if env.PayloadType != PayloadType {
		return nil, fmt.Errorf("%w: payload type %q, want %q", ErrMalformed, truncate(env.PayloadType, 80), PayloadType)
	}
	payload, err := base64.StdEncoding.DecodeString(env.Payload)
	if err != nil {
		return nil, fmt.Errorf("%w: payload is not base64: %v", ErrMalformed, err)
	}
	if len(env.Signatures) == 0 {
		return nil, ErrUnsigned
	}
	if len(env.Signatures) > 16 {
		return nil, fmt.Errorf("%w: %d signatures, at most 16 are read", ErrMalformed, len(env.Signatures))
	}
	msg := PAE(env.PayloadType, payload)
	var unknown, bad []string
	for _, s := range env.Signatures {
		i := slices.IndexFunc(trusted, func(k PublicKey) bool { return k.ID == s.KeyID })
		if i < 0 {
			unknown = append(unknown, fmt.Sprintf("%q", truncate(s.KeyID, 20)))
			continue
		}
		sig, err := base64.StdEncoding.DecodeString(s.Sig)
		if err == nil && len(sig) == ed25519.SignatureSize && ed25519.Verify(trusted[i].Key, msg, sig) {
			return payload, nil
		}
		bad = append(bad, trusted[i].ID)
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%w: the signature by trusted key %s does not match the manifest: it was altered or damaged after signing; fetch it again from an official source",
			ErrBadSignature, strings.Join(bad, ", "))
	}
	ids := make([]string, len(trusted))
	for i, k := range trusted {
		ids[i] = k.ID
	}
	return nil, fmt.Errorf("%w: signed by %s; this deskhand trusts only %s. Use a manifest from an official release, or a deskhand built with the key that signed it",
		ErrUnknownKey, strings.Join(unknown, ", "), strings.Join(ids, ", "))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
